package game

import (
	"bytes"
	"encoding/json"

	"chessapi/shared/chess"
)

// PerColor holds one value per side, indexed by chess.Color. In JSON it is
// the object {"white": ..., "black": ...} (seeds/000 §8.1 Record<Color, T>).
type PerColor[T any] [2]T

// MarshalJSON writes {"white": p[White], "black": p[Black]}.
func (p PerColor[T]) MarshalJSON() ([]byte, error) {
	w, err := json.Marshal(p[chess.White])
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(p[chess.Black])
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Grow(len(w) + len(b) + 20)
	buf.WriteString(`{"white":`)
	buf.Write(w)
	buf.WriteString(`,"black":`)
	buf.Write(b)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// perColorJSON is the object form of PerColor. Decoding into it directly
// costs one pass over the input, where a map of raw values costs two.
type perColorJSON[T any] struct {
	White T `json:"white"`
	Black T `json:"black"`
}

// UnmarshalJSON reads an object with the keys "white" and "black" (either
// may be missing: it keeps its zero value; other keys are ignored).
func (p *PerColor[T]) UnmarshalJSON(data []byte) error {
	var v perColorJSON[T]
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*p = PerColor[T]{v.White, v.Black}
	return nil
}
