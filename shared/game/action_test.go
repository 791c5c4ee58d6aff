package game

import (
	"encoding/json"
	"errors"
	"testing"

	"chessapi/shared/chess"
)

func TestDecodeAction(t *testing.T) {
	tests := []struct {
		typ     string
		payload string
		want    Action
	}{
		{"move", `{"from":"e2","to":"e4"}`, Action{Type: ActionMove, Move: MoveInput{From: chess.E2, To: chess.E4}}},
		{"move", `{"from":"e7","to":"e8","promotion":"n"}`, Action{Type: ActionMove, Move: MoveInput{From: chess.E7, To: chess.E8, Promotion: chess.Knight}}},
		{"move", `{"from":"e2","to":"e4","promotion":null}`, Action{Type: ActionMove, Move: MoveInput{From: chess.E2, To: chess.E4}}},
		{"move", `{"uci":"e7e8q"}`, Action{Type: ActionMove, Move: MoveInput{UCI: "e7e8q"}}},
		{"move", `{"san":"Nf3"}`, Action{Type: ActionMove, Move: MoveInput{SAN: "Nf3"}}},
		{"castle", `{"side":"queen"}`, Action{Type: ActionCastle, Castle: chess.QueenSide}},
		{"claimDraw", ``, Action{Type: ActionClaimDraw}},
		{"requestUndo", `{}`, Action{Type: ActionRequestUndo}},
		{"requestUndo", `{"plies":2}`, Action{Type: ActionRequestUndo, Plies: 2}},
		{"respondUndo", `{"accept":true}`, Action{Type: ActionRespondUndo, Accept: true}},
		{"offerDraw", `null`, Action{Type: ActionOfferDraw}},
		{"respondDraw", `{"accept":false}`, Action{Type: ActionRespondDraw}},
		{"cancelOffer", `{}`, Action{Type: ActionCancelOffer}},
		{"resign", `{}`, Action{Type: ActionResign}},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.payload, func(t *testing.T) {
			got, err := DecodeAction(tt.typ, json.RawMessage(tt.payload))
			if err != nil || got != tt.want {
				t.Errorf("DecodeAction(%q, %s) = %+v, %v; want %+v", tt.typ, tt.payload, got, err, tt.want)
			}
		})
	}
}

func TestDecodeActionErrors(t *testing.T) {
	tests := []struct {
		typ       string
		payload   string
		wantField string
	}{
		{"jump", `{}`, "type"},
		{"timeout", `{}`, "type"},
		{"Move", `{}`, "type"},
		{"move", `[]`, "payload"},
		{"move", `{}`, "payload"},
		{"move", `{"from":"e2","to":"e4","uci":"e2e4"}`, "payload"},
		{"move", `{"uci":"e2e4","san":"e4"}`, "payload"},
		{"move", `{"from":"e2"}`, "payload.to"},
		{"move", `{"to":"e4"}`, "payload.from"},
		{"move", `{"promotion":"q"}`, "payload.from"},
		{"move", `{"from":"e9","to":"e4"}`, "payload.from"},
		{"move", `{"from":"e2","to":4}`, "payload.to"},
		{"move", `{"from":"e7","to":"e8","promotion":"k"}`, "payload.promotion"},
		{"move", `{"from":"e7","to":"e8","promotion":"Q"}`, "payload.promotion"},
		{"move", `{"uci":"e2-e4"}`, "payload.uci"},
		{"move", `{"uci":"e7e8k"}`, "payload.uci"},
		{"move", `{"san":""}`, "payload.san"},
		{"move", `{"san":["e4"]}`, "payload.san"},
		{"move", `{"from":"e2","to":"e4","extra":1}`, "payload.extra"},
		{"move", `{"from":"e2","from":"e3","to":"e4"}`, "payload.from"},
		{"castle", `{}`, "payload.side"},
		{"castle", `{"side":"long"}`, "payload.side"},
		{"respondUndo", `{}`, "payload.accept"},
		{"respondDraw", `{"accept":"yes"}`, "payload.accept"},
		{"requestUndo", `{"plies":3}`, "payload.plies"},
		{"requestUndo", `{"plies":1.5}`, "payload.plies"},
		{"resign", `{"reason":"bored"}`, "payload.reason"},
		{"claimDraw", `{"x":null}`, "payload.x"},
		{"offerDraw", `{} x`, "payload"},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.payload, func(t *testing.T) {
			_, err := DecodeAction(tt.typ, json.RawMessage(tt.payload))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("DecodeAction(%q, %s) = %v; want an *InputError", tt.typ, tt.payload, err)
			}
			if ie.Field != tt.wantField || ie.Message == "" {
				t.Errorf("DecodeAction(%q, %s) field %q message %q; want field %q and a message", tt.typ, tt.payload, ie.Field, ie.Message, tt.wantField)
			}
		})
	}
}

func TestMalformedSANIsInputError(t *testing.T) {
	s := newGame(t, DefaultOptions())
	_, _, err := Apply(s, white, Action{Type: ActionMove, Move: MoveInput{SAN: "Zz9"}}, at(1000))
	var ie *InputError
	if !errors.As(err, &ie) || ie.Field != "payload.san" {
		t.Errorf("Apply(san Zz9) = %v; want an *InputError for payload.san", err)
	}
	_, _, err = Apply(s, white, Action{Type: ActionMove, Move: MoveInput{SAN: "Nd2"}}, at(1000))
	if ruleCode(err) != CodeIllegalMove {
		t.Errorf("Apply(san Nd2) = %v; want illegal_move", err)
	}
}

func FuzzDecodeAction(f *testing.F) {
	seeds := []struct{ typ, payload string }{
		{"move", `{"from":"e2","to":"e4"}`}, {"move", `{"uci":"e7e8q"}`}, {"move", `{"san":"O-O"}`},
		{"castle", `{"side":"king"}`}, {"requestUndo", `{"plies":1}`}, {"respondDraw", `{"accept":true}`},
		{"resign", ``}, {"move", `{"from":"e2","to":"e4","promotion":"q","x":[1,{}]}`},
	}
	for _, s := range seeds {
		f.Add(s.typ, []byte(s.payload))
	}
	f.Fuzz(func(t *testing.T, typ string, payload []byte) {
		a, err := DecodeAction(typ, payload)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field == "" || ie.Message == "" {
				t.Fatalf("DecodeAction(%q, %q) error %v is not an *InputError with field and message", typ, payload, err)
			}
			return
		}
		if a.Type.String() != typ {
			t.Fatalf("DecodeAction(%q) gave type %s", typ, a.Type)
		}
		// Whatever decodes must be safe to apply.
		s := newGame(t, DefaultOptions())
		if _, _, err := Apply(s, white, a, at(1000)); err != nil {
			var ie *InputError
			var re *RuleError
			if !errors.As(err, &ie) && !errors.As(err, &re) {
				t.Fatalf("Apply(%+v) = %v; want nil, *InputError or *RuleError", a, err)
			}
		}
	})
}
