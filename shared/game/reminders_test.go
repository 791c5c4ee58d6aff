package game

import (
	"testing"
	"time"
)

// TestTimeRunningOut: when the timeRunningOut reminders of the turn in
// progress are due (SPEC §16.3).
func TestTimeRunningOut(t *testing.T) {
	type due struct {
		atMs int64 // since t0
		left time.Duration
	}
	fischer := play(t, newGame(t, opts(t, `{"timeControl":"5+3"}`)), 1000, "e2e4", "e7e5", "g1f3")
	disconnected, _, _ := Reduce(fischer, Presence{Seat: black, Connected: false}, at(3500))
	perMove := play(t, newGame(t, opts(t, `{"timeControl":"perMove:60"}`)), 1000, "e2e4", "e7e5")
	extended, _, _ := Reduce(perMove, Timeout{}, at(2000+61_000)) // an extension spent: the same turn
	yeoul := play(t, readyBoth(t, newGame(t, yeoulOpts(t, `{"timeControl":"perMove:120"}`)), 0), 4000, "d2d4", "d7d5")
	days1 := newGame(t, opts(t, `{"timeControl":"days:1"}`))
	days3 := play(t, newGame(t, opts(t, `{"timeControl":"days:3"}`)), 5000, "e2e4")
	aiTurn, _, _ := New(NewGame{GameID: "ai", Options: opts(t, `{"timeControl":"days:2","colorAssignment":"hostBlack"}`), Host: Player{ID: "h", TokenHash: "x"}, AI: "easy"}, t0)
	finished, _, _ := Reduce(fischer, Act{By: black, Action: Action{Type: ActionResign}}, at(5000))

	for _, tc := range []struct {
		name string
		s    *State
		want []due
	}{
		// Black's 5:00 at the start of its turn (t = 3 s): a quarter left
		// at 3 s + 3:45.
		{"fischer", fischer, []due{{3000 + 225_000, 75 * time.Second}}},
		// A grace that ends the turn first drops it (the grace's own
		// notice is disconnectGraceStarted's).
		{"fischer, disconnected", disconnected, nil},
		{"first move", newGame(t, opts(t, `{"timeControl":"5+3"}`)), nil},
		{"per move", perMove, []due{{2000 + 45_000, 15 * time.Second}}},
		{"per move after an extension", extended, []due{{2000 + 45_000, 15 * time.Second}}},
		{"yeoul", yeoul, []due{{5000 + 90_000, 30 * time.Second}}},
		{"no clock", play(t, newGame(t, opts(t, `{"timeControl":"none"}`)), 1000, "e2e4", "e7e5"), nil},
		// Correspondence, the first move included: 12 h and 1 h before.
		{"a day", days1, []due{{day - 12*3600_000, 12 * time.Hour}, {day - 3600_000, time.Hour}}},
		{"three days", days3, []due{{5000 + 3*day - 12*3600_000, 12 * time.Hour}, {5000 + 3*day - 3600_000, time.Hour}}},
		{"the AI's turn", aiTurn, nil},
		{"finished", finished, nil},
		{"ready step", newRatedGame(t, RoomIntermediate, `{}`), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := TimeRunningOut(tc.s)
			if len(got) != len(tc.want) {
				t.Fatalf("TimeRunningOut = %+v; want %d reminders", got, len(tc.want))
			}
			for i, w := range tc.want {
				r := got[i]
				if r.At.UnixMilli() != at(w.atMs).UnixMilli() || r.Left != w.left || r.Color != tc.s.Turn() || r.Ply != tc.s.Ply() {
					t.Errorf("reminder %d = %+v (at +%d ms); want at +%d ms with %v left", i, r, r.At.Sub(t0).Milliseconds(), w.atMs, w.left)
				}
			}
			// Deterministic: the same state, the same reminders.
			again := TimeRunningOut(roundTrip(t, tc.s))
			for i := range got {
				if again[i] != got[i] {
					t.Errorf("after a restore: %+v; want %+v", again, got)
				}
			}
		})
	}
}
