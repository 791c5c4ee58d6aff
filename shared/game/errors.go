package game

import (
	"errors"
	"strconv"

	"chessapi/shared/chess"
)

// InputError is a malformed request value (HTTP 400): Field is the dotted
// JSON path of the offending value ("options.timeControl", "payload.to",
// "moves.3"), Problem what is wrong with it, and the other fields the
// details the edge needs to say so in the reader's language (shared/api
// owns every human text).
type InputError struct {
	Field   string
	Problem Problem
	// Want is the expected JSON type (ProblemType: "string", "integer",
	// "boolean", "object", "array"), the expected format (ProblemFormat:
	// "square", "uci", "san", "timeControl", ...), the other field
	// (ProblemConflict) or the reason (ProblemNotAllowed).
	Want string
	// Allowed lists the accepted values (ProblemOneOf).
	Allowed []string
	// Min and Max bound a number (ProblemRange) or a text's length in
	// characters (ProblemLength: Max).
	Min, Max int64
	Err      error // optional cause
}

// Problem is what is wrong with a request value. Append-only enum.
type Problem uint8

const (
	ProblemInvalid    Problem = iota + 1 // not a valid value (no more detail)
	ProblemRequired                      // missing
	ProblemUnknown                       // a field the request does not have
	ProblemDuplicate                     // the same field twice in one object
	ProblemType                          // the wrong JSON type (Want)
	ProblemOneOf                         // not one of Allowed
	ProblemRange                         // a number outside Min..Max
	ProblemLength                        // text longer than Max characters, or not printable
	ProblemFormat                        // text not in the expected format (Want)
	ProblemConflict                      // cannot be combined with field Want
	ProblemNotAllowed                    // not allowed here (Want says why)
	ProblemNotFound                      // refers to something that does not exist
)

var problemNames = [...]string{
	ProblemInvalid: "invalid", ProblemRequired: "required", ProblemUnknown: "unknown",
	ProblemDuplicate: "duplicate", ProblemType: "type", ProblemOneOf: "oneOf", ProblemRange: "range",
	ProblemLength: "length", ProblemFormat: "format", ProblemConflict: "conflict",
	ProblemNotAllowed: "notAllowed", ProblemNotFound: "notFound",
}

func (p Problem) String() string {
	if int(p) < len(problemNames) && problemNames[p] != "" {
		return problemNames[p]
	}
	return "problem(" + strconv.Itoa(int(p)) + ")"
}

