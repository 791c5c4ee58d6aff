package service_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// The notification decision over real commits (SPEC §16.3): each
// committed version's player events (PlayerEvents) reach the inbox of
// their player, and the devices only while the player's seat has no open
// stream connection; timeRunningOut reminders come from the game's timer.

// kinds lists the kinds of notifications, oldest first.
func kinds(ns []service.Notification) []string {
	var out []string
	for i := len(ns) - 1; i >= 0; i-- {
		out = append(out, ns[i].Kind)
	}
	return out
}

// pushedKinds lists the kinds of the messages sent to devices since the
// last call, in order.
func (f *notifyFixture) pushedKinds() []string {
	var out []string
	for _, m := range f.sender.take() {
		out = append(out, m.msg.Kind)
	}
	return out
}

// startGame is a game host hosts (White) and guest joins.
func (f *notifyFixture) startGame(t *testing.T, host, guest service.Caller) service.Seated {
	t.Helper()
	g, err := f.svc.Create(t.Context(), service.CreateInput{Options: options(t, `{"colorAssignment":"hostWhite"}`), Caller: host})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Join(t.Context(), g.GameID, service.JoinInput{Caller: guest}); err != nil {
		t.Fatal(err)
	}
	return g
}

func (f *notifyFixture) act(t *testing.T, gameID string, c service.Caller, a game.Action) {
	t.Helper()
	f.clock.Advance(time.Second) // each commit at a time of its own: the inbox orders by time
	if _, err := f.svc.Act(t.Context(), gameID, c, service.ActionInput{Action: a}); err != nil {
		t.Fatalf("%s %+v: %v", gameID, a, err)
	}
}

func TestNotificationsOfAGame(t *testing.T) {
	f := newNotifyFixture(t)
	ana, _ := f.player(t, "Ana")
	ben, _ := f.player(t, "Ben")
	f.device(t, ana, 1, "en")
	f.device(t, ben, 2, "ko")
	ctx := t.Context()

	g := f.startGame(t, ana, ben)
	// Neither seat has a stream open (seats start not connected): both
	// phones hear that the game started.
	if got := f.pushedKinds(); !slices.Equal(got, []string{"gameStarted", "gameStarted"}) {
		t.Fatalf("join pushed %v; want gameStarted to both", got)
	}

	f.act(t, g.GameID, ana, moveUCI("e2e4"))
	sent := f.sender.take()
	if len(sent) != 1 || sent[0].msg.Kind != "yourTurn" || sent[0].msg.Title != "ko:yourTurn" {
		t.Fatalf("e4 pushed %+v; want Ben's yourTurn", sent)
	}
	inbox := f.inbox(t, ben)
	if inbox[0].Kind != "yourTurn" || inbox[0].Move == nil || inbox[0].Move.SAN != "e4" || inbox[0].Deadline == nil {
		t.Errorf("Ben's newest notification %+v; want yourTurn with e4 and the deadline", inbox[0])
	}

	// Ben opens the game's stream: his turns reach his inbox only.
	if _, err := f.svc.Connect(ctx, g.GameID, ben); err != nil {
		t.Fatal(err)
	}
	f.act(t, g.GameID, ben, moveUCI("e7e5"))
	if got := f.pushedKinds(); !slices.Equal(got, []string{"yourTurn"}) {
		t.Fatalf("e5 pushed %v; want Ana's yourTurn (she is away)", got)
	}
	f.clock.Advance(2 * time.Minute) // past the per-game-and-kind window
	f.act(t, g.GameID, ana, moveUCI("g1f3"))
	if got := f.pushedKinds(); len(got) != 0 {
		t.Fatalf("Nf3 pushed %v while Ben's stream is open; want nothing", got)
	}
	if got := kinds(f.inbox(t, ben)); !slices.Equal(got, []string{"gameStarted", "yourTurn", "yourTurn"}) {
		t.Errorf("Ben's inbox %v; want gameStarted and both turns", got)
	}

	// His stream closes on his turn: the grace of SPEC §11 starts, and
	// his phone is told.
	f.clock.Advance(time.Second)
	if err := f.svc.Disconnect(ctx, g.GameID, chess.Black); err != nil {
		t.Fatal(err)
	}
	sent = f.sender.take()
	if len(sent) != 1 || sent[0].msg.Kind != "disconnectGraceStarted" {
		t.Fatalf("the disconnect pushed %+v; want Ben's disconnectGraceStarted", sent)
	}
	if n := f.inbox(t, ben)[0]; n.Kind != "disconnectGraceStarted" || n.Deadline == nil ||
		time.UnixMilli(*n.Deadline).Sub(f.clock.Now()) != 60*time.Second {
		t.Errorf("Ben's grace notification %+v; want its end 60 s ahead", n)
	}

	// He resigns from the phone: each player hears the end once (Ana
	// too: she never opened the stream).
	f.act(t, g.GameID, ben, game.Action{Type: game.ActionResign})
	if got := f.pushedKinds(); !slices.Equal(got, []string{"gameEnded", "gameEnded"}) {
		t.Fatalf("the resignation pushed %v; want gameEnded to both", got)
	}
	for name, c := range map[string]service.Caller{"Ana": ana, "Ben": ben} {
		n := 0
		for _, x := range f.inbox(t, c) {
			if x.Kind == "gameEnded" {
				n++
				if x.Result == nil || x.Result.Reason != game.ReasonResign {
					t.Errorf("%s's gameEnded %+v; want the resignation", name, x)
				}
			}
		}
		if n != 1 {
			t.Errorf("%s's inbox has %d gameEnded; want 1", name, n)
		}
	}
}

