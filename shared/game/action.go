package game

import (
	"strconv"

	"chessapi/shared/chess"
)

// ActionType is a player action of seeds/000 §8.2 (the system-only timeout
// is the Timeout step, not an action). Append-only enum.
type ActionType uint8

const (
	ActionMove ActionType = iota + 1
	ActionCastle
	ActionClaimDraw
	ActionRequestUndo
	ActionRespondUndo
	ActionOfferDraw
	ActionRespondDraw
	ActionCancelOffer
	ActionResign
	// ActionReady: a seat is ready to start (the yeoul rules' ready step).
	ActionReady
)

var actionNames = [...]string{
	ActionMove:        "move",
	ActionCastle:      "castle",
	ActionClaimDraw:   "claimDraw",
	ActionRequestUndo: "requestUndo",
	ActionRespondUndo: "respondUndo",
	ActionOfferDraw:   "offerDraw",
	ActionRespondDraw: "respondDraw",
	ActionCancelOffer: "cancelOffer",
	ActionResign:      "resign",
	ActionReady:       "ready",
}

// String returns the API spelling ("move", "requestUndo", ...).
func (t ActionType) String() string {
	if int(t) < len(actionNames) && actionNames[t] != "" {
		return actionNames[t]
	}
	return "action(" + strconv.Itoa(int(t)) + ")"
}

// Action is a decoded player action.
type Action struct {
	Type ActionType
	// Move is the move input (ActionMove).
	Move MoveInput
	// Castle is the side to castle to (ActionCastle).
	Castle chess.CastleSide
	// Accept answers a request (ActionRespondUndo, ActionRespondDraw).
	Accept bool
	// Plies is how many moves to take back (ActionRequestUndo): 1, 2, or 0
	// for "back to before my last move".
	Plies int
	// RequestID, when set by the caller, is recorded in the acting seat's
	// request log with the outcome, for idempotent retries.
	RequestID string
	// RequestHash fingerprints the request the id came with; it is logged
	// beside the id so a reused id with a different request is detected.
	RequestHash string
}

// MoveInput is one of the three move forms of SPEC §3: squares (From, To,
// optional Promotion), UCI text or SAN text. Exactly one form is set.
type MoveInput struct {
	From, To  chess.Square
	Promotion chess.PieceType // NoPieceType when not given
	UCI       string
	SAN       string
}

func (m MoveInput) String() string {
	switch {
	case m.UCI != "":
		return m.UCI
	case m.SAN != "":
		return m.SAN
	}
	s := m.From.String() + m.To.String()
	if m.Promotion != chess.NoPieceType {
		s += string(m.Promotion.Letter())
	}
	return s
}

// ParseActionType returns the action type of an API spelling ("move",
// "requestUndo", ...). The system-only timeout is not an action type.
func ParseActionType(name string) (ActionType, bool) {
	for t, n := range actionNames {
		if n != "" && n == name {
			return ActionType(t), true
		}
	}
	return 0, false
}

// ActionTypes lists every action type.
func ActionTypes() []ActionType {
	var out []ActionType
	for t, n := range actionNames {
		if n != "" {
			out = append(out, ActionType(t))
		}
	}
	return out
}

// ValidUCISyntax accepts square, square and an optional lower-case
// promotion letter (whether the move is legal is another question).
func ValidUCISyntax(s string) bool {
	if len(s) != 4 && len(s) != 5 {
		return false
	}
	if _, err := chess.ParseSquare(s[0:2]); err != nil {
		return false
	}
	if _, err := chess.ParseSquare(s[2:4]); err != nil {
		return false
	}
	if len(s) == 5 {
		switch s[4] {
		case 'q', 'r', 'b', 'n':
		default:
			return false
		}
	}
	return true
}
