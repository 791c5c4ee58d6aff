package api

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// The request decoders: options and action payloads (tables carried over
// from the game package when its JSON readers moved here), duplicate keys
// at every depth, and fuzzers.

// parseOptions decodes an options object through the create decoder.
func parseOptions(raw string) (game.Options, error) {
	body := `{"options":` + raw + `}`
	if raw == "" {
		body = `{}`
	}
	in, err := decodeCreate([]byte(body))
	return in.Options, err
}

func TestDecodeOptions(t *testing.T) {
	tests := []struct {
		raw  string
		want func(*game.Options)
	}{
		{`{"variant":"chess960"}`, func(o *game.Options) { o.Variant = game.VariantChess960 }},
		{`{"timeControl":"3+2"}`, func(o *game.Options) { o.TimeControl = game.Fischer(3, 2) }},
		{`{"timeControl":"90+60"}`, func(o *game.Options) { o.TimeControl = game.Fischer(90, 60) }},
		{`{"timeControl":"1+0"}`, func(o *game.Options) { o.TimeControl = game.Fischer(1, 0) }},
		{`{"timeControl":"none"}`, func(o *game.Options) { o.TimeControl = game.TimeControl{Kind: game.TimeNone} }},
		{`{"timeControl":"perMove:120"}`, func(o *game.Options) { o.TimeControl = game.TimeControl{Kind: game.TimePerMove, PerMoveSec: 120} }},
		{`{"drawMode":"fide"}`, func(o *game.Options) { o.DrawMode = game.DrawFIDE }},
		{`{"colorAssignment":"alternate"}`, func(o *game.Options) { o.ColorAssignment = game.ColorsAlternate }},
		{`{"autoQueen":true}`, func(o *game.Options) { o.AutoQueen = true }},
		{`{"undo":"off"}`, func(o *game.Options) { o.Undo = game.UndoOff }},
		{`{"undo":3}`, func(o *game.Options) { o.Undo = 3 }},
		{`{"undo":"3"}`, func(o *game.Options) { o.Undo = 3 }},
		{`{"undo":"unlimited"}`, func(o *game.Options) { o.Undo = game.UndoUnlimited }},
		{`{"drawOffer":false}`, func(o *game.Options) { o.DrawOffer = false }},
		{`{"firstMoveSec":15}`, func(o *game.Options) { o.FirstMoveSec = 15 }},
		{`{"idleLimitSec":300}`, func(o *game.Options) { o.IdleLimitSec = 300 }},
		{`{"hints":"off"}`, func(o *game.Options) { o.Hints = game.HintsOff }},
		{`{"disconnectGraceSec":120}`, func(o *game.Options) { o.DisconnectGraceSec = 120 }},
		{`{"drawOffer":null}`, func(o *game.Options) {}}, // null is the same as absent
		{`{"rules":"standard"}`, func(o *game.Options) {}},
		{`{"timeControl":"days:3"}`, func(o *game.Options) { o.TimeControl = game.TimeControl{Kind: game.TimeDays, Days: 3} }},
		{`{"timeControl":"days:14","room":"free"}`, func(o *game.Options) { o.TimeControl = game.TimeControl{Kind: game.TimeDays, Days: 14} }},
		// The yeoul rules: seeds/003's values, the others as given.
		{`{"rules":"yeoul"}`, yeoul(60)},
		{`{"room":"beginner"}`, func(o *game.Options) { yeoul(60)(o); o.Room = game.RoomBeginner }},
		{`{"rules":"yeoul","timeControl":"perMove:120","variant":"chess960","firstMoveSec":60}`, func(o *game.Options) {
			yeoul(120)(o)
			o.Variant, o.FirstMoveSec = game.VariantChess960, 60
		}},
		{`{"rules":"yeoul","drawOffer":false,"undo":"off","drawMode":"auto","disconnectGraceSec":90}`, yeoul(60)},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			want := game.DefaultOptions()
			tt.want(&want)
			got, err := parseOptions(tt.raw)
			if err != nil || got != want {
				t.Fatalf("decode options %s = %+v, %v; want %+v", tt.raw, got, err, want)
			}
			// The canonical JSON reads back to the same options.
			js, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := parseOptions(string(js))
			if err != nil || again != got {
				t.Errorf("decode options %s = %+v, %v; want %+v", js, again, err, got)
			}
		})
	}
}

// yeoul sets the options the yeoul rules fix, with a per-move time of sec.
func yeoul(sec int) func(*game.Options) {
	return func(o *game.Options) {
		o.Rules, o.TimeControl = game.RulesYeoul, game.TimeControl{Kind: game.TimePerMove, PerMoveSec: sec}
		o.DrawOffer, o.Undo, o.DrawMode, o.DisconnectGraceSec = false, game.UndoOff, game.DrawAuto, game.YeoulGraceSec
	}
}

