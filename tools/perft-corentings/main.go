// Command perft-corentings counts perft with github.com/corentings/chess/v2,
// the same way cmd/perft does (bulk: the last ply is the length of the legal
// move list), so its speed can be set beside ours. It is a module of its own
// so that the service's module does not depend on another chess library:
//
//	cd tools/perft-corentings && go run . -depth 5
//	go run ./cmd/perft -depth 5   # ours, from the repository root
package main

import (
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/corentings/chess/v2"
)

func perft(pos *chess.Position, depth int) uint64 {
	moves := pos.ValidMoves()
	if depth == 1 {
		return uint64(len(moves))
	}
	var n uint64
	for i := range moves {
		n += perft(pos.Update(&moves[i]), depth-1)
	}
	return n
}

func main() {
	fen := flag.String("fen", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "position in FEN")
	depth := flag.Int("depth", 5, "depth in plies (at least 1)")
	flag.Parse()
	if *depth < 1 {
		log.Fatalf("-depth %d: want at least 1", *depth)
	}
	opt, err := chess.FEN(*fen)
	if err != nil {
		log.Fatalf("-fen %q: %v", *fen, err)
	}
	g := chess.NewGame(opt)
	start := time.Now()
	n := perft(g.Position(), *depth)
	el := time.Since(start)
	fmt.Printf("nodes %d in %v: %.1f M nodes/s\n", n, el, float64(n)/el.Seconds()/1e6)
}
