// Package nnue is the engine's learned evaluation: an efficiently updatable
// neural network ("NNUE") of the perspective kind, trained by
// shared/engine/nnue/train on positions from the engine's own games
// (shared/engine/nnue/dataset) and embedded in the binary.
//
// Architecture:
//
//	768 inputs per perspective: (own/their colour × piece type × square),
//	    the square mirrored vertically for Black's perspective, so both
//	    perspectives see the board as the side to move sees it
//	→ Hidden accumulator values per perspective, one weight matrix shared
//	    by both (the "feature transformer")
//	→ squared clipped ReLU, clamp(x, 0, 1)², of both accumulators, the side
//	    to move's first (2·Hidden values)
//	→ one output per material bucket (the bucket is chosen by the number of
//	    pieces on the board), in units of Scale centipawns.
//
// Quantisation (the trainer's float network exported as integers; this is
// the one description of the scheme, the trainer's export and this
// package's inference both follow it):
//
//	feature weights, accumulator bias  int16 = round(w · QA)          QA = 255
//	accumulator (bias + active rows)   int16, so 1.0 in float is QA
//	activation                         c = clamp(acc, 0, QA); c² is in QA² units
//	output weights                     int16 = round(w · QB)          QB = 256
//	output bias                        int32 = round(b · QA · QB)
//	output                             o = (Σ c²·w) / QA + bias       (QA·QB units)
//	centipawns                         o · Scale / (QA · QB)
//
// The trainer clips feature weights and biases to ±WeightClip (3.89, so
// ±WeightLimit = 992 quantised) so that the bias plus 32 pieces' rows stays
// inside int16 (33 · 992 ≤ 32767): no accumulator can overflow whatever the
// position. Output weights are
// clipped to ±OutputClip (int16 after scaling by QB); a product c²·w is
// below 2³¹ for any int16 w, and the sum Σ c²·w is taken in int64.
//
// Accumulators are stored as packed 16-bit lanes, four to a uint64 word,
// each lane offset by 2¹⁵ so it is never negative; weight rows are packed
// as the integers Σ wₖ·2¹⁶ᵏ. Because no lane can leave its range (above),
// a plain 64-bit add or subtract updates four lanes exactly (see
// packWeights): four lanes per instruction without SIMD intrinsics,
// portable to every 64-bit target (amd64 here, arm64 on Lambda).
//
// File format (little-endian), written by the trainer's Export:
//
//	magic     "NNUENET1"
//	hidden    uint16   a multiple of 8 up to MaxHidden; the engine loads Hidden
//	buckets   uint16   1..MaxBuckets
//	qa, qb    uint16   must equal QA and QB
//	scale     uint16   centipawns per output unit
//	reserved  uint16   zero
//	features  int16 × 768 × hidden     row per feature index
//	bias      int16 × hidden
//	output    int16 × buckets × 2·hidden
//	outbias   int32 × buckets
package nnue

import (
	"chessapi/shared/chess"
)

// Network shape and quantisation constants (see the package comment).
const (
	// Hidden is the accumulator size per perspective: 256 since the second
	// round (the r1–r4 network widened from 128 and trained on its own
	// games); with the AVX2 inference it costs little speed (docs/engine.md).
	Hidden = 256
	// Inputs is the number of input features per perspective.
	Inputs = 768
	// MaxBuckets bounds the output buckets.
	MaxBuckets = 8
	QA         = 255
	QB         = 256
	// WeightLimit bounds the quantised feature weights and biases: the bias
	// and 32 rows (at most 32 pieces) cannot leave int16.
	WeightLimit = 32767 / 33
	// WeightClip is WeightLimit in float, what the trainer clips to.
	WeightClip = WeightLimit / (QA * 1.0)
	// OutputClip bounds the float output weights: int16 after × QB.
	OutputClip = 32767.0 / QB

	words = Hidden / 4 // uint64 words of packed int16 lanes per accumulator (Hidden: a multiple of 8)
)

// FeatureIndex returns the input feature of piece pc on square sq seen from
// perspective persp: own pieces first, Black's perspective mirrored.
func FeatureIndex(persp chess.Color, pc chess.Piece, sq chess.Square) int {
	rel := int(pc.Color() ^ persp)
	if persp == chess.Black {
		sq ^= 56
	}
	return (rel*6+int(pc.Type())-1)*64 + int(sq)
}

// Bucket returns the output bucket of a position with pieces pieces (kings
// included) for a network with n buckets.
func Bucket(pieces, n int) int {
	if n <= 1 {
		return 0
	}
	b := (pieces - 2) * n / 31
	return min(max(b, 0), n-1)
}

