package storedgame

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"chessapi/shared/game"
)

// TestLongGameIsTheWritersGame: longGame here plays exactly the game the
// reducer's tests played for the sizes and benchmarks before the stored
// form moved out of package game (its writer's record, byte for byte), so
// figures measured before and after the move compare the same game. The
// writer stored no deltas and seated its players connected (the compact
// stream, issue 21, brought both), so the comparison leaves the change
// log's deltas out and the seats as the writer had them.
func TestLongGameIsTheWritersGame(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "records", currentWriter, "long-1000.stored"))
	if err != nil {
		t.Fatal(err)
	}
	s := longGame(t, 1000)
	s.Changes = slices.Clone(s.Changes)
	for i := range s.Changes {
		s.Changes[i].Delta = nil
	}
	s.Seats[0].Connected, s.Seats[1].Connected = true, true
	if got := Encode(s); !bytes.Equal(got, want) {
		t.Errorf("longGame(1000) encodes to %d bytes, not the writer's %d-byte record", len(got), len(want))
	}
}

// moveRequestFixture returns the stored form of a game of plies moves, each
// sent with a request id (so both seats' request logs are full), a legal
// next move and a time within the mover's clock.
func moveRequestFixture(b *testing.B, plies int) ([]byte, game.Action, time.Time) {
	b.Helper()
	s := longGame(b, plies)
	pos := s.Position()
	next := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: pos.UCI(pos.LegalMoves()[0])}, RequestID: "bench-request"}
	return Encode(s), next, time.UnixMilli(s.Clock.TurnStartedAt + 1500)
}

// moveRequest is the reducer's share of one move request in the service
// (shared/service's one game transaction, without its store): decode the
// stored state, look the request id up, reduce the move (with any due
// timeout), build the mover's and the opponent's views and encode the new
// state. Every iteration decodes the same buffer: Decode keeps slices of
// its input but never writes it.
func moveRequest(b *testing.B, stored []byte, a game.Action, now time.Time) (*game.View, *game.View, []byte) {
	s, err := Decode(stored)
	if err != nil {
		b.Fatal(err)
	}
	by := s.Turn()
	if _, dup := s.AppliedRequest(by, a.RequestID); dup {
		b.Fatal("request already applied")
	}
	next, _, err := game.Reduce(s, game.Act{By: by, Action: a}, now)
	if err != nil {
		b.Fatal(err)
	}
	mine, err := game.ViewOf(next, &by, now)
	if err != nil {
		b.Fatal(err)
	}
	other := by.Other()
	theirs, err := game.ViewOf(next, &other, now)
	if err != nil {
		b.Fatal(err)
	}
	return mine, theirs, Encode(next)
}

// BenchmarkMoveRequest300 measures moveRequest on a 300-ply game (target:
// under 1 ms).
func BenchmarkMoveRequest300(b *testing.B) {
	stored, a, now := moveRequestFixture(b, 300)
	b.ReportAllocs()
	for b.Loop() {
		moveRequest(b, stored, a, now)
	}
	b.ReportMetric(float64(len(stored)), "stored-bytes")
}

// BenchmarkMoveRequest300JSON adds what the HTTP layer does next: marshal
// the mover's view to JSON.
func BenchmarkMoveRequest300JSON(b *testing.B) {
	stored, a, now := moveRequestFixture(b, 300)
	b.ReportAllocs()
	for b.Loop() {
		mine, _, _ := moveRequest(b, stored, a, now)
		if _, err := json.Marshal(mine); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMoveRequest1000 is moveRequest on a 1,000-ply game.
func BenchmarkMoveRequest1000(b *testing.B) {
	stored, a, now := moveRequestFixture(b, 1000)
	b.ReportAllocs()
	for b.Loop() {
		moveRequest(b, stored, a, now)
	}
	b.ReportMetric(float64(len(stored)), "stored-bytes")
}

// BenchmarkDecode300 and BenchmarkEncode300 split the stored-form costs.
func BenchmarkDecode300(b *testing.B) {
	stored, _, _ := moveRequestFixture(b, 300)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(stored); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode300(b *testing.B) {
	s := longGame(b, 300)
	b.ReportAllocs()
	for b.Loop() {
		Encode(s)
	}
}

// BenchmarkEncodedSize1000 reports the stored size of a 1,000-ply game with
// full request logs, and its size as plain JSON.
func BenchmarkEncodedSize1000(b *testing.B) {
	s := longGame(b, 1000)
	var stored []byte
	for b.Loop() {
		stored = Encode(s)
	}
	js, _ := json.Marshal(s)
	b.ReportMetric(float64(len(stored)), "stored-bytes")
	b.ReportMetric(float64(len(js)), "state-json-bytes")
}
