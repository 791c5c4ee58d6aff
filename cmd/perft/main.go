// Command perft counts the leaf nodes of the legal move tree of a position,
// to check move generation against published counts and to measure its speed.
//
//	go run ./cmd/perft -fen FEN -depth N [-divide] [-chess960] [-full]
//	go run ./cmd/perft -depth 6 -vs-stockfish /usr/games/stockfish -rounds 5
//
// The FEN may use KQkq, X-FEN or Shredder-FEN castling; Chess960 is detected
// from the castling field, or forced with -chess960.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"chessapi/shared/chess"
)

func main() {
	fen := flag.String("fen", chess.StartFEN, "position in FEN (KQkq, X-FEN or Shredder-FEN castling)")
	depth := flag.Int("depth", 5, "depth in plies (1-12)")
	divide := flag.Bool("divide", false, "print the count below each root move")
	force960 := flag.Bool("chess960", false, "treat the position as Chess960")
	full := flag.Bool("full", false, "play every leaf move instead of bulk-counting the last ply")
	stockfish := flag.String("vs-stockfish", "", "path of a Stockfish binary: time its `go perft` against ours, alternating")
	rounds := flag.Int("rounds", 5, "rounds of the -vs-stockfish comparison")
	flag.Parse()

	var err error
	if *stockfish != "" {
		var pos *chess.Position
		if pos, err = chess.ParseFEN(*fen); err == nil {
			err = compare(*stockfish, pos, *depth, *rounds)
		}
	} else {
		err = run(*fen, *depth, *divide, *force960, *full)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "perft:", err)
		os.Exit(2)
	}
}

func run(fen string, depth int, divide, force960, full bool) error {
	if depth < 1 || depth > 12 {
		return fmt.Errorf("-depth %d: want 1 to 12", depth)
	}
	variant := chess.VariantAuto
	if force960 {
		variant = chess.VariantChess960
	}
	pos, err := chess.ParseFENVariant(fen, variant)
	if err != nil {
		return err
	}
	start := time.Now()
	var nodes uint64
	switch {
	case divide:
		for _, e := range pos.Divide(depth) {
			fmt.Printf("%s: %d\n", pos.UCI(e.Move), e.Nodes)
			nodes += e.Nodes
		}
		fmt.Println()
	case full:
		nodes = pos.PerftFull(depth)
	default:
		nodes = pos.Perft(depth)
	}
	elapsed := time.Since(start)
	fmt.Printf("nodes %d\n", nodes)
	fmt.Printf("time %.3fs, %.1f M nodes/s\n", elapsed.Seconds(), float64(nodes)/elapsed.Seconds()/1e6)
	return nil
}
