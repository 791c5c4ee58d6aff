package nnue

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Magic starts every network file.
const Magic = "NNUENET1"

const headerSize = len(Magic) + 6*2

// Weights are a network's quantised parameters as the file holds them (the
// layout is in the package comment): what the trainer's export produces
// and what NewNetwork turns into a Network.
type Weights struct {
	Hidden  int     // accumulator size per perspective (NewNetwork takes only this build's Hidden)
	Buckets int     // output buckets, 1..MaxBuckets
	Scale   int     // centipawns per output unit
	Feature []int16 // Inputs × Hidden, row per feature
	Bias    []int16 // Hidden
	Output  []int16 // Buckets × 2·Hidden: side to move's then the other's
	OutBias []int32 // Buckets
}

// Errors of ParseWeights and NewNetwork, wrapped in a *FileError.
var (
	ErrMagic = errors.New("not a network file (bad magic)")
	ErrShape = errors.New("shape not supported (by this build)")
	ErrSize  = errors.New("wrong file size for its shape")
	ErrRange = errors.New("weights would overflow the int16 accumulator")
)

// FileError reports a network file that cannot be used: the field and why.
type FileError struct {
	Field string
	Err   error
}

func (e *FileError) Error() string { return "nnue: " + e.Field + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *FileError) Unwrap() error { return e.Err }

// MaxHidden bounds the accumulator size a file may declare.
const MaxHidden = 4096

// fileSize returns the size of a file of the given shape.
func fileSize(hidden, buckets int) int {
	return headerSize + 2*Inputs*hidden + 2*hidden + 2*buckets*2*hidden + 4*buckets
}

// MarshalBinary writes the weights in the file format.
func (w *Weights) MarshalBinary() ([]byte, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, fileSize(w.Hidden, w.Buckets))
	b = append(b, Magic...)
	for _, v := range []int{w.Hidden, w.Buckets, QA, QB, w.Scale, 0} {
		b = binary.LittleEndian.AppendUint16(b, uint16(v))
	}
	for _, s := range [][]int16{w.Feature, w.Bias, w.Output} {
		for _, v := range s {
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		}
	}
	for _, v := range w.OutBias {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	return b, nil
}

// check validates the shape and the accumulator range.
func (w *Weights) check() error {
	switch {
	case w.Hidden < 8 || w.Hidden > MaxHidden || w.Hidden%8 != 0:
		return &FileError{"hidden", fmt.Errorf("%w: hidden %d (want a multiple of 8 up to %d)", ErrShape, w.Hidden, MaxHidden)}
	case w.Buckets < 1 || w.Buckets > MaxBuckets:
		return &FileError{"buckets", fmt.Errorf("%w: %d buckets (want 1..%d)", ErrShape, w.Buckets, MaxBuckets)}
	case w.Scale < 1 || w.Scale > 65535:
		return &FileError{"scale", fmt.Errorf("%w: scale %d", ErrShape, w.Scale)}
	case len(w.Feature) != Inputs*w.Hidden || len(w.Bias) != w.Hidden ||
		len(w.Output) != w.Buckets*2*w.Hidden || len(w.OutBias) != w.Buckets:
		return &FileError{"weights", ErrSize}
	}
	// Within ±WeightLimit no accumulator can overflow (package comment).
	const limit = WeightLimit
	for _, v := range w.Feature {
		if int(v) > limit || int(v) < -limit {
			return &FileError{"features", ErrRange}
		}
	}
	for _, v := range w.Bias {
		if int(v) > limit || int(v) < -limit {
			return &FileError{"bias", ErrRange}
		}
	}
	return nil
}

// ParseWeights reads a network file of any supported shape (NewNetwork
// then takes only this build's Hidden; the trainer reads others).
func ParseWeights(b []byte) (*Weights, error) {
	if len(b) < headerSize || string(b[:len(Magic)]) != Magic {
		return nil, &FileError{"magic", ErrMagic}
	}
	h := func(i int) int { return int(binary.LittleEndian.Uint16(b[len(Magic)+2*i:])) }
	hidden, buckets, qa, qb, scale := h(0), h(1), h(2), h(3), h(4)
	switch {
	case hidden < 8 || hidden > MaxHidden || hidden%8 != 0:
		return nil, &FileError{"hidden", fmt.Errorf("%w: hidden %d (want a multiple of 8 up to %d)", ErrShape, hidden, MaxHidden)}
	case qa != QA || qb != QB:
		return nil, &FileError{"quantisation", fmt.Errorf("%w: QA %d QB %d, this build has %d and %d", ErrShape, qa, qb, QA, QB)}
	case buckets < 1 || buckets > MaxBuckets:
		return nil, &FileError{"buckets", fmt.Errorf("%w: %d buckets", ErrShape, buckets)}
	case h(5) != 0:
		return nil, &FileError{"reserved", ErrShape}
	case len(b) != fileSize(hidden, buckets):
		return nil, &FileError{"size", fmt.Errorf("%w: %d bytes, want %d", ErrSize, len(b), fileSize(hidden, buckets))}
	}
	w := &Weights{Hidden: hidden, Buckets: buckets, Scale: scale}
	p := headerSize
	read16 := func(n int) []int16 {
		out := make([]int16, n)
		for i := range out {
			out[i] = int16(binary.LittleEndian.Uint16(b[p:]))
			p += 2
		}
		return out
	}
	w.Feature = read16(Inputs * hidden)
	w.Bias = read16(hidden)
	w.Output = read16(buckets * 2 * hidden)
	w.OutBias = make([]int32, buckets)
	for i := range w.OutBias {
		w.OutBias[i] = int32(binary.LittleEndian.Uint32(b[p:]))
		p += 4
	}
	if err := w.check(); err != nil {
		return nil, err
	}
	return w, nil
}

// NewNetwork builds a network for inference from its weights.
func NewNetwork(w *Weights) (*Network, error) {
	if err := w.check(); err != nil {
		return nil, err
	}
	if w.Hidden != Hidden {
		return nil, &FileError{"hidden", fmt.Errorf("%w: hidden %d, this build has %d", ErrShape, w.Hidden, Hidden)}
	}
	n := &Network{buckets: w.Buckets, scale: int64(w.Scale)}
	for f := range Inputs {
		packRow(&n.features[f], w.Feature[f*Hidden:(f+1)*Hidden])
	}
	packBias(&n.bias, w.Bias)
	n.vectorSafe = true
	for b := range w.Buckets {
		for i := range 2 * Hidden {
			v := int32(w.Output[b*2*Hidden+i])
			n.output[b][i] = v
			n.vectorSafe = n.vectorSafe && v <= vectorOutputLimit && v >= -vectorOutputLimit
		}
		n.outBias[b] = int64(w.OutBias[b])
	}
	return n, nil
}

// Load parses a network file and builds the network.
func Load(b []byte) (*Network, error) {
	w, err := ParseWeights(b)
	if err != nil {
		return nil, err
	}
	return NewNetwork(w)
}

// packRow packs a feature's weights as weight words.
func packRow(dst *[words]uint64, src []int16) {
	for i := range dst {
		dst[i] = packWeights([4]int16(src[4*i : 4*i+4]))
	}
}

// packBias packs the bias as accumulator words (offset lanes).
func packBias(dst *[words]uint64, src []int16) {
	for i := range dst {
		dst[i] = packLanesOffset([4]int16(src[4*i : 4*i+4]))
	}
}
