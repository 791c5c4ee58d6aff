package chess

import (
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// randomPlayoutGames is the number of random games per variant; RANDOM_DEEP=1
// multiplies it for a long soak.
func randomPlayoutGames() int {
	switch {
	case os.Getenv("RANDOM_DEEP") == "1":
		return 20000
	case testing.Short():
		return 20
	}
	return 150
}

// forEachRandomPosition plays random games from the standard start and from
// random Chess960 starts and calls f on every position reached.
func forEachRandomPosition(t *testing.T, games int, f func(p *Position)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	var l MoveList
	for g := 0; g < games; g++ {
		var p *Position
		if g%2 == 0 {
			p = StartingPosition()
		} else {
			var err error
			if p, err = Chess960Start(rng.IntN(960)); err != nil {
				t.Fatal(err)
			}
		}
		for ply := 0; ply < 200; ply++ {
			f(p)
			p.GenerateMoves(&l, GenAll)
			if l.Len() == 0 || p.HalfmoveClock() >= 100 {
				break
			}
			p.Play(l.At(rng.IntN(l.Len())))
		}
	}
}

// TestRandomPlayouts checks, on every position of many random games of both
// variants, that the move generator agrees with an independent
// make-and-test oracle and that every notation round-trips for every move.
func TestRandomPlayouts(t *testing.T) {
	positions, moves := 0, 0
	forEachRandomPosition(t, randomPlayoutGames(), func(p *Position) {
		positions++
		checkPositionInvariants(t, p)
		var l MoveList
		p.GenerateMoves(&l, GenAll)
		for _, m := range l.Moves() {
			moves++
			checkMoveRoundTrips(t, p, m)
		}
	})
	t.Logf("checked %d positions, %d moves", positions, moves)
}

func checkPositionInvariants(t *testing.T, p *Position) {
	t.Helper()
	fen := p.FEN()
	if h := p.computeHash(); h != p.Hash() {
		t.Fatalf("%s: incremental hash %x != computed %x", fen, p.Hash(), h)
	}
	q, err := ParseFEN(fen)
	if err != nil {
		t.Fatalf("ParseFEN(%q) of a generated position: %v", fen, err)
	}
	if q.FEN() != fen || q.Hash() != p.Hash() || q.Chess960() != p.Chess960() && p.CastlingRooks() != 0 {
		t.Fatalf("FEN round trip %q -> %q (hash %x vs %x)", fen, q.FEN(), p.Hash(), q.Hash())
	}
	if got := p.AttackersTo(p.KingSquare(p.Turn()), p.Occupied()) & p.ByColor(p.Turn().Other()); got != p.Checkers() {
		t.Fatalf("%s: checkers %x; want %x", fen, p.Checkers(), got)
	}

	var all, noisy, quiet MoveList
	p.GenerateMoves(&all, GenAll)
	p.GenerateMoves(&noisy, GenNoisy)
	p.GenerateMoves(&quiet, GenQuiet)
	if n := p.CountMoves(); n != all.Len() {
		t.Fatalf("%s: CountMoves = %d; GenerateMoves found %d", fen, n, all.Len())
	}
	union := append(append([]Move(nil), noisy.Moves()...), quiet.Moves()...)
	if !sameMoveSet(union, all.Moves()) {
		t.Fatalf("%s: noisy %v + quiet %v != all %v", fen, noisy.Moves(), quiet.Moves(), all.Moves())
	}
	for _, m := range noisy.Moves() {
		if !(p.PieceAt(m.To()) != NoPiece && !m.IsCastling() || m.IsEnPassant() || m.Promotion() != NoPieceType) {
			t.Fatalf("%s: %v generated as noisy", fen, m)
		}
	}

	// Oracle: pseudo-legal moves filtered by playing them and testing the king.
	var pseudo MoveList
	p.generatePseudo(&pseudo)
	var oracle []Move
	for _, m := range pseudo.Moves() {
		c := *p
		c.Play(m)
		if !c.IsAttacked(c.KingSquare(p.Turn()), c.Turn()) {
			oracle = append(oracle, m)
		}
	}
	var nonCastling []Move
	for _, m := range all.Moves() {
		if !m.IsCastling() {
			nonCastling = append(nonCastling, m)
		}
	}
	if !sameMoveSet(oracle, nonCastling) {
		t.Fatalf("%s: legal moves %v; make-and-test oracle %v", fen, nonCastling, oracle)
	}
}

func checkMoveRoundTrips(t *testing.T, p *Position, m Move) {
	t.Helper()
	fen := p.FEN()
	san := p.SAN(m)
	if got, err := p.ParseSAN(san); err != nil || got != m {
		t.Fatalf("%s: ParseSAN(%q) = %v, %v; want %v", fen, san, got, err, m)
	}
	if got, err := p.ParseSANStrict(san); err != nil || got != m {
		t.Fatalf("%s: ParseSANStrict(%q) = %v, %v; want %v", fen, san, got, err, m)
	}
	lan := p.LAN(m)
	if got, err := p.ParseSAN(lan); err != nil || got != m {
		t.Fatalf("%s: ParseSAN(LAN %q) = %v, %v; want %v", fen, lan, got, err, m)
	}
	uci := p.UCI(m)
	if got, err := p.ParseUCI(uci); err != nil || got != m {
		t.Fatalf("%s: ParseUCI(%q) = %v, %v; want %v", fen, uci, got, err, m)
	}
	c := *p
	c.Play(m)
	if h := c.computeHash(); h != c.Hash() {
		t.Fatalf("%s after %s: incremental hash %x != computed %x", fen, uci, c.Hash(), h)
	}
	if p.FEN() != fen {
		t.Fatalf("playing on a copy changed the original: %s -> %s", fen, p.FEN())
	}
}

func sameMoveSet(a, b []Move) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
