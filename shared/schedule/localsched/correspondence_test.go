package localsched

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// TestCorrespondenceGameEndsByTheScheduler: a days:1 game (SPEC §16.3) on
// the service with this scheduler, both on one fake clock: after each move
// the deadline is 24 h ahead and armed as a timer; the timer survives a
// restart (re-armed from the store); nobody calls, and 24 h after the last
// move the scheduler ends the game as a time loss.
func TestCorrespondenceGameEndsByTheScheduler(t *testing.T) {
	ctx := context.Background()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	clock := &fakeClock{now: epoch}

	// The service and its scheduler; the handler reports each delivery it
	// has handled.
	start := func() (*service.Service, *Scheduler, chan service.TimeoutTask) {
		handled := make(chan service.TimeoutTask, 10)
		var svc *service.Service
		sched, err := newWithClock(func(ctx context.Context, task service.TimeoutTask) error {
			err := svc.HandleTimeout(ctx, task)
			handled <- task
			return err
		}, Options{}, clock)
		if err != nil {
			t.Fatal(err)
		}
		svc, err = service.New(service.Config{Store: store, Scheduler: sched, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return svc, sched, handled
	}
	svc, sched, _ := start()

	opts := game.DefaultOptions()
	opts.TimeControl = game.TimeControl{Kind: game.TimeDays, Days: 1}
	opts.ColorAssignment = game.ColorsHostWhite
	host, err := svc.Create(ctx, service.CreateInput{Options: opts, Player: service.PlayerInput{Name: "white"}})
	if err != nil {
		t.Fatal(err)
	}
	guest, err := svc.Join(ctx, host.GameID, service.JoinInput{Player: service.PlayerInput{Name: "black"}})
	if err != nil {
		t.Fatal(err)
	}
	move := func(token, uci string) *game.View {
		t.Helper()
		out, err := svc.Act(ctx, host.GameID, service.Caller{Token: token}, service.ActionInput{Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Game
	}
	const day = 24 * time.Hour
	clock.Advance(3 * time.Hour)
	move(host.Token, "e2e4")
	clock.Advance(20 * time.Hour) // Black thinks most of its first day
	v := move(guest.Token, "e7e5")
	deadline := clock.Now().Add(day)
	if v.Deadline == nil || *v.Deadline != deadline.UnixMilli() || *v.DeadlineReason != "perMove" || v.Clock.Type != "correspondence" {
		t.Fatalf("after Black's move: deadline %v (%v); want 24 h ahead, perMove", v.Deadline, v.DeadlineReason)
	}
	if n := sched.Pending(); n != 1 {
		t.Fatalf("%d timers armed; want the game's one", n)
	}
	stored := func() *game.State {
		t.Helper()
		rec, err := store.Get(ctx, host.GameID)
		if err != nil {
			t.Fatal(err)
		}
		s, err := storedgame.Decode(rec.State)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// The notifications' reminders of White's turn: 12 h and 1 h before.
	if r := game.TimeRunningOut(stored()); len(r) != 2 || !r[0].At.Equal(deadline.Add(-12*time.Hour)) || !r[1].At.Equal(deadline.Add(-time.Hour)) {
		t.Errorf("reminders %+v; want 12 h and 1 h before %v", r, deadline)
	}

	// A restart: the timer comes back from the store.
	sched.Close()
	svc.Close(time.Second)
	svc, sched, handled := start()
	defer sched.Close()
	defer svc.Close(time.Second)
	if n, err := sched.Restore(ctx, store.PendingTimeouts); err != nil || n != 1 {
		t.Fatalf("Restore = %d, %v; want the game's timer", n, err)
	}

	clock.Advance(day - time.Second)
	select {
	case task := <-handled:
		t.Fatalf("a delivery a second before the deadline: %+v", task)
	case <-time.After(50 * time.Millisecond):
	}
	if s := stored(); s.Phase != game.PhasePlaying {
		t.Fatalf("before the deadline: %s", s.Phase)
	}
	clock.Advance(time.Second)
	select {
	case task := <-handled:
		if !task.Deadline.Equal(deadline) {
			t.Errorf("delivered deadline %v; want %v", task.Deadline, deadline)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the scheduler did not deliver the deadline")
	}
	s := stored()
	if s.Phase != game.PhaseFinished || s.Result.Reason != game.ReasonTimeLoss || s.Result.Winner == nil || s.Result.Winner.String() != "black" ||
		s.Result.EndedAt != deadline.UnixMilli() {
		t.Fatalf("after the deadline: %s %+v; want White lost on time at the deadline", s.Phase, s.Result)
	}
	if _, ok := game.Deadline(s); ok {
		t.Error("the finished game still has a deadline")
	}
}
