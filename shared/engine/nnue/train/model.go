// Package train trains the engine's evaluation network (shared/engine/nnue)
// on positions from shared/engine/nnue/dataset: pure Go, multi-core and
// deterministic for a seed (the result does not depend on the number of
// threads either).
//
// The float network is the one nnue describes: 768 inputs per perspective →
// Hidden (one feature transformer shared by both perspectives) → squared
// clipped ReLU of both accumulators, the side to move's first → one output
// per material bucket. Its output o is in units of Scale centipawns: the
// engine's score is o · Scale.
//
// Target and loss: each position has a search score s (centipawns, side to
// move) and the game result r (0, ½, 1). The target is
//
//	t = λ · sigmoid(s / Scale) + (1 − λ) · r
//
// and the loss the squared error (sigmoid(o) − t)², averaged. Scale is
// fitted to the data (FitScale: the scale at which sigmoid(s / Scale)
// predicts the results best), so a score and a result say the same thing
// and the network's centipawns keep the meaning the search's margins were
// tuned for.
//
// Optimiser: Adam (β₁ 0.9, β₂ 0.999) on mini-batches, the learning rate
// dropped by a factor every few epochs. Feature weights and biases are
// clipped to ±nnue.WeightClip after every step, which keeps the quantised
// accumulator inside int16 (the quantisation scheme is nnue's package
// comment; Export follows it).
//
// Determinism: a batch is cut into a fixed number of chunks whatever the
// thread count, each chunk's gradient is summed in sample order into its
// own buffer, and the buffers are added in chunk order; the shuffle comes
// from the seed and the epoch.
package train

import (
	"fmt"
	"math"
	"math/rand/v2"

	"chessapi/shared/engine/nnue"
	"chessapi/shared/engine/nnue/dataset"
)

// Model is the float network.
type Model struct {
	Hidden  int
	Buckets int
	Feature []float32 // nnue.Inputs × Hidden, row per feature
	Bias    []float32 // Hidden
	Output  []float32 // Buckets × 2·Hidden: side to move's then the other's
	OutBias []float32 // Buckets
}

// NewModel returns a randomly initialised model (uniform weights scaled by
// the fan-in, zero biases), the same for the same seed.
func NewModel(hidden, buckets int, seed uint64) *Model {
	m := &Model{
		Hidden: hidden, Buckets: buckets,
		Feature: make([]float32, nnue.Inputs*hidden),
		Bias:    make([]float32, hidden),
		Output:  make([]float32, buckets*2*hidden),
		OutBias: make([]float32, buckets),
	}
	rng := rand.New(rand.NewPCG(seed, 0x6e6e7565))
	uniform := func(s []float32, limit float64) {
		for i := range s {
			s[i] = float32((2*rng.Float64() - 1) * limit)
		}
	}
	uniform(m.Feature, 1/math.Sqrt(nnue.Inputs))
	uniform(m.Output, 1/math.Sqrt(float64(2*hidden)))
	return m
}

// ModelFromWeights returns the float model that quantised weights stand for
// (Export undone, up to Export's rounding): the start of a run that goes on
// from an exported network, such as the embedded one, when its float
// checkpoint is not at hand.
func ModelFromWeights(w *nnue.Weights) *Model {
	m := &Model{
		Hidden: w.Hidden, Buckets: w.Buckets,
		Feature: make([]float32, len(w.Feature)),
		Bias:    make([]float32, len(w.Bias)),
		Output:  make([]float32, len(w.Output)),
		OutBias: make([]float32, len(w.OutBias)),
	}
	for i, v := range w.Feature {
		m.Feature[i] = float32(float64(v) / nnue.QA)
	}
	for i, v := range w.Bias {
		m.Bias[i] = float32(float64(v) / nnue.QA)
	}
	for i, v := range w.Output {
		m.Output[i] = float32(float64(v) / nnue.QB)
	}
	for i, v := range w.OutBias {
		m.OutBias[i] = float32(float64(v) / (nnue.QA * nnue.QB))
	}
	return m
}

// Widen returns a copy of m with hidden accumulator values per perspective
// (at least m's): the old units keep their weights, the new ones get
// random feature weights (as NewModel's, from seed), zero biases and zero
// output weights, so the wider model computes exactly what m computes and
// training grows the new units from there.
func (m *Model) Widen(hidden int, seed uint64) (*Model, error) {
	if hidden < m.Hidden {
		return nil, fmt.Errorf("train: widen: %d is narrower than the model's %d", hidden, m.Hidden)
	}
	w := NewModel(hidden, m.Buckets, seed)
	for f := range nnue.Inputs {
		copy(w.Feature[f*hidden:f*hidden+m.Hidden], m.Feature[f*m.Hidden:(f+1)*m.Hidden])
	}
	copy(w.Bias, m.Bias)
	for b := range m.Buckets {
		for p := range 2 { // side to move's block, then the other's
			dst := w.Output[b*2*hidden+p*hidden : b*2*hidden+(p+1)*hidden]
			copy(dst, m.Output[b*2*m.Hidden+p*m.Hidden:b*2*m.Hidden+(p+1)*m.Hidden])
			clear(dst[m.Hidden:])
		}
	}
	copy(w.OutBias, m.OutBias)
	return w, nil
}

