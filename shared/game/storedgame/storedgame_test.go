package storedgame

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"chessapi/shared/game"
)

func TestEncodeDecodeRoundTrip(t *testing.T) {
	states := sampleStates(t)
	for _, name := range sortedNames(states) {
		s := states[name]
		t.Run(name, func(t *testing.T) {
			b := Encode(s)
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode = %v", err)
			}
			assertSameState(t, got, s, "Decode(Encode(s))")
			if again := Encode(got); !bytes.Equal(again, b) {
				t.Errorf("Encode(Decode(b)) differs from b:\n%q\n%q", again, b)
			}
			// The plain JSON of a State reads back too.
			js, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			fromJSON, err := Decode(js)
			if err != nil {
				t.Fatalf("Decode(JSON) = %v", err)
			}
			assertSameState(t, fromJSON, s, "Decode(json.Marshal(s))")
		})
	}
}

// TestDecodeOwnsItsStrings: the strings of a decoded state are its
// own, so a caller that (wrongly) reuses the record's buffer changes only
// the events it was told are read in place.
func TestDecodeOwnsItsStrings(t *testing.T) {
	s := sampleStates(t)["playing with requests"]
	b := Encode(s)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := got.Moves[0].UCI + got.Seats[white].Name + got.Requests[white][0].ID + got.GameID
	for i := range b {
		b[i] = 'x'
	}
	if after := got.Moves[0].UCI + got.Seats[white].Name + got.Requests[white][0].ID + got.GameID; after != want {
		t.Errorf("strings changed with the record's bytes: %q, was %q", after, want)
	}
}

