package chess

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func mustFEN(t *testing.T, fen string) *Position {
	t.Helper()
	p, err := ParseFEN(fen)
	if err != nil {
		t.Fatalf("ParseFEN(%q): %v", fen, err)
	}
	return p
}

// legalUCI returns the legal moves in this position's UCI notation.
func legalUCI(p *Position) []string {
	var out []string
	for _, m := range p.LegalMoves() {
		out = append(out, p.UCI(m))
	}
	return out
}

// playUCI plays a sequence of UCI moves, failing the test on the first
// illegal one.
func playUCI(t *testing.T, p *Position, moves ...string) {
	t.Helper()
	for _, s := range moves {
		m, err := p.ParseUCI(s)
		if err != nil {
			t.Fatalf("%s: ParseUCI(%q): %v", p.FEN(), s, err)
		}
		p.Play(m)
	}
}

// TestCastlingRules covers the castling checklist of seeds/000 §10 for
// standard chess (the same generator serves Chess960; see TestChess960Castling).
func TestCastlingRules(t *testing.T) {
	tests := []struct {
		name      string
		fen       string
		before    []string // moves played first
		kingSide  bool
		queenSide bool
	}{
		{"both allowed", "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", nil, true, true},
		{"king in check", "4k3/8/8/8/4r3/8/8/R3K2R w KQ - 0 1", nil, false, false},
		{"passing square f1 attacked", "4k3/8/8/8/5r2/8/8/R3K2R w KQ - 0 1", nil, false, true},
		{"target square g1 attacked", "4k3/8/8/8/6r1/8/8/R3K2R w KQ - 0 1", nil, false, true},
		{"queen side: only b1 attacked is fine", "4k3/8/8/8/1r6/8/8/R3K2R w KQ - 0 1", nil, true, true},
		{"queen side: d1 attacked", "4k3/8/8/8/3r4/8/8/R3K2R w KQ - 0 1", nil, true, false},
		{"queen side: c1 attacked", "4k3/8/8/8/2r5/8/8/R3K2R w KQ - 0 1", nil, true, false},
		{"queen side: b1 occupied", "4k3/8/8/8/8/8/8/RN2K2R w KQ - 0 1", nil, true, false},
		{"rook has moved", "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"h1h2", "e8d8", "h2h1", "d8e8"}, false, true},
		{"king has moved", "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", []string{"e1e2", "e8d8", "e2e1", "d8e8"}, false, false},
		{"rook captured", "4k3/8/8/8/8/8/6b1/R3K2R b KQ - 0 1", []string{"g2h1"}, false, true},
		{"black both allowed", "r3k2r/8/8/8/8/8/8/4K3 b kq - 0 1", nil, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustFEN(t, tt.fen)
			playUCI(t, p, tt.before...)
			moves := legalUCI(p)
			rank := "1"
			if p.Turn() == Black {
				rank = "8"
			}
			if got := slices.Contains(moves, "e"+rank+"g"+rank); got != tt.kingSide {
				t.Errorf("%s: O-O legal = %v; want %v (moves %v)", p.FEN(), got, tt.kingSide, moves)
			}
			if got := slices.Contains(moves, "e"+rank+"c"+rank); got != tt.queenSide {
				t.Errorf("%s: O-O-O legal = %v; want %v (moves %v)", p.FEN(), got, tt.queenSide, moves)
			}
		})
	}
}

