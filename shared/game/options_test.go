package game

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestParseOptionsDefaults(t *testing.T) {
	for _, raw := range []string{"", "null", "{}", " { } "} {
		got, err := ParseOptions(json.RawMessage(raw))
		if err != nil || got != DefaultOptions() {
			t.Errorf("ParseOptions(%q) = %+v, %v; want the defaults", raw, got, err)
		}
	}
	d := DefaultOptions()
	if d.Variant != VariantStandard || d.TimeControl != Fischer(10, 5) || d.DrawMode != DrawAuto ||
		d.ColorAssignment != ColorsRandom || d.AutoQueen || d.Undo != 1 || !d.DrawOffer ||
		d.FirstMoveSec != 30 || d.IdleLimitSec != 600 || d.Hints != HintsMoves || d.DisconnectGraceSec != 60 {
		t.Errorf("DefaultOptions() = %+v; want seeds/000 §2 defaults", d)
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		raw  string
		want func(*Options)
	}{
		{`{"variant":"chess960"}`, func(o *Options) { o.Variant = VariantChess960 }},
		{`{"timeControl":"3+2"}`, func(o *Options) { o.TimeControl = Fischer(3, 2) }},
		{`{"timeControl":"90+60"}`, func(o *Options) { o.TimeControl = Fischer(90, 60) }},
		{`{"timeControl":"1+0"}`, func(o *Options) { o.TimeControl = Fischer(1, 0) }},
		{`{"timeControl":"none"}`, func(o *Options) { o.TimeControl = TimeControl{Kind: TimeNone} }},
		{`{"timeControl":"perMove:120"}`, func(o *Options) { o.TimeControl = TimeControl{Kind: TimePerMove, PerMoveSec: 120} }},
		{`{"drawMode":"fide"}`, func(o *Options) { o.DrawMode = DrawFIDE }},
		{`{"colorAssignment":"alternate"}`, func(o *Options) { o.ColorAssignment = ColorsAlternate }},
		{`{"autoQueen":true}`, func(o *Options) { o.AutoQueen = true }},
		{`{"undo":"off"}`, func(o *Options) { o.Undo = UndoOff }},
		{`{"undo":3}`, func(o *Options) { o.Undo = 3 }},
		{`{"undo":"3"}`, func(o *Options) { o.Undo = 3 }},
		{`{"undo":"unlimited"}`, func(o *Options) { o.Undo = UndoUnlimited }},
		{`{"drawOffer":false}`, func(o *Options) { o.DrawOffer = false }},
		{`{"firstMoveSec":15}`, func(o *Options) { o.FirstMoveSec = 15 }},
		{`{"idleLimitSec":300}`, func(o *Options) { o.IdleLimitSec = 300 }},
		{`{"hints":"off"}`, func(o *Options) { o.Hints = HintsOff }},
		{`{"disconnectGraceSec":120}`, func(o *Options) { o.DisconnectGraceSec = 120 }},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			want := DefaultOptions()
			tt.want(&want)
			got, err := ParseOptions(json.RawMessage(tt.raw))
			if err != nil || got != want {
				t.Fatalf("ParseOptions(%s) = %+v, %v; want %+v", tt.raw, got, err, want)
			}
			// The canonical JSON reads back to the same options.
			js, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			again, err := ParseOptions(js)
			if err != nil || again != got {
				t.Errorf("ParseOptions(%s) = %+v, %v; want %+v", js, again, err, got)
			}
		})
	}
}

func TestParseOptionsErrors(t *testing.T) {
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
		{`{"drawOffer":null}`, "options.drawOffer"},
		{`{"firstMoveSec":20}`, "options.firstMoveSec"},
		{`{"firstMoveSec":30.5}`, "options.firstMoveSec"},
		{`{"idleLimitSec":"600"}`, "options.idleLimitSec"},
		{`{"hints":"threats"}`, "options.hints"},
		{`{"disconnectGraceSec":90}`, "options.disconnectGraceSec"},
		{`{"drawMode":"fide","drawMode":"auto"}`, "options.drawMode"},
		{`{"drawMode":"fide"} {}`, "options"},
		{`{"drawMode":`, "options.drawMode"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			_, err := ParseOptions(json.RawMessage(tt.raw))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("ParseOptions(%s) = %v; want an *InputError", tt.raw, err)
			}
			if ie.Field != tt.wantField || ie.Message == "" {
				t.Errorf("ParseOptions(%s) field %q message %q; want field %q and a message", tt.raw, ie.Field, ie.Message, tt.wantField)
			}
		})
	}
}

func TestTimeControlText(t *testing.T) {
	for _, text := range []string{"3+2", "5+0", "5+3", "10+0", "10+5", "15+10", "30+0", "1+60", "none", "perMove:30", "perMove:60", "perMove:120"} {
		tc, err := ParseTimeControl(text)
		if err != nil || tc.String() != text {
			t.Errorf("ParseTimeControl(%q) = %v, %v; want it to print back", text, tc, err)
		}
	}
}

func FuzzParseOptions(f *testing.F) {
	for _, seed := range []string{`{}`, `{"timeControl":"10+5","undo":"unlimited"}`, `{"variant":"chess960","drawMode":"fide"}`, `[1]`, `{"a":{}}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		o, err := ParseOptions(raw)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) || ie.Field == "" {
				t.Fatalf("ParseOptions(%q) error %v is not an *InputError with a field", raw, err)
			}
			return
		}
		if err := o.validate(); err != nil {
			t.Fatalf("ParseOptions(%q) = %+v, which does not validate: %v", raw, o, err)
		}
		js, _ := json.Marshal(o)
		if again, err := ParseOptions(js); err != nil || again != o {
			t.Fatalf("options %+v do not round-trip: %v", o, err)
		}
	})
}