// fire delivers the game's last scheduled timer at its time.
func (f *notifyFixture) fire(t *testing.T) service.TimeoutTask {
	t.Helper()
	task := f.sched.lastTimeout(t)
	f.clock.Set(task.Deadline)
	if err := f.svc.HandleTimeout(t.Context(), task); err != nil {
		t.Fatalf("timeout %+v: %v", task, err)
	}
	return task
}

func TestTimeRunningOutReminders(t *testing.T) {
	for _, tc := range []struct {
		control string
		// after is when each reminder is due, from the start of Black's
		// turn, and left what it announces.
		after, left []time.Duration
		turn        time.Duration
	}{
		{"days:1", []time.Duration{12 * time.Hour, 23 * time.Hour}, []time.Duration{12 * time.Hour, time.Hour}, 24 * time.Hour},
		{"perMove:60", []time.Duration{45 * time.Second}, []time.Duration{15 * time.Second}, 60 * time.Second},
	} {
		t.Run(tc.control, func(t *testing.T) {
			f := newNotifyFixture(t)
			ana, _ := f.player(t, "Ana")
			ben, benID := f.player(t, "Ben")
			f.device(t, ben, 2, "en")
			ctx := t.Context()
			g, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, fmt.Sprintf(`{"colorAssignment":"hostWhite","timeControl":%q}`, tc.control)), Caller: ana})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.Join(ctx, g.GameID, service.JoinInput{Caller: ben}); err != nil {
				t.Fatal(err)
			}
			// Black's first move is under its first-move rule (aborted, not
			// lost, when it does not come): play it and a second move of
			// White, so Black's own time runs.
			f.act(t, g.GameID, ana, moveUCI("e2e4"))
			f.act(t, g.GameID, ben, moveUCI("e7e5"))
			f.act(t, g.GameID, ana, moveUCI("g1f3"))
			start := f.clock.Now()
			f.sender.take()
			// Following the account on the stream does not keep a reminder
			// off the phone: the stream does not carry reminders.
			f.followers[benID] = true
			for i, after := range tc.after {
				// Timers are lazy (timers.go): one armed earlier and still
				// ahead (the first move's limit) fires first, finds nothing
				// due and arms the reminder.
				task := f.fire(t)
				for task.Deadline.Before(start.Add(after)) {
					if got := f.pushedKinds(); len(got) != 0 {
						t.Fatalf("a timer at +%v, before reminder %d, pushed %v", task.Deadline.Sub(start), i, got)
					}
					task = f.fire(t)
				}
				if !task.Deadline.Equal(start.Add(after)) {
					t.Fatalf("timer %d fires at +%v; want +%v", i, task.Deadline.Sub(start), after)
				}
				n := f.inbox(t, ben)[0]
				if n.Kind != "timeRunningOut" || n.Left != tc.left[i] || n.Deadline == nil || !time.UnixMilli(*n.Deadline).Equal(start.Add(tc.turn)) {
					t.Fatalf("after +%v Ben's newest notification is %+v; want timeRunningOut with %v left", after, n, tc.left[i])
				}
				if got := f.pushedKinds(); !slices.Equal(got, []string{"timeRunningOut"}) {
					t.Fatalf("reminder %d pushed %v", i, got)
				}
				// A delivery of the same timer again sends nothing twice.
				if err := f.svc.HandleTimeout(ctx, task); err != nil {
					t.Fatal(err)
				}
				if got := f.pushedKinds(); len(got) != 0 {
					t.Fatalf("the timer delivered again pushed %v", got)
				}
			}
			delete(f.followers, benID)
			// The next timer is the turn's deadline: Black loses on time
			// (per-move: after the extensions, which remind of nothing).
			if task := f.fire(t); !task.Deadline.Equal(start.Add(tc.turn)) {
				t.Fatalf("the timer after the reminders fires at +%v; want the deadline +%v", task.Deadline.Sub(start), tc.turn)
			}
			var result *game.Result
			for range 10 {
				obs, err := f.svc.Observe(ctx, g.GameID, ben)
				if err != nil {
					t.Fatal(err)
				}
				if result = obs.State.Result; result != nil {
					break
				}
				f.fire(t)
			}
			if result == nil || result.Reason != game.ReasonTimeLoss {
				t.Fatalf("result %+v; want Black's time loss", result)
			}
			if got := f.pushedKinds(); !slices.Equal(got, []string{"gameEnded"}) {
				t.Errorf("after the reminders Ben's phone got %v; want gameEnded only", got)
			}
			ended := 0
			for _, n := range f.inbox(t, ben) {
				if n.Kind == "gameEnded" {
					ended++
				}
			}
			if ended != 1 {
				t.Errorf("Ben's inbox has %d gameEnded; want 1", ended)
			}
		})
	}
}