func TestDecodeOptionsErrors(t *testing.T) {
	tests := []struct {
		raw       string
		wantField string
	}{
		{`[]`, "options"},
		{`"x"`, "options"},
		{`{"colour":"white"}`, "options.colour"},
		{`{"variant":"crazyhouse"}`, "options.variant"},
		{`{"variant":1}`, "options.variant"},
		{`{"timeControl":"0+5"}`, "options.timeControl"},
		{`{"timeControl":"91+0"}`, "options.timeControl"},
		{`{"timeControl":"10+61"}`, "options.timeControl"},
		{`{"timeControl":"10+-1"}`, "options.timeControl"},
		{`{"timeControl":"+10+5"}`, "options.timeControl"},
		{`{"timeControl":"10 + 5"}`, "options.timeControl"},
		{`{"timeControl":"perMove:45"}`, "options.timeControl"},
		{`{"timeControl":600}`, "options.timeControl"},
		{`{"drawMode":"manual"}`, "options.drawMode"},
		{`{"colorAssignment":"white"}`, "options.colorAssignment"},
		{`{"autoQueen":"yes"}`, "options.autoQueen"},
		{`{"undo":2}`, "options.undo"},
		{`{"undo":true}`, "options.undo"},
		{`{"firstMoveSec":20}`, "options.firstMoveSec"},
		{`{"firstMoveSec":30.5}`, "options.firstMoveSec"},
		{`{"idleLimitSec":"600"}`, "options.idleLimitSec"},
		{`{"hints":"threats"}`, "options.hints"},
		{`{"disconnectGraceSec":90}`, "options.disconnectGraceSec"},
		{`{"drawMode":"fide","drawMode":"auto"}`, "options.drawMode"},
		{`{"rules":"fide"}`, "options.rules"},
		{`{"rules":1}`, "options.rules"},
		{`{"rules":"standard","room":"expert"}`, "options.rules"},
		{`{"rules":"yeoul","timeControl":"10+5"}`, "options.timeControl"},
		{`{"room":"intermediate","timeControl":"days:1"}`, "options.timeControl"},
		{`{"rules":"yeoul","drawOffer":true}`, "options.drawOffer"},
		{`{"rules":"yeoul","undo":1}`, "options.undo"},
		{`{"room":"expert","drawMode":"fide"}`, "options.drawMode"},
		{`{"rules":"yeoul","disconnectGraceSec":60}`, "options.disconnectGraceSec"},
		{`{"timeControl":"days:4"}`, "options.timeControl"},
		{`{"timeControl":"days:07"}`, "options.timeControl"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := parseOptions(tt.raw)
			var ie *game.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("decode options %s = %v; want an *InputError", tt.raw, err)
			}
			for _, l := range []Lang{Korean, English} {
				d := describe(err, l)
				if ie.Field != tt.wantField || d.Field != tt.wantField || d.Status != 400 || d.Message == "" {
					t.Errorf("decode options %s (%s): field %q, response %+v; want field %q and a message", tt.raw, l, ie.Field, d, tt.wantField)
				}
			}
		})
	}
}

