package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
)

// Match openings (-make-openings N -openings-out FILE): N balanced start
// positions for cmd/match, each a line of the book followed by two random
// plies, line k for openings k, k + len(book), …, kept when a classical
// search of -openings-nodes nodes scores it within ±-openings-max
// centipawns, so a pair of games (colours swapped) starts fair. The file
// has one "fen <FEN> ; <how it was made>" line per opening.

// makeOpenings writes n balanced openings to path.
func makeOpenings(cfg config, book [][]chess.Move, stdout io.Writer) error {
	eng := engine.New(engine.Options{HashMB: 64, Evaluation: engine.EvalClassical})
	seen := map[string]bool{}
	var lines []string
	for i := 0; len(lines) < cfg.makeOpenings; i++ {
		if i > 100*cfg.makeOpenings {
			return fmt.Errorf("-make-openings: only %d balanced openings after %d tries", len(lines), i)
		}
		k := len(lines) % len(book)
		rng := rand.New(rand.NewPCG(cfg.seed, uint64(i)))
		pos := chess.StartingPosition()
		for _, m := range book[k] {
			pos.Play(m)
		}
		ok := true
		for range 2 {
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				ok = false
				break
			}
			pos.Play(moves[rng.IntN(len(moves))])
		}
		if !ok || pos.Status() != chess.StatusPlaying || seen[pos.FEN()] {
			continue
		}
		eng.NewGame()
		res, err := eng.Search(context.Background(), engine.Params{Position: pos, Nodes: cfg.openingsNodes})
		if err != nil || res.Score.IsMate() || abs(res.Score.CP) > cfg.openingsMax {
			continue
		}
		seen[pos.FEN()] = true
		lines = append(lines, fmt.Sprintf("fen %s ; book line %d + 2 random plies (seed %d, try %d), %s after %d nodes",
			pos.FEN(), k+1, cfg.seed, i, res.Score, res.Nodes))
	}
	f, err := os.Create(cfg.openingsOut)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "# %d balanced openings for cmd/match, made by\n# go run ./cmd/datagen -make-openings %d -openings-out %s -seed %d -openings-nodes %d -openings-max %d\n",
		len(lines), cfg.makeOpenings, cfg.openingsOut, cfg.seed, cfg.openingsNodes, cfg.openingsMax)
	for _, l := range lines {
		fmt.Fprintln(f, l)
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "datagen: %d openings written to %s\n", len(lines), cfg.openingsOut)
	return nil
}
