package game

import (
	"encoding/json"
	"testing"
	"time"
)

// moveRequestFixture returns the stored form of a game of plies moves, each
// sent with a request id (so both seats' request logs are full), a legal
// next move and a time within the mover's clock.
func moveRequestFixture(b *testing.B, plies int) ([]byte, Action, time.Time) {
	b.Helper()
	s := longGame(b, plies)
	stored, err := Encode(s)
	if err != nil {
		b.Fatal(err)
	}
	pos := s.Position()
	next := Action{Type: ActionMove, Move: MoveInput{UCI: pos.UCI(pos.LegalMoves()[0])}, RequestID: "bench-request"}
	return stored, next, time.UnixMilli(s.Clock.TurnStartedAt + 1500)
}

// moveRequest is the reducer's share of one move request in the service:
// decode the stored state, look the request id up, reduce the move (with
// any due timeout), build the mover's and the opponent's views and encode
// the new state.
func moveRequest(b *testing.B, stored []byte, a Action, now time.Time) (*View, *View, []byte) {
	s, err := Decode(stored)
	if err != nil {
		b.Fatal(err)
	}
	by := s.Turn()
	if _, dup := s.AppliedRequest(by, a.RequestID); dup {
		b.Fatal("request already applied")
	}
	next, _, err := Reduce(s, Act{By: by, Action: a}, now)
	if err != nil {
		b.Fatal(err)
	}
	mine, err := ViewOf(next, &by, now)
	if err != nil {
		b.Fatal(err)
	}
	other := by.Other()
	theirs, err := ViewOf(next, &other, now)
	if err != nil {
		b.Fatal(err)
	}
	out, err := Encode(next)
	if err != nil {
		b.Fatal(err)
	}
	return mine, theirs, out
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

// BenchmarkMoveRequest1000 is moveRequest on a 1,000-ply game (stored
// compressed).
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
		if _, err := Encode(s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodedSize1000 reports the stored size of a 1,000-ply game with
// full request logs, compressed and as plain JSON would be.
func BenchmarkEncodedSize1000(b *testing.B) {
	s := longGame(b, 1000)
	var stored []byte
	for b.Loop() {
		var err error
		if stored, err = Encode(s); err != nil {
			b.Fatal(err)
		}
	}
	js, _ := json.Marshal(s)
	b.ReportMetric(float64(len(stored)), "stored-bytes")
	b.ReportMetric(float64(len(js)), "state-json-bytes")
}
