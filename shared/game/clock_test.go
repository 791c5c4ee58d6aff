package game

import (
	"testing"
	"time"
)

func TestPerMoveClock(t *testing.T) {
	s := newGame(t, opts(t, `{"timeControl":"perMove:30"}`))
	s = play(t, s, 1000, "e2e4", "e7e5")
	start := s.Clock.TurnStartedAt // White's main clock starts here.
	ms := func(d int64) time.Time { return time.UnixMilli(start + d) }

	if d, _ := Deadline(s); d.UnixMilli() != start+30000 {
		t.Fatalf("deadline = %d; want turn start + 30 s", d.UnixMilli())
	}
	one, events, ok := ApplyTimeout(s, ms(31000))
	if !ok || one.Phase != PhasePlaying || one.Clock.ExtensionsUsed[white] != 1 || events[0].Type != EventExtensionUsed {
		t.Fatalf("first expiry: ok %v phase %s used %v events %v; want one extension", ok, one.Phase, one.Clock.ExtensionsUsed, events)
	}
	if d, _ := Deadline(one); d.UnixMilli() != start+60000 {
		t.Errorf("deadline after one extension = %d; want +60 s", d.UnixMilli()-start)
	}
	three, events, _ := ApplyTimeout(s, ms(95000))
	if three.Clock.ExtensionsUsed[white] != 3 || len(events) != 3 || three.Phase != PhasePlaying {
		t.Fatalf("at +95 s: used %v events %d phase %s; want 3 extensions spent at once", three.Clock.ExtensionsUsed, len(events), three.Phase)
	}
	view, _ := ViewOf(three, nil, ms(95000))
	if left := view.Clock.ExtensionsLeft; left == nil || left[white] != 0 || left[black] != 3 || view.Clock.RemainingMs[white] != 25000 {
		t.Errorf("view clock %+v; want 0/3 extensions left and 25 s for white", view.Clock)
	}
	// A move refills the clock; extensions stay spent.
	moved, _ := mustApply(t, three, white, moveAction("g1f3"), ms(100000))
	if moved.Clock.RemainingMs[white] != 30000 || moved.Clock.ExtensionsUsed[white] != 3 {
		t.Errorf("after the move: clock %v used %v; want a full 30 s and 3 used", moved.Clock.RemainingMs, moved.Clock.ExtensionsUsed)
	}
	lost, _, _ := ApplyTimeout(three, ms(120000))
	if lost.Result == nil || lost.Result.Reason != ReasonTimeLoss || *lost.Result.Winner != black || lost.Result.EndedAt != start+120000 {
		t.Errorf("with no extension left: result %+v; want black wins on time at +120 s", lost.Result)
	}
}

func TestNoTimeControlIdleLimit(t *testing.T) {
	s := newGame(t, opts(t, `{"timeControl":"none","idleLimitSec":300}`))
	s = play(t, s, 1000, "e2e4", "e7e5")
	d, ok := Deadline(s)
	if !ok || d.UnixMilli() != s.Clock.TurnStartedAt+300000 {
		t.Fatalf("deadline = %v, %v; want turn start + 300 s", d, ok)
	}
	view, _ := ViewOf(s, nil, d)
	if view.Clock.Type != "none" || view.Clock.RemainingMs != (PerColor[int64]{}) {
		t.Errorf("clock view %+v; want type none and no times", view.Clock)
	}
	ended, events, ok := ApplyTimeout(s, d)
	if !ok || ended.Result.Reason != ReasonTimeLoss || events[0].Reason != causeIdle {
		t.Errorf("idle timeout: %+v %v; want a time loss caused by idleness", ended.Result, events)
	}
}

func TestApplyTimeoutIsIdempotent(t *testing.T) {
	s := newGame(t, DefaultOptions())
	if _, _, ok := ApplyTimeout(s, at(29999)); ok {
		t.Fatal("applied before the deadline")
	}
	ended, _, ok := ApplyTimeout(s, at(30000))
	if !ok {
		t.Fatal("not applied at the deadline")
	}
	again, events, ok := ApplyTimeout(ended, at(90000))
	if ok || again != ended || events != nil {
		t.Errorf("second ApplyTimeout changed the game")
	}
	if _, ok := Deadline(ended); ok {
		t.Error("a finished game has a deadline")
	}
}

func TestClockViewAndDeadline(t *testing.T) {
	s := newGame(t, opts(t, `{"timeControl":"5+3"}`))
	s = play(t, s, 1000, "e2e4", "e7e5", "g1f3")
	// Black's main clock runs from the Nf3 time.
	view, err := ViewOf(s, ptr(black), at(3000+12000))
	if err != nil {
		t.Fatal(err)
	}
	c := view.Clock
	if c.Type != "fischer" || c.IncrementMs != 3000 || c.Running == nil || *c.Running != black {
		t.Errorf("clock %+v; want fischer, +3 s, black running", c)
	}
	if want := (PerColor[int64]{300000 - 1000 + 3000, 300000 - 12000}); c.RemainingMs != want {
		t.Errorf("remaining = %v; want %v", c.RemainingMs, want)
	}
	if view.Deadline == nil || *view.Deadline != at(3000+300000).UnixMilli() {
		t.Errorf("deadline = %v; want black's flag", view.Deadline)
	}
}

