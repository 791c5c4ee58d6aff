package game

import (
	"encoding/json"
	"strconv"

	"chessapi/shared/chess"
)

// ActionType is a player action of seeds/000 §8.2 (the system-only timeout
// is ApplyTimeout, not an action). Append-only enum.
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

// DecodeAction reads an action request: actionType is the request's "type"
// and payload its "payload" (absent or null means {}). Decoding is strict:
// an unknown action type is an *InputError for "type"; an unknown payload
// member, a wrong type, a bad square or a missing required member is an
// *InputError naming "payload.<member>".
func DecodeAction(actionType string, payload json.RawMessage) (Action, error) {
	var a Action
	for t, name := range actionNames {
		if name != "" && name == actionType {
			a.Type = ActionType(t)
		}
	}
	if a.Type == 0 {
		msg := "알 수 없는 동작이에요"
		if actionType == "timeout" {
			msg = "timeout은 서버만 보낼 수 있어요"
		}
		return Action{}, inputError("type", msg, nil)
	}
	fields, err := objectFields(payload, "payload")
	if err != nil {
		return Action{}, err
	}
	switch a.Type {
	case ActionMove:
		a.Move, err = decodeMoveInput(fields)
	case ActionCastle:
		a.Castle, err = decodeCastle(fields)
	case ActionRespondUndo, ActionRespondDraw:
		a.Accept, err = decodeAccept(fields)
	case ActionRequestUndo:
		a.Plies, err = decodePlies(fields)
	default:
		if len(fields) > 0 {
			err = unknownField(fields[0])
		}
	}
	if err != nil {
		return Action{}, err
	}
	return a, nil
}

func decodeMoveInput(fields []jsonField) (MoveInput, error) {
	var in MoveInput
	var has = map[string]jsonField{}
	for _, f := range fields {
		switch f.key {
		case "from", "to", "promotion", "uci", "san":
			has[f.key] = f
		default:
			return in, unknownField(f)
		}
	}
	forms := 0
	if _, ok := has["from"]; ok {
		forms++
	} else if _, ok := has["to"]; ok {
		forms++
	} else if _, ok := has["promotion"]; ok {
		forms++
	}
	for _, k := range []string{"uci", "san"} {
		if _, ok := has[k]; ok {
			forms++
		}
	}
	switch {
	case forms == 0:
		return in, inputError("payload", "from·to, uci, san 중 하나로 수를 보내 주세요", nil)
	case forms > 1:
		return in, inputError("payload", "from·to, uci, san 중 한 가지 형식만 보내 주세요", nil)
	}
	if f, ok := has["uci"]; ok {
		s, err := f.stringValue()
		if err != nil {
			return in, err
		}
		if !validUCISyntax(s) {
			return in, inputError(f.path, "UCI 수는 e2e4, e7e8q 같은 형식이어야 해요", nil)
		}
		in.UCI = s
		return in, nil
	}
	if f, ok := has["san"]; ok {
		s, err := f.stringValue()
		if err != nil {
			return in, err
		}
		if s == "" || len(s) > 16 {
			return in, inputError(f.path, "SAN 수 표기가 올바르지 않아요", nil)
		}
		in.SAN = s
		return in, nil
	}
	var err error
	if in.From, err = squareField(has, "from"); err != nil {
		return in, err
	}
	if in.To, err = squareField(has, "to"); err != nil {
		return in, err
	}
	if f, ok := has["promotion"]; ok && !f.isNull() {
		s, err := f.stringValue()
		if err != nil {
			return in, err
		}
		switch s {
		case "q":
			in.Promotion = chess.Queen
		case "r":
			in.Promotion = chess.Rook
		case "b":
			in.Promotion = chess.Bishop
		case "n":
			in.Promotion = chess.Knight
		default:
			return in, inputError(f.path, "승진 기물은 q, r, b, n 중 하나여야 해요", nil)
		}
	}
	return in, nil
}

func squareField(has map[string]jsonField, key string) (chess.Square, error) {
	f, ok := has[key]
	if !ok {
		return chess.NoSquare, inputError("payload."+key, "칸을 알려 주세요 (예: e4)", nil)
	}
	s, err := f.stringValue()
	if err != nil {
		return chess.NoSquare, err
	}
	sq, err := chess.ParseSquare(s)
	if err != nil {
		return chess.NoSquare, inputError(f.path, "칸 이름은 a1부터 h8까지예요", err)
	}
	return sq, nil
}

// validUCISyntax accepts square, square and an optional lower-case
// promotion letter.
func validUCISyntax(s string) bool {
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

func decodeCastle(fields []jsonField) (chess.CastleSide, error) {
	side := chess.NoCastle
	for _, f := range fields {
		if f.key != "side" {
			return 0, unknownField(f)
		}
		s, err := f.stringValue()
		if err != nil {
			return 0, err
		}
		switch s {
		case "king":
			side = chess.KingSide
		case "queen":
			side = chess.QueenSide
		default:
			return 0, inputError(f.path, "king 또는 queen이어야 해요", nil)
		}
	}
	if side == chess.NoCastle {
		return 0, inputError("payload.side", "캐슬링 방향(king 또는 queen)을 알려 주세요", nil)
	}
	return side, nil
}

func decodeAccept(fields []jsonField) (bool, error) {
	var accept, seen bool
	for _, f := range fields {
		if f.key != "accept" {
			return false, unknownField(f)
		}
		b, err := f.boolValue()
		if err != nil {
			return false, err
		}
		accept, seen = b, true
	}
	if !seen {
		return false, inputError("payload.accept", "수락 여부(true 또는 false)를 알려 주세요", nil)
	}
	return accept, nil
}

func decodePlies(fields []jsonField) (int, error) {
	plies := 0
	for _, f := range fields {
		if f.key != "plies" {
			return 0, unknownField(f)
		}
		n, err := f.intValue()
		if err != nil || (n != 1 && n != 2) {
			return 0, inputError(f.path, "1 또는 2여야 해요", nil)
		}
		plies = n
	}
	return plies, nil
}
