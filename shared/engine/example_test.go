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
	params := engine.RequestParams(level, 0, 0) // the level's think time
	params.Position = pos
	res, err := eng.Search(context.Background(), params)
	if err != nil {
		panic(err)
	}
	fmt.Println(pos.SAN(res.BestMove), res.Score)
	// Output: Rd8# mate 1
}