// Network is a quantised network ready for inference.
type Network struct {
	buckets int
	scale   int64
	// features[f] is the row of feature f; bias the accumulator's start.
	features [Inputs][words]uint64
	bias     [words]uint64
	// output[b] holds the side to move's weights then the other side's.
	output  [MaxBuckets][2 * Hidden]int32
	outBias [MaxBuckets]int64
	// vectorSafe: every output weight is within vectorOutputLimit, so the
	// vector dot product's 32-bit lane sums cannot overflow (vector_*.go).
	vectorSafe bool
}

// vectorOutputLimit bounds the output weights for which the vector dot
// product's int32 lane sums are exact: a lane sums Hidden/16 terms c²·w
// with c ≤ QA (the portable screluDot sums in int64 and has no limit).
const vectorOutputLimit = (1<<31 - 1) / (Hidden / 16 * QA * QA)

// screluDots returns the output layer's sum over both perspectives'
// accumulators (the side to move's first) with the portable screluDot.
func screluDots(own, their *[words]uint64, w *[2 * Hidden]int32) int64 {
	return screluDot(own, (*[Hidden]int32)(w[:Hidden])) + screluDot(their, (*[Hidden]int32)(w[Hidden:]))
}

// Buckets returns the number of output buckets.
func (n *Network) Buckets() int { return n.buckets }

// Scale returns the centipawns per output unit.
func (n *Network) Scale() int { return int(n.scale) }

// Accumulator holds both perspectives' hidden values of one position,
// indexed by chess.Color.
type Accumulator struct {
	v [2][words]uint64
}

// Lane returns value i of perspective c (for tests and tools).
func (a *Accumulator) Lane(c chess.Color, i int) int16 {
	return unpackLane(a.v[c][i/4], i%4)
}

// Equal reports whether two accumulators hold the same values.
func (a *Accumulator) Equal(b *Accumulator) bool { return a.v == b.v }

// Refresh computes the accumulator of pos from scratch.
func (n *Network) Refresh(acc *Accumulator, pos *chess.Position) {
	for persp := chess.White; persp <= chess.Black; persp++ {
		acc.v[persp] = n.bias
	}
	for occ := pos.Occupied(); occ != 0; {
		sq := occ.PopFirst()
		pc := pos.PieceAt(sq)
		for persp := chess.White; persp <= chess.Black; persp++ {
			addRow(&acc.v[persp], &n.features[FeatureIndex(persp, pc, sq)])
		}
	}
}

// Updates lists the features a move (or several) added and removed, per
// perspective: what an accumulator needs to follow the board.
type Updates struct {
	add, sub [2][maxChanges]uint16
	nAdd     int
	nSub     int
}

// maxChanges bounds the changes Diff records; more than this and a refresh
// is cheaper anyway.
const maxChanges = 32

// Len returns the number of changed features (per perspective).
func (u *Updates) Len() int { return u.nAdd + u.nSub }

// Diff lists the features that differ between positions from and to (any
// two positions: the changes of one move, or of a line of moves). It
// reports false when there are more than maxChanges, so the caller should
// refresh instead.
func Diff(u *Updates, from, to *chess.Position) bool {
	u.nAdd, u.nSub = 0, 0
	for c := chess.White; c <= chess.Black; c++ {
		for t := chess.Pawn; t <= chess.King; t++ {
			a, b := from.Pieces(c, t), to.Pieces(c, t)
			if a == b {
				continue
			}
			pc := chess.MakePiece(c, t)
			for removed := a &^ b; removed != 0; {
				if u.nSub == maxChanges {
					return false
				}
				sq := removed.PopFirst()
				u.sub[chess.White][u.nSub] = uint16(FeatureIndex(chess.White, pc, sq))
				u.sub[chess.Black][u.nSub] = uint16(FeatureIndex(chess.Black, pc, sq))
				u.nSub++
			}
			for added := b &^ a; added != 0; {
				if u.nAdd == maxChanges {
					return false
				}
				sq := added.PopFirst()
				u.add[chess.White][u.nAdd] = uint16(FeatureIndex(chess.White, pc, sq))
				u.add[chess.Black][u.nAdd] = uint16(FeatureIndex(chess.Black, pc, sq))
				u.nAdd++
			}
		}
	}
	return true
}

// Apply sets dst to src with the updates applied.
func (n *Network) Apply(dst, src *Accumulator, u *Updates) {
	for persp := chess.White; persp <= chess.Black; persp++ {
		d, s := &dst.v[persp], &src.v[persp]
		adds, subs := u.add[persp][:u.nAdd], u.sub[persp][:u.nSub]
		switch {
		case len(adds) == 1 && len(subs) == 1: // a quiet move
			addSub(d, s, &n.features[adds[0]], &n.features[subs[0]])
		case len(adds) == 1 && len(subs) == 2: // a capture
			addSubSub(d, s, &n.features[adds[0]], &n.features[subs[0]], &n.features[subs[1]])
		default:
			*d = *s
			for _, f := range adds {
				addRow(d, &n.features[f])
			}
			for _, f := range subs {
				subRow(d, &n.features[f])
			}
		}
	}
}

