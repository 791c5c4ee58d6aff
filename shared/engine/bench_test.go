package engine

import (
	"context"
	"fmt"
	"testing"

	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue"
)

// BenchmarkSearch reports search speed (nodes/s) over the bench positions
// at a fixed depth: go test -bench Search -run XXX ./shared/engine
// (network and classical evaluation).
func BenchmarkSearch(b *testing.B) {
	for _, ev := range []Evaluation{EvalNetwork, EvalClassical} {
		b.Run(ev.String(), func(b *testing.B) {
			var nodes uint64
			for b.Loop() {
				nodes += benchSearch(8, 1, ev, nil).Nodes
			}
			b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
		})
	}
}

// BenchmarkMultiPV compares the search speed with one and five lines over
// the bench positions at depth 8 (one op = all 13 searches, fresh engine):
//
//	go test -run XXX -bench MultiPV -benchtime 5x ./shared/engine
//
// nodes/op shows how much more a five-line search looks at, nodes/s what a
// node costs.
func BenchmarkMultiPV(b *testing.B) {
	for _, lines := range []int{1, 5} {
		b.Run(fmt.Sprintf("lines=%d", lines), func(b *testing.B) {
			benchSearch(1, lines, EvalNetwork, nil) // warm up: the first 16 MiB table costs page faults
			var nodes uint64
			for b.Loop() {
				nodes += benchSearch(multiPVBenchDepth, lines, EvalNetwork, nil).Nodes
			}
			b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
			b.ReportMetric(float64(nodes)/float64(b.N), "nodes/op")
		})
	}
}

// multiPVBenchDepth is the depth of BenchmarkMultiPV.
const multiPVBenchDepth = 8

// benchSignature is the node total of Bench(BenchDepth), the default
// evaluation (the network): `go run ./cmd/uci bench` prints it, and it
// changes when the search or the embedded network does. Update it
// deliberately with such a change (and say so in the commit); cmd/uci's
// test asserts the printed line too.
const benchSignature = 1093671

// classicalBenchSignature is the node total of the bench with the classical
// evaluation (UCI: setoption name Evaluation value classical, then bench):
// the signature of the engine before the network (issue 25), changed only
// by the search or eval.go.
const classicalBenchSignature = 1315700

func TestClassicalBenchSignature(t *testing.T) {
	if got := BenchEvaluation(BenchDepth, EvalClassical, nil); got.Nodes != classicalBenchSignature {
		t.Errorf("classical bench = %d nodes; want %d (the search or eval.go changed)", got.Nodes, classicalBenchSignature)
	}
}

func TestBenchSignature(t *testing.T) {
	if got := Bench(BenchDepth, nil); got.Nodes != benchSignature || got.Positions != len(benchPositions) {
		t.Errorf("Bench(%d) = %d nodes over %d positions; want %d over %d (search or network changed? see benchSignature)",
			BenchDepth, got.Nodes, got.Positions, benchSignature, len(benchPositions))
	}
}

// BenchmarkEvaluate times one static evaluation: the classical one, and
// the network's from an accumulator already up to date (what a node pays
// besides the update, see nnue's BenchmarkApplyQuiet).
func BenchmarkEvaluate(b *testing.B) {
	pos, err := chess.ParseFEN("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("classical", func(b *testing.B) {
		for b.Loop() {
			evaluate(pos)
		}
	})
	b.Run("network", func(b *testing.B) {
		s := newSearcher(newTranspositionTable(1), nnue.Default())
		s.setRoot(pos)
		s.staticEval(0)
		for b.Loop() {
			s.staticEval(0)
		}
	})
}

func BenchmarkSearchStartpos(b *testing.B) {
	e := New(Options{HashMB: 16})
	var nodes uint64
	for b.Loop() {
		e.NewGame()
		res, err := e.Search(context.Background(), Params{Position: chess.StartingPosition(), Depth: 10})
		if err != nil {
			b.Fatal(err)
		}
		nodes += res.Nodes
	}
	b.ReportMetric(float64(nodes)/b.Elapsed().Seconds(), "nodes/s")
}

func TestSEE(t *testing.T) {
	tests := []struct {
		fen, move string
		threshold int32
		want      bool
	}{
		// Pawn takes a defended knight: wins at least a knight minus nothing.
		{"4k3/8/3n4/4P3/8/8/8/4K3 w - - 0 1", "e5d6", 300, true},
		// Queen takes a pawn defended by a pawn: loses the queen.
		{"4k3/2p5/3p4/8/8/8/3Q4/4K3 w - - 0 1", "d2d6", 0, false},
		// Rook takes an undefended rook.
		{"4k3/8/8/3r4/8/8/3R4/4K3 w - - 0 1", "d2d5", 500, true},
		// Knight takes a pawn defended by a rook, backed by a rook behind (x-ray).
		{"3rk3/8/8/3p4/8/4N3/8/3RK3 w - - 0 1", "e3d5", 0, true},
		// Bishop (330) takes a knight (320) defended by a pawn: loses 10.
		{"4k3/8/2p5/3n4/8/1B6/8/4K3 w - - 0 1", "b3d5", -20, true},
		{"4k3/8/2p5/3n4/8/1B6/8/4K3 w - - 0 1", "b3d5", 50, false},
	}
	for _, tc := range tests {
		pos := mustFEN(t, tc.fen)
		m, err := pos.ParseUCI(tc.move)
		if err != nil {
			t.Fatal(err)
		}
		if got := seeGE(pos, m, tc.threshold); got != tc.want {
			t.Errorf("seeGE(%s, %s, %d) = %v; want %v", tc.fen, tc.move, tc.threshold, got, tc.want)
		}
	}
}

func TestEvaluateIsSymmetric(t *testing.T) {
	// Mirroring the board and swapping colours must not change the score
	// from the side to move's point of view.
	fens := [][2]string{
		{"r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8",
			"r2qkb1r/pp3ppp/2n1pn2/2pp4/3P4/2N1PN2/PP2BPPP/R1BQ1RK1 b kq - 0 8"},
		{"8/5k2/8/3P4/8/2K5/8/8 w - - 0 1", "8/8/2k5/8/3p4/8/5K2/8 b - - 0 1"},
	}
	for _, f := range fens {
		a, b := evaluate(mustFEN(t, f[0])), evaluate(mustFEN(t, f[1]))
		if a != b {
			t.Errorf("evaluate(%s) = %d but mirrored %d", f[0], a, b)
		}
	}
}
