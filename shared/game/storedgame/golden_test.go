package storedgame

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// The reducer's golden games (shared/game/testdata/golden: each state
// kept as state_*.json beside the views and PGNs it shows) go through the
// stored form and still show exactly their golden views and PGNs.
func TestGoldenStatesThroughTheStoredForm(t *testing.T) {
	type view struct {
		file string
		you  *chess.Color
		now  int64 // ms after t0, as the reducer's golden test took it
	}
	golden := []struct {
		state string
		views []view
		pgn   string
	}{
		{state: "state_italian.json", views: []view{{"view_mover.json", ptr(black), 20000}, {"view_opponent.json", ptr(white), 20000}}},
		{state: "state_960_finished.json", views: []view{{"view_960_finished.json", nil, 9000}}},
		{state: "state_scholars_mate.json", pgn: "scholars_mate.pgn"},
		{state: "state_chess960_resigned.json", pgn: "chess960_resigned.pgn"},
	}
	dir := filepath.Join("..", "testdata", "golden")
	read := func(t *testing.T, name string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, g := range golden {
		t.Run(g.state, func(t *testing.T) {
			js := read(t, g.state)
			s, err := Decode(bytes.Clone(js)) // the plain JSON of a State
			if err != nil {
				t.Fatalf("Decode(golden JSON) = %v", err)
			}
			if again, _ := json.MarshalIndent(s, "", "  "); !bytes.Equal(append(again, '\n'), js) {
				t.Fatalf("the golden state decodes to a different state:\n%s", again)
			}
			stored, err := Decode(Encode(s))
			if err != nil {
				t.Fatalf("Decode(Encode(golden)) = %v", err)
			}
			assertSameState(t, stored, s, "golden state through the stored form")
			for _, v := range g.views {
				got, err := game.ViewOf(stored, v.you, at(v.now))
				if err != nil {
					t.Fatal(err)
				}
				js, err := json.MarshalIndent(got, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				if want := read(t, v.file); !bytes.Equal(append(js, '\n'), want) {
					t.Errorf("%s differs after the stored form:\n got: %s\nwant: %s", v.file, js, want)
				}
			}
			if g.pgn != "" {
				pgn, err := game.PGN(stored)
				if err != nil || pgn != string(read(t, g.pgn)) {
					t.Errorf("PGN after the stored form = %q, %v; want %s", pgn, err, g.pgn)
				}
			}
		})
	}
}
