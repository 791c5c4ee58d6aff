package game

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"chessapi/shared/chess"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// checkGolden compares got with testdata/golden/name (or rewrites it with
// -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the change)\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

func viewJSON(t *testing.T, s *State, you *chess.Color, now int64) []byte {
	t.Helper()
	v, err := ViewOf(s, you, at(now))
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(js, '\n')
}

// stateJSON is the state behind golden files, kept as golden too
// (state_*.json): shared/game/storedgame round-trips these games through
// the stored form and checks that they still show the golden views and
// PGNs.
func stateJSON(t *testing.T, s *State) []byte {
	t.Helper()
	js, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(js, '\n')
}

func TestGoldenViews(t *testing.T) {
	// An Italian game in progress: Black to move, with a pending draw offer
	// from White and a capture on the board.
	s := newGame(t, opts(t, `{"timeControl":"5+3","drawMode":"fide"}`))
	s = play(t, s, 2000, "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5", "c2c3", "g8f6", "d2d4", "e5d4", "e1g1")
	s, _ = mustApply(t, s, white, Action{Type: ActionOfferDraw}, at(13000))
	t.Run("mover", func(t *testing.T) { checkGolden(t, "view_mover.json", viewJSON(t, s, ptr(black), 20000)) })
	t.Run("opponent", func(t *testing.T) { checkGolden(t, "view_opponent.json", viewJSON(t, s, ptr(white), 20000)) })
	t.Run("state", func(t *testing.T) { checkGolden(t, "state_italian.json", stateJSON(t, s)) })

	// A finished Chess960 game watched by a spectator.
	c := gameFromFEN(t, "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1", opts(t, `{"variant":"chess960"}`))
	c.Chess960Index = nil
	c = play(t, c, 1000, "g1h1", "g8h8", "b1b8", "f8b8")
	c, _ = mustApply(t, c, white, Action{Type: ActionResign}, at(8000))
	t.Run("finished 960 spectator", func(t *testing.T) { checkGolden(t, "view_960_finished.json", viewJSON(t, c, nil, 9000)) })
	t.Run("finished 960 state", func(t *testing.T) { checkGolden(t, "state_960_finished.json", stateJSON(t, c)) })
}

func TestGoldenPGN(t *testing.T) {
	s := newGame(t, DefaultOptions())
	s = play(t, s, 1000, "e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6", "h5f7")
	pgn, err := PGN(s)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "scholars_mate.pgn", []byte(pgn))
	checkGolden(t, "state_scholars_mate.json", stateJSON(t, s))

	c, _, err := New(NewGame{GameID: "g960", Options: opts(t, `{"variant":"chess960","timeControl":"perMove:60","colorAssignment":"hostBlack"}`),
		Host: Player{ID: "p1", Name: "흑 플레이어"}, Seed: 2024}, t0)
	if err != nil {
		t.Fatal(err)
	}
	c, _, _ = joinGame(c, Player{ID: "p2", Name: "White Player"}, t0)
	rng := newTestRand(5)
	for range 40 {
		c, _ = mustApply(t, c, c.Turn(), moveAction(randomMove(t, c, rng)), at(int64(1000+c.Ply()*1000)))
	}
	c, _ = mustApply(t, c, white, Action{Type: ActionResign}, at(60000))
	pgn, err = PGN(c)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "chess960_resigned.pgn", []byte(pgn))
	checkGolden(t, "state_chess960_resigned.json", stateJSON(t, c))
	// The rules package reads it back to the same moves.
	g, err := chess.ParsePGN(pgn)
	if err != nil || len(g.Moves) != c.Ply() {
		t.Fatalf("ParsePGN(our PGN) = %d moves, %v; want %d", len(g.Moves), err, c.Ply())
	}
}
