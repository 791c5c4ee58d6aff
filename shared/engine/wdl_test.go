package engine

import (
	"testing"

	"chessapi/shared/chess"
)

// wdlPositions span the material range of the model.
var wdlPositions = []struct{ name, fen string }{
	{"start", chess.StartFEN},
	{"middlegame", "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8"},
	{"rook ending", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"},
	{"pawn ending", "8/5k2/8/3P4/8/2K5/8/8 w - - 0 1"},
	{"bare kings", "8/5k2/8/8/8/2K5/8/8 b - - 0 1"},
	{"nil position", ""},
}

func wdlPos(t *testing.T, fen string) *chess.Position {
	if fen == "" {
		return nil
	}
	return mustFEN(t, fen)
}

func TestWDLSumsAndSymmetry(t *testing.T) {
	for _, tc := range wdlPositions {
		t.Run(tc.name, func(t *testing.T) {
			pos := wdlPos(t, tc.fen)
			prevWin, prevLoss := -1, 1001
			for cp := -3000; cp <= 3000; cp += 7 {
				w, d, l := WDL(Score{CP: cp}, pos)
				if w+d+l != 1000 || w < 0 || d < 0 || l < 0 {
					t.Fatalf("WDL(cp %d) = %d/%d/%d; want non-negative, summing to 1000", cp, w, d, l)
				}
				if w2, d2, l2 := WDL(Score{CP: -cp}, pos); w2 != l || l2 != w || d2 != d {
					t.Fatalf("WDL(cp %d) = %d/%d/%d but WDL(cp %d) = %d/%d/%d; want win and loss swapped", cp, w, d, l, -cp, w2, d2, l2)
				}
				if w < prevWin || l > prevLoss {
					t.Fatalf("WDL(cp %d) = %d/%d/%d after win %d loss %d; want win non-decreasing, loss non-increasing",
						cp, w, d, l, prevWin, prevLoss)
				}
				prevWin, prevLoss = w, l
			}
			if w, _, l := WDL(Score{}, pos); w != l {
				t.Errorf("WDL(cp 0) win %d, loss %d; want equal", w, l)
			}
			if w, _, _ := WDL(Score{CP: 3000}, pos); w < 990 {
				t.Errorf("WDL(cp 3000) win = %d; want at least 990", w)
			}
		})
	}
}

func TestWDL(t *testing.T) {
	start := mustFEN(t, chess.StartFEN)
	ending := mustFEN(t, "8/5k2/8/3P4/8/2K5/8/8 w - - 0 1")
	type wdl struct{ w, d, l int }
	tests := []struct {
		score Score
		pos   *chess.Position
		want  func(wdl) bool
		what  string
	}{
		{Score{Mate: 1}, start, func(r wdl) bool { return r == wdl{1000, 0, 0} }, "1000/0/0"},
		{Score{Mate: 30}, ending, func(r wdl) bool { return r == wdl{1000, 0, 0} }, "1000/0/0"},
		{Score{Mate: -1}, start, func(r wdl) bool { return r == wdl{0, 0, 1000} }, "0/0/1000"},
		{Score{Mate: -12, CP: 500}, ending, func(r wdl) bool { return r == wdl{0, 0, 1000} }, "0/0/1000"},
		{Score{CP: 0}, start, func(r wdl) bool { return r.w == r.l && r.d > r.w }, "win == loss, draw the likeliest"},
		{Score{CP: 20}, start, func(r wdl) bool { return r.w > r.l && r.w < 500 }, "win > loss, win < 500"},
		{Score{CP: 900}, start, func(r wdl) bool { return r.w > 900 }, "win > 900 a queen up"},
		{Score{CP: -900}, start, func(r wdl) bool { return r.l > 900 }, "loss > 900 a queen down"},
		{Score{CP: 100000}, start, func(r wdl) bool { return r == wdl{1000, 0, 0} }, "1000/0/0 (clamped)"},
		{Score{CP: -100000}, ending, func(r wdl) bool { return r == wdl{0, 0, 1000} }, "0/0/1000 (clamped)"},
	}
	for _, tc := range tests {
		w, d, l := WDL(tc.score, tc.pos)
		if !tc.want(wdl{w, d, l}) {
			t.Errorf("WDL(%v, %s) = %d/%d/%d; want %s", tc.score, tc.pos.FEN(), w, d, l, tc.what)
		}
	}
}

func TestWDLMaterial(t *testing.T) {
	tests := []struct {
		fen  string
		want int
	}{
		{chess.StartFEN, 78},
		{"8/5k2/8/3P4/8/2K5/8/8 w - - 0 1", 1},
		{"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 16},
		{"4k3/8/8/3q4/4P3/2N5/8/4K3 w - - 0 1", 13},
	}
	for _, tc := range tests {
		if got := wdlMaterial(mustFEN(t, tc.fen)); got != tc.want {
			t.Errorf("wdlMaterial(%q) = %d; want %d", tc.fen, got, tc.want)
		}
	}
	if got := wdlMaterial(nil); got != wdlMaterialRef {
		t.Errorf("wdlMaterial(nil) = %d; want %d", got, wdlMaterialRef)
	}
}
