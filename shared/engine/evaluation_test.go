package engine

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"

	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue"
)

// TestIncrementalAccumulatorMatchesRefresh walks random lines on the
// search stack the way the search does — play a move to the next ply,
// sometimes evaluate, sometimes go back some plies (unmake) and play
// another move, sometimes pass (null move) — and compares every
// accumulator the lazy incremental update produces with one computed from
// scratch. The starts include standard and Chess960 positions with
// castling both ways, en passant and promotions available; the test counts
// those moves and fails if any kind was never exercised.
func TestIncrementalAccumulatorMatchesRefresh(t *testing.T) {
	starts := []string{
		chess.StartFEN,
		"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", // castling both sides
		"rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",        // en passant
		"8/2P1k3/8/8/8/8/3Kp3/8 w - - 0 1",                                     // promotions
		"r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1",               // Chess960 castling
		"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",    // Chess960
		"n1r1k2r/pP1ppppp/8/8/8/8/PpP1PPPP/N1R1K2R w KQkq - 0 1",               // promotions with capture, castling
		"4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 1",                                    // en passant only
		"rnbqk2r/pppp1ppp/5n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",   // castling soon
		"nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w GBgb - 0 1",             // Chess960 start
		"1r2k2r/8/8/8/8/8/8/R3K1R1 w Qk - 0 1",                                 // Chess960-style rights
		"r3k3/1P6/8/8/8/8/6p1/4K2R b Kq - 0 1",                                 // both promote, castle
		"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",             // black to move
		"8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1",                                    // pinned en passant
		"4k2r/6P1/8/8/8/8/1p6/R3K3 w Qk - 0 1",                                 // promotion onto rook squares
		"rn2k1nr/pbpp1ppp/1p6/4p3/1b2P3/1P3N2/PBPP1PPP/RN1QKB1R w KQkq - 0 5",  // ordinary
		"r3k2r/pppq1ppp/2n1bn2/3pp3/3PP3/2N1BN2/PPPQ1PPP/R3K2R b KQkq - 0 8",   // both castle
		"8/P7/8/8/8/8/7p/K6k w - - 0 1",                                        // race to promote
		"rnbqkb1r/ppp1pppp/5n2/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",       // en passant e5d6
		"qrkbbnnr/pppppppp/8/8/8/8/PPPPPPPP/QRKBBNNR w HBhb - 0 1",             // Chess960 start
		"r2k3r/8/8/8/8/8/8/R2K3R w HAha - 0 1",                                 // Chess960 king on d
	}
	s := newSearcher(newTranspositionTable(1), nnue.Default())
	rng := rand.New(rand.NewPCG(7, 7))
	var seen struct{ castles, enPassant, promotions, captures, nulls, backs, checked int }
	for round := range 120 {
		pos, err := chess.ParseFEN(starts[round%len(starts)])
		if err != nil {
			t.Fatal(err)
		}
		s.setRoot(pos)
		ply := 0
		for step := 0; step < 160; step++ {
			cur := &s.stack[ply].pos
			switch r := rng.IntN(20); {
			case r < 2 && ply > 0: // unmake some plies
				ply = rng.IntN(ply)
				seen.backs++
				continue
			case r < 3 && ply < maxPly && !cur.InCheck(): // null move
				s.play(ply, nullMove)
				ply++
				seen.nulls++
			default:
				moves := cur.LegalMoves()
				if len(moves) == 0 || ply >= maxPly {
					ply = rng.IntN(ply + 1)
					seen.backs++
					continue
				}
				// Prefer the special moves so each is played often.
				m := moves[rng.IntN(len(moves))]
				for _, c := range moves {
					if (c.IsCastling() || c.IsEnPassant() || c.Kind() == chess.KindPromotion) && rng.IntN(2) == 0 {
						m = c
						break
					}
				}
				switch {
				case m.IsCastling():
					seen.castles++
				case m.IsEnPassant():
					seen.enPassant++
				case m.Kind() == chess.KindPromotion:
					seen.promotions++
				case cur.PieceAt(m.To()) != chess.NoPiece:
					seen.captures++
				}
				s.play(ply, m)
				ply++
			}
			if rng.IntN(3) == 0 { // evaluate only sometimes: ancestors stay stale
				got := s.accumulator(ply)
				var want nnue.Accumulator
				s.ev.net.Refresh(&want, &s.stack[ply].pos)
				if !got.Equal(&want) {
					t.Fatalf("round %d step %d ply %d: incremental accumulator differs from a refresh in %s",
						round, step, ply, s.stack[ply].pos.FEN())
				}
				seen.checked++
			}
		}
	}
	t.Logf("checked %d accumulators: %d castles, %d en passant, %d promotions, %d captures, %d null moves, %d unmakes",
		seen.checked, seen.castles, seen.enPassant, seen.promotions, seen.captures, seen.nulls, seen.backs)
	if seen.castles < 50 || seen.enPassant < 20 || seen.promotions < 50 || seen.captures < 200 || seen.nulls < 50 || seen.backs < 50 {
		t.Errorf("too few special moves exercised: %+v", seen)
	}
}