func TestEnPassant(t *testing.T) {
	t.Run("only right after the double step", func(t *testing.T) {
		p := mustFEN(t, "4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1")
		playUCI(t, p, "e2e4")
		if p.EnPassant() != E3 || !slices.Contains(legalUCI(p), "d4e3") {
			t.Fatalf("%s: en passant d4xe3 missing (ep %v)", p.FEN(), p.EnPassant())
		}
		playUCI(t, p, "e8d8", "e1d1")
		if slices.Contains(legalUCI(p), "d4e3") || p.EnPassant() != NoSquare {
			t.Fatalf("%s: en passant still possible one move late", p.FEN())
		}
	})
	t.Run("illegal when it exposes the king along the rank", func(t *testing.T) {
		p := mustFEN(t, "4k3/3p4/8/K3P2r/8/8/8/8 b - - 0 1")
		playUCI(t, p, "d7d5")
		if slices.Contains(legalUCI(p), "e5d6") {
			t.Fatalf("%s: exd6 allowed though it exposes the king", p.FEN())
		}
		if p.EnPassant() != NoSquare {
			t.Errorf("%s: ep square kept without a legal capture", p.FEN())
		}
		if _, err := p.ParseUCI("e5d6"); !errors.Is(err, ErrKingInCheck) {
			t.Errorf("ParseUCI(e5d6) error = %v; want ErrKingInCheck", err)
		}
	})
	t.Run("captures the checking pawn", func(t *testing.T) {
		p := mustFEN(t, "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1")
		if !slices.Contains(legalUCI(p), "e4d3") {
			t.Fatalf("%s: exd3 e.p. should answer the check", p.FEN())
		}
	})
	t.Run("ep field written only when capturable", func(t *testing.T) {
		p := StartingPosition()
		playUCI(t, p, "e2e4")
		if got, want := p.FEN(), "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"; got != want {
			t.Errorf("FEN = %q; want %q", got, want)
		}
	})
}

// TestEnPassantExposingTheKing: an en-passant capture is legal only if the
// king is safe once both pawns are gone (the capturer from its square, the
// taken pawn from beside it). Each position arises from a double step, and
// is also read from its FEN; both ways the refused captures must be
// missing from the legal moves, from CountMoves, from IsLegal and from
// DecodeStoredUCI, ParseUCI must explain them as a move into check, and the
// FEN keeps the en-passant square exactly when a capture is legal.
//
// Where a second pawn may take (the diagonal and file pins), the
// en-passant square stays, so only the generator's own test of the
// capturer stands between the pinned pawn and an illegal move. The rank
// pin, where both pawns leave the rank between king and rook, can only
// have one capturer (a second would still block the rank), so there the
// square is dropped.
func TestEnPassantExposingTheKing(t *testing.T) {
	tests := []struct {
		name    string
		variant Variant
		before  string // the position before the double step
		double  string // the double step
		after   string // the position after it, as FEN writes it
		legal   []string
		illegal []string
	}{
		{"white, pinned on a diagonal", VariantStandard,
			"7k/3p2b1/8/2P1P3/8/8/8/K7 b - - 0 1", "d7d5",
			"7k/6b1/8/2PpP3/8/8/8/K7 w - d6 0 2", []string{"c5d6"}, []string{"e5d6"}},
		{"black, pinned on a diagonal", VariantStandard,
			"k7/8/8/8/2p1p3/8/3P2B1/7K w - - 0 1", "d2d4",
			"k7/8/8/8/2pPp3/8/6B1/7K b - d3 0 1", []string{"c4d3"}, []string{"e4d3"}},
		{"white, pinned on a file", VariantStandard,
			"4r2k/3p4/8/2P1P3/8/8/8/4K3 b - - 0 1", "d7d5",
			"4r2k/8/8/2PpP3/8/8/8/4K3 w - d6 0 2", []string{"c5d6"}, []string{"e5d6"}},
		{"black, pinned on a file", VariantStandard,
			"4k3/8/8/8/2p1p3/8/3P4/4R2K w - - 0 1", "d2d4",
			"4k3/8/8/8/2pPp3/8/8/4R2K b - d3 0 1", []string{"c4d3"}, []string{"e4d3"}},
		{"white, both pawns leave the rank", VariantStandard,
			"4k3/3p4/8/K3P2r/8/8/8/8 b - - 0 1", "d7d5",
			"4k3/8/8/K2pP2r/8/8/8/8 w - - 0 2", nil, []string{"e5d6"}},
		{"black, both pawns leave the rank", VariantStandard,
			"8/8/8/8/R2p3k/8/4P3/4K3 w - - 0 1", "e2e4",
			"8/8/8/8/R2pP2k/8/8/4K3 b - - 0 1", nil, []string{"d4e3"}},
		{"Chess960 white, pinned on a diagonal", VariantChess960,
			"6k1/4p2b/8/3P1P2/8/8/8/RK5R b AH - 0 1", "e7e5",
			"6k1/7b/8/3PpP2/8/8/8/RK5R w HA e6 0 2", []string{"d5e6"}, []string{"f5e6"}},
		{"Chess960 black, pinned on a diagonal", VariantChess960,
			"rk5r/8/8/8/3p1p2/8/4P2B/6K1 w ah - 0 1", "e2e4",
			"rk5r/8/8/8/3pPp2/8/7B/6K1 b ha e3 0 1", []string{"d4e3"}, []string{"f4e3"}},
		{"Chess960 white, both pawns leave the rank", VariantChess960,
			"1r4kr/3p4/8/K3P2r/8/8/8/8 b hb - 0 1", "d7d5",
			"1r4kr/8/8/K2pP2r/8/8/8/8 w hb - 0 2", nil, []string{"e5d6"}},
		{"Chess960 black, both pawns leave the rank", VariantChess960,
			"8/8/8/8/R2p2k1/8/4P3/1RK4R w HB - 0 1", "e2e4",
			"8/8/8/8/R2pP1k1/8/8/1RK4R b HB - 0 1", nil, []string{"d4e3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			played, err := ParseFENVariant(tt.before, tt.variant)
			if err != nil {
				t.Fatalf("ParseFENVariant(%q, %v): %v", tt.before, tt.variant, err)
			}
			playUCI(t, played, tt.double)
			if got := played.FEN(); got != tt.after {
				t.Errorf("after %s: FEN = %q; want %q", tt.double, got, tt.after)
			}
			// The same position read from a FEN that names the en-passant
			// square whether or not a capture is legal.
			withEP := withEnPassantField(t, tt.after, tt.double)
			parsed, err := ParseFENVariant(withEP, tt.variant)
			if err != nil {
				t.Fatalf("ParseFENVariant(%q, %v): %v", withEP, tt.variant, err)
			}
			for _, p := range []*Position{played, parsed} {
				if p.Chess960() != (tt.variant == VariantChess960) {
					t.Errorf("%s: Chess960() = %v; want %v", p.FEN(), p.Chess960(), tt.variant == VariantChess960)
				}
				checkEnPassantCaptures(t, p, tt.legal, tt.illegal)
			}
		})
	}
}

