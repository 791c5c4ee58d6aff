package nnue

import (
	"errors"
	"math/rand/v2"
	"testing"

	"chessapi/shared/chess"
)

// randomWeights returns weights spread over the whole allowed range.
func randomWeights(seed uint64, buckets int) *Weights {
	rng := rand.New(rand.NewPCG(seed, 1))
	const limit = WeightLimit
	w := &Weights{Hidden: Hidden, Buckets: buckets, Scale: 150,
		Feature: make([]int16, Inputs*Hidden), Bias: make([]int16, Hidden),
		Output: make([]int16, buckets*2*Hidden), OutBias: make([]int32, buckets)}
	for i := range w.Feature {
		w.Feature[i] = int16(rng.IntN(2*limit+1) - limit)
	}
	for i := range w.Bias {
		w.Bias[i] = int16(rng.IntN(2*limit+1) - limit)
	}
	for i := range w.Output {
		w.Output[i] = int16(rng.IntN(65536) - 32768)
	}
	for i := range w.OutBias {
		w.OutBias[i] = int32(rng.Uint32())
	}
	return w
}

// referenceEval computes the network's output from the weights with plain
// integer arithmetic, one lane at a time: what the packed code must equal.
func referenceEval(w *Weights, pos *chess.Position) int32 {
	var acc [2][Hidden]int
	for p := range 2 {
		for i := range Hidden {
			acc[p][i] = int(w.Bias[i])
		}
	}
	for occ := pos.Occupied(); occ != 0; {
		sq := occ.PopFirst()
		for p := chess.White; p <= chess.Black; p++ {
			f := FeatureIndex(p, pos.PieceAt(sq), sq)
			for i := range Hidden {
				acc[p][i] += int(w.Feature[f*Hidden+i])
			}
		}
	}
	b := Bucket(pos.Occupied().Count(), w.Buckets)
	stm := pos.Turn()
	var sum int64
	for i := range 2 * Hidden {
		x := acc[stm][i%Hidden]
		if i >= Hidden {
			x = acc[stm^1][i-Hidden]
		}
		c := int64(min(max(x, 0), QA))
		sum += c * c * int64(w.Output[b*2*Hidden+i])
	}
	o := sum/QA + int64(w.OutBias[b])
	return int32(o * int64(w.Scale) / (QA * QB))
}

func randomPositions(seed uint64, n int) []*chess.Position {
	rng := rand.New(rand.NewPCG(seed, 5))
	var out []*chess.Position
	for len(out) < n {
		pos := chess.StartingPosition()
		for ply := 0; ply < 120 && len(out) < n; ply++ {
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				break
			}
			pos.Play(moves[rng.IntN(len(moves))])
			c := *pos
			out = append(out, &c)
		}
	}
	return out
}

// TestPackedLanesMatchInt16: adding and subtracting packed weight words to
// packed accumulator words gives, lane by lane, the int16 sums, for every
// value an accumulator can take; clampLanes clamps two's complement lanes.
func TestPackedLanesMatchInt16(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const maxAcc = 33 * WeightLimit
	lane := func(limit int) int16 { return int16(rng.IntN(2*limit+1) - limit) }
	for range 100000 {
		var a, w, r [4]int16
		for k := range 4 {
			a[k] = lane(maxAcc - 2*WeightLimit)
			w[k], r[k] = lane(WeightLimit), lane(WeightLimit)
		}
		x := packLanesOffset(a)
		sum := x + packWeights(w) - packWeights(r)
		for k := range 4 {
			if got, want := unpackLane(sum, k), a[k]+w[k]-r[k]; got != want {
				t.Fatalf("lane %d of %d + %d - %d = %d; want %d", k, a[k], w[k], r[k], got, want)
			}
			if got := unpackLane(x, k); got != a[k] {
				t.Fatalf("unpackLane(packLanesOffset(%v), %d) = %d", a, k, got)
			}
		}
		y := rng.Uint64()
		clamped := clampLanes(y)
		for k := range 4 {
			v := int16(y >> (16 * k))
			if got := int16(clamped >> (16 * k)); got != min(max(v, 0), QA) {
				t.Fatalf("lane %d of clamp(%x) = %d; want %d", k, y, got, min(max(v, 0), QA))
			}
		}
	}
	// The extremes: the largest and smallest accumulator any position has.
	for _, v := range []int16{maxAcc, -maxAcc} {
		x := packLanesOffset([4]int16{v, -v, v, 0})
		if unpackLane(x, 0) != v || unpackLane(x, 1) != -v || unpackLane(x, 2) != v || unpackLane(x, 3) != 0 {
			t.Errorf("lanes of ±%d do not round-trip", maxAcc)
		}
	}
}

func TestEvaluateMatchesReference(t *testing.T) {
	for _, buckets := range []int{1, 8} {
		w := randomWeights(uint64(buckets), buckets)
		n, err := NewNetwork(w)
		if err != nil {
			t.Fatal(err)
		}
		for i, pos := range randomPositions(3, 300) {
			var acc Accumulator
			n.Refresh(&acc, pos)
			got := n.Evaluate(&acc, pos.Turn(), pos.Occupied().Count())
			if want := referenceEval(w, pos); got != want {
				t.Fatalf("buckets %d, position %d (%s): Evaluate = %d; want %d", buckets, i, pos.FEN(), got, want)
			}
		}
	}
}

