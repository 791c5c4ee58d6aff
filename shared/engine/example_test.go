package engine_test

import (
	"context"
	"fmt"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
)

// The AI endpoint's use: one Engine per process, a search per request with
// the request's limits.
func Example() {
	eng := engine.New(engine.Options{HashMB: 16})
	pos, err := chess.ParseFEN("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
	if err != nil {
		panic(err)
	}
	level, err := engine.ParseLevel("easy")
	if err != nil {
		panic(err)
	}
	params := engine.Params{Position: pos, Level: level, MoveTime: level.ThinkTime()}
	res, err := eng.Search(context.Background(), params)
	if err != nil {
		panic(err)
	}
	fmt.Println(pos.SAN(res.BestMove), res.Score)
	// Output: Rd8# mate 1
}

// Several candidate moves (the endpoint's multiPv): Result.Lines, best
// first; line 1 is also BestMove, Score and PV.
func Example_multiPV() {
	eng := engine.New(engine.Options{HashMB: 16})
	pos, err := chess.ParseFEN("4k3/8/8/3q4/4P3/2N5/8/4K3 w - - 0 1")
	if err != nil {
		panic(err)
	}
	res, err := eng.Search(context.Background(), engine.Params{Position: pos, Depth: 6, MultiPV: 3})
	if err != nil {
		panic(err)
	}
	for i, l := range res.Lines {
		fmt.Println(i+1, pos.SAN(l.Move), l.Score)
	}
	fmt.Println("best:", pos.SAN(res.BestMove))
	// Output:
	// 1 exd5 cp 488
	// 2 Nxd5 cp 451
	// 3 Ne2 cp -513
	// best: exd5
}

// The win/draw/loss estimate of an answer at level max, per mille from the
// side to move.
func ExampleWDL() {
	pos := chess.StartingPosition()
	for _, s := range []engine.Score{{CP: 0}, {CP: 100}, {CP: -300}, {Mate: 2}} {
		win, draw, loss := engine.WDL(s, pos)
		fmt.Println(s, win, draw, loss)
	}
	// Output:
	// cp 0 325 350 325
	// cp 100 590 272 138
	// cp -300 18 54 928
	// mate 2 1000 0 0
}
