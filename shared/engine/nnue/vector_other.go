//go:build !(goexperiment.simd && amd64)

package nnue

// Without the vector package (GOEXPERIMENT=simd on amd64) every row
// operation and the output layer are the portable ones of nnue.go.

// VectorUnit names the instructions the evaluation uses: "" for the
// portable 64-bit code.
const VectorUnit = ""

func addRow(d, w *[words]uint64)               { addRowWords(d, w) }
func subRow(d, w *[words]uint64)               { subRowWords(d, w) }
func addSub(d, s, a, r *[words]uint64)         { addSubWords(d, s, a, r) }
func addSubSub(d, s, a, r1, r2 *[words]uint64) { addSubSubWords(d, s, a, r1, r2) }

func (n *Network) outputSum(own, their *[words]uint64, w *[2 * Hidden]int32) int64 {
	return screluDots(own, their, w)
}
