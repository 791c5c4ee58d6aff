package api

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"net/url"
	"strings"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The request bodies of API v1, each decoded by the strict reader
// (jsonin.go) into the service's typed inputs. A decoder takes every field
// it knows and closes each object, so anything else is unknown_field.

// decodeCreate reads POST /v1/games.
func decodeCreate(body []byte) (service.CreateInput, error) {
	var in service.CreateInput
	err := decodeBody(body, true, func(o *object) {
		if o.has("rematchOf") {
			// A rematch is the finished game again (its options and
			// opponent, the colours swapped): nothing to choose.
			for _, k := range []string{"options", "opponent"} {
				if o.has(k) {
					o.fail(&game.InputError{Field: k, Problem: game.ProblemConflict, Want: "rematchOf"})
				}
			}
		}
		in.Options = decodeOptions(o.obj("options"))
		if opp := o.obj("opponent"); opp != nil {
			typ := opp.str("type")
			level := opp.str("level")
			invite := opp.str("invite")
			opp.require("type", typ != nil)
			if typ != nil {
				switch *typ {
				case "human":
					if level != nil {
						opp.fail(game.FieldNotAllowed("opponent.level", "levelForHuman"))
					}
					if invite != nil {
						switch *invite {
						case "open":
						case "private":
							in.Private = true
						default:
							opp.fail(game.FieldOneOf("opponent.invite", "open", "private"))
						}
					}
				case "ai":
					if invite != nil {
						opp.fail(game.FieldNotAllowed("opponent.invite", "inviteForAI"))
					}
					opp.require("level", level != nil)
					if level != nil {
						in.AILevel = *level
						if in.AILevel == "" {
							opp.fail(game.FieldOneOf("opponent.level", game.AILevels...))
						}
					}
				default:
					opp.fail(game.FieldOneOf("opponent.type", "human", "ai"))
				}
			}
			opp.close()
		}
		in.Player = decodePlayer(o.obj("player"))
		if r := o.str("rematchOf"); r != nil {
			if *r == "" {
				o.fail(game.FieldNotAllowed("rematchOf", "empty"))
			}
			in.RematchOf = *r
		}
	})
	return in, err
}

// decodeOptions reads the options object (nil: every default) into the
// game's options; the values themselves are checked by the game.
func decodeOptions(o *object) game.Options { return decodeOptionsIn(o, nil) }

// decodeOptionsIn is decodeOptions for a game in room when the room is not
// one of the options (quick pairing names it beside them): a rated room's
// options are the yeoul rules'.
func decodeOptionsIn(o *object, room *game.Room) game.Options {
	var in game.OptionsInput
	if room != nil {
		r := string(*room)
		in.Room = &r
	}
	if o != nil {
		in.Rules = o.str("rules")
		in.Variant = o.str("variant")
		in.TimeControl = o.str("timeControl")
		in.DrawMode = o.str("drawMode")
		in.ColorAssignment = o.str("colorAssignment")
		in.Hints = o.str("hints")
		in.AutoQueen = o.boolean("autoQueen")
		in.DrawOffer = o.boolean("drawOffer")
		in.FirstMoveSec = o.integer("firstMoveSec")
		in.IdleLimitSec = o.integer("idleLimitSec")
		in.DisconnectGraceSec = o.integer("disconnectGraceSec")
		if r := o.str("room"); r != nil || room == nil {
			in.Room = r
		}
		in.WaitingExpirySec = o.integer("waitingExpirySec")
		if n := o.raw("undo"); n != nil {
			switch v, isInt := integerOf(n); {
			case isInt:
				in.Undo = &game.UndoInput{Number: v, IsNumber: true}
			case n.kind == kindString:
				in.Undo = &game.UndoInput{Text: n.str}
			default:
				o.fail(game.FieldOneOf("options.undo", "off", "1", "3", "unlimited"))
			}
		}
		o.close()
		if o.failed() {
			return game.Options{}
		}
	}
	opts, err := game.BuildOptions(in)
	if err != nil {
		if o != nil {
			o.fail(err)
		}
		return game.Options{}
	}
	return opts
}

func decodePlayer(o *object) service.PlayerInput {
	var p service.PlayerInput
	if o == nil {
		return p
	}
	if id := o.str("id"); id != nil {
		p.ID = *id
	}
	if name := o.str("name"); name != nil {
		p.Name = *name
	}
	o.close()
	return p
}

// decodeJoin reads POST /v1/games/{id}/join.
func decodeJoin(body []byte) (service.JoinInput, error) {
	var in service.JoinInput
	err := decodeBody(body, true, func(o *object) {
		in.Player = decodePlayer(o.obj("player"))
		if code := o.str("inviteCode"); code != nil {
			if *code == "" || len(*code) > 64 {
				o.fail(game.FieldLength("inviteCode", 64))
			}
			in.InviteCode = *code
		}
	})
	return in, err
}