// withEnPassantField returns fen with its en-passant field set to the
// square the double step (UCI) skipped.
func withEnPassantField(t *testing.T, fen, double string) string {
	t.Helper()
	from, err1 := ParseSquare(double[:2])
	to, err2 := ParseSquare(double[2:4])
	if err1 != nil || err2 != nil {
		t.Fatalf("double step %q: %v, %v", double, err1, err2)
	}
	fields := strings.Fields(fen)
	fields[3] = Square((int(from) + int(to)) / 2).String()
	return strings.Join(fields, " ")
}

// checkEnPassantCaptures asserts that exactly the legal en-passant captures
// are offered in p, by every way the package answers "is this legal?".
func checkEnPassantCaptures(t *testing.T, p *Position, legal, illegal []string) {
	t.Helper()
	fen := p.FEN()
	moves := p.LegalMoves()
	var generated []string
	for _, m := range moves {
		if m.IsEnPassant() {
			generated = append(generated, p.UCI(m))
		}
	}
	slices.Sort(generated)
	if want := slices.Sorted(slices.Values(legal)); !slices.Equal(generated, want) {
		t.Errorf("%s: en-passant captures generated = %v; want %v", fen, generated, want)
	}
	if n := p.CountMoves(); n != len(moves) {
		t.Errorf("%s: CountMoves() = %d; want %d (the generated moves)", fen, n, len(moves))
	}
	wantEP := NoSquare
	if len(legal) > 0 {
		wantEP = mustSquare(t, legal[0][2:4])
	}
	if p.EnPassant() != wantEP {
		t.Errorf("%s: EnPassant() = %v; want %v (kept exactly when a capture is legal)", fen, p.EnPassant(), wantEP)
	}
	for _, u := range legal {
		m := newEnPassant(mustSquare(t, u[:2]), mustSquare(t, u[2:4]))
		if !p.IsLegal(m) {
			t.Errorf("%s: IsLegal(%s) = false; want true", fen, u)
		}
		if got, err := p.DecodeStoredUCI(u); err != nil || got != m {
			t.Errorf("%s: DecodeStoredUCI(%q) = %v, %v; want the en-passant capture", fen, u, got, err)
		}
	}
	for _, u := range illegal {
		m := newEnPassant(mustSquare(t, u[:2]), mustSquare(t, u[2:4]))
		if p.IsLegal(m) {
			t.Errorf("%s: IsLegal(%s) = true; want false (it exposes the king)", fen, u)
		}
		if _, err := p.ParseUCI(u); !errors.Is(err, ErrKingInCheck) {
			t.Errorf("%s: ParseUCI(%q) error = %v; want ErrKingInCheck", fen, u, err)
		}
		if _, err := p.DecodeStoredUCI(u); !errors.Is(err, ErrKingInCheck) {
			t.Errorf("%s: DecodeStoredUCI(%q) error = %v; want ErrKingInCheck", fen, u, err)
		}
	}
}