func TestDiffAndApplyFollowMoves(t *testing.T) {
	n, err := NewNetwork(randomWeights(9, 8))
	if err != nil {
		t.Fatal(err)
	}
	positions := randomPositions(4, 400)
	var u Updates
	for i := 1; i < len(positions); i++ {
		from, to := positions[i-1], positions[i]
		if to.FullmoveNumber() < from.FullmoveNumber() {
			continue // a new game started
		}
		var a, want, got Accumulator
		n.Refresh(&a, from)
		n.Refresh(&want, to)
		if !Diff(&u, from, to) {
			t.Fatalf("Diff of one move reports too many changes")
		}
		n.Apply(&got, &a, &u)
		if !got.Equal(&want) {
			t.Fatalf("Apply after %s -> %s differs from a refresh", from.FEN(), to.FEN())
		}
	}
	// Any two positions: Diff lists every change (here 30 additions).
	kings, _ := chess.ParseFEN("4k3/8/8/8/8/8/8/4K3 w - - 0 1")
	start := chess.StartingPosition()
	var a, want, got Accumulator
	n.Refresh(&a, kings)
	n.Refresh(&want, start)
	if !Diff(&u, kings, start) || u.Len() != 30 {
		t.Fatalf("Diff(two kings, start) has %d changes; want 30", u.Len())
	}
	n.Apply(&got, &a, &u)
	if !got.Equal(&want) {
		t.Errorf("Apply(two kings → start) differs from a refresh")
	}
}

func TestWeightsRoundTripAndErrors(t *testing.T) {
	w := randomWeights(5, 4)
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != fileSize(Hidden, 4) {
		t.Fatalf("file is %d bytes; want %d", len(b), fileSize(Hidden, 4))
	}
	got, err := ParseWeights(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := got.MarshalBinary()
	if string(b2) != string(b) {
		t.Fatal("ParseWeights → MarshalBinary does not give the file back")
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), b...)) }
	cases := []struct {
		name  string
		b     []byte
		want  error
		field string
	}{
		{"empty", nil, ErrMagic, "magic"},
		{"magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), ErrMagic, "magic"},
		{"hidden", mutate(func(b []byte) []byte { b[8]++; return b }), ErrShape, "hidden"},
		{"quantisation", mutate(func(b []byte) []byte { b[12]++; return b }), ErrShape, "quantisation"},
		{"buckets", mutate(func(b []byte) []byte { b[10] = 9; return b }), ErrShape, "buckets"},
		{"reserved", mutate(func(b []byte) []byte { b[18] = 1; return b }), ErrShape, "reserved"},
		{"size", mutate(func(b []byte) []byte { return b[:len(b)-1] }), ErrSize, "size"},
		{"range", mutate(func(b []byte) []byte { b[headerSize], b[headerSize+1] = 0xff, 0x7f; return b }), ErrRange, "features"},
	}
	for _, c := range cases {
		_, err := ParseWeights(c.b)
		var fe *FileError
		if !errors.Is(err, c.want) || !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: ParseWeights = %v; want %v in field %q", c.name, err, c.want, c.field)
		}
	}
}

// FuzzParseWeights: a network file either loads or fails with a *FileError.
func FuzzParseWeights(f *testing.F) {
	b, _ := randomWeights(6, 1).MarshalBinary()
	f.Add(b[:headerSize])
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, err := Load(b)
		var fe *FileError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("Load error %v is not a *FileError", err)
		}
	})
}

func TestDefaultNetworkLoads(t *testing.T) {
	n, err := Load(defaultFile)
	if err != nil {
		t.Fatalf("the embedded network: %v", err)
	}
	if Default() == nil || n.Buckets() < 1 || n.Scale() < 1 {
		t.Fatalf("the embedded network has %d buckets and scale %d", n.Buckets(), n.Scale())
	}
	if DefaultSize() != fileSize(Hidden, n.Buckets()) {
		t.Errorf("DefaultSize() = %d; want %d", DefaultSize(), fileSize(Hidden, n.Buckets()))
	}
}

func BenchmarkLoadDefault(b *testing.B) {
	for b.Loop() {
		if _, err := Load(defaultFile); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkApplyQuiet(b *testing.B) {
	n := Default()
	pos, _ := chess.ParseFEN("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8")
	child := *pos
	m, _ := pos.ParseUCI("f1d3")
	child.Play(m)
	var a, c Accumulator
	n.Refresh(&a, pos)
	var u Updates
	for b.Loop() {
		Diff(&u, pos, &child)
		n.Apply(&c, &a, &u)
	}
}

func BenchmarkEvaluate(b *testing.B) {
	n := Default()
	pos, _ := chess.ParseFEN("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8")
	var a Accumulator
	n.Refresh(&a, pos)
	var s int32
	for b.Loop() {
		s += n.Evaluate(&a, chess.White, 30)
	}
	_ = s
}

func BenchmarkRefresh(b *testing.B) {
	n := Default()
	pos, _ := chess.ParseFEN("r1bq1rk1/pp2bppp/2n1pn2/3p4/2PP4/2N1PN2/PP3PPP/R2QKB1R w KQ - 0 8")
	var a Accumulator
	for b.Loop() {
		n.Refresh(&a, pos)
	}
}
