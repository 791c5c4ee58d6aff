package chess

import (
	"testing"
)

var fuzzSeedFENs = []string{
	StartFEN,
	"r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
	"1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1",
	"r1k1r2q/p1ppp1pp/8/8/8/8/P1PPP1PP/R1K1R2Q w KQkq - 0 1",
	"rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3",
	"4k3/1P6/8/8/8/8/8/4K3 w - - 0 1",
	"8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",
}

// FuzzParseFEN: no input panics; whatever parses re-serialises stably and
// supports move generation.
func FuzzParseFEN(f *testing.F) {
	for _, s := range fuzzSeedFENs {
		f.Add(s)
	}
	f.Add("8/8/8/8/8/8/8/8 w - - 0 1")
	f.Add("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 99999999999999999999 1")
	f.Fuzz(func(t *testing.T, fen string) {
		p, err := ParseFEN(fen)
		if err != nil {
			return
		}
		out := p.FEN()
		q, err := ParseFEN(out)
		if err != nil {
			t.Fatalf("ParseFEN(%q) ok, but its output %q fails: %v", fen, out, err)
		}
		if q.FEN() != out || q.Hash() != p.Hash() {
			t.Fatalf("unstable: %q -> %q -> %q", fen, out, q.FEN())
		}
		var l MoveList
		p.GenerateMoves(&l, GenAll)
		if l.Len() != p.CountMoves() {
			t.Fatalf("%s: CountMoves %d != %d generated", out, p.CountMoves(), l.Len())
		}
		for _, m := range l.Moves() {
			c := *p
			c.Play(m)
			if c.Hash() != c.computeHash() {
				t.Fatalf("%s: hash drift after %v", out, m)
			}
		}
	})
}

// FuzzDecodeSAN: arbitrary move text against a set of positions never panics;
// a move that decodes re-encodes to text that decodes to the same move.
func FuzzDecodeSAN(f *testing.F) {
	for _, s := range []string{"e4", "Nf3", "O-O", "0-0-0", "exd6 e.p.", "b8=Q+", "Qh4e1", "e7e8q", "Ng1-f3", "Kxe2#!!", "a"} {
		f.Add(uint8(0), s)
		f.Add(uint8(3), s)
	}
	positions := make([]*Position, len(fuzzSeedFENs))
	for i, s := range fuzzSeedFENs {
		p, err := ParseFEN(s)
		if err != nil {
			f.Fatal(err)
		}
		positions[i] = p
	}
	f.Fuzz(func(t *testing.T, idx uint8, text string) {
		p := positions[int(idx)%len(positions)]
		for _, parse := range []func(string) (Move, error){p.ParseSAN, p.ParseUCI, p.ParseSANStrict} {
			m, err := parse(text)
			if err != nil {
				continue
			}
			if !p.isLegal(m) {
				t.Fatalf("%s: %q decoded to illegal %v", p.FEN(), text, m)
			}
			san := p.SAN(m)
			if back, err := p.ParseSAN(san); err != nil || back != m {
				t.Fatalf("%s: %q -> %v -> %q -> %v, %v", p.FEN(), text, m, san, back, err)
			}
		}
	})
}

// isLegal reports whether m is legal in p (test helper).
func (p *Position) isLegal(m Move) bool {
	var l MoveList
	p.GenerateMoves(&l, GenAll)
	return l.Contains(m)
}

// FuzzParsePGN: no input panics; a game that parses writes PGN that parses
// back to the same text.
func FuzzParsePGN(f *testing.F) {
	f.Add("[Event \"x\"]\n\n1. e4 {c} e5 (1... c5 2. Nf3) 2. Nf3 $1 Nc6 ; x\n3. Bb5 a6 1-0")
	f.Add("[Variant \"Chess960\"]\n[FEN \"bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1\"]\n\n1. e4 *")
	f.Add("1.e4 e5 2.Ke3")
	f.Add("[FEN \"4k3/8/8/8/8/8/8/4K3 b - - 0 1\"]\n1... Kd7 *")
	f.Fuzz(func(t *testing.T, text string) {
		g, err := ParsePGN(text)
		if err != nil {
			return
		}
		out, err := g.Text()
		if err != nil {
			t.Fatalf("parsed game does not write: %v", err)
		}
		g2, err := ParsePGN(out)
		if err != nil {
			t.Fatalf("ParsePGN(own output) failed: %v\n%s", err, out)
		}
		if out2 := g2.String(); out2 != out {
			t.Fatalf("unstable PGN:\n%s\n---\n%s", out, out2)
		}
	})
}
