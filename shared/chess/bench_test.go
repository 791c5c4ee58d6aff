package chess

import "testing"

const kiwipeteFEN = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"

// middlegameFEN is a busy middlegame position used for generation benchmarks.
const middlegameFEN = "r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP1QBPPP/R3KB1R w KQ - 2 9"

func benchmarkPerft(b *testing.B, fen string, depth int, bulk bool) {
	p, err := ParseFEN(fen)
	if err != nil {
		b.Fatal(err)
	}
	var nodes uint64
	for b.Loop() {
		if bulk {
			nodes = p.Perft(depth)
		} else {
			nodes = p.PerftFull(depth)
		}
	}
	b.ReportMetric(float64(nodes)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mnodes/s")
}

// BenchmarkPerft measures perft speed; compare with Stockfish's `go perft`
// and dylhunn/dragontoothmg in the same run (see README, "Rules core").
func BenchmarkPerft(b *testing.B) {
	b.Run("startpos-d5-bulk", func(b *testing.B) { benchmarkPerft(b, StartFEN, 5, true) })
	b.Run("startpos-d5-full", func(b *testing.B) { benchmarkPerft(b, StartFEN, 5, false) })
	b.Run("kiwipete-d4-bulk", func(b *testing.B) { benchmarkPerft(b, kiwipeteFEN, 4, true) })
	b.Run("kiwipete-d4-full", func(b *testing.B) { benchmarkPerft(b, kiwipeteFEN, 4, false) })
}

func BenchmarkGenerateMoves(b *testing.B) {
	p, err := ParseFEN(middlegameFEN)
	if err != nil {
		b.Fatal(err)
	}
	var l MoveList
	b.ReportAllocs()
	for b.Loop() {
		p.GenerateMoves(&l, GenAll)
	}
}

func BenchmarkPlay(b *testing.B) {
	p, err := ParseFEN(middlegameFEN)
	if err != nil {
		b.Fatal(err)
	}
	moves := p.LegalMoves()
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range moves {
			c := *p
			c.Play(m)
		}
	}
}

func BenchmarkSAN(b *testing.B) {
	p, err := ParseFEN(middlegameFEN)
	if err != nil {
		b.Fatal(err)
	}
	moves := p.LegalMoves()
	b.ReportAllocs()
	for b.Loop() {
		p.SANs(moves)
	}
}

func BenchmarkParseFEN(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFEN(middlegameFEN); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGenerateMovesAllocations pins the "no heap allocation" property of
// legal move generation (and of playing a move on a copy).
func TestGenerateMovesAllocations(t *testing.T) {
	p, err := ParseFEN(middlegameFEN)
	if err != nil {
		t.Fatal(err)
	}
	var l MoveList
	if n := testing.AllocsPerRun(100, func() { p.GenerateMoves(&l, GenAll) }); n != 0 {
		t.Errorf("GenerateMoves allocates %v times per call; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { _ = p.CountMoves() }); n != 0 {
		t.Errorf("CountMoves allocates %v times per call; want 0", n)
	}
	m := l.At(0)
	if n := testing.AllocsPerRun(100, func() { c := *p; c.Play(m) }); n != 0 {
		t.Errorf("Play allocates %v times per call; want 0", n)
	}
}