func FuzzDecodeOptions(f *testing.F) {
	for _, seed := range []string{`{}`, `{"timeControl":"10+5","undo":"unlimited"}`, `{"variant":"chess960","drawMode":"fide"}`, `[1]`, `{"a":{}}`,
		`{"rules":"yeoul","timeControl":"perMove:30"}`, `{"room":"beginner","disconnectGraceSec":90}`, `{"timeControl":"days:7","rules":"standard"}`,
		`{"rules":"yeoul","drawOffer":true}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		o, err := parseOptions(string(raw))
		if err != nil {
			d := describe(err, English)
			if d.Status != 400 || d.Message == "" {
				t.Fatalf("decode options %q: error %v answers %+v; want a 400 with a message", raw, err, d)
			}
			return
		}
		js, _ := json.Marshal(o)
		if again, err := parseOptions(string(js)); err != nil || again != o {
			t.Fatalf("options %+v do not round-trip: %v", o, err)
		}
	})
}
func TestDecodeActionPayloads(t *testing.T) {
	tests := []struct {
		typ     string
		payload string
		want    game.Action
	}{
		{"move", `{"from":"e2","to":"e4"}`, game.Action{Type: game.ActionMove, Move: game.MoveInput{From: chess.E2, To: chess.E4}}},
		{"move", `{"from":"e7","to":"e8","promotion":"n"}`, game.Action{Type: game.ActionMove, Move: game.MoveInput{From: chess.E7, To: chess.E8, Promotion: chess.Knight}}},
		{"move", `{"from":"e2","to":"e4","promotion":null}`, game.Action{Type: game.ActionMove, Move: game.MoveInput{From: chess.E2, To: chess.E4}}},
		{"move", `{"uci":"e7e8q"}`, game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e7e8q"}}},
		{"move", `{"san":"Nf3"}`, game.Action{Type: game.ActionMove, Move: game.MoveInput{SAN: "Nf3"}}},
		{"castle", `{"side":"queen"}`, game.Action{Type: game.ActionCastle, Castle: chess.QueenSide}},
		{"claimDraw", ``, game.Action{Type: game.ActionClaimDraw}},
		{"requestUndo", `{}`, game.Action{Type: game.ActionRequestUndo}},
		{"requestUndo", `{"plies":2}`, game.Action{Type: game.ActionRequestUndo, Plies: 2}},
		{"respondUndo", `{"accept":true}`, game.Action{Type: game.ActionRespondUndo, Accept: true}},
		{"offerDraw", `null`, game.Action{Type: game.ActionOfferDraw}},
		{"respondDraw", `{"accept":false}`, game.Action{Type: game.ActionRespondDraw}},
		{"cancelOffer", `{}`, game.Action{Type: game.ActionCancelOffer}},
		{"resign", `{}`, game.Action{Type: game.ActionResign}},
		{"ready", ``, game.Action{Type: game.ActionReady}},
		{"ready", `null`, game.Action{Type: game.ActionReady}},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.payload, func(t *testing.T) {
			got, err := decodeAction(actionBody(tt.typ, tt.payload))
			if err != nil || got.Action != tt.want {
				t.Errorf("decodeAction(%q, %s) = %+v, %v; want %+v", tt.typ, tt.payload, got.Action, err, tt.want)
			}
		})
	}
}

func TestDecodeActionPayloadErrors(t *testing.T) {
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
		{"ready", `{"ready":true}`, "payload.ready"},
		{"Ready", `{}`, "type"},
		{"offerDraw", `{} x`, ""}, // the body is not JSON
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.payload, func(t *testing.T) {
			_, err := decodeAction(actionBody(tt.typ, tt.payload))
			for _, l := range []Lang{Korean, English} {
				d := describe(err, l)
				if d.Status != 400 || d.Field != tt.wantField || d.Message == "" {
					t.Errorf("decodeAction(%q, %s) (%s) = %v → %+v; want a 400 for field %q with a message", tt.typ, tt.payload, l, err, d, tt.wantField)
				}
			}
		})
	}
}

func FuzzDecodeAction(f *testing.F) {
	seeds := []struct{ typ, payload string }{
		{"move", `{"from":"e2","to":"e4"}`}, {"move", `{"uci":"e7e8q"}`}, {"move", `{"san":"O-O"}`},
		{"castle", `{"side":"king"}`}, {"requestUndo", `{"plies":1}`}, {"respondDraw", `{"accept":true}`},
		{"resign", ``}, {"move", `{"from":"e2","to":"e4","promotion":"q","x":[1,{}]}`},
		{"ready", ``}, {"ready", `{}`}, {"ready", `{"at":1}`},
	}
	for _, s := range seeds {
		f.Add(s.typ, []byte(s.payload))
	}
	start, ready := fuzzGame(f, game.DefaultOptions()), fuzzYeoulGame(f)
	f.Fuzz(func(t *testing.T, typ string, payload []byte) {
		in, err := decodeAction(actionBody(typ, string(payload)))
		if err != nil {
			if d := describe(err, Korean); d.Status != 400 || d.Message == "" {
				t.Fatalf("decodeAction(%q, %q) error %v answers %+v; want a 400 with a message", typ, payload, err, d)
			}
			return
		}
		if in.Action.Type.String() != typ {
			t.Fatalf("decodeAction(%q) gave type %s", typ, in.Action.Type)
		}
		// Whatever decodes must be safe to reduce, in a game being played
		// and in one in its ready step.
		for _, s := range []*game.State{start, ready} {
			if _, _, err := game.Reduce(s, game.Act{By: chess.White, Action: in.Action}, time.UnixMilli(s.CreatedAt+1000)); err != nil {
				var ie *game.InputError
				var re *game.RuleError
				if !errors.As(err, &ie) && !errors.As(err, &re) {
					t.Fatalf("Reduce(%+v) in phase %s = %v; want nil, *InputError or *RuleError", in.Action, s.Phase, err)
				}
			}
		}
	})
}

// actionBody is an action request with the given type and raw payload.
func actionBody(typ, payload string) []byte {
	t, _ := json.Marshal(typ)
	if payload == "" {
		return []byte(`{"type":` + string(t) + `}`)
	}
	return []byte(`{"type":` + string(t) + `,"payload":` + payload + `}`)
}

// fuzzGame is a game joined by its second player for the action fuzzer to
// act on: in progress under the standard rules, in its ready step under
// the yeoul rules.
func fuzzGame(f *testing.F, o game.Options) *game.State {
	s, _, err := game.New(game.NewGame{GameID: "fuzz-game-1", Options: o, Host: game.Player{ID: "a"}, Seed: 1}, time.UnixMilli(1_700_000_000_000))
	if err != nil {
		f.Fatal(err)
	}
	s, _, err = game.Reduce(s, game.Join{Player: game.Player{ID: "b"}}, time.UnixMilli(1_700_000_000_000))
	if err != nil {
		f.Fatal(err)
	}
	return s
}

// fuzzYeoulGame is a game of the yeoul rules in its ready step.
func fuzzYeoulGame(f *testing.F) *game.State {
	o := game.DefaultOptionsFor(game.RoomIntermediate)
	o.Room = game.RoomFree
	s := fuzzGame(f, o)
	if s.Phase != game.PhaseReady {
		f.Fatalf("a yeoul game after the join is %s", s.Phase)
	}
	return s
}
