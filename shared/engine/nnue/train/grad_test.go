package train

import (
	"math"
	"testing"
)

// TestGradientMatchesFiniteDifferences compares backward's gradient of
// one sample's loss with central differences of the loss, for parameters
// of every kind.
func TestGradientMatchesFiniteDifferences(t *testing.T) {
	data, _ := synthetic(t, 7, 50, 150)
	cfg := testConfig(8)
	tr, err := NewTrainer(cfg, data)
	if err != nil {
		t.Fatal(err)
	}
	m := tr.Model
	// Larger weights than the initial ones, so activations are in the
	// clipped ReLU's sloped part often.
	for _, p := range m.params() {
		for i := range p {
			p[i] *= 8
		}
	}
	for i := range m.Bias {
		m.Bias[i] = 0.3
	}
	scratch := make([]float32, 6*m.Hidden)
	checks, bad := 0, 0
	for k := 0; k < 50; k++ {
		var s sample
		tr.decode(k, &s, k%2 == 1)
		s.target = 0.3
		g := NewModel(m.Hidden, m.Buckets, 1)
		for _, p := range g.params() {
			clear(p)
		}
		m.backward(&s, g, scratch)
		loss := func() float64 {
			acc := make([]float32, 2*m.Hidden)
			act := make([]float32, 2*m.Hidden)
			d := float64(sigmoid(m.forward(&s, acc, act)) - s.target)
			return d * d
		}
		params, grads := m.params(), g.params()
		for pi := range params {
			for _, i := range []int{0, len(params[pi]) / 2, len(params[pi]) - 1, int(s.features[0][0])*m.Hidden + 1, int(s.features[1][2])*m.Hidden + 3} {
				if i >= len(params[pi]) {
					continue
				}
				const h = 1e-3
				old := params[pi][i]
				params[pi][i] = old + h
				up := loss()
				params[pi][i] = old - h
				down := loss()
				params[pi][i] = old
				num := (up - down) / (2 * h)
				checks++
				if got := float64(grads[pi][i]); math.Abs(got-num) > 1e-3*max(1, math.Abs(num)) && math.Abs(got-num) > 2e-4 {
					// A difference step across the activation's kink at 0 or 1
					// disagrees legitimately; more than a few would be a bug.
					bad++
					t.Logf("sample %d, param set %d index %d: gradient %.6f; finite differences %.6f", k, pi, i, got, num)
				}
			}
		}
	}
	if checks < 500 || bad > checks/50 {
		t.Errorf("%d of %d gradients disagree with finite differences", bad, checks)
	}
}
