package engine

import (
	"context"
	"math/rand/v2"
	"testing"

	"chessapi/shared/chess"
)

// randomEnding places the white king, the given white pieces and the black
// king at random, White to move, in a legal position that is not already
// over.
func randomEnding(t *testing.T, rng *rand.Rand, white []chess.PieceType) *chess.Position {
	t.Helper()
	for {
		var board [64]byte
		squares := rng.Perm(64)
		board[squares[0]] = 'K'
		board[squares[1]] = 'k'
		for i, pt := range white {
			board[squares[2+i]] = pt.Letter() - 'a' + 'A'
		}
		fen := ""
		for r := 7; r >= 0; r-- {
			empty := 0
			for f := 0; f < 8; f++ {
				c := board[r*8+f]
				if c == 0 {
					empty++
					continue
				}
				if empty > 0 {
					fen += string(rune('0' + empty))
					empty = 0
				}
				fen += string(rune(c))
			}
			if empty > 0 {
				fen += string(rune('0' + empty))
			}
			if r > 0 {
				fen += "/"
			}
		}
		pos, err := chess.ParseFEN(fen + " w - - 0 1")
		if err != nil || pos.Status() != chess.StatusPlaying {
			continue
		}
		// Not a position where Black can take a piece at once.
		var list chess.MoveList
		black := *pos
		black.PlayNull()
		black.GenerateMoves(&list, chess.GenNoisy)
		if list.Len() > 0 {
			continue
		}
		return pos
	}
}

// TestWinsBasicEndings: at full strength KQK, KRK and KBNK are mated from
// random starts before the 50-move rule. The defender plays at full
// strength too, with fewer nodes (about 0.1 s against 0.02 s of search). ENGINE_LONG=1 plays many starts.
func TestWinsBasicEndings(t *testing.T) {
	endings := []struct {
		name  string
		white []chess.PieceType
	}{
		{"KQK", []chess.PieceType{chess.Queen}},
		{"KRK", []chess.PieceType{chess.Rook}},
		{"KBNK", []chess.PieceType{chess.Bishop, chess.Knight}},
	}
	starts := 1
	if longTests {
		starts = 10
	}
	for _, ending := range endings {
		t.Run(ending.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(ending.white))))
			for range starts {
				pos := randomEnding(t, rng, ending.white)
				start := pos.FEN()
				attacker, defender := New(Options{HashMB: 16}), New(Options{HashMB: 4})
				var history []uint64
				for pos.Status() == chess.StatusPlaying {
					if pos.HalfmoveClock() >= 100 {
						t.Fatalf("%s from %s: 50-move rule reached at %s", ending.name, start, pos.FEN())
					}
					// Node limits rather than time: the result does not depend
					// on the machine's load.
					e, nodes := attacker, uint64(100_000)
					if pos.Turn() == chess.Black {
						e, nodes = defender, 20_000
					}
					res, err := e.Search(context.Background(), Params{Position: pos, History: history, Nodes: nodes})
					if err != nil {
						t.Fatal(err)
					}
					history = append(history, pos.Hash())
					pos.Play(res.BestMove)
				}
				if !pos.IsCheckmate() || pos.Turn() != chess.Black {
					t.Fatalf("%s from %s ended %s at %s; want Black mated", ending.name, start, pos.Status(), pos.FEN())
				}
			}
		})
	}
}
