package game

import "testing"

func TestBuildOptionsDefaults(t *testing.T) {
	if got, err := BuildOptions(OptionsInput{}); err != nil || got != DefaultOptions() {
		t.Errorf("BuildOptions({}) = %+v, %v; want the defaults", got, err)
	}
	d := DefaultOptions()
	if d.Variant != VariantStandard || d.TimeControl != Fischer(10, 5) || d.DrawMode != DrawAuto ||
		d.ColorAssignment != ColorsRandom || d.AutoQueen || d.Undo != 1 || !d.DrawOffer ||
		d.FirstMoveSec != 30 || d.IdleLimitSec != 600 || d.Hints != HintsMoves || d.DisconnectGraceSec != 60 {
		t.Errorf("DefaultOptions() = %+v; want seeds/000 §2 defaults", d)
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