func mustSquare(t *testing.T, s string) Square {
	t.Helper()
	sq, err := ParseSquare(s)
	if err != nil {
		t.Fatalf("ParseSquare(%q): %v", s, err)
	}
	return sq
}

func TestPromotions(t *testing.T) {
	p := mustFEN(t, "1r2k3/P7/8/8/8/8/8/4K3 w - - 0 1")
	moves := legalUCI(p)
	for _, want := range []string{"a7a8q", "a7a8r", "a7a8b", "a7a8n", "a7b8q", "a7b8r", "a7b8b", "a7b8n"} {
		if !slices.Contains(moves, want) {
			t.Errorf("missing promotion %s in %v", want, moves)
		}
	}
	if _, err := p.MoveFromSquares(A7, A8, NoPieceType); !errors.Is(err, ErrPromotionRequired) {
		t.Errorf("promotion without piece: err = %v; want ErrPromotionRequired", err)
	}
	m, err := p.MoveFromSquares(A7, B8, Knight)
	if err != nil || m.Promotion() != Knight || p.SAN(m) != "axb8=N" {
		t.Errorf("capture-promotion to knight = %v (%q), %v", m, p.SAN(m), err)
	}
	// A promotion piece given for an ordinary move is ignored.
	if m, err := p.MoveFromSquares(E1, E2, Queen); err != nil || m.Promotion() != NoPieceType {
		t.Errorf("MoveFromSquares(e1, e2, queen) = %v, %v; want plain king move", m, err)
	}
}

func TestMateAndStalemate(t *testing.T) {
	p := StartingPosition()
	playUCI(t, p, "e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6")
	m, err := p.ParseSAN("Qxf7")
	if err != nil {
		t.Fatal(err)
	}
	if san := p.SAN(m); san != "Qxf7#" {
		t.Errorf("SAN = %q; want Qxf7#", san)
	}
	p.Play(m)
	if p.Status() != StatusCheckmate || !p.IsCheckmate() {
		t.Errorf("scholar's mate: status %v", p.Status())
	}
	q := mustFEN(t, "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1")
	if q.Status() != StatusStalemate || !q.IsStalemate() || q.InCheck() {
		t.Errorf("queen stalemate: status %v", q.Status())
	}
}

func TestInsufficientMaterial(t *testing.T) {
	tests := []struct {
		name string
		fen  string
		want bool
	}{
		{"K v K", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", true},
		{"KB v K", "4k3/8/8/8/8/8/8/2B1K3 w - - 0 1", true},
		{"KN v K", "4k3/8/8/8/8/8/8/1N2K3 b - - 0 1", true},
		{"KB v KB same colour", "4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1", true},
		{"KBB v K all on one colour", "4k3/8/8/8/8/B7/8/2B1K3 w - - 0 1", true},
		{"KB v KB opposite colours", "2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1", false},
		{"KNN v K is not a draw", "4k3/8/8/8/8/8/8/1NN1K3 w - - 0 1", false},
		{"KN v KN", "1n2k3/8/8/8/8/8/8/1N2K3 w - - 0 1", false},
		{"KN v KB", "2b1k3/8/8/8/8/8/8/1N2K3 w - - 0 1", false},
		{"KP v K", "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", false},
		{"KR v K", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustFEN(t, tt.fen)
			if got := p.InsufficientMaterial(); got != tt.want {
				t.Errorf("InsufficientMaterial(%q) = %v; want %v", tt.fen, got, tt.want)
			}
			if tt.want && p.Status() != StatusInsufficientMaterial {
				t.Errorf("Status(%q) = %v; want insufficientMaterial", tt.fen, p.Status())
			}
		})
	}
}

