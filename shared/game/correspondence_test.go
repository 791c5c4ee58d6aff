package game

import (
	"strconv"
	"strings"
	"testing"
)

// Correspondence games (SPEC §16.3): days:N per move, the first moves
// included, no extensions, no idle limit, no disconnect grace.

const day = int64(24 * 60 * 60 * 1000)

func TestCorrespondenceOptions(t *testing.T) {
	for _, n := range CorrespondenceDays {
		text := "days:" + strconv.Itoa(n)
		tc, err := ParseTimeControl(text)
		if err != nil || tc != (TimeControl{Kind: TimeDays, Days: n}) || tc.String() != text || !tc.Correspondence() {
			t.Errorf("ParseTimeControl(%q) = %+v, %v", text, tc, err)
		}
	}
	for _, bad := range []string{"days:0", "days:4", "days:15", "days:", "days:-1", "days:01", "days: 1", "days:1.5", "days:1000", "Days:1"} {
		if tc, err := ParseTimeControl(bad); !isField(err, "options.timeControl") {
			t.Errorf("ParseTimeControl(%q) = %+v, %v; want options.timeControl refused", bad, tc, err)
		}
	}
	for _, tc := range []struct {
		js    string
		field string
	}{
		{`{"timeControl":"days:3"}`, ""},
		{`{"timeControl":"days:14","room":"free"}`, ""},
		{`{"timeControl":"days:1","room":"beginner"}`, "options.timeControl"},
		{`{"timeControl":"days:7","rules":"yeoul"}`, "options.timeControl"},
		// idleLimitSec and disconnectGraceSec are accepted and do nothing.
		{`{"timeControl":"days:2","idleLimitSec":300,"disconnectGraceSec":30}`, ""},
	} {
		in, _ := optsInput(tc.js)
		o, err := BuildOptions(in)
		if tc.field == "" && (err != nil || !o.TimeControl.Correspondence()) || tc.field != "" && !isField(err, tc.field) {
			t.Errorf("BuildOptions(%s) = %+v, %v; want field %q", tc.js, o, err, tc.field)
		}
	}
	// A stored correspondence game outside the free room is refused.
	o := DefaultOptions()
	o.TimeControl, o.Room = TimeControl{Kind: TimeDays, Days: 1}, RoomIntermediate
	if !isField(o.validate(), "options.timeControl") {
		t.Errorf("validate(days in a rated room) = %v", o.validate())
	}
}

