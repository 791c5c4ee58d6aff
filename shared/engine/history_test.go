package engine

import (
	"testing"

	"chessapi/shared/chess"
)

// TestCaptureHistoryOrdersCaptures: two captures of the same piece are
// ordered by the attacker (least valuable first) until the capture history
// says the other one cut off; a quiet cutoff counts against the captures
// tried before it.
func TestCaptureHistoryOrdersCaptures(t *testing.T) {
	pos, err := chess.ParseFEN("4k3/8/8/3p4/8/1BN5/8/4K3 w - - 0 1")
	if err != nil {
		t.Fatal(err)
	}
	knight, _ := pos.ParseUCI("c3d5")
	bishop, _ := pos.ParseUCI("b3d5")
	first := func(h *heuristics) chess.Move {
		var mp movePicker
		mp.init(pos, chess.GenAll, chess.NoMove, h, 0, chess.NoMove)
		m, _ := mp.next()
		return m
	}
	var h heuristics
	if got := first(&h); got != knight {
		t.Fatalf("first move %s; want the knight's capture (least valuable attacker)", pos.UCI(got))
	}
	h.rewardCapture(pos, bishop, 10, []chess.Move{knight})
	if got := first(&h); got != bishop {
		t.Fatalf("after the bishop's capture cut off: first move %s; want it", pos.UCI(got))
	}
	if *h.captureEntry(pos, knight) >= 0 {
		t.Errorf("the knight's capture tried before the cutoff has history %d; want a malus", *h.captureEntry(pos, knight))
	}
	before := *h.captureEntry(pos, bishop)
	h.rewardCapture(pos, chess.NoMove, 10, []chess.Move{bishop})
	if after := *h.captureEntry(pos, bishop); after >= before {
		t.Errorf("a quiet cutoff after the bishop's capture left its history at %d (was %d); want less", after, before)
	}
	h.clear()
	if *h.captureEntry(pos, bishop) != 0 {
		t.Error("clear kept the capture history")
	}
}
