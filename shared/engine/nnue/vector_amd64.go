//go:build goexperiment.simd && amd64

package nnue

import "simd/archsimd"

// With GOEXPERIMENT=simd on amd64 the row operations and the output layer
// use AVX2 (16 lanes of the accumulator an instruction, against four for
// the portable packed words) when the processor has it; the results are
// the portable code's, bit for bit (TestVectorMatchesPortable).

var avx2 = archsimd.X86.AVX2()

// VectorUnit names the instructions the evaluation uses: "AVX2", or "" for
// the portable 64-bit code.
var VectorUnit = func() string {
	if avx2 {
		return "AVX2"
	}
	return ""
}()

// The accumulator's words hold four offset lanes each (nnue.go); four words
// are one 256-bit vector of 16 lanes, in lane order, so a 64-bit add of the
// portable code is a 64-bit lane add here: the same bits.

func addRow(d, w *[words]uint64) {
	if !avx2 {
		addRowWords(d, w)
		return
	}
	for i := 0; i < words; i += 4 {
		x := archsimd.LoadUint64x4((*[4]uint64)(d[i : i+4]))
		x.Add(archsimd.LoadUint64x4((*[4]uint64)(w[i : i+4]))).Store((*[4]uint64)(d[i : i+4]))
	}
}

func subRow(d, w *[words]uint64) {
	if !avx2 {
		subRowWords(d, w)
		return
	}
	for i := 0; i < words; i += 4 {
		x := archsimd.LoadUint64x4((*[4]uint64)(d[i : i+4]))
		x.Sub(archsimd.LoadUint64x4((*[4]uint64)(w[i : i+4]))).Store((*[4]uint64)(d[i : i+4]))
	}
}

func addSub(d, s, a, r *[words]uint64) {
	if !avx2 {
		addSubWords(d, s, a, r)
		return
	}
	for i := 0; i < words; i += 4 {
		x := archsimd.LoadUint64x4((*[4]uint64)(s[i : i+4]))
		x = x.Add(archsimd.LoadUint64x4((*[4]uint64)(a[i : i+4])))
		x.Sub(archsimd.LoadUint64x4((*[4]uint64)(r[i : i+4]))).Store((*[4]uint64)(d[i : i+4]))
	}
}

func addSubSub(d, s, a, r1, r2 *[words]uint64) {
	if !avx2 {
		addSubSubWords(d, s, a, r1, r2)
		return
	}
	for i := 0; i < words; i += 4 {
		x := archsimd.LoadUint64x4((*[4]uint64)(s[i : i+4]))
		x = x.Add(archsimd.LoadUint64x4((*[4]uint64)(a[i : i+4])))
		x = x.Sub(archsimd.LoadUint64x4((*[4]uint64)(r1[i : i+4])))
		x.Sub(archsimd.LoadUint64x4((*[4]uint64)(r2[i : i+4]))).Store((*[4]uint64)(d[i : i+4]))
	}
}

func (n *Network) outputSum(own, their *[words]uint64, w *[2 * Hidden]int32) int64 {
	if !avx2 || !n.vectorSafe {
		return screluDots(own, their, w)
	}
	return screluDotVector(own, (*[Hidden]int32)(w[:Hidden])) + screluDotVector(their, (*[Hidden]int32)(w[Hidden:]))
}

// screluDotVector is screluDot with AVX2: 16 lanes are clamped as int16,
// widened to two vectors of eight int32, squared and multiplied by their
// weights. Each int32 lane sums Hidden/16 terms, exact while the weights
// are within vectorOutputLimit (the caller checks); the lanes are added
// in int64 at the end.
func screluDotVector(v *[words]uint64, w *[Hidden]int32) int64 {
	offset := archsimd.BroadcastInt16x16(-laneOffset) // the offset lanes' top bit: xor makes them two's complement
	zero := archsimd.BroadcastInt16x16(0)
	top := archsimd.BroadcastInt16x16(QA)
	var s0, s1 archsimd.Int32x8
	for i := 0; i < words; i += 4 {
		x := archsimd.LoadUint64x4((*[4]uint64)(v[i : i+4])).AsInt16x16().Xor(offset).Max(zero).Min(top)
		lo, hi := x.GetLo().ExtendToInt32(), x.GetHi().ExtendToInt32()
		s0 = s0.Add(lo.Mul(lo).Mul(archsimd.LoadInt32x8((*[8]int32)(w[4*i : 4*i+8]))))
		s1 = s1.Add(hi.Mul(hi).Mul(archsimd.LoadInt32x8((*[8]int32)(w[4*i+8 : 4*i+16]))))
	}
	var a, b [8]int32
	s0.Store(&a)
	s1.Store(&b)
	var sum int64
	for k := range 8 {
		sum += int64(a[k]) + int64(b[k])
	}
	return sum
}