func TestSetPresence(t *testing.T) {
	s := newGame(t, DefaultOptions())
	if _, _, ok := SetPresence(s, white, true, at(1000)); ok {
		t.Error("reporting a connected seat as connected changed the game")
	}
	off, events, ok := SetPresence(s, white, false, at(1000))
	if !ok || off.Seats[white].Connected || off.Seats[white].DisconnectedAt != at(1000).UnixMilli() || events[0].Type != EventPlayerDisconnected || off.Version != s.Version+1 {
		t.Fatalf("disconnect: %+v %v", off.Seats[white], events)
	}
	view, _ := ViewOf(off, nil, at(1000))
	if view.Players[white].Connected {
		t.Error("view shows the disconnected seat as connected")
	}
	on, events, ok := SetPresence(off, white, true, at(2000))
	if !ok || on.Seats[white].Connected || on.Seats[white].DisconnectedAt != 0 || events[0].Type != EventPlayerReconnected {
		t.Errorf("reconnect: %+v %v", on.Seats[white], events)
	}
	if _, _, ok := SetPresence(off, white, true, at(31000)); ok {
		t.Error("reconnecting after the grace ran out changed the game; the timeout comes first")
	}
}

func TestSetPresenceIgnoresAISeats(t *testing.T) {
	s, _, err := New(NewGame{GameID: "g", Options: opts(t, `{"colorAssignment":"hostWhite"}`), Host: Player{ID: "h"}, AI: "max"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := SetPresence(s, black, false, at(1000)); ok {
		t.Error("SetPresence changed the AI seat")
	}
}

// TestPresenceFromStreams (SPEC §16.1): a seat is connected only while a
// stream connection of it is open; one that never opened one is not
// connected and not on the disconnect clock; its last connection closing
// starts the grace, which any sign of life over HTTP ends.
func TestPresenceFromStreams(t *testing.T) {
	s := play(t, newGame(t, DefaultOptions()), 100, "e2e4", "e7e5")
	presence := func(s *State) PresenceView {
		v, err := ViewOf(s, nil, at(0))
		if err != nil {
			t.Fatal(err)
		}
		return v.Players[white].Presence
	}
	if p := presence(s); p.Connected || p.Since != nil || s.Seats[white].GraceRunning() {
		t.Fatalf("a new seat: %+v; want not connected, since null, no grace", p)
	}
	on, _, ok := StreamPresence(s, white, true, at(11000))
	if p := presence(on); !ok || !p.Connected || p.Since == nil || *p.Since != at(11000).UnixMilli() {
		t.Fatalf("a stream opened: %+v; want connected since 1 s", p)
	}
	if _, _, ok := StreamPresence(on, white, true, at(12000)); ok {
		t.Error("a second connection changed the presence")
	}
	if _, _, ok := SetPresence(on, white, false, at(12000)); ok {
		t.Error("POST presence false while the stream is open changed the presence")
	}
	off, events, ok := StreamPresence(on, white, false, at(13000))
	if p := presence(off); !ok || p.Connected || p.Since == nil || *p.Since != at(13000).UnixMilli() || !off.Seats[white].GraceRunning() || events[0].Type != EventPlayerDisconnected {
		t.Fatalf("the stream closed: %+v %v; want not connected since 3 s, on the grace", p, events)
	}
	if d, _ := Deadline(off); !d.Equal(at(13000 + 60000)) {
		t.Errorf("deadline %v; want the grace's end", d)
	}
	if d, _ := Deadline(s); !d.After(at(13000 + 60000)) {
		t.Errorf("deadline of a seat that never streamed %v; want its clock's, no grace", d)
	}
	back, events, ok := SetPresence(off, white, true, at(14000))
	if p := presence(back); !ok || p.Connected || p.Since != nil || back.Seats[white].GraceRunning() || events[0].Type != EventPlayerReconnected {
		t.Errorf("a sign of life over HTTP: %+v %v; want the grace ended, not shown connected", p, events)
	}
	again, events, ok := StreamPresence(off, white, true, at(15000))
	if p := presence(again); !ok || !p.Connected || events[0].Type != EventPlayerReconnected {
		t.Errorf("a stream opened in the grace: %+v %v; want connected, playerReconnected", p, events)
	}
	// A seat stored before streams counted: connected from creation, no
	// connectedAt: not connected, and a stream connects it.
	legacy := s.clone()
	legacy.Seats[white].Connected = true
	if p := presence(legacy); p.Connected {
		t.Errorf("a seat stored connected without connectedAt shows %+v; want not connected", p)
	}
	if _, _, ok := StreamPresence(legacy, white, true, at(11000)); !ok {
		t.Error("a stream did not connect a seat stored connected without connectedAt")
	}
}