func TestEncodedSize(t *testing.T) {
	s := longGame(t, 1000)
	b := Encode(s)
	if b[0] != formatText || len(b) > 40<<10 {
		t.Errorf("1,000-ply game: format %d, %d bytes; want the text form, well under 100 KB", b[0], len(b))
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	assertSameState(t, got, s, "1,000-ply game")
}

// TestDeltasShareOfTheRecord: the stream deltas the change log keeps (the
// newest game.ChangeLogDeltas versions') are a bounded part of every
// record, whatever the game's length; the sizes are logged for
// docs/push.md:
//
//	go test -count=1 -run TestDeltasShareOfTheRecord -v ./shared/game/storedgame
func TestDeltasShareOfTheRecord(t *testing.T) {
	for _, plies := range []int{40, 200, 1000} {
		s := longGame(t, plies)
		with := len(Encode(s))
		s.Changes = slices.Clone(s.Changes)
		kept := 0
		for i := range s.Changes {
			if len(s.Changes[i].Delta) > 0 {
				kept++
			}
			s.Changes[i].Delta = nil
		}
		without := len(Encode(s))
		t.Logf("%4d plies: %6d bytes stored, %6d without the %d deltas (+%d)", plies, with, without, kept, with-without)
		if kept > game.ChangeLogDeltas || with-without > game.ChangeLogDeltas*512 {
			t.Errorf("%d plies: %d deltas, %d bytes; want at most %d, under 512 bytes each", plies, kept, with-without, game.ChangeLogDeltas)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	good := Encode(play(t, newGame(t, game.DefaultOptions()), 1000, "e2e4"))
	corrupt := func(from, to string) []byte {
		if !bytes.Contains(good, []byte(from)) {
			t.Fatalf("stored form lacks %q: %s", from, good)
		}
		return bytes.Replace(good, []byte(from), []byte(to), 1)
	}
	tests := map[string]struct {
		data   []byte
		reason string // in the error
	}{
		"empty":                  {nil, "empty"},
		"unknown format":         {[]byte{7, '{', '}'}, "unknown format byte 0x7"},
		"truncated":              {good[:bytes.IndexByte(good, '\n')+3], "header"},
		"no log section":         {append([]byte{formatJSONHeader}, `{"sv":2}`...), "no request log section"},
		"header unterminated":    {[]byte{formatText, 's', 'v', ' ', '2', '\n'}, "header not terminated"},
		"header unknown key":     {corrupt("rng ", "rnd "), `header field "rnd" unknown`},
		"header missing key":     {corrupt("rng 7\n", ""), "header field rng missing"},
		"header repeated key":    {corrupt("rng 7\n", "rng 7\nrng 8\n"), "header field rng repeated"},
		"header bad number":      {corrupt("\nv 3\n", "\nv x\n"), "header field v: not an integer"},
		"header bad flag":        {corrupt("o.autoQueen 0", "o.autoQueen 2"), "header field o.autoQueen: not 0 or 1"},
		"header bad pair":        {corrupt("clock.started 1 0", "clock.started 1"), "header field clock.started: not a pair"},
		"header bad escape":      {corrupt("w.name Alice", `w.name Al\ice`), `header field w.name: unknown escape`},
		"header bad tc":          {corrupt("o.timeControl 10+5", "o.timeControl 10+99"), "header field o.timeControl"},
		"rating no result":       {corrupt("rng 7\n", "r.rating.white 1 2\nrng 7\n"), "rating change without a result"},
		"bad deflate":            {[]byte{formatDeflate, 0xff, 0x00}, "inflate"},
		"bad zstd":               {append([]byte{formatText}, append(zstdMagic, 0, 1, 2)...), "zstd"},
		"illegal move":           {corrupt(`M1 4 2 4:e2e4`, `M1 4 2 4:e2e5`), `replay: game: restore: move 1 "e2e5"`},
		"move count mismatch":    {corrupt(`M1 4 2 4:e2e4e4`, `M1 9 2 4:e2e4 e7e5e4`), "more move text than moves"},
		"fewer moves than count": {corrupt(`M1 4 2 4:e2e4e41000`, `M2 4 2 9:e2e4e41000 1000`), `move 2 ""`},
		"moves section short":    {corrupt(`M1 4 2 4:`, `M2 4 2 4:`), "move"},
		"bad move time":          {corrupt(`M1 4 2 4:e2e4e41000`, `M1 4 2 4:e2e4e4x000`), "move times"},
		"bad change log":         {corrupt(`c2 `, `c9 `), "change log versions not consecutive"},
		"bad log tag":            {corrupt(`c1 `, `z1 `), "log entry tag"},
		"untagged log entry":     {corrupt(`c1 `, `01 `), "log entry tag"},
		"bad option":             {corrupt("o.drawMode auto", "o.drawMode never"), "replay: game: restore: options"},
		"unknown phase":          {corrupt("p playing", "p paused"), `unknown phase "paused"`},
		"finished no result":     {corrupt("p playing", "p finished"), "result must be set exactly when finished"},
		"state version":          {corrupt("sv 2", "sv 3"), "state version 3"},
		"json v9":                {[]byte(`{"stateVersion":9}`), "unknown state version 9"},
		"json garbage":           {[]byte(`{"stateVersion":`), "json"},
		"v1 bad fen":             {[]byte(`{"options":{},"players":{"white":"a","black":"b"},"startFen":"8/8/8/8/8/8/8/8 w - - 0 1","phase":"playing"}`), "start position"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := Decode(tc.data)
			var de *DecodeError
			if !errors.As(err, &de) || s != nil {
				t.Fatalf("Decode = %v, %v; want a *DecodeError", s, err)
			}
			if !strings.Contains(err.Error(), tc.reason) || !strings.HasPrefix(err.Error(), "storedgame: ") {
				t.Errorf("error %q; want it to say %q", err, tc.reason)
			}
		})
	}
}

// TestRestoreErrorsAreWrapped: a record that reads but is not a game
// carries the reducer's *game.RestoreError.
func TestRestoreErrorsAreWrapped(t *testing.T) {
	b := Encode(play(t, newGame(t, game.DefaultOptions()), 1000, "e2e4"))
	_, err := Decode(bytes.Replace(b, []byte("p playing"), []byte("p paused"), 1))
	var re *game.RestoreError
	if !errors.As(err, &re) || re.Reason != "inconsistent state" {
		t.Errorf("Decode = %v; want a *game.RestoreError (inconsistent state)", err)
	}
}

// jsonHeaderForm is formatJSONHeader as the writers before the text header
// made it: the JSON header then, when movesInJSON is false, the moves
// section, then log; with movesInJSON the moves are in the header (the
// form before the moves section).
func jsonHeaderForm(t *testing.T, s *game.State, movesInJSON bool, log []byte) []byte {
	t.Helper()
	h := jsonHeader{
		StateVersion: game.StateVersion, GameID: s.GameID, Version: s.Version, CreatedAt: s.CreatedAt,
		Options: plainOptions(s.Options), Seats: s.Seats, Chess960Index: s.Chess960Index, Phase: s.Phase,
		Clock: s.Clock, Undo: s.Undo, Draw: s.Draw, RNG: s.RNG, Rematch: s.Rematch,
	}
	if s.CustomStart() {
		h.StartFEN = s.StartFEN
	}
	if r := s.Result; r != nil {
		h.Result = &jsonHeaderResult{Winner: r.Winner, Reason: r.Reason, EndedAt: r.EndedAt}
	}
	var moves []byte
	if movesInJSON {
		var ucis, sans, times []string
		prev := s.CreatedAt
		for _, m := range s.Moves {
			ucis, sans, times = append(ucis, m.UCI), append(sans, m.SAN), append(times, fmt.Sprint(m.At-prev))
			prev = m.At
		}
		h.Moves, h.SANs, h.MoveDeltas = strings.Join(ucis, " "), strings.Join(sans, " "), strings.Join(times, " ")
	} else {
		moves = appendMoves(nil, s.Moves, s.CreatedAt)
	}
	js, err := json.Marshal(&h)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte{formatJSONHeader}, js...)
	out = append(append(out, '\n'), moves...)
	return append(out, log...)
}

// TestDecodeOlderForms reads the forms the earlier writers made, built
// here from a long game with full logs (testdata/records has each
// writer's own output): the JSON header with the moves section, with the
// moves in it, DEFLATE-compressed, and request-log entries without a tag
// or a fingerprint (and no change log).
func TestDecodeOlderForms(t *testing.T) {
	s := longGame(t, 120)
	logs := appendLogs(nil, &s.Requests, s.Changes)
	t.Run("JSON header", func(t *testing.T) {
		got, err := Decode(jsonHeaderForm(t, s, false, logs))
		if err != nil {
			t.Fatalf("Decode(JSON header) = %v", err)
		}
		assertSameState(t, got, s, "JSON header")
	})
	t.Run("deflate", func(t *testing.T) {
		plain := jsonHeaderForm(t, s, false, logs)
		var buf bytes.Buffer
		buf.WriteByte(formatDeflate)
		w, _ := flate.NewWriter(&buf, flate.BestSpeed)
		w.Write(plain[1:])
		w.Close()
		got, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("Decode(deflate) = %v", err)
		}
		assertSameState(t, got, s, "deflate record")
	})
	t.Run("moves in the JSON header", func(t *testing.T) {
		got, err := Decode(jsonHeaderForm(t, s, true, logs))
		if err != nil {
			t.Fatalf("Decode(moves in JSON) = %v", err)
		}
		assertSameState(t, got, s, "moves in the JSON header")
	})
	t.Run("untagged request log", func(t *testing.T) {
		var log []byte
		for c, entries := range s.Requests {
			for _, r := range entries {
				log = fmt.Appendf(log, "%d %d %d %d:%s%s", c, r.Version, len(r.ID), len(r.Events), r.ID, r.Events)
			}
		}
		got, err := Decode(jsonHeaderForm(t, s, true, log))
		if err != nil {
			t.Fatalf("Decode(untagged log) = %v", err)
		}
		want, err := Decode(Encode(s)) // a copy to change
		if err != nil {
			t.Fatal(err)
		}
		want.Changes = nil
		for c := range want.Requests {
			for i := range want.Requests[c] {
				want.Requests[c][i].Hash = ""
			}
		}
		assertSameState(t, got, want, "untagged request log")
		if _, complete := got.ChangesAfter(got.Version - 1); complete {
			t.Errorf("ChangesAfter on a record without a change log reports complete; want a reset")
		}
	})
}
