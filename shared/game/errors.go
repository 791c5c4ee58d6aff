package game

import (
	"errors"
	"strconv"

	"chessapi/shared/chess"
)

// InputError is a malformed request: bad JSON, a wrong type, an unknown field
// or action type, an invalid square or option value (HTTP 400). Field is the
// dotted JSON path of the offending value ("options.timeControl",
// "payload.to", "type"); Message is the Korean text shown to the user.
type InputError struct {
	Field   string
	Message string
	Err     error // optional cause
}

func (e *InputError) Error() string {
	msg := "game: invalid " + e.Field
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *InputError) Unwrap() error { return e.Err }

func inputError(field, message string, cause error) *InputError {
	return &InputError{Field: field, Message: message, Err: cause}
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
)

// codeInfo holds each code's API spelling and its Korean message. The four
// move refusals use the exact texts of SPEC §5.
var codeInfo = [...]struct{ name, message string }{
	CodeNotYourTurn:       {"not_your_turn", "지금은 상대 차례예요"},
	CodeIllegalMove:       {"illegal_move", "그 기물은 그렇게 움직일 수 없어요"},
	CodeKingInCheck:       {"king_in_check", "킹이 공격받게 되어 둘 수 없어요"},
	CodePromotionRequired: {"promotion_required", "승진할 기물을 골라 주세요"},
	CodeAmbiguousMove:     {"ambiguous_move", "어느 기물을 움직일지 알 수 없어요. 출발 칸을 함께 알려 주세요"},
	CodeGameNotPlaying:    {"game_not_playing", "진행 중인 대국이 아니에요"},
	CodeGameFull:          {"game_full", "이미 두 자리가 모두 찼어요"},
	CodeAlreadySeated:     {"already_seated", "이미 이 대국에 앉아 있어요"},
	CodeTimeExpired:       {"time_expired", "시간이 다 되어 더 둘 수 없어요"},
	CodeUndoDisabled:      {"undo_disabled", "이 대국에서는 무르기를 할 수 없어요"},
	CodeUndoLimit:         {"undo_limit", "무르기 횟수를 모두 썼어요"},
	CodeNothingToUndo:     {"nothing_to_undo", "무를 수 있는 내 수가 없어요"},
	CodeRequestPending:    {"request_pending", "이미 응답을 기다리는 요청이 있어요"},
	CodeNoPendingRequest:  {"no_pending_request", "응답하거나 취소할 요청이 없어요"},
	CodeDrawOfferDisabled: {"draw_offer_disabled", "이 대국에서는 무승부를 제안할 수 없어요"},
	CodeDrawOfferTooSoon:  {"draw_offer_too_soon", "무승부 제안이 거절된 뒤에는 내 수를 3번 더 두어야 다시 제안할 수 있어요"},
	CodeClaimDisabled:     {"claim_disabled", "이 대국은 반복과 50수 무승부가 자동으로 처리돼요"},
	CodeNotClaimable:      {"not_claimable", "지금은 무승부를 주장할 수 없어요"},
	CodeRematchLinked:     {"rematch_exists", "이미 재대국이 만들어졌어요"},
	CodeGameNotFinished:   {"game_not_finished", "아직 끝나지 않은 대국이에요"},
}

// String returns the API spelling of the code ("not_your_turn", ...).
func (c Code) String() string {
	if int(c) < len(codeInfo) && codeInfo[c].name != "" {
		return codeInfo[c].name
	}
	return "code(" + strconv.Itoa(int(c)) + ")"
}

// Message returns the Korean user-facing text of the code.
func (c Code) Message() string {
	if int(c) < len(codeInfo) {
		return codeInfo[c].message
	}
	return ""
}

// MarshalText writes the API spelling.
func (c Code) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// RuleError is a well-formed action that the rules refuse (HTTP 422, or 409
// for CodeGameFull and CodeAlreadySeated). Message is the Korean text.
type RuleError struct {
	Code    Code
	Message string
	Err     error // optional cause, e.g. a *chess.MoveError
}

func (e *RuleError) Error() string {
	msg := "game: " + e.Code.String()
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *RuleError) Unwrap() error { return e.Err }

func ruleError(c Code) *RuleError { return &RuleError{Code: c, Message: c.Message()} }

// moveRefusal turns a rules-package move error into the API's refusal: a
// RuleError naming why the move is not allowed, or an InputError when the
// text is not a move at all.
func moveRefusal(err error, field string) error {
	var code Code
	switch {
	case errors.Is(err, chess.ErrSyntax):
		return inputError(field, "수 표기를 읽을 수 없어요", err)
	case errors.Is(err, chess.ErrPromotionRequired):
		code = CodePromotionRequired
	case errors.Is(err, chess.ErrKingInCheck):
		code = CodeKingInCheck
	case errors.Is(err, chess.ErrAmbiguousMove):
		code = CodeAmbiguousMove
	default:
		code = CodeIllegalMove
	}
	return &RuleError{Code: code, Message: code.Message(), Err: err}
}

// DecodeError reports stored bytes that are not a valid game state.
type DecodeError struct {
	Reason string
	Err    error
}

func (e *DecodeError) Error() string {
	msg := "game: decode state: " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *DecodeError) Unwrap() error { return e.Err }
