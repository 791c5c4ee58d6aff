package game

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// sampleStates returns states that exercise every part of the stored form.
func sampleStates(t *testing.T) map[string]*State {
	t.Helper()
	waiting, _, err := New(NewGame{GameID: "w", Options: opts(t, `{"variant":"chess960"}`), Host: Player{ID: "h", Name: "한글 이름", TokenHash: "th"}, Seed: 3,
		RematchOf: &PreviousGame{GameID: "old", HostColor: black}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	playing := newGame(t, opts(t, `{"timeControl":"perMove:60","drawMode":"fide","undo":3}`))
	playing = play(t, playing, 1000, "e2e4", "c7c5", "e4e5", "d7d5")
	playing, _ = mustApply(t, playing, white, Action{Type: ActionRequestUndo, RequestID: "id with spaces:and colons\n"}, at(9000))
	playing, _, _ = SetPresence(playing, black, false, at(9500))
	offered := play(t, newGame(t, DefaultOptions()), 1000, "d2d4")
	offered, _ = mustApply(t, offered, white, Action{Type: ActionOfferDraw, RequestID: "o1"}, at(3000))
	finished := play(t, newGame(t, DefaultOptions()), 1000, "f2f3", "e7e5", "g2g4")
	finished, _ = mustApply(t, finished, black, Action{Type: ActionMove, Move: MoveInput{SAN: "Qh4#"}, RequestID: "mate"}, at(9000))
	finished, _, _ = linkRematchGame(finished, "next")
	aborted, _, _ := ApplyTimeout(newGame(t, DefaultOptions()), at(60000))
	custom := gameFromFEN(t, "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", DefaultOptions())
	custom = play(t, custom, 1000, "e1g1")
	long := randomGame(t, unlimitedClock(t, "chess960"), 11, 300)
	return map[string]*State{
		"waiting 960": waiting, "playing with requests": playing, "draw offered": offered,
		"finished": finished, "aborted": aborted, "custom start": custom, "long 960": long[len(long)-1],
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	for name, s := range sampleStates(t) {
		t.Run(name, func(t *testing.T) {
			b, err := Encode(s)
			if err != nil {
				t.Fatalf("Encode = %v", err)
			}
			got, err := Decode(b)
			if err != nil {
				t.Fatalf("Decode = %v", err)
			}
			assertSameState(t, got, s, "Decode(Encode(s))")
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

func TestEncodedSize(t *testing.T) {
	s := longGame(t, 1000)
	b, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if b[0] != formatText || len(b) > 40<<10 {
		t.Errorf("1,000-ply game: format %d, %d bytes; want the plain form, well under 100 KB", b[0], len(b))
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	assertSameState(t, got, s, "1,000-ply game")
}

// longGame plays a game of exactly plies moves with every move sent with a
// request id: knights and rooks shuffle (drawMode fide, so repetitions only
// become claimable) and pawns advance now and then to reset the 75-move
// count.
func longGame(t testing.TB, plies int) *State {
	t.Helper()
	s := newGame(t, opts(t, `{"drawMode":"fide","timeControl":"90+60"}`))
	rng := rand.New(rand.NewPCG(1, 2))
	ms := int64(0)
	for s.Ply() < plies {
		if s.Phase != PhasePlaying {
			t.Fatalf("long game ended at ply %d: %+v", s.Ply(), s.Result)
		}
		pos := s.Position()
		var quiet, candidates []chess.Move
		for _, m := range pos.LegalMoves() {
			child := *pos
			child.Play(m)
			if child.Status() != chess.StatusPlaying || hashCount(s.hashes, child.Hash()) >= 2 || child.HalfmoveClock() >= 140 {
				continue
			}
			candidates = append(candidates, m)
			if pos.PieceAt(m.To()) == chess.NoPiece && (pos.HalfmoveClock() < 100 || pos.PieceAt(m.From()).Type() == chess.Pawn) {
				quiet = append(quiet, m)
			}
		}
		if len(quiet) > 0 {
			candidates = quiet
		}
		if len(candidates) == 0 {
			t.Fatalf("long game stuck at ply %d: %s", s.Ply(), s.FEN)
		}
		pick := candidates[rng.IntN(len(candidates))]
		ms += 500 + rng.Int64N(1000)
		s, _ = mustApply(t, s, s.Turn(), Action{Type: ActionMove, Move: MoveInput{UCI: pos.UCI(pick)}, RequestID: fmtID(s.Ply())}, at(ms))
	}
	return s
}

// fmtID returns a UUID-shaped request id, unique per ply.
func fmtID(ply int) string { return fmt.Sprintf("%08x-4b5a-4978-8796-%012x", ply, ply*7919) }

func TestDecodeErrors(t *testing.T) {
	good, err := Encode(play(t, newGame(t, DefaultOptions()), 1000, "e2e4"))
	if err != nil {
		t.Fatal(err)
	}
	corrupt := func(from, to string) []byte {
		if !bytes.Contains(good, []byte(from)) {
			t.Fatalf("stored form lacks %q: %s", from, good)
		}
		return bytes.Replace(good, []byte(from), []byte(to), 1)
	}
	tests := map[string][]byte{
		"empty":               nil,
		"unknown format":      {9, '{', '}'},
		"truncated":           good[:len(good)/2],
		"no log section":      append([]byte{formatPlain}, `{"sv":2}`...),
		"header unterminated": []byte{formatText, 's', 'v', ' ', '2', '\n'},
		"header unknown key":  corrupt("rng ", "rnd "),
		"header missing key":  corrupt("rng 7\n", ""),
		"header repeated key": corrupt("rng 7\n", "rng 7\nrng 8\n"),
		"header bad number":   corrupt("\nv 3\n", "\nv x\n"),
		"bad deflate":         {formatDeflate, 0xff, 0x00},
		"illegal move":        corrupt(`M1 4 2 4:e2e4`, `M1 4 2 4:e2e5`),
		"move count mismatch": corrupt(`M1 4 2 4:e2e4e4`, `M1 9 2 4:e2e4 e7e5e4`),
		"moves section short": corrupt(`M1 4 2 4:`, `M2 4 2 4:`),
		"bad move time":       corrupt(`M1 4 2 4:e2e4e41000`, `M1 4 2 4:e2e4e4x000`),
		"bad change log":      corrupt(`c2 `, `c9 `),
		"bad log tag":         corrupt(`c1 `, `z1 `),
		"bad option":          corrupt("o.drawMode auto", "o.drawMode never"),
		"unknown phase":       corrupt("p playing", "p paused"),
		"finished no result":  corrupt("p playing", "p finished"),
		"state version":       corrupt("sv 2", "sv 3"),
		"json v9":             []byte(`{"stateVersion":9}`),
		"json garbage":        []byte(`{"stateVersion":`),
		"v1 bad fen":          []byte(`{"options":{},"players":{"white":"a","black":"b"},"startFen":"8/8/8/8/8/8/8/8 w - - 0 1","phase":"playing"}`),
	}
	for name, data := range tests {
		t.Run(name, func(t *testing.T) {
			s, err := Decode(data)
			var de *DecodeError
			if !errors.As(err, &de) || s != nil {
				t.Errorf("Decode = %v, %v; want a *DecodeError", s, err)
			}
		})
	}
}

func TestMigrateV1(t *testing.T) {
	t.Run("playing", func(t *testing.T) {
		s := decodeFile(t, "v1_playing.json")
		if s.StateVersion != StateVersion || s.Options.Variant != VariantStandard || s.Chess960Index != nil {
			t.Errorf("stateVersion %d variant %s index %v; want 2, standard, null", s.StateVersion, s.Options.Variant, s.Chess960Index)
		}
		if s.Seats[white].PlayerID != "p-white" || s.Seats[black].PlayerID != "p-black" || s.Phase != PhasePlaying || s.Turn() != black {
			t.Errorf("seats %+v phase %s turn %s", s.Seats, s.Phase, s.Turn())
		}
		if s.Moves[2].SAN != "Nf3" || s.Clock.RemainingMs[white] != 599000 || s.repetitions() != 1 {
			t.Errorf("moves %+v clock %+v", s.Moves, s.Clock)
		}
		// The migrated game plays on and stores as version 2.
		s, _ = mustApply(t, s, black, moveAction("b8c6"), time.UnixMilli(1700000009000+5000))
		b, _ := Encode(s)
		again, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		assertSameState(t, again, s, "migrated game after a move")
	})
	t.Run("finished is read as standard", func(t *testing.T) {
		s := decodeFile(t, "v1_finished.json")
		r := s.Result
		if s.Phase != PhaseFinished || r == nil || r.Reason != ReasonCheckmate || *r.Winner != white || r.MoveCount != 4 {
			t.Fatalf("result %+v", r)
		}
		if s.Moves[6].FENAfter != s.FEN || s.Options.DrawMode != DrawFIDE || s.Options.Undo != UndoOff {
			t.Errorf("fen %q options %+v", s.FEN, s.Options)
		}
		if pgn, err := PGN(s); err != nil || !strings.Contains(pgn, "4. Qxf7# 1-0") {
			t.Errorf("PGN = %q, %v", pgn, err)
		}
	})
	t.Run("fen that disagrees with the moves is refused", func(t *testing.T) {
		data, _ := os.ReadFile(filepath.Join("testdata", "v1_playing.json"))
		data = bytes.Replace(data, []byte(`"fen": "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2`), []byte(`"fen": "rnbqkbnr/pppp1ppp/8/4p3/4P3/2N5`), 1)
		if _, err := Decode(data); err == nil {
			t.Error("Decode accepted a v1 state whose fen differs from its moves")
		}
	})
}

func decodeFile(t *testing.T, name string) *State {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Decode(data)
	if err != nil {
		t.Fatalf("Decode(%s) = %v", name, err)
	}
	return s
}

// TestLiveStateMatchesReplay checks the state a transition carries forward
// (the live position and its hash history) against a replay from the moves:
// the FEN agrees, and counting repetitions by hash agrees with counting
// them by repetition key, the rule's own definition.
func TestLiveStateMatchesReplay(t *testing.T) {
	for _, variant := range []string{"standard", "chess960"} {
		for seed := range uint64(5) {
			for _, s := range randomGame(t, unlimitedClock(t, variant), seed, 400) {
				pos := s.Position()
				if got, want := pos.FEN(), s.FEN; got != want {
					t.Fatalf("live position FEN = %q; want %q", got, want)
				}
				if got, want := s.repetitions(), repetitionCount(s, pos.RepetitionKey()); got != want {
					t.Fatalf("repetitions() = %d; want %d (by key) at %q", got, want, s.FEN)
				}
				if got, want := len(s.History()), s.Ply(); got != want {
					t.Fatalf("len(History()) = %d; want %d", got, want)
				}
			}
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, name := range []string{"v1_playing.json", "v1_finished.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	s := play(f, newGame(f, opts(f, `{"drawMode":"fide"}`)), 1000, "e2e4", "e7e5", "g1f3")
	s, _ = mustApply(f, s, black, Action{Type: ActionOfferDraw, RequestID: "x"}, at(9000))
	b, _ := Encode(s)
	f.Add(b)
	b, _ = Encode(longGame(f, 1000))
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Decode(data)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("Decode error %v is not a *DecodeError", err)
			}
			return
		}
		// A decoded state is usable: it encodes, decodes to itself and
		// accepts views and actions without failing unexpectedly.
		b, err := Encode(s)
		if err != nil {
			t.Fatalf("Encode(decoded) = %v", err)
		}
		again, err := Decode(b)
		if err != nil {
			t.Fatalf("Decode(Encode(decoded)) = %v", err)
		}
		assertSameState(t, again, s, "re-decoded")
		for _, you := range []*chess.Color{nil, ptr(white), ptr(black)} {
			if _, err := ViewOf(s, you, at(0)); err != nil {
				t.Fatalf("ViewOf = %v", err)
			}
		}
		Apply(s, s.Turn(), Action{Type: ActionResign}, at(0))
		ApplyTimeout(s, at(1e12))
	})
}

// hashCount is how often h occurs in hashes.
func hashCount(hashes []uint64, h uint64) int {
	n := 0
	for _, x := range hashes {
		if x == h {
			n++
		}
	}
	return n
}

// TestDecodeOlderForms reads the stored forms earlier versions wrote: a
// DEFLATE-compressed record, and request-log entries without a tag or a
// fingerprint (and no change log).
// jsonHeaderForm is the stored form earlier versions wrote (formatPlain):
// the JSON header (storedState) then, when movesInJSON is false, the moves
// section, then the logs; with movesInJSON the moves are in the header
// (the form before the moves section) and log is what follows.
func jsonHeaderForm(t *testing.T, s *State, movesInJSON bool, log []byte) []byte {
	t.Helper()
	st := storedState{
		StateVersion: StateVersion, GameID: s.GameID, Version: s.Version, CreatedAt: s.CreatedAt,
		Options: storedOptions(s.Options), Seats: s.Seats, Chess960Index: s.Chess960Index, Phase: s.Phase,
		Clock: s.Clock, Undo: s.Undo, Draw: s.Draw, RNG: s.RNG, Rematch: s.Rematch,
	}
	if derived, err := variantStartFEN(s.Options.Variant, s.Chess960Index); err != nil || derived != s.StartFEN {
		st.StartFEN = s.StartFEN
	}
	if r := s.Result; r != nil {
		st.Result = &storedResult{Winner: r.Winner, Reason: r.Reason, EndedAt: r.EndedAt}
	}
	var moves []byte
	if movesInJSON {
		var ucis, sans, times []string
		prev := s.CreatedAt
		for _, m := range s.Moves {
			ucis, sans, times = append(ucis, m.UCI), append(sans, m.SAN), append(times, fmt.Sprint(m.At-prev))
			prev = m.At
		}
		st.Moves, st.SANs, st.MoveDeltas = strings.Join(ucis, " "), strings.Join(sans, " "), strings.Join(times, " ")
	} else {
		moves = appendMoves(nil, s.Moves, s.CreatedAt)
	}
	js, err := json.Marshal(&st)
	if err != nil {
		t.Fatal(err)
	}
	out := append([]byte{formatPlain}, js...)
	out = append(append(out, '\n'), moves...)
	return append(out, log...)
}

// TestDecodeOlderForms reads the stored forms earlier versions wrote: the
// JSON header with the moves section, the JSON header with the moves in
// it, DEFLATE-compressed, and request-log entries without a tag or a
// fingerprint (and no change log).
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
		want := s.clone()
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
