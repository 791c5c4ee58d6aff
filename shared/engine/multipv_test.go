package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// checkLines asserts the contract of Result.Lines for a search of pos that
// asked for multiPV lines.
func checkLines(t *testing.T, pos *chess.Position, multiPV int, res Result) {
	t.Helper()
	var list chess.MoveList
	pos.GenerateMoves(&list, chess.GenAll)
	want := min(max(multiPV, 1), MaxMultiPV, list.Len())
	if len(res.Lines) != want {
		t.Fatalf("Search(%s, MultiPV %d) gave %d lines; want %d", pos.FEN(), multiPV, len(res.Lines), want)
	}
	l0 := res.Lines[0]
	if l0.Move != res.BestMove || l0.Score != res.Score || fmt.Sprint(l0.PV) != fmt.Sprint(res.PV) {
		t.Errorf("Search(%s) Lines[0] = %v %v %v; want BestMove %v %v %v", pos.FEN(), l0.Move, l0.Score, l0.PV,
			res.BestMove, res.Score, res.PV)
	}
	seen := map[chess.Move]bool{}
	for i, l := range res.Lines {
		if seen[l.Move] {
			t.Errorf("Search(%s) line %d repeats %s", pos.FEN(), i+1, pos.UCI(l.Move))
		}
		seen[l.Move] = true
		if !list.Contains(l.Move) {
			t.Fatalf("Search(%s) line %d = %v; not legal", pos.FEN(), i+1, l.Move)
		}
		if len(l.PV) == 0 || l.PV[0] != l.Move {
			t.Errorf("Search(%s) line %d PV %v does not start with its move %v", pos.FEN(), i+1, l.PV, l.Move)
		}
		checkPV(t, pos, l.PV)
		if l.Depth != res.Depth {
			t.Errorf("Search(%s) line %d depth = %d; want the result's %d", pos.FEN(), i+1, l.Depth, res.Depth)
		}
		if i > 0 && scoreOrder(l.Score) > scoreOrder(res.Lines[i-1].Score) {
			t.Errorf("Search(%s) line %d (%v) scores above line %d (%v)", pos.FEN(), i+1, l.Score, i, res.Lines[i-1].Score)
		}
	}
}

// scoreOrder maps a Score to a number that orders scores as the search does.
func scoreOrder(s Score) int {
	switch {
	case s.Mate > 0:
		return 1_000_000 - s.Mate
	case s.Mate < 0:
		return -1_000_000 - s.Mate
	}
	return s.CP
}

func TestMultiPVLines(t *testing.T) {
	fens := []string{
		chess.StartFEN,
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
		"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
		"nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w GBgb - 0 1",
		"7k/8/8/8/8/8/6PP/7K w - - 0 1",  // five legal moves
		"k7/8/2K5/8/8/8/7P/8 b - - 0 1",  // two legal moves
		"k7/8/1K6/8/8/8/8/1R6 b - - 0 1", // one legal move
	}
	limits := []struct {
		name string
		p    Params
	}{
		{"depth 6", Params{Depth: 6}},
		{"10ms", Params{MoveTime: 10 * time.Millisecond}},
		{"nodes 3000", Params{Nodes: 3000}},
	}
	for _, fen := range fens {
		for _, lim := range limits {
			for i, n := range []int{0, 1, 2, 3, 5, 9} {
				ev := allEvaluations[i%2]
				t.Run(fmt.Sprintf("%s/%s/%d/%s", fen, lim.name, n, ev), func(t *testing.T) {
					pos := mustFEN(t, fen)
					p := lim.p
					p.Position, p.MultiPV = pos, n
					res, err := New(Options{HashMB: 4, Evaluation: ev}).Search(context.Background(), p)
					if err != nil {
						t.Fatal(err)
					}
					checkLines(t, pos, n, res)
				})
			}
		}
	}
}

// TestMultiPVOnePVUnchanged: MultiPV 0 and 1 search exactly as without the
// option (same move, score and node count), so the bench signature holds.
func TestMultiPVOnePVUnchanged(t *testing.T) {
	for _, fen := range benchPositions[:5] {
		pos := mustFEN(t, fen)
		var got []string
		for _, n := range []int{0, 1} {
			res, err := New(Options{HashMB: 16}).Search(context.Background(), Params{Position: pos, Depth: 8, MultiPV: n})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %v %d", pos.UCI(res.BestMove), res.Score, res.Nodes))
		}
		if got[0] != got[1] {
			t.Errorf("Search(%s, depth 8) MultiPV 0 = %s; MultiPV 1 = %s; want equal", fen, got[0], got[1])
		}
	}
}