// parseRoom reads a room name.
func parseRoom(field, s string) (game.Room, error) {
	for _, r := range game.Rooms {
		if string(r) == s {
			return r, nil
		}
	}
	names := make([]string, len(game.Rooms))
	for i, r := range game.Rooms {
		names[i] = string(r)
	}
	return "", game.FieldOneOf(field, names...)
}

// lobbyFilter reads the lobby's filter from its query: correspondence=true
// (only correspondence games) or false (only the others); absent: all.
func lobbyFilter(q url.Values) (service.LobbyFilter, error) {
	var f service.LobbyFilter
	if !q.Has("correspondence") {
		return f, nil
	}
	switch q.Get("correspondence") {
	case "true":
		f.Correspondence = new(bool)
		*f.Correspondence = true
	case "false":
		f.Correspondence = new(bool)
	default:
		return f, game.FieldOneOf("correspondence", "true", "false")
	}
	return f, nil
}

// decodeQuick reads POST /v1/lobby/quick: {room, options?}.
func decodeQuick(body []byte) (service.QuickInput, error) {
	var in service.QuickInput
	err := decodeBody(body, false, func(o *object) {
		room := o.str("room")
		o.require("room", room != nil)
		if room != nil {
			r, err := parseRoom("room", *room)
			if err != nil {
				o.fail(err)
			}
			in.Room = r
		}
		if opts := o.obj("options"); opts != nil {
			if opts.raw("room") != nil {
				opts.fail(game.FieldNotAllowed("options.room", "roomOutsideOptions"))
			}
			if o.failed() {
				return
			}
			built := decodeOptionsIn(opts, &in.Room)
			in.Options = &built
		}
	})
	return in, err
}

// decodePresence reads POST /v1/games/{id}/presence.
func decodePresence(body []byte) (bool, error) {
	var connected bool
	err := decodeBody(body, false, func(o *object) {
		c := o.boolean("connected")
		o.require("connected", c != nil)
		if c != nil {
			connected = *c
		}
	})
	return connected, err
}

// decodeAction reads POST /v1/games/{id}/actions: {type, payload?,
// expectedVersion?, requestId?}. The payload's fields depend on the type;
// a field of another type is unknown_field like any other.
func decodeAction(body []byte) (service.ActionInput, error) {
	var in service.ActionInput
	err := decodeBody(body, false, func(o *object) {
		typ := o.str("type")
		o.require("type", typ != nil)
		payloadNode := o.take("payload")
		in.ExpectedVersion = o.integer("expectedVersion")
		if id := o.str("requestId"); id != nil {
			if *id == "" {
				o.fail(game.FieldNotAllowed("requestId", "empty"))
			}
			in.RequestID = *id
		}
		if typ == nil || o.failed() {
			return
		}
		t, ok := game.ParseActionType(*typ)
		switch {
		case *typ == "timeout":
			o.fail(game.FieldNotAllowed("type", "timeoutIsSystem"))
			return
		case !ok:
			names := make([]string, 0, 9)
			for _, at := range game.ActionTypes() {
				names = append(names, at.String())
			}
			o.fail(game.FieldOneOf("type", names...))
			return
		}
		// An absent or null payload is an empty one.
		if payloadNode == nil {
			payloadNode = &node{kind: kindObject, path: "payload"}
		}
		if payloadNode.kind != kindObject {
			o.wrongType(payloadNode, kindObject)
			return
		}
		payload := &object{n: payloadNode, used: make([]bool, len(payloadNode.members)), err: o.err}
		in.Action = decodePayload(t, payload)
		payload.close()
	})
	if err != nil {
		return service.ActionInput{}, err
	}
	if err := service.CheckRequestID(in.RequestID); err != nil {
		return service.ActionInput{}, err
	}
	in.RequestHash = requestHash(in)
	return in, nil
}

// decodePayload reads the payload of an action of type t.
func decodePayload(t game.ActionType, p *object) game.Action {
	a := game.Action{Type: t}
	switch t {
	case game.ActionMove:
		a.Move = decodeMoveInput(p)
	case game.ActionCastle:
		side := p.str("side")
		if side == nil {
			p.require("side", false)
			break
		}
		switch *side {
		case "king":
			a.Castle = chess.KingSide
		case "queen":
			a.Castle = chess.QueenSide
		default:
			p.fail(game.FieldOneOf("payload.side", "king", "queen"))
		}
	case game.ActionRespondUndo, game.ActionRespondDraw:
		accept := p.boolean("accept")
		if accept == nil {
			p.require("accept", false)
			break
		}
		a.Accept = *accept
	case game.ActionRequestUndo:
		if n := p.integer("plies"); n != nil {
			if *n != 1 && *n != 2 {
				p.fail(game.FieldOneOf("payload.plies", "1", "2"))
			}
			a.Plies = int(*n)
		}
	}
	return a
}

