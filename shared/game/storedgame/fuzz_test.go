package storedgame

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// FuzzDecode feeds Decode arbitrary bytes, seeded with every record of
// every writer (testdata/records) and the test games' current form: it
// never panics and fails only with a *DecodeError, and a state it accepts
// is usable: it encodes, decodes to itself (and encodes to the same bytes
// again), and takes views and steps without failing unexpectedly.
func FuzzDecode(f *testing.F) {
	for _, rec := range readRecords(f) {
		f.Add(rec.stored)
	}
	v1, _ := filepath.Glob(filepath.Join("testdata", "records", "v1-typescript", "*.json"))
	for _, p := range v1 {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	states := sampleStates(f)
	for _, name := range sortedNames(states) {
		f.Add(Encode(states[name]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(bytes.Clone(data))
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Decode error %v is not a *DecodeError", err)
			}
			return
		}
		b := Encode(s)
		again, err := Decode(bytes.Clone(b))
		if err != nil {
			t.Fatalf("Decode(Encode(decoded)) = %v", err)
		}
		assertSameState(t, again, s, "re-decoded")
		if b2 := Encode(again); !bytes.Equal(b2, b) {
			t.Fatalf("Encode(Decode(Encode(s))) differs from Encode(s)")
		}
		for _, you := range []*chess.Color{nil, ptr(white), ptr(black)} {
			if _, err := game.ViewOf(s, you, at(0)); err != nil {
				t.Fatalf("ViewOf = %v", err)
			}
		}
		game.Reduce(s, act(s.Turn(), game.Action{Type: game.ActionResign}), at(0))
		game.Reduce(s, game.Timeout{}, at(1e12))
	})
}

func ptr[T any](v T) *T { return &v }