// TestCorrespondenceClock: each move, the first ones too, has N days; the
// deadline is a move's; running out of a first move calls the game off,
// later a loss (or a draw against a side that cannot mate).
func TestCorrespondenceClock(t *testing.T) {
	s := newGame(t, opts(t, `{"timeControl":"days:2","idleLimitSec":300,"disconnectGraceSec":30}`))
	check := func(s *State, now int64, deadline int64, reason string) {
		t.Helper()
		v, err := ViewOf(s, ptr(s.Turn()), at(now))
		if err != nil {
			t.Fatal(err)
		}
		if v.Deadline == nil || *v.Deadline != at(deadline).UnixMilli() || *v.DeadlineReason != reason || v.Clock.Type != "correspondence" || v.Clock.ExtensionsLeft != nil {
			t.Errorf("view at %d: deadline %v (%v), clock %+v; want %d (%s)", now, v.Deadline, v.DeadlineReason, v.Clock, deadline, reason)
		}
		if d, _ := Deadline(s); d.UnixMilli() != at(deadline).UnixMilli() {
			t.Errorf("Deadline = %v; want %v", d, at(deadline))
		}
	}
	check(s, 0, 2*day, "firstMove")
	s = play(t, s, day, "e2e4") // a day later, within White's first two days
	check(s, day, 3*day, "firstMove")
	s = play(t, s, 2*day, "e7e5")
	check(s, 2*day, 4*day, "perMove")
	// A disconnected seat keeps its days (no grace), and no idle limit.
	s, _, _ = Reduce(s, Presence{Seat: white, Connected: false}, at(2*day+1000))
	check(s, 2*day+1000, 4*day, "perMove")
	s = play(t, s, 4*day-1, "g1f3")
	if s.Phase != PhasePlaying || s.Clock.RemainingMs[white] != 2*day {
		t.Fatalf("a move 1 ms before the deadline: %s, white has %d ms; want the two days again", s.Phase, s.Clock.RemainingMs[white])
	}
	check(s, 4*day, 6*day-1, "perMove")
	// Black runs out: a loss, no extension.
	lost, evs, _ := Reduce(s, Timeout{}, at(6*day-1))
	if lost.Result == nil || lost.Result.Reason != ReasonTimeLoss || *lost.Result.Winner != white || hasEvent(evs, EventExtensionUsed) {
		t.Errorf("out of days: %+v, %+v", lost.Result, evs)
	}
	if pgn, _ := PGN(lost); !strings.Contains(pgn, `[TimeControl "1/172800"]`) || !strings.Contains(pgn, `[Termination "time forfeit"]`) {
		t.Errorf("PGN:\n%s", pgn)
	}
	roundTrip(t, s)

	// The first move's days run out: called off.
	first := newGame(t, opts(t, `{"timeControl":"days:1"}`))
	if off, _, _ := Reduce(first, Timeout{}, at(day)); off.Result == nil || off.Result.Reason != ReasonAborted {
		t.Errorf("no first move in a day: %+v; want aborted", off.Result)
	}
	if still, _, _ := Reduce(first, Timeout{}, at(day-1)); still.Phase != PhasePlaying {
		t.Error("the first move's day ended early")
	}
	// FIDE 6.9: out of days against a lone king draws.
	bare := gameFromFEN(t, "4k3/8/8/8/8/8/8/Q3K3 w - - 0 1", opts(t, `{"timeControl":"days:1"}`))
	if drawn, _, _ := Reduce(bare, Timeout{}, at(day)); drawn.Result == nil || drawn.Result.Reason != ReasonTimeoutVsInsufficient {
		t.Errorf("out of days against a lone king: %+v; want timeoutVsInsufficient", drawn.Result)
	}
}

// TestCorrespondenceAgainstTheAI: the AI plays correspondence games too
// (it answers as usual and never loses on time).
func TestCorrespondenceAgainstTheAI(t *testing.T) {
	o := opts(t, `{"timeControl":"days:5","colorAssignment":"hostBlack"}`)
	s, _, err := New(NewGame{GameID: "ai", Options: o, Host: Player{ID: "h", TokenHash: "x"}, AI: "normal"}, t0)
	if err != nil || s.Phase != PhasePlaying {
		t.Fatalf("New: %v, %s", err, s.Phase)
	}
	if _, ok := s.AITurn(); !ok {
		t.Fatal("the AI (White) is not to move")
	}
	if next, _, _ := Reduce(s, Timeout{}, at(10*day)); next != s {
		t.Error("the AI lost on time")
	}
	s = play(t, s, 1000, "e2e4")
	if d, _ := Deadline(s); d.UnixMilli() != at(1000+5*day).UnixMilli() {
		t.Errorf("the human's first move is due %v; want five days later", d)
	}
}

// TestCorrespondenceTakeBack: the days refill for both after a take-back.
func TestCorrespondenceTakeBack(t *testing.T) {
	s := newGame(t, opts(t, `{"timeControl":"days:1","undo":3}`))
	s = play(t, s, 1000, "e2e4", "e7e5", "g1f3")
	s, _ = mustApply(t, s, black, Action{Type: ActionRequestUndo, Plies: 2}, at(day/2))
	s, _ = mustApply(t, s, white, Action{Type: ActionRespondUndo, Accept: true}, at(day/2+1000))
	if s.Clock.RemainingMs != (PerColor[int64]{day, day}) {
		t.Errorf("after a take-back: %+v; want a day each", s.Clock.RemainingMs)
	}
	if d, _ := Deadline(s); d.UnixMilli() != at(day/2+1000+day).UnixMilli() {
		t.Errorf("deadline after the take-back = %v", d)
	}
}
