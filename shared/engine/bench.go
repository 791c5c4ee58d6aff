package engine

import (
	"context"
	"fmt"
	"time"

	"chessapi/shared/chess"
)

// BenchDepth is the default depth of Bench.
const BenchDepth = 10

// benchHashMB fixes the table size of Bench so its node count does not depend
// on the Hash option.
const benchHashMB = 16

// benchPositions are middlegames, endgames and Chess960 starts; the
// node total over them is the engine's search signature.
var benchPositions = []string{
	chess.StartFEN,
	"r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8",
	"2r3k1/pp3ppp/4p3/3pP3/1P1n4/P2B1N2/5PPP/2R3K1 b - - 0 25",
	"r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
	"4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
	"6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/3N4 b - - 0 1",
	"8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
	"8/8/8/8/5kp1/P7/8/1K1N4 w - - 0 1",
	"3r2k1/1p3ppp/2pq4/p1n5/P6P/1P6/1PB2QP1/1K2R3 w - - 0 1",
	"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
	"nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w GBgb - 0 1",
}

// BenchResult is the outcome of Bench.
type BenchResult struct {
	Positions int
	Nodes     uint64
	Time      time.Duration
}

// NPS returns nodes per second.
func (b BenchResult) NPS() uint64 { return nps(b.Nodes, b.Time) }

// Bench searches every bench position to depth with a fresh engine of the
// default evaluation (the network) and a fixed table size. The node total
// changes only when the search or the evaluation changes; report, if set,
// gets one line per position.
func Bench(depth int, report func(line string)) BenchResult {
	return benchSearch(depth, 1, EvalNetwork, report)
}

// BenchEvaluation is Bench with the evaluation ev (the network's node
// total changes with the embedded network too, the classical one only with
// the search or eval.go).
func BenchEvaluation(depth int, ev Evaluation, report func(line string)) BenchResult {
	return benchSearch(depth, 1, ev, report)
}

// benchSearch is Bench with multiPV lines per search and evaluation ev.
func benchSearch(depth, multiPV int, ev Evaluation, report func(line string)) BenchResult {
	e := New(Options{HashMB: benchHashMB, Evaluation: ev})
	var out BenchResult
	for i, fen := range benchPositions {
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			panic(fmt.Sprintf("engine: bench position %d: %v", i, err)) // a bug in the table above
		}
		res, err := e.Search(context.Background(), Params{Position: pos, Depth: depth, MultiPV: multiPV})
		if err != nil {
			panic(fmt.Sprintf("engine: bench position %d: %v", i, err))
		}
		out.Positions++
		out.Nodes += res.Nodes
		out.Time += res.Time
		if report != nil {
			report(fmt.Sprintf("position %2d: bestmove %s score %s nodes %d", i+1, pos.UCI(res.BestMove), res.Score, res.Nodes))
		}
	}
	return out
}