func (e *InputError) Error() string {
	msg := "game: invalid " + e.Field + ": " + e.Problem.String()
	if e.Want != "" {
		msg += " (" + e.Want + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *InputError) Unwrap() error { return e.Err }

// Input error constructors, one per problem that carries details.

// FieldRequired reports a missing field.
func FieldRequired(field string) *InputError {
	return &InputError{Field: field, Problem: ProblemRequired}
}

// FieldOneOf reports a value outside the allowed set.
func FieldOneOf(field string, allowed ...string) *InputError {
	return &InputError{Field: field, Problem: ProblemOneOf, Allowed: allowed}
}

// FieldFormat reports text that is not in the expected format.
func FieldFormat(field, format string, cause error) *InputError {
	return &InputError{Field: field, Problem: ProblemFormat, Want: format, Err: cause}
}

// FieldLength reports text longer than max characters (or not printable).
func FieldLength(field string, max int) *InputError {
	return &InputError{Field: field, Problem: ProblemLength, Max: int64(max)}
}

// FieldRange reports a number outside min..max.
func FieldRange(field string, min, max int64) *InputError {
	return &InputError{Field: field, Problem: ProblemRange, Min: min, Max: max}
}

// FieldNotAllowed reports a value not allowed here; why names the rule.
func FieldNotAllowed(field, why string) *InputError {
	return &InputError{Field: field, Problem: ProblemNotAllowed, Want: why}
}

// Code is the machine-readable reason a well-formed action was refused.
// The values are an append-only enum: they are part of the API and may be
// stored, so existing numbers and spellings never change.
type Code uint8

const (
	CodeNotYourTurn Code = iota + 1
	CodeIllegalMove
	CodeKingInCheck
	CodePromotionRequired
	CodeAmbiguousMove
	CodeGameNotPlaying
	CodeGameFull
	CodeAlreadySeated
	CodeTimeExpired
	CodeUndoDisabled
	CodeUndoLimit
	CodeNothingToUndo
	CodeRequestPending
	CodeNoPendingRequest
	CodeDrawOfferDisabled
	CodeDrawOfferTooSoon
	CodeClaimDisabled
	CodeNotClaimable
	CodeRematchLinked
	CodeGameNotFinished
	CodeGameNotWaiting
	// CodeInviteRequired: a private (or reserved) game joined without the
	// right invite.
	CodeInviteRequired
	// CodeRatingOutOfRange: the player's rating is outside the room's gate.
	CodeRatingOutOfRange
	// CodeNotStarted: an action of play before a game of the yeoul rules
	// has started (its ready step, or the seconds before StartsAt).
	CodeNotStarted
	// CodeNoReadyStep: ready in a game of the standard rules.
	CodeNoReadyStep
)

// codeNames holds each code's API spelling. Human texts for them live at
// the edge (shared/api).
var codeNames = [...]string{
	CodeNotYourTurn:       "not_your_turn",
	CodeIllegalMove:       "illegal_move",
	CodeKingInCheck:       "king_in_check",
	CodePromotionRequired: "promotion_required",
	CodeAmbiguousMove:     "ambiguous_move",
	CodeGameNotPlaying:    "game_not_playing",
	CodeGameFull:          "game_full",
	CodeAlreadySeated:     "already_seated",
	CodeTimeExpired:       "time_expired",
	CodeUndoDisabled:      "undo_disabled",
	CodeUndoLimit:         "undo_limit",
	CodeNothingToUndo:     "nothing_to_undo",
	CodeRequestPending:    "request_pending",
	CodeNoPendingRequest:  "no_pending_request",
	CodeDrawOfferDisabled: "draw_offer_disabled",
	CodeDrawOfferTooSoon:  "draw_offer_too_soon",
	CodeClaimDisabled:     "claim_disabled",
	CodeNotClaimable:      "not_claimable",
	CodeRematchLinked:     "rematch_exists",
	CodeGameNotFinished:   "game_not_finished",
	CodeGameNotWaiting:    "game_not_waiting",
	CodeInviteRequired:    "invite_required",
	CodeRatingOutOfRange:  "rating_out_of_range",
	CodeNotStarted:        "not_started",
	CodeNoReadyStep:       "no_ready_step",
}

// Codes lists every code, for catalogues and their tests.
func Codes() []Code {
	var out []Code
	for c := range codeNames {
		if codeNames[c] != "" {
			out = append(out, Code(c))
		}
	}
	return out
}

// String returns the API spelling of the code ("not_your_turn", ...).
func (c Code) String() string {
	if int(c) < len(codeNames) && codeNames[c] != "" {
		return codeNames[c]
	}
	return "code(" + strconv.Itoa(int(c)) + ")"
}

// MarshalText writes the API spelling.
func (c Code) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// RuleError is a well-formed action that the rules refuse (HTTP 422, or 409
// for the codes about seats).
type RuleError struct {
	Code Code
	// Field, when set, is the request value the refusal is about (the
	// move that is illegal: "payload.uci", "moves.3").
	Field string
	Err   error // optional cause, e.g. a *chess.MoveError
}

func (e *RuleError) Error() string {
	msg := "game: " + e.Code.String()
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RuleError) Unwrap() error { return e.Err }

func ruleError(c Code) *RuleError { return &RuleError{Code: c} }

// MoveRefusal turns a rules-package move error into the API's refusal: a
// RuleError naming why the move is not allowed, or an InputError at field
// when the text is not a move at all. (A game's action has one move, so its
// refusal names no field; callers with several set RuleError.Field.)
func MoveRefusal(err error, field string) error {
	var code Code
	switch {
	case errors.Is(err, chess.ErrSyntax):
		return FieldFormat(field, "move", err)
	case errors.Is(err, chess.ErrPromotionRequired):
		code = CodePromotionRequired
	case errors.Is(err, chess.ErrKingInCheck):
		code = CodeKingInCheck
	case errors.Is(err, chess.ErrAmbiguousMove):
		code = CodeAmbiguousMove
	default:
		code = CodeIllegalMove
	}
	return &RuleError{Code: code, Err: err}
}

// RestoreError reports a state read back from storage that is not a
// consistent game (Restore): an illegal move, an unknown phase, a result
// outside the finished phase. The stored form's decoder wraps it.
type RestoreError struct {
	Reason string
	Err    error
}

func (e *RestoreError) Error() string {
	msg := "game: restore: " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RestoreError) Unwrap() error { return e.Err }
