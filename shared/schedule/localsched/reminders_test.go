package localsched

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/notify"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// phone records the device notifications sent.
type phone struct {
	mu   sync.Mutex
	sent []notify.Message
}

func (p *phone) Available(notify.Platform) bool { return true }
func (p *phone) Register(_ context.Context, d notify.Device) (notify.Device, error) {
	d.Endpoint = "phone"
	return d, nil
}
func (p *phone) Unregister(context.Context, notify.Device) error { return nil }
func (p *phone) Send(_ context.Context, _ notify.Device, m notify.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, m)
	return nil
}

func (p *phone) kinds() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, m := range p.sent {
		out = append(out, m.Kind)
	}
	return out
}

// TestCorrespondenceRemindersSurviveRestarts: a days:1 game of two
// registered players (SPEC §16.3) on the service with this scheduler, one
// fake clock: the turn's timer is its first reminder (12 h before the
// deadline), stored with the game, so after a restart it comes back from
// the store; the scheduler wakes the game at 12 h and 1 h before the
// deadline, and each reminder reaches the inbox and the phone once —
// also when a restart re-delivers a timer already handled — and at the
// deadline the game ends as a time loss, told once.
func TestCorrespondenceRemindersSurviveRestarts(t *testing.T) {
	ctx := context.Background()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	clock := &fakeClock{now: epoch}
	ph := &phone{}
	render := func(n service.Notification, _ notify.Locale) notify.Message {
		return notify.Message{ID: n.ID, Kind: n.Kind, GameID: n.GameID, At: n.At}
	}
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
		svc, err = service.New(service.Config{Store: store, Players: store, Notifications: store, Sender: ph, RenderNotification: render,
			Scheduler: sched, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return svc, sched, handled
	}
	restart := func(svc *service.Service, sched *Scheduler) (*service.Service, *Scheduler, chan service.TimeoutTask) {
		t.Helper()
		sched.Close()
		svc.Close(time.Second)
		svc, sched, handled := start()
		if n, err := sched.Restore(ctx, store.PendingTimeouts); err != nil || n != 1 {
			t.Fatalf("Restore = %d, %v; want the game's timer", n, err)
		}
		return svc, sched, handled
	}
	svc, sched, _ := start()

	white, err := svc.CreatePlayer(ctx, service.NewPlayerInput{Name: new("white")})
	if err != nil {
		t.Fatal(err)
	}
	black, err := svc.CreatePlayer(ctx, service.NewPlayerInput{Name: new("black")})
	if err != nil {
		t.Fatal(err)
	}
	wc, bc := service.Caller{Token: white.Token}, service.Caller{Token: black.Token}
	if _, _, err := svc.RegisterDevice(ctx, bc, service.DeviceInput{Platform: "fcm", Token: "fcm-token-0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"}); err != nil {
		t.Fatal(err)
	}
	opts := game.DefaultOptions()
	opts.TimeControl = game.TimeControl{Kind: game.TimeDays, Days: 1}
	opts.ColorAssignment = game.ColorsHostWhite
	host, err := svc.Create(ctx, service.CreateInput{Options: opts, Caller: wc})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Join(ctx, host.GameID, service.JoinInput{Caller: bc}); err != nil {
		t.Fatal(err)
	}
	move := func(c service.Caller, uci string) *game.View {
		t.Helper()
		clock.Advance(time.Hour)
		out, err := svc.Act(ctx, host.GameID, c, service.ActionInput{Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Game
	}
	// Black's first move is under the first-move rule (aborted, not lost):
	// play it, so that Black's turn after White's second move is a real one.
	move(wc, "e2e4")
	move(bc, "e7e5")
	v := move(wc, "g1f3")
	deadline := clock.Now().Add(24 * time.Hour)
	if v.Deadline == nil || *v.Deadline != deadline.UnixMilli() {
		t.Fatalf("Black's deadline %v; want 24 h ahead (%d)", v.Deadline, deadline.UnixMilli())
	}
	ph.mu.Lock()
	ph.sent = nil // the game's start and White's moves
	ph.mu.Unlock()

	// Restart before the first reminder: it comes back from the store.
	svc, sched, handled := restart(svc, sched)
	// awaitDelivery waits for the delivery of the timer at at. Timers are
	// lazy (service/timers.go): one armed earlier and still ahead may fire
	// first; it finds nothing due and arms the next (the phone's kinds,
	// checked below, show it sent nothing).
	awaitDelivery := func(at time.Time) {
		t.Helper()
		for {
			select {
			case task := <-handled:
				if task.Deadline.Before(at) {
					continue
				}
				if !task.Deadline.Equal(at) {
					t.Fatalf("delivered %v; want %v", task.Deadline, at)
				}
				return
			case <-time.After(5 * time.Second):
				t.Fatalf("no delivery for %v", at)
			}
		}
	}
	inbox := func() []service.Notification {
		t.Helper()
		page, err := svc.Notifications(ctx, bc, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		return page.Items
	}
	clock.Advance(12*time.Hour - time.Second)
drain:
	for {
		select {
		case task := <-handled:
			if !task.Deadline.Before(deadline.Add(-12 * time.Hour)) {
				t.Fatalf("a delivery for the first reminder's time a second before it: %+v", task)
			}
		case <-time.After(50 * time.Millisecond):
			break drain
		}
	}
	if got := ph.kinds(); len(got) != 0 {
		t.Fatalf("before the first reminder Black's phone got %v", got)
	}
	clock.Advance(time.Second)
	awaitDelivery(deadline.Add(-12 * time.Hour))
	if n := inbox()[0]; n.Kind != "timeRunningOut" || n.Left != 12*time.Hour {
		t.Fatalf("at 12 h before: Black's newest notification %+v; want timeRunningOut, 12 h left", n)
	}

	// Restart between the reminders: the stored timer is the second
	// reminder's (the first one's delivery armed it), and nothing is sent
	// twice (the phone's kinds below).
	svc, sched, handled = restart(svc, sched)
	defer func() { sched.Close(); svc.Close(time.Second) }()
	clock.Advance(11 * time.Hour)
	awaitDelivery(deadline.Add(-time.Hour))
	if n := inbox()[0]; n.Kind != "timeRunningOut" || n.Left != time.Hour {
		t.Fatalf("at 1 h before: Black's newest notification %+v; want timeRunningOut, 1 h left", n)
	}
	clock.Advance(time.Hour)
	awaitDelivery(deadline)
	rec, err := store.Get(ctx, host.GameID)
	if err != nil {
		t.Fatal(err)
	}
	st, err := svc.Decode(rec)
	if err != nil {
		t.Fatal(err)
	}
	if st.Phase != game.PhaseFinished || st.Result.Reason != game.ReasonTimeLoss || st.Result.EndedAt != deadline.UnixMilli() {
		t.Fatalf("after the deadline: %s %+v; want Black lost on time", st.Phase, st.Result)
	}
	if got := ph.kinds(); !slices.Equal(got, []string{"timeRunningOut", "timeRunningOut", "gameEnded"}) {
		t.Errorf("Black's phone got %v; want the two reminders and the end, once each", got)
	}
}
