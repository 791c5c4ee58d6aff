package service

import (
	"errors"
	"testing"
)

func TestActiveCursorRoundTrip(t *testing.T) {
	for _, p := range []activePosition{{0, "g"}, {1764639000123, "abcDEF-_12"}, {9999999999999, "ü"}} {
		got, ok, err := decodeActiveCursor(encodeActiveCursor(p))
		if err != nil || !ok || got != p {
			t.Errorf("decode(encode(%+v)) = %+v, %v, %v", p, got, ok, err)
		}
	}
	// The index's cursors ('p' + sort key: the active list's format before
	// it was ordered by the games' writes) and garbage are refused.
	for _, c := range []string{"cDAwMDAwMDAwMDAwMDAjZw", "!!", "dQ", "dTAwMDAwMDAwMDAwMDA", "dTAwMDAwMDAwMDAwMHhn"} {
		if _, _, err := decodeActiveCursor(c); !errors.Is(err, errActiveCursor) {
			t.Errorf("decode(%q) = %v; want errActiveCursor", c, err)
		}
	}
}

func FuzzActiveCursor(f *testing.F) {
	f.Add(encodeActiveCursor(activePosition{1764639000123, "g1"}))
	f.Add("cDAwMDAwMDAwMDAwMDAjZw")
	f.Add("")
	f.Fuzz(func(t *testing.T, cursor string) {
		p, ok, err := decodeActiveCursor(cursor)
		if err != nil || !ok {
			return
		}
		if again, _, err := decodeActiveCursor(encodeActiveCursor(p)); err != nil || again != p {
			t.Fatalf("%q decodes to %+v, which does not round-trip (%+v, %v)", cursor, p, again, err)
		}
	})
}