// Evaluate returns the network's score of the position whose accumulator
// is acc, in centipawns from the side to move stm; pieces is the number of
// pieces on the board (it picks the output bucket).
func (n *Network) Evaluate(acc *Accumulator, stm chess.Color, pieces int) int32 {
	b := Bucket(pieces, n.buckets)
	w := &n.output[b]
	sum := n.outputSum(&acc.v[stm], &acc.v[stm^1], w)
	o := sum/QA + n.outBias[b]
	return int32(o * n.scale / (QA * QB))
}

// Packed lanes. An accumulator word holds four lanes of 16 bits, each the
// lane's value plus laneOffset, so every lane is in [0, 2¹⁶) (the values
// are within ±32736, see WeightLimit). A weight word holds the integer
// Σ wₖ·2¹⁶ᵏ (wₖ signed). Adding or subtracting weight words to an
// accumulator word with ordinary 64-bit arithmetic then gives exactly the
// packed representation of the new lanes: the result's base-2¹⁶ digits are
// the new lanes, since each lies in [0, 2¹⁶), whatever carries or borrows
// happened on the way. One instruction updates four lanes.
const (
	laneOffset = 1 << 15
	highBits   = 0x8000800080008000 // laneOffset in every lane
)

// packWeights packs four signed values as a weight word.
func packWeights(v [4]int16) uint64 {
	var x int64
	for k := 3; k >= 0; k-- {
		x = x<<16 + int64(v[k])
	}
	return uint64(x)
}

// packLanes packs four values as an accumulator word (offset lanes).
func packLanesOffset(v [4]int16) uint64 { return packWeights(v) + highBits }

// unpackLane returns lane k of an accumulator word.
func unpackLane(x uint64, k int) int16 { return int16(uint16(x>>(16*k)) ^ laneOffset) }

// The row operations on packed words, portable (SWAR): addRow, subRow,
// addSub and addSubSub (vector_*.go) use the vector unit instead where the
// build and the processor have one, with the same results.

func addRowWords(d, w *[words]uint64) {
	for i := range d {
		d[i] += w[i]
	}
}

func subRowWords(d, w *[words]uint64) {
	for i := range d {
		d[i] -= w[i]
	}
}

func addSubWords(d, s, a, r *[words]uint64) {
	for i := range d {
		d[i] = s[i] + a[i] - r[i]
	}
}

func addSubSubWords(d, s, a, r1, r2 *[words]uint64) {
	for i := range d {
		d[i] = s[i] + a[i] - r1[i] - r2[i]
	}
}

// squares[c] is c² for the clamped lane values 0..QA: a load is cheaper
// than a second multiply here.
var squares = func() (t [256]int32) {
	for i := range t {
		t[i] = int32(i * i)
	}
	return t
}()

// screluDot returns Σ clamp(lane, 0, QA)² · w over the lanes of v, two
// words (eight lanes) a step with two sums so the multiplies overlap. A
// term c²·w stays inside int32 (255² · 32767 < 2³¹); the sums are int64.
func screluDot(v *[words]uint64, w *[Hidden]int32) int64 {
	var s0, s1 int64
	for i := 0; i+1 < words; i += 2 {
		x, y := clampLanes(v[i]^highBits), clampLanes(v[i+1]^highBits)
		ws := w[4*i : 4*i+8 : 4*i+8]
		s0 += int64(squares[x&0xff]*ws[0]) + int64(squares[x>>16&0xff]*ws[1]) +
			int64(squares[x>>32&0xff]*ws[2]) + int64(squares[x>>48&0xff]*ws[3])
		s1 += int64(squares[y&0xff]*ws[4]) + int64(squares[y>>16&0xff]*ws[5]) +
			int64(squares[y>>32&0xff]*ws[6]) + int64(squares[y>>48&0xff]*ws[7])
	}
	return s0 + s1
}

// clampLanes clamps each int16 lane of x (two's complement lanes: an
// accumulator word xor highBits) to 0..QA (QA = 255): negative lanes
// become 0, lanes above 255 become 255.
func clampLanes(x uint64) uint64 {
	neg := (x & highBits) >> 15 * 0xffff // all ones in negative lanes
	x &^= neg
	over := ((x & 0x7f007f007f007f00) + 0x7fff7fff7fff7fff) & highBits >> 15 * 0xffff // lanes > 255
	return x&^over | over&0x00ff00ff00ff00ff
}

// screluDot takes two words a step: Hidden must be a multiple of 8.
var _ = [1]struct{}{}[Hidden%8]
