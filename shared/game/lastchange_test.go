package game_test

import (
	"encoding/json"
	"testing"
	"time"

	"chessapi/shared/game"
)

// TestLastChange: a state names the change that made it, with that
// version's events, and nothing when its log does not hold it.
func TestLastChange(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s, _, err := game.New(game.NewGame{GameID: "g1", Options: game.DefaultOptions(), Host: game.Player{ID: "alice", Name: "Alice"}, Seed: 1}, now)
	if err != nil {
		t.Fatal(err)
	}
	s, events, err := game.Reduce(s, game.Join{Player: game.Player{ID: "bob", Name: "Bob"}}, now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := s.LastChange()
	if !ok || c.Version != s.Version || c.At != now.Add(time.Second).UnixMilli() {
		t.Fatalf("LastChange() = %+v, %v; want version %d at the join", c, ok, s.Version)
	}
	var got []game.Event
	if err := json.Unmarshal(c.Events, &got); err != nil || len(got) != len(events) || got[0].Type != events[0].Type {
		t.Errorf("LastChange().Events = %s (%v); want the join's %d events", c.Events, err, len(events))
	}
	// A log that ends before the state's version (or none at all) holds no
	// last change.
	older := *s
	older.Changes = s.Changes[:len(s.Changes)-1]
	if c, ok := older.LastChange(); ok {
		t.Errorf("LastChange() of a state whose log lacks its version = %+v; want none", c)
	}
	older.Changes = nil
	if _, ok := older.LastChange(); ok {
		t.Error("LastChange() without a log found one")
	}
}