// params returns the model's parameter slices in a fixed order (the
// optimiser's and the checkpoint's).
func (m *Model) params() [][]float32 {
	return [][]float32{m.Feature, m.Bias, m.Output, m.OutBias}
}

// sample is one decoded training position.
type sample struct {
	features [2][32]uint16 // per perspective: side to move's, then the other's
	n        int
	bucket   int
	target   float32
}

// forward computes the accumulators (side to move's first), the
// activations and the output of s. acc and act have 2·Hidden values.
func (m *Model) forward(s *sample, acc, act []float32) float32 {
	h := m.Hidden
	for p := range 2 {
		a := acc[p*h : (p+1)*h]
		copy(a, m.Bias)
		for _, f := range s.features[p][:s.n] {
			row := m.Feature[int(f)*h : int(f)*h+h]
			for i, w := range row {
				a[i] += w
			}
		}
	}
	out := m.OutBias[s.bucket]
	w := m.Output[s.bucket*2*h : (s.bucket+1)*2*h]
	for i, x := range acc[:2*h] {
		c := min(max(x, 0), 1)
		act[i] = c * c
		out += w[i] * act[i]
	}
	return out
}

// Evaluate returns the float network's score in centipawns of a position
// given as its features (the side to move's perspective first) and the
// number of pieces on the board: what the quantised network approximates.
func (m *Model) Evaluate(own, their []uint16, pieces int, scale float64) float64 {
	var s sample
	s.n = copy(s.features[0][:], own)
	copy(s.features[1][:], their)
	s.bucket = nnue.Bucket(pieces, m.Buckets)
	acc := make([]float32, 2*m.Hidden)
	act := make([]float32, 2*m.Hidden)
	return float64(m.forward(&s, acc, act)) * scale
}

// Export quantises the model by nnue's scheme (any hidden size the file
// format takes; the engine loads only its build's nnue.Hidden).
func (m *Model) Export(scale int) (*nnue.Weights, error) {
	if m.Hidden%8 != 0 || m.Hidden > nnue.MaxHidden {
		return nil, fmt.Errorf("train: export: hidden %d: the file format takes multiples of 8 up to %d", m.Hidden, nnue.MaxHidden)
	}
	q16 := func(src []float32, factor float64) []int16 {
		out := make([]int16, len(src))
		for i, v := range src {
			out[i] = int16(min(max(math.Round(float64(v)*factor), math.MinInt16), math.MaxInt16))
		}
		return out
	}
	w := &nnue.Weights{
		Hidden: m.Hidden, Buckets: m.Buckets, Scale: scale,
		Feature: q16(m.Feature, nnue.QA),
		Bias:    q16(m.Bias, nnue.QA),
		Output:  q16(m.Output, nnue.QB),
		OutBias: make([]int32, m.Buckets),
	}
	for i, b := range m.OutBias {
		w.OutBias[i] = int32(math.Round(float64(b) * nnue.QA * nnue.QB))
	}
	return w, nil
}

// QuantisationError compares the model with its quantised export net over
// at most n encoded records and returns the mean and the largest absolute
// difference in centipawns.
func (m *Model) QuantisationError(records []byte, net *nnue.Network, scale float64, n int) (mean, worst float64, err error) {
	count := min(n, len(records)/dataset.RecordSize)
	var acc nnue.Accumulator
	var sum float64
	for i := range count {
		var r dataset.Record
		if err := r.UnmarshalBinary(records[i*dataset.RecordSize : (i+1)*dataset.RecordSize]); err != nil {
			return 0, 0, err
		}
		pos, err := r.Position()
		if err != nil {
			return 0, 0, fmt.Errorf("train: record %d: %w", i, err)
		}
		var own, their []uint16
		for occ := pos.Occupied(); occ != 0; {
			sq := occ.PopFirst()
			pc := pos.PieceAt(sq)
			own = append(own, uint16(nnue.FeatureIndex(pos.Turn(), pc, sq)))
			their = append(their, uint16(nnue.FeatureIndex(pos.Turn().Other(), pc, sq)))
		}
		want := m.Evaluate(own, their, len(own), scale)
		net.Refresh(&acc, pos)
		d := math.Abs(float64(net.Evaluate(&acc, pos.Turn(), len(own))) - want)
		sum += d
		worst = max(worst, d)
	}
	if count == 0 {
		return 0, 0, nil
	}
	return sum / float64(count), worst, nil
}