// TestMultiPVFindsTheAlternatives: the queen can be taken two ways, every
// other move loses it, so lines 1 and 2 are the two captures and line 3 is
// far behind (without the exclusion of earlier lines a capture would repeat).
func TestMultiPVFindsTheAlternatives(t *testing.T) {
	pos := mustFEN(t, "4k3/8/8/3q4/4P3/2N5/8/4K3 w - - 0 1")
	res, err := New(Options{HashMB: 4}).Search(context.Background(), Params{Position: pos, Depth: 6, MultiPV: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, pos, 3, res)
	got := map[string]bool{pos.UCI(res.Lines[0].Move): true, pos.UCI(res.Lines[1].Move): true}
	if !got["e4d5"] || !got["c3d5"] {
		t.Errorf("Search(MultiPV 3) lines 1-2 = %v; want e4d5 and c3d5", got)
	}
	if res.Lines[1].Score.CP < 300 || res.Lines[2].Score.CP > res.Lines[1].Score.CP-500 {
		t.Errorf("Search(MultiPV 3) scores = %v, %v, %v; want two captures above 300 and a third 500 below",
			res.Lines[0].Score, res.Lines[1].Score, res.Lines[2].Score)
	}
}

// TestMultiPVMateFirst: in every mate-in-1 fixture the mate is line 1 with
// five lines, also at 10 ms.
func TestMultiPVMateFirst(t *testing.T) {
	for _, fx := range readMateFixtures(t) {
		if fx.n != 1 {
			continue
		}
		for _, mt := range []time.Duration{10 * time.Millisecond, 200 * time.Millisecond} {
			pos := mustFEN(t, fx.fen)
			res, err := New(Options{HashMB: 4}).Search(context.Background(), Params{Position: pos, MoveTime: mt, MultiPV: 5})
			if err != nil {
				t.Fatal(err)
			}
			checkLines(t, pos, 5, res)
			child := *pos
			child.Play(res.Lines[0].Move)
			if res.Lines[0].Score != (Score{Mate: 1}) || !child.IsCheckmate() {
				t.Errorf("Search(%s, %v, MultiPV 5) line 1 = %s %v; want the mate in 1", fx.fen, mt,
					pos.UCI(res.Lines[0].Move), res.Lines[0].Score)
			}
		}
	}
}

// TestMultiPVStoppedKeepsLastIteration: a search stopped inside an
// iteration answers exactly the lines of the last completed one. Stopping
// by nodes makes it deterministic: the node count at the end of each
// iteration is read from a first search, then a second one is stopped in
// the middle of iteration d+1 and must equal a search to depth d.
func TestMultiPVStoppedKeepsLastIteration(t *testing.T) {
	pos := mustFEN(t, "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8")
	const lines, d = 4, 6
	search := func(p Params) Result {
		t.Helper()
		p.Position, p.MultiPV = pos, lines
		res, err := New(Options{HashMB: 4}).Search(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	var endOf [d + 2]uint64 // nodes at the end of each iteration
	search(Params{Depth: d + 1, Info: func(i Info) {
		if i.Bound == BoundExact {
			endOf[i.Depth] = i.Nodes
		}
	}})
	// The node limit is checked every pollInterval nodes.
	limit := (endOf[d]/pollInterval + 1) * pollInterval
	if limit+pollInterval >= endOf[d+1] {
		t.Fatalf("iteration %d takes only %d nodes; pick a deeper d", d+1, endOf[d+1]-endOf[d])
	}
	stopped := search(Params{Nodes: limit})
	full := search(Params{Depth: d})
	if stopped.Depth != d {
		t.Fatalf("Search(Nodes %d) depth = %d; want %d (stopped inside iteration %d)", limit, stopped.Depth, d, d+1)
	}
	checkLines(t, pos, lines, stopped)
	if a, b := fmt.Sprint(stopped.Lines), fmt.Sprint(full.Lines); a != b {
		t.Errorf("Search(Nodes %d).Lines = %s; want those of Search(Depth %d) = %s", limit, a, d, b)
	}
}

// TestMultiPVStoppedInFirstIteration: stopped before any iteration
// completes, a multi-PV search still answers as many lines as asked, ranked
// by the static evaluation after each move.
func TestMultiPVStoppedInFirstIteration(t *testing.T) {
	// Kiwipete: 48 moves and many captures, so the first iteration of five
	// lines runs past the first clock check.
	pos := mustFEN(t, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
	var first uint64
	if _, err := New(Options{HashMB: 4}).Search(context.Background(), Params{Position: pos, Depth: 1, MultiPV: 5,
		Info: func(i Info) { first = i.Nodes }}); err != nil {
		t.Fatal(err)
	}
	if first <= pollInterval {
		t.Fatalf("the first iteration takes %d nodes; want more than %d for this test", first, pollInterval)
	}
	res, err := New(Options{HashMB: 4}).Search(context.Background(), Params{Position: pos, Nodes: 1, MultiPV: 5})
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, pos, 5, res)
	if res.Nodes >= first || res.Depth != 1 {
		t.Errorf("Search(Nodes 1) searched %d nodes, depth %d; want a stop inside the first iteration (%d nodes)",
			res.Nodes, res.Depth, first)
	}
}

func TestWeakenedLevelsAnswerOneLine(t *testing.T) {
	pos := mustFEN(t, "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
	for _, level := range []Level{LevelEasy, LevelNormal, LevelHard} {
		res, err := New(Options{HashMB: 4}).Search(context.Background(),
			Params{Position: pos, Level: level, MultiPV: 5, Seed: 3, MoveTime: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		checkLines(t, pos, 1, res)
	}
	// A mate found by the mate probe is one line too.
	mate := mustFEN(t, "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
	res, err := New(Options{HashMB: 4}).Search(context.Background(), Params{Position: mate, Level: LevelEasy, MultiPV: 3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, mate, 1, res)
}

func TestMultiPVInfoLines(t *testing.T) {
	pos := mustFEN(t, chess.StartFEN)
	byDepth := map[int][]int{}
	res, err := New(Options{HashMB: 4}).Search(context.Background(), Params{Position: pos, Depth: 5, MultiPV: 3,
		Info: func(i Info) {
			if i.Bound == BoundExact {
				byDepth[i.Depth] = append(byDepth[i.Depth], i.MultiPV)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	for d := 1; d <= res.Depth; d++ {
		if got := fmt.Sprint(byDepth[d]); got != "[1 2 3]" {
			t.Errorf("Info lines at depth %d = multipv %s; want [1 2 3]", d, got)
		}
	}
}

func TestOneLegalMoveHasOneLine(t *testing.T) {
	pos := mustFEN(t, "R6k/8/5K2/8/8/8/8/8 b - - 0 1")
	res, err := New(Options{HashMB: 1}).Search(context.Background(), Params{Position: pos, MultiPV: 5, MoveTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, pos, 5, res)
}
