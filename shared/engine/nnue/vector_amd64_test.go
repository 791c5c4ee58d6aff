//go:build goexperiment.simd && amd64

package nnue

import (
	"math/rand/v2"
	"testing"
)

// TestVectorMatchesPortable compares the AVX2 row operations and output
// layer with the portable ones on random words and lanes, the extremes
// included (lanes at ±WeightLimit·33, weights at ±vectorOutputLimit).
func TestVectorMatchesPortable(t *testing.T) {
	if !avx2 {
		t.Skip("no AVX2 on this processor: the portable code runs")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	randomWords := func() *[words]uint64 {
		var lanes [Hidden]int16
		for i := range lanes {
			switch rng.IntN(4) {
			case 0:
				lanes[i] = int16(rng.IntN(2*33*WeightLimit+1) - 33*WeightLimit)
			case 1:
				lanes[i] = int16(rng.IntN(600) - 200) // around the clamp's ends
			case 2:
				lanes[i] = []int16{33 * WeightLimit, -33 * WeightLimit, 0, QA, QA + 1, -1}[rng.IntN(6)]
			default:
				lanes[i] = int16(rng.IntN(QA + 1))
			}
		}
		var w [words]uint64
		packBias(&w, lanes[:])
		return &w
	}
	randomRow := func() *[words]uint64 {
		var v [Hidden]int16
		for i := range v {
			v[i] = int16(rng.IntN(2*WeightLimit+1) - WeightLimit)
		}
		var w [words]uint64
		packRow(&w, v[:])
		return &w
	}
	for trial := range 2000 {
		var weights [2 * Hidden]int32
		for i := range weights {
			if trial%3 == 0 {
				weights[i] = []int32{vectorOutputLimit, -vectorOutputLimit}[rng.IntN(2)]
			} else {
				weights[i] = int32(rng.IntN(2*vectorOutputLimit+1) - vectorOutputLimit)
			}
		}
		own, their := randomWords(), randomWords()
		n := &Network{vectorSafe: true}
		if got, want := n.outputSum(own, their, &weights), screluDots(own, their, &weights); got != want {
			t.Fatalf("trial %d: vector output sum %d, portable %d", trial, got, want)
		}

		s, a, r1, r2 := randomWords(), randomRow(), randomRow(), randomRow()
		var got, want [words]uint64
		addSub(&got, s, a, r1)
		addSubWords(&want, s, a, r1)
		if got != want {
			t.Fatalf("trial %d: addSub differs", trial)
		}
		addSubSub(&got, s, a, r1, r2)
		addSubSubWords(&want, s, a, r1, r2)
		if got != want {
			t.Fatalf("trial %d: addSubSub differs", trial)
		}
		got, want = *s, *s
		addRow(&got, a)
		addRowWords(&want, a)
		subRow(&got, r1)
		subRowWords(&want, r1)
		if got != want {
			t.Fatalf("trial %d: addRow/subRow differ", trial)
		}
	}
}

// TestVectorRefusesLargeOutputWeights: a network with an output weight
// beyond vectorOutputLimit is evaluated by the portable code.
func TestVectorRefusesLargeOutputWeights(t *testing.T) {
	w, err := ParseWeights(defaultFile)
	if err != nil {
		t.Fatal(err)
	}
	net, err := NewNetwork(w)
	if err != nil {
		t.Fatal(err)
	}
	if !net.vectorSafe {
		t.Fatal("the embedded network is not vector-safe: its output weights exceed vectorOutputLimit")
	}
	w.Output[5] = vectorOutputLimit + 1
	if net, err = NewNetwork(w); err != nil || net.vectorSafe {
		t.Errorf("output weight %d: vectorSafe %v, err %v; want the portable path", vectorOutputLimit+1, net != nil && net.vectorSafe, err)
	}
}