// decodeMoveInput reads a move payload: exactly one of {from, to,
// promotion?}, {uci} or {san}.
func decodeMoveInput(p *object) game.MoveInput {
	var in game.MoveInput
	squares := p.has("from") || p.has("to") || p.has("promotion")
	forms := 0
	for _, present := range []bool{squares, p.has("uci"), p.has("san")} {
		if present {
			forms++
		}
	}
	switch {
	case forms == 0:
		p.fail(&game.InputError{Field: "payload", Problem: game.ProblemRequired, Want: "move"})
		return in
	case forms > 1:
		p.fail(game.FieldNotAllowed("payload", "oneMoveForm"))
		return in
	}
	if u := p.str("uci"); u != nil {
		if !game.ValidUCISyntax(*u) {
			p.fail(game.FieldFormat("payload.uci", "uci", nil))
		}
		in.UCI = *u
		return in
	}
	if s := p.str("san"); s != nil {
		if *s == "" || len(*s) > 16 {
			p.fail(game.FieldFormat("payload.san", "san", nil))
		}
		in.SAN = *s
		return in
	}
	in.From = squareField(p, "from")
	in.To = squareField(p, "to")
	if promo := p.str("promotion"); promo != nil {
		switch *promo {
		case "q":
			in.Promotion = chess.Queen
		case "r":
			in.Promotion = chess.Rook
		case "b":
			in.Promotion = chess.Bishop
		case "n":
			in.Promotion = chess.Knight
		default:
			p.fail(game.FieldOneOf("payload.promotion", "q", "r", "b", "n"))
		}
	}
	return in
}

func squareField(p *object, key string) chess.Square {
	s := p.str(key)
	if s == nil {
		p.require(key, false)
		return chess.NoSquare
	}
	sq, err := chess.ParseSquare(*s)
	if err != nil {
		p.fail(game.FieldFormat(p.path(key), "square", err))
		return chess.NoSquare
	}
	return sq
}

// requestHash fingerprints an action request (everything but its request
// id), so a retry is told apart from a new request that reuses the id.
func requestHash(in service.ActionInput) string {
	var b strings.Builder
	a := in.Action
	fmt.Fprintf(&b, "%s|%s|%d|%t|%d", a.Type, a.Move, a.Castle, a.Accept, a.Plies)
	if in.ExpectedVersion != nil {
		fmt.Fprintf(&b, "|v%d", *in.ExpectedVersion)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:8])
}

// decodePosition reads the position part shared by POST /v1/positions and
// POST /v1/ai/move.
func decodePosition(o *object) service.PositionInput {
	in := service.PositionInput{FEN: o.str("fen"), Variant: chess.VariantAuto, Moves: o.strings("moves")}
	if v := o.str("variant"); v != nil {
		variant, ok := chess.ParseVariant(*v)
		if !ok || variant == chess.VariantAuto {
			o.fail(game.FieldOneOf("variant", "standard", "chess960"))
		}
		in.Variant = variant
	}
	return in
}

// decodePositions reads POST /v1/positions.
func decodePositions(body []byte) (service.PositionInput, error) {
	var in service.PositionInput
	err := decodeBody(body, true, func(o *object) { in = decodePosition(o) })
	return in, err
}

// decodeBestMove reads POST /v1/ai/move.
func decodeBestMove(body []byte) (service.BestMoveInput, error) {
	var in service.BestMoveInput
	err := decodeBody(body, true, func(o *object) {
		in.Position = decodePosition(o)
		if l := o.str("level"); l != nil {
			in.Level = *l
			if in.Level == "" {
				o.fail(game.FieldOneOf("level", game.AILevels...))
			}
		}
		positive := func(key string, max int64) int64 {
			n := o.integer(key)
			if n == nil {
				return 0
			}
			if *n < 1 || *n > max {
				o.fail(game.FieldRange(key, 1, max))
			}
			return *n
		}
		// movetimeMs is clamped to 10..10000 by the search policy (as
		// documented); it must only be a positive integer.
		in.MovetimeMs = positive("movetimeMs", math.MaxInt64)
		in.Depth = positive("depth", 64)
		in.MultiPV = positive("multiPv", service.MaxMultiPV)
	})
	return in, err
}

// decodeBody parses body and runs read on its root object, then reports
// the first problem: a syntax error, a field error of read, or an unknown
// field at the top level.
func decodeBody(body []byte, allowEmpty bool, read func(o *object)) error {
	root, err := parseJSON(body, allowEmpty)
	if err != nil {
		return err
	}
	var first error
	o := newRequest(root, &first)
	read(o)
	o.close()
	return first
}