// TestNetworkEvaluationIsSymmetric evaluates every position of a suite and
// its colour-flipped twin (board mirrored vertically, colours swapped,
// the other side to move): the network must give both the same score.
func TestNetworkEvaluationIsSymmetric(t *testing.T) {
	s := newSearcher(newTranspositionTable(1), nnue.Default())
	n := 0
	for _, fen := range symmetrySuite(t) {
		pos, err := chess.ParseFEN(fen)
		if err != nil {
			t.Fatal(err)
		}
		flipped, err := chess.ParseFEN(flipFEN(fen))
		if err != nil {
			t.Fatalf("flip of %s: %v", fen, err)
		}
		if a, b := s.evalPosition(pos), s.evalPosition(flipped); a != b {
			t.Errorf("eval(%s) = %d; flipped %s = %d", fen, a, flipFEN(fen), b)
		}
		n++
	}
	if n < 300 {
		t.Fatalf("suite has %d positions; want at least 300", n)
	}
}

// symmetrySuite is the bench positions plus positions of random games.
func symmetrySuite(t *testing.T) []string {
	out := append([]string(nil), benchPositions...)
	rng := rand.New(rand.NewPCG(11, 3))
	for g := 0; len(out) < 400; g++ {
		pos := chess.StartingPosition()
		for ply := 0; ply < 80; ply++ {
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				break
			}
			pos.Play(moves[rng.IntN(len(moves))])
			if ply%7 == 3 {
				out = append(out, pos.FEN())
			}
		}
	}
	return out
}

// TestNetworkFeedsTheSearch checks that the evaluation option is wired: the
// two evaluations search different trees, and the network searches the
// same tree every time.
func TestNetworkFeedsTheSearch(t *testing.T) {
	pos := mustFEN(t, "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8")
	nodes := func(ev Evaluation) uint64 {
		res, err := New(Options{HashMB: 4, Evaluation: ev}).Search(context.Background(), Params{Position: pos, Depth: 7})
		if err != nil {
			t.Fatal(err)
		}
		return res.Nodes
	}
	net1, net2, classical := nodes(EvalNetwork), nodes(EvalNetwork), nodes(EvalClassical)
	if net1 != net2 {
		t.Errorf("network searches differ: %d and %d nodes", net1, net2)
	}
	if net1 == classical {
		t.Errorf("network and classical searches both took %d nodes: is the option ignored?", net1)
	}
}

// flipFEN mirrors a FEN vertically and swaps the colours: the same position
// seen from the other side.
func flipFEN(fen string) string {
	f := strings.Fields(fen)
	ranks := strings.Split(f[0], "/")
	slices.Reverse(ranks)
	swap := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case unicode.IsUpper(r):
				return unicode.ToLower(r)
			case unicode.IsLower(r):
				return unicode.ToUpper(r)
			}
			return r
		}, s)
	}
	f[0] = swap(strings.Join(ranks, "/"))
	f[1] = map[string]string{"w": "b", "b": "w"}[f[1]]
	if f[2] != "-" {
		// Upper-case rights (White's) first, as FEN writes them.
		c := []rune(swap(f[2]))
		slices.SortStableFunc(c, func(a, b rune) int { return boolInt(unicode.IsLower(a)) - boolInt(unicode.IsLower(b)) })
		f[2] = string(c)
	}
	if f[3] != "-" {
		f[3] = string([]byte{f[3][0], '1' + '8' - f[3][1]})
	}
	return strings.Join(f, " ")
}

// TestClassicalEvaluationIsSymmetric is the flip test for eval.go.
func TestClassicalEvaluationIsSymmetric(t *testing.T) {
	for _, fen := range symmetrySuite(t) {
		if a, b := evaluate(mustFEN(t, fen)), evaluate(mustFEN(t, flipFEN(fen))); a != b {
			t.Errorf("evaluate(%s) = %d; flipped %s = %d", fen, a, flipFEN(fen), b)
		}
	}
}