// TestEndedSessionsTakeTheirDevices: a revoked session's devices go with
// it (SPEC §16.3), another session's stay; a deleted player's devices and
// inbox go.
func TestEndedSessionsTakeTheirDevices(t *testing.T) {
	f := newNotifyFixture(t)
	ctx := t.Context()
	ana, anaID := f.player(t, "Ana")
	f.device(t, ana, 1, "en")
	ben, benID := f.player(t, "Ben")
	f.device(t, ben, 2, "ko")
	f.deliver(t, f.event(benID, "game1", 2, "yourTurn"), false)

	sessions, err := f.svc.Sessions(ctx, ana)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("Ana's sessions %v, %v", sessions, err)
	}
	if err := f.svc.RevokeSession(ctx, ana, sessions[0].ID); err != nil {
		t.Fatal(err)
	}
	if devs, err := f.store.Devices(ctx, anaID); err != nil || len(devs) != 0 {
		t.Errorf("after Ana's session was revoked her devices are %v (%v); want none", devs, err)
	}
	if devs, err := f.store.Devices(ctx, benID); err != nil || len(devs) != 1 {
		t.Errorf("Ben's devices %v (%v); want his one", devs, err)
	}

	if err := f.svc.DeleteMe(ctx, ben); err != nil {
		t.Fatal(err)
	}
	if devs, err := f.store.Devices(ctx, benID); err != nil || len(devs) != 0 {
		t.Errorf("after Ben was deleted his devices are %v (%v); want none", devs, err)
	}
	if recs, err := f.store.Notifications(ctx, benID, "", 100); err != nil || len(recs) != 0 {
		t.Errorf("after Ben was deleted his inbox holds %d (%v); want none", len(recs), err)
	}
}

// flakyInbox is the embedded store's inbox failing while failing is set.
type flakyInbox struct {
	*boltstore.Store
	failing atomic.Bool
}

func (f *flakyInbox) AddNotification(ctx context.Context, n service.NotificationRecord) (service.NotificationRecord, bool, error) {
	if f.failing.Load() {
		return service.NotificationRecord{}, false, errors.New("inbox unavailable")
	}
	return f.Store.AddNotification(ctx, n)
}

// TestNotificationsOfFailedCommitsAllArrive: the inbox fails through two
// moves, so both commits' effects wait in one background retry; when it
// recovers, each version's notification arrives with its own version, as
// the change stream delivers them on AWS — the span from the first prev
// to the last state (two moves) would have held no yourTurn at all.
func TestNotificationsOfFailedCommitsAllArrive(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	inbox := &flakyInbox{Store: store}
	f := &notifyFixture{clock: fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)), store: store, sched: &recorder{}}
	f.svc, err = service.New(service.Config{Store: store, Players: store, Notifications: inbox, Scheduler: f.sched,
		Now: f.clock.Now, EffectBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.svc.Close(time.Second) })
	ana, _ := f.player(t, "Ana")
	ben, _ := f.player(t, "Ben")
	ctx := t.Context()
	g := f.startGame(t, ana, ben)

	inbox.failing.Store(true)
	f.act(t, g.GameID, ana, moveUCI("e2e4"))
	f.act(t, g.GameID, ben, moveUCI("e7e5"))
	if n := f.svc.PendingEffects(); n != 1 {
		t.Fatalf("pending effects = %d; want the game's two failed commits in one retry", n)
	}
	view, err := f.svc.Get(ctx, g.GameID, service.Caller{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	inbox.failing.Store(false)
	want := map[string]struct {
		caller  service.Caller
		version int64
	}{"Ben (after e4)": {ben, view.Version - 1}, "Ana (after e5)": {ana, view.Version}}
	turns := func(c service.Caller) (out []int64) {
		for _, n := range f.inbox(t, c) {
			if n.Kind == "yourTurn" {
				out = append(out, n.Version)
			}
		}
		return out
	}
	// The retry leaves the pending set while it runs: wait for what it
	// delivers, not for the set to empty.
	deadline := time.Now().Add(20 * time.Second)
	for slices.Equal(turns(ben), nil) || slices.Equal(turns(ana), nil) || f.svc.PendingEffects() != 0 {
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for name, c := range want {
		if got := turns(c.caller); !slices.Equal(got, []int64{c.version}) {
			t.Errorf("%s: yourTurn of versions %v; want exactly %d", name, got, c.version)
		}
	}
}