func TestCannotMate(t *testing.T) {
	tests := []struct {
		name string
		fen  string
		side Color
		want bool
	}{
		{"lone king", "4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", Black, true},
		{"K+N against lone king", "1n2k3/8/8/8/8/8/8/4K3 w - - 0 1", Black, true},
		{"K+B against lone king", "2b1k3/8/8/8/8/8/8/4K3 w - - 0 1", Black, true},
		{"K+N against K+Q can help-mate", "1n2k3/8/8/8/8/8/8/Q3K3 w - - 0 1", Black, false},
		{"K+B against K+P can help-mate", "2b1k3/8/8/8/8/8/4P3/4K3 w - - 0 1", Black, false},
		{"same-colour bishops only", "4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1", Black, true},
		{"opposite-colour bishops", "2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1", Black, false},
		{"K+R can mate", "r3k3/8/8/8/8/8/8/4K3 w - - 0 1", Black, false},
		{"K+N+N can mate", "1nn1k3/8/8/8/8/8/8/4K3 w - - 0 1", Black, false},
		{"K+P can mate", "4k3/4p3/8/8/8/8/8/4K3 w - - 0 1", Black, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustFEN(t, tt.fen).CannotMate(tt.side); got != tt.want {
				t.Errorf("CannotMate(%q, %v) = %v; want %v", tt.fen, tt.side, got, tt.want)
			}
		})
	}
}

func TestChess960StartPositions(t *testing.T) {
	if back, _ := Chess960BackRank(518); back != "RNBQKBNR" {
		t.Errorf("Chess960BackRank(518) = %q; want RNBQKBNR", back)
	}
	known := map[int]string{0: "BBQNNRKR", 1: "BQNBNRKR", 959: "RKRNNQBB", 4: "QBBNNRKR"}
	for n, want := range known {
		if back, _ := Chess960BackRank(n); back != want {
			t.Errorf("Chess960BackRank(%d) = %q; want %q", n, back, want)
		}
	}
	seen := map[string]int{}
	for n := 0; n < 960; n++ {
		back, err := Chess960BackRank(n)
		if err != nil {
			t.Fatal(err)
		}
		if prev, dup := seen[back]; dup {
			t.Fatalf("positions %d and %d are both %s", prev, n, back)
		}
		seen[back] = n
		bishops, rooks, king := []int{}, []int{}, -1
		for i, c := range back {
			switch c {
			case 'B':
				bishops = append(bishops, i)
			case 'R':
				rooks = append(rooks, i)
			case 'K':
				king = i
			}
		}
		if len(bishops) != 2 || bishops[0]%2 == bishops[1]%2 {
			t.Errorf("%d %s: bishops on same colour", n, back)
		}
		if len(rooks) != 2 || !(rooks[0] < king && king < rooks[1]) {
			t.Errorf("%d %s: king not between the rooks", n, back)
		}
		p, err := Chess960Start(n)
		if err != nil {
			t.Fatalf("Chess960Start(%d): %v", n, err)
		}
		if got := p.CountMoves(); got < 18 {
			t.Errorf("%d: %d legal first moves", n, got)
		}
	}
	for _, n := range []int{-1, 960} {
		if _, err := Chess960BackRank(n); err == nil {
			t.Errorf("Chess960BackRank(%d) succeeded", n)
		}
	}
	// 518 under Chess960 rules: king→rook castles, Shredder-FEN out.
	p, _ := Chess960Start(518)
	if got := p.FEN(); got != "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1" {
		t.Errorf("Chess960Start(518).FEN() = %q", got)
	}
}

