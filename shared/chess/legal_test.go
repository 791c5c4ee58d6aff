package chess

import "testing"

// TestIsLegalMatchesGenerator checks IsLegal against the generator on every
// position of random games of both variants (and the perft suites' start
// positions): for every Move value whose origin holds a piece of the side
// to move, IsLegal(m) must equal "m is generated".
func TestIsLegalMatchesGenerator(t *testing.T) {
	games := 6
	if testing.Short() {
		games = 2
	}
	forEachRandomPosition(t, games, func(p *Position) {
		var legal MoveList
		p.GenerateMoves(&legal, GenAll)
		own := p.colors[p.side]
		for v := 1; v < 1<<16; v++ {
			m := Move(v)
			if !own.Has(m.From()) {
				continue
			}
			if got, want := p.IsLegal(m), legal.Contains(m); got != want {
				t.Fatalf("IsLegal(%v) in %q = %v; want %v", m, p.FEN(), got, want)
			}
		}
	})
}

// TestDecodeStoredUCI checks the fast path against ParseUCI for the UCI of
// every legal move and for the other spellings ParseUCI accepts.
func TestDecodeStoredUCI(t *testing.T) {
	forEachRandomPosition(t, 8, func(p *Position) {
		for _, m := range p.LegalMoves() {
			u := p.UCI(m)
			got, err := p.DecodeStoredUCI(u)
			if err != nil || got != m {
				t.Fatalf("DecodeStoredUCI(%q) in %q = %v, %v; want %v", u, p.FEN(), got, err, m)
			}
		}
		for _, u := range []string{"e1g1", "e1c1", "e8g8", "e8c8", "a1a1", "e2e5", "e7e8", "zz11", "e2e4q"} {
			want, wantErr := p.ParseUCI(u)
			got, err := p.DecodeStoredUCI(u)
			if got != want || (err == nil) != (wantErr == nil) {
				t.Fatalf("DecodeStoredUCI(%q) in %q = %v, %v; want ParseUCI's %v, %v", u, p.FEN(), got, err, want, wantErr)
			}
		}
	})
}

func BenchmarkDecodeStoredUCI(b *testing.B) {
	p, _ := ParseFEN("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1")
	ucis := make([]string, 0, 64)
	for _, m := range p.LegalMoves() {
		ucis = append(ucis, p.UCI(m))
	}
	b.Run("stored", func(b *testing.B) {
		for b.Loop() {
			for _, u := range ucis {
				if _, err := p.DecodeStoredUCI(u); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("ParseUCI", func(b *testing.B) {
		for b.Loop() {
			for _, u := range ucis {
				if _, err := p.ParseUCI(u); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
