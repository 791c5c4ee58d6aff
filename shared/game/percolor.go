package game

import (
	"encoding/json"
	"strconv"

	"chessapi/shared/chess"
)

// PerColor holds one value per side, indexed by chess.Color. In JSON it is
// the object {"white": ..., "black": ...} (seeds/000 §8.1 Record<Color, T>).
type PerColor[T any] [2]T

// MarshalJSON writes {"white": p[White], "black": p[Black]}. Views carry
// several (clocks, captures, players) and every version's delta marshals
// some, so the numbers and flags are written directly and the rest in one
// pass over the object form.
func (p PerColor[T]) MarshalJSON() ([]byte, error) {
	switch q := any(p).(type) {
	case PerColor[int64]:
		return appendPerColor(q, func(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }), nil
	case PerColor[int]:
		return appendPerColor(q, func(b []byte, v int) []byte { return strconv.AppendInt(b, int64(v), 10) }), nil
	case PerColor[bool]:
		return appendPerColor(q, strconv.AppendBool), nil
	}
	return json.Marshal(perColorJSON[T]{White: p[chess.White], Black: p[chess.Black]})
}

func appendPerColor[T any](p PerColor[T], appendValue func([]byte, T) []byte) []byte {
	b := make([]byte, 0, 48)
	b = append(b, `{"white":`...)
	b = appendValue(b, p[chess.White])
	b = append(b, `,"black":`...)
	b = appendValue(b, p[chess.Black])
	return append(b, '}')
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