func TestChess960Castling(t *testing.T) {
	t.Run("king already on its target square", func(t *testing.T) {
		p := mustFEN(t, "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1")
		m, err := p.ParseUCI("g1h1")
		if err != nil || !m.IsCastling() || p.SAN(m) != "O-O" {
			t.Fatalf("g1h1 = %v, %v; want O-O", m, err)
		}
		p.Play(m)
		if got := p.FEN(); got != "1r4kr/8/8/8/8/8/8/1R3RK1 b hb - 1 1" {
			t.Errorf("after O-O: %q", got)
		}
	})
	t.Run("rook shielding the king's target square", func(t *testing.T) {
		p := mustFEN(t, "4k3/8/8/8/8/8/8/rRK5 w B - 0 1")
		if _, err := p.CastlingMove(QueenSide); !errors.Is(err, ErrKingInCheck) {
			t.Errorf("O-O-O with the rook shielding c1: err = %v; want ErrKingInCheck", err)
		}
		if _, err := p.ParseUCI("c1b1"); !errors.Is(err, ErrKingInCheck) {
			t.Errorf("c1b1: err = %v; want ErrKingInCheck", err)
		}
	})
	t.Run("king step wins over castling input", func(t *testing.T) {
		// King b1, rook a1: b1c1 is an ordinary king move; castling needs b1a1.
		p := mustFEN(t, "4k3/8/8/8/8/8/8/RK5R w HA - 0 1")
		m, err := p.ParseUCI("b1c1")
		if err != nil || m.IsCastling() {
			t.Errorf("b1c1 = %v, %v; want an ordinary king move", m, err)
		}
		m, err = p.ParseUCI("b1a1")
		if err != nil || !m.IsCastling() || p.SAN(m) != "O-O-O" {
			t.Errorf("b1a1 = %v, %v; want O-O-O", m, err)
		}
		m, err = p.ParseUCI("b1g1")
		if err != nil || CastleSideOf(m) != KingSide {
			t.Errorf("b1g1 = %v, %v; want O-O", m, err)
		}
	})
	t.Run("rook path blocked", func(t *testing.T) {
		p := mustFEN(t, "4k3/8/8/8/8/8/8/1K2N2R w H - 0 1")
		if _, err := p.CastlingMove(KingSide); !errors.Is(err, ErrIllegalMove) {
			t.Errorf("O-O through a knight: err = %v; want ErrIllegalMove", err)
		}
	})
	t.Run("king path attacked", func(t *testing.T) {
		p := mustFEN(t, "4k3/8/8/8/8/4r3/8/1K5R w H - 0 1")
		if _, err := p.CastlingMove(KingSide); !errors.Is(err, ErrKingInCheck) {
			t.Errorf("O-O through e1 attacked: err = %v; want ErrKingInCheck", err)
		}
	})
	t.Run("standard: king to rook square is not castling", func(t *testing.T) {
		p := mustFEN(t, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQK2R w KQkq - 0 1")
		if _, err := p.ParseUCI("e1h1"); !errors.Is(err, ErrIllegalMove) {
			t.Errorf("e1h1 in standard: err = %v; want ErrIllegalMove", err)
		}
		if m, err := p.ParseUCI("e1g1"); err != nil || !m.IsCastling() || p.UCI(m) != "e1g1" {
			t.Errorf("e1g1 in standard = %v, %v; want castling written e1g1", m, err)
		}
	})
	t.Run("rights lost and X-FEN letters", func(t *testing.T) {
		// X-FEN: K/Q are the outermost rooks; an inner rook needs its file letter.
		p := mustFEN(t, "4k3/8/8/8/8/8/8/RR2K1R1 w GB - 0 1")
		if got := p.CastlingString(); got != "GB" || !p.Chess960() {
			t.Errorf("castling = %q (960 %v); want GB", got, p.Chess960())
		}
		p = mustFEN(t, "4k3/8/8/8/8/8/8/RR2K1R1 w KQ - 0 1")
		if got := p.CastlingString(); got != "GA" {
			t.Errorf("KQ with rooks a1, b1, g1 = %q; want GA (outermost rooks)", got)
		}
		playUCI(t, p, "a1a2")
		if got := p.CastlingString(); got != "G" {
			t.Errorf("after the a-rook moved: castling = %q; want G", got)
		}
		q := mustFEN(t, "r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1")
		if got := q.CastlingString(); got != "EAea" {
			t.Errorf("X-FEN KQkq with king on c = %q; want EAea", got)
		}
	})
}

func TestFENErrors(t *testing.T) {
	tests := []struct {
		fen   string
		field string
		err   error
	}{
		{"", "fen", ErrFENSyntax},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra", "fen", ErrFENSyntax},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "placement", ErrFENSyntax},
		{"rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "placement", ErrFENSyntax},
		{"rnbqkbnr/ppppXppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "placement", ErrFENSyntax},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "turn", ErrFENSyntax},
		{"8/8/8/8/8/8/8/K7 w - - 0 1", "placement", ErrKingCount},
		{"kk6/8/8/8/8/8/8/K7 w - - 0 1", "placement", ErrKingCount},
		{"P3k3/8/8/8/8/8/8/4K3 w - - 0 1", "placement", ErrPawnOnBackRank},
		{"4k3/8/8/8/8/NNNNNNNN/NNNNNNNN/4K3 w - - 0 1", "placement", ErrTooManyPieces},
		{"4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1", "placement", ErrTooManyPawns},
		{"4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", "placement", ErrOpponentInCheck},
		{"4k3/8/8/8/8/2bn4/8/r3K3 w - - 0 1", "placement", ErrImpossibleCheck},
		{"4k3/8/8/8/8/8/8/4K3 w K - 0 1", "castling", ErrCastlingRights},
		{"4k3/8/8/8/8/8/4K3/7R w K - 0 1", "castling", ErrCastlingRights},
		{"4k3/8/8/8/8/8/8/4K2R w Kx - 0 1", "castling", ErrFENSyntax},
		{"4k3/8/8/8/8/8/8/4K2R w KK - 0 1", "castling", ErrFENSyntax},
		{"4k3/8/8/8/8/8/8/4K3 w - e6 0 1", "enPassant", ErrEnPassantSquare},
		{"4k3/8/8/4p3/8/8/8/4K3 w - e3 0 1", "enPassant", ErrEnPassantSquare},
		{"4k3/8/8/8/8/8/8/4K3 w - z9 0 1", "enPassant", ErrFENSyntax},
		{"4k3/8/8/8/8/8/8/4K3 w - - -1 1", "halfmove", ErrMoveCounterSyntax},
		{"4k3/8/8/8/8/8/8/4K3 w - - 0 x", "fullmove", ErrMoveCounterSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.fen, func(t *testing.T) {
			_, err := ParseFEN(tt.fen)
			var fe *FENError
			if !errors.As(err, &fe) || fe.Field != tt.field || !errors.Is(err, tt.err) {
				t.Errorf("ParseFEN(%q) error = %v; want field %s, %v", tt.fen, err, tt.field, tt.err)
			}
		})
	}
	if _, err := ParseFENVariant("1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1", VariantStandard); !errors.Is(err, ErrChess960Castling) {
		t.Errorf("960 rights as standard: err = %v; want ErrChess960Castling", err)
	}
}

func TestFENNormalisation(t *testing.T) {
	tests := []struct{ in, want string }{
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -", StartFEN},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1"},
		{"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR  w  KQkq  -  0  1", StartFEN},
		// ep square without a capturing pawn is dropped.
		{"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"},
		{"rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3", "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3"},
	}
	for _, tt := range tests {
		if got := mustFEN(t, tt.in).FEN(); got != tt.want {
			t.Errorf("ParseFEN(%q).FEN() = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestMoveInputErrors(t *testing.T) {
	// White: king e1, rook e2 pinned by the rook on e8; knight b1.
	p := mustFEN(t, "4r1k1/8/8/8/8/8/4R3/1N2K3 w - - 0 1")
	tests := []struct {
		from, to Square
		err      error
	}{
		{B1, B3, ErrIllegalMove}, // a knight cannot move so
		{E2, D2, ErrKingInCheck}, // the pinned rook leaves the line
		{E1, F2, nil},            // fine
		{E1, D3, ErrIllegalMove}, // two squares
		{C3, C4, ErrIllegalMove}, // empty square
		{E8, E7, ErrIllegalMove}, // the opponent's piece
		{E2, E8, nil},            // capture along the pin line
		{E1, E1, ErrIllegalMove}, // no move
		{B1, D2, nil},            // knight
		{E1, F1, nil},            // king step
		{E1, E2, ErrIllegalMove}, // own piece
		{E2, E2, ErrIllegalMove}, // null move
		{B1, A3, nil},            // knight
		{B1, C3, nil},            // knight
		{E2, E3, nil},            // along the pin
		{E2, F2, ErrKingInCheck}, // off the pin
		{E2, H2, ErrKingInCheck}, // off the pin
		{E2, A2, ErrKingInCheck}, // off the pin
		{E2, E4, nil},            // along the pin
		{E2, E7, nil},            // along the pin
		{E2, E6, nil},            // along the pin
		{E2, E5, nil},            // along the pin
	}
	for _, tt := range tests {
		_, err := p.MoveFromSquares(tt.from, tt.to, NoPieceType)
		if tt.err == nil && err != nil || tt.err != nil && !errors.Is(err, tt.err) {
			t.Errorf("MoveFromSquares(%v, %v) error = %v; want %v", tt.from, tt.to, err, tt.err)
		}
	}
	// The king may not step into check.
	q := mustFEN(t, "4k3/8/8/8/8/8/5r2/4K3 w - - 0 1")
	if _, err := q.MoveFromSquares(E1, E2, NoPieceType); !errors.Is(err, ErrKingInCheck) {
		t.Errorf("king into check: err = %v; want ErrKingInCheck", err)
	}
}

func TestSAN(t *testing.T) {
	tests := []struct {
		name, fen, uci, san string
	}{
		{"file disambiguation", "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "b1d2", "Nbd2"},
		{"rank disambiguation", "4k3/8/8/8/R7/8/8/R3K3 w - - 0 1", "a1a3", "R1a3"},
		{"square disambiguation", "8/8/k7/8/4Q2Q/8/8/K6Q w - - 0 1", "h4e1", "Qh4e1"},
		{"pinned piece does not disambiguate", "4k3/8/8/8/8/8/1N6/r1N1K3 w - - 0 1", "b2d3", "Nd3"},
		{"pawn capture", "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", "exd5"},
		{"promotion with check", "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q", "b8=Q+"},
		{"castling with check", "5k2/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", "O-O+"},
		{"queen side castling", "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "e1c1", "O-O-O"},
		{"en passant", "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", "exd6"},
		{"mate", "6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1", "a1a8", "Ra8#"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustFEN(t, tt.fen)
			m, err := p.ParseUCI(tt.uci)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.SAN(m); got != tt.san {
				t.Errorf("SAN(%s) = %q; want %q", tt.uci, got, tt.san)
			}
		})
	}
}

func TestParseSANTolerant(t *testing.T) {
	tests := []struct {
		fen, in, uci string
		err          error
	}{
		{"4k3/8/8/8/8/8/8/4K2R w K - 0 1", "0-0", "e1g1", nil},
		{"4k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "0-0-0", "e1c1", nil},
		{"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b8Q", "b7b8q", nil},
		{"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b8=q", "b7b8q", nil},
		{"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b8", "", ErrPromotionRequired},
		{StartFEN, "Nf3!?", "g1f3", nil},
		{StartFEN, "Ng1-f3", "g1f3", nil},
		{StartFEN, "e2-e4", "e2e4", nil},
		{StartFEN, "Pe4", "e2e4", nil},
		{"4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "exd6 e.p.", "e5d6", nil},
		{"4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "ed6", "e5d6", nil},
		{"6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1", "Ra8", "a1a8", nil},
		{"4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1", "Nd2", "", ErrAmbiguousMove},
		{StartFEN, "Nf6", "", ErrIllegalMove},
		{StartFEN, "Ke2", "", ErrIllegalMove},
		{"4k3/8/8/8/8/8/5r2/4K3 w - - 0 1", "Kd2", "", ErrKingInCheck},
		{StartFEN, "Zf3", "", ErrSyntax},
		{StartFEN, "e9", "", ErrSyntax},
		{StartFEN, "", "", ErrSyntax},
		{StartFEN, "O-O", "", ErrIllegalMove},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p := mustFEN(t, tt.fen)
			m, err := p.ParseSAN(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Errorf("ParseSAN(%q) error = %v; want %v", tt.in, err, tt.err)
				}
				return
			}
			if err != nil || p.UCI(m) != tt.uci {
				t.Errorf("ParseSAN(%q) = %v, %v; want %s", tt.in, p.UCI(m), err, tt.uci)
			}
		})
	}
	// Strict parsing accepts only the canonical form.
	p := StartingPosition()
	if _, err := p.ParseSANStrict("Ng1f3"); err == nil {
		t.Error("ParseSANStrict(Ng1f3) succeeded")
	}
	if _, err := p.ParseSANStrict("Nf3"); err != nil {
		t.Errorf("ParseSANStrict(Nf3): %v", err)
	}
}

func TestPlayNull(t *testing.T) {
	p := mustFEN(t, "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3")
	p.PlayNull()
	if got := p.FEN(); got != "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR w KQkq - 1 4" {
		t.Errorf("after null move: %q", got)
	}
	if p.Hash() != p.computeHash() {
		t.Error("null move hash mismatch")
	}
}
