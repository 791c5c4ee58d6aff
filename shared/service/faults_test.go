package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/game"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// Faults after a committed write (SPEC §13, issues 12 and 15): no failure
// of the timer, the AI trigger or the AI itself leaves a game without its
// timer or waiting on its AI for ever.

// flakyPorts is a scheduler, an AI trigger and an engine whose failures a
// test decides: each fails while its counter of failures to come is
// positive (negative: always).
type flakyPorts struct {
	mu                 sync.Mutex
	scheduleFails      int
	triggerFails       int
	engineFails        int
	scheduled          []service.TimeoutTask
	triggered          []service.AITask
	scheduleCalls      int
	triggerCalls       int
	engineCalls        int
	lastScheduleCtxErr error
}

var errInjected = errors.New("injected failure")

func (p *flakyPorts) fail(n *int) bool {
	if *n == 0 {
		return false
	}
	if *n > 0 {
		*n--
	}
	return true
}

func (p *flakyPorts) ScheduleTimeout(ctx context.Context, t service.TimeoutTask) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.scheduleCalls++
	p.lastScheduleCtxErr = ctx.Err()
	if ctx.Err() != nil {
		return ctx.Err() // as localsched: a done context schedules nothing
	}
	if p.fail(&p.scheduleFails) {
		return errInjected
	}
	p.scheduled = append(p.scheduled, t)
	return nil
}

func (p *flakyPorts) TriggerAI(_ context.Context, t service.AITask) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.triggerCalls++
	if p.fail(&p.triggerFails) {
		return errInjected
	}
	p.triggered = append(p.triggered, t)
	return nil
}

func (p *flakyPorts) ChooseMove(_ context.Context, req service.AIMoveRequest) (chess.Move, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.engineCalls++
	if p.fail(&p.engineFails) {
		return 0, errInjected
	}
	return req.Position.LegalMoves()[0], nil
}

func (p *flakyPorts) Search(context.Context, engine.Params) (engine.Result, error) {
	return engine.Result{}, errors.New("no public searches here")
}

func (p *flakyPorts) lastScheduled(t *testing.T) service.TimeoutTask {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.scheduled) == 0 {
		t.Fatal("nothing scheduled")
	}
	return p.scheduled[len(p.scheduled)-1]
}

func (p *flakyPorts) set(f func(p *flakyPorts)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

type faultFixture struct {
	svc   *service.Service
	clock *fakeclock.Clock
	ports *flakyPorts
}

// newFaultFixture uses the production retry bounds (effect retries and
// the AI watchdog at their defaults), with a short backoff.
func newFaultFixture(t *testing.T) *faultFixture {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	clock := fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	ports := &flakyPorts{}
	svc, err := service.New(service.Config{
		Store: store, Scheduler: ports, AITrigger: ports, Engine: ports, Now: clock.Now,
		EffectBackoff: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(time.Second) })
	return &faultFixture{svc: svc, clock: clock, ports: ports}
}

// aiGame creates a game against the AI with the human white; white plays
// e2e4, so the AI is to move.
func (f *faultFixture) aiGame(t *testing.T) (string, service.Caller) {
	t.Helper()
	o := options(t, `{"colorAssignment":"hostWhite","timeControl":"10+5"}`)
	g, err := f.svc.Create(t.Context(), service.CreateInput{Options: o, AILevel: "easy"})
	if err != nil {
		t.Fatal(err)
	}
	white := service.Caller{Token: g.Token}
	if _, err := f.svc.Act(t.Context(), g.GameID, white, service.ActionInput{Action: moveUCI("e2e4")}); err != nil {
		t.Fatal(err)
	}
	return g.GameID, white
}

// TestAITriggerFailsOnce: a trigger that fails once is retried at once,
// and the AI moves.
func TestAITriggerFailsOnce(t *testing.T) {
	f := newFaultFixture(t)
	f.ports.set(func(p *flakyPorts) { p.triggerFails = 1 })
	id, _ := f.aiGame(t)
	if f.ports.triggerCalls != 2 || len(f.ports.triggered) != 1 {
		t.Fatalf("trigger calls %d, accepted %d; want a retry after the failure", f.ports.triggerCalls, len(f.ports.triggered))
	}
	if err := f.svc.PlayAITurn(t.Context(), f.ports.triggered[0]); err != nil {
		t.Fatal(err)
	}
	if v, _ := f.svc.Get(t.Context(), id, service.Caller{}, nil, 0); len(v.Moves) != 2 {
		t.Errorf("moves after the AI's turn: %d; want 2", len(v.Moves))
	}
}

// TestAIWatchdogUnblocksTheGame: an AI that never answers (every trigger
// fails, or the engine fails on this position every time) is started again
// by the watchdog timer, a bounded number of times; then the AI seat
// forfeits on time, so the game never waits on it for ever. A trigger that
// comes back within the bound gets its move.
func TestAIWatchdogUnblocksTheGame(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults func(p *flakyPorts)
	}{
		{"trigger always fails", func(p *flakyPorts) { p.triggerFails = -1 }},
		{"poisoned position: the engine always fails", func(p *flakyPorts) { p.engineFails = -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFaultFixture(t)
			f.ports.set(tc.faults)
			id, _ := f.aiGame(t)
			for attempt := 0; ; attempt++ {
				if attempt > 10 {
					t.Fatal("the watchdog never gave up")
				}
				// Whatever trigger was accepted runs (and may fail).
				f.ports.mu.Lock()
				tasks := f.ports.triggered
				f.ports.triggered = nil
				f.ports.mu.Unlock()
				for _, task := range tasks {
					if err := f.svc.PlayAITurn(t.Context(), task); err == nil {
						t.Fatalf("the AI moved though it always fails")
					}
				}
				task := f.ports.lastScheduled(t)
				if task.GameID != id {
					t.Fatalf("scheduled %+v", task)
				}
				f.clock.Set(task.Deadline)
				if err := f.svc.HandleTimeout(t.Context(), task); err != nil {
					t.Fatal(err)
				}
				v, _ := f.svc.Get(t.Context(), id, service.Caller{}, nil, 0)
				if v.Phase == game.PhaseFinished {
					if v.Result.Reason != game.ReasonTimeLoss || v.Result.Winner == nil || *v.Result.Winner != chess.White {
						t.Errorf("unblocked as %+v; want the AI losing on time", v.Result)
					}
					// think time (easy: 0.2 s) + 30 s per attempt, 3
					// restarts: the game ended within 4 of those of the
					// AI's turn starting.
					if d := time.UnixMilli(v.Result.EndedAt).Sub(time.UnixMilli(v.Moves[0].At)); d > 4*(30*time.Second+engine.LevelEasy.ThinkTime())+time.Second {
						t.Errorf("the game waited %v on a dead AI; want at most 4 watchdog periods", d)
					}
					return
				}
			}
		})
	}
}

// hangUpStore cancels the request's context as soon as a write commits:
// the client went away right after sending its move.
type hangUpStore struct {
	service.Store
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (h *hangUpStore) Update(ctx context.Context, rec service.GameRecord, expected int64) error {
	err := h.Store.Update(ctx, rec, expected)
	h.mu.Lock()
	if h.cancel != nil && err == nil {
		h.cancel()
		h.cancel = nil
	}
	h.mu.Unlock()
	return err
}

// TestTimerSurvivesAHangUp: the client goes away right after its write is
// committed (its request's context is cancelled); the timer that write
// arms (the join's: the first move's deadline comes before the waiting
// game's expiry) is still armed, on a context of its own, so the game
// ends on time with nobody calling (issue 15's reproduction), each armed
// timer's delivery arming the next.
func TestTimerSurvivesAHangUp(t *testing.T) {
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	store := &hangUpStore{Store: bolt}
	clock := fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	ports := &flakyPorts{}
	svc, err := service.New(service.Config{Store: store, Scheduler: ports, AITrigger: ports, Engine: ports, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	o := options(t, `{"colorAssignment":"hostWhite","timeControl":"1+0"}`)
	host, err := svc.Create(t.Context(), service.CreateInput{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	store.mu.Lock()
	store.cancel = cancel
	store.mu.Unlock()
	clock.Advance(time.Second)
	if _, err := svc.Join(ctx, host.GameID, service.JoinInput{}); err != nil {
		t.Fatalf("the join: %v", err)
	}
	if ctx.Err() == nil {
		t.Fatal("the request's context was not cancelled by the hang-up")
	}
	v, _ := svc.Get(t.Context(), host.GameID, service.Caller{}, nil, 0)
	task := ports.lastScheduled(t)
	if task.Version != v.Version || ports.lastScheduleCtxErr != nil {
		t.Fatalf("timer %+v armed with context error %v; want version %d, on a context of its own", task, ports.lastScheduleCtxErr, v.Version)
	}
	clock.Set(task.Deadline)
	if err := svc.HandleTimeout(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	if v, _ := svc.Get(t.Context(), host.GameID, service.Caller{}, nil, 0); v.Phase != game.PhaseFinished || v.Result.Reason != game.ReasonAborted {
		t.Errorf("after the deadline with nobody calling: %s %v; want aborted (white never moved)", v.Phase, v.Result)
	}
}

// TestScheduleFailureRecovered: scheduling fails after the write — once
// (retried at once) and for a while (the background retry arms it when
// the scheduler is back) — and the deadline is still enforced.
func TestScheduleFailureRecovered(t *testing.T) {
	f := newFaultFixture(t)
	f.ports.set(func(p *flakyPorts) { p.scheduleFails = 1 })
	o := options(t, `{"colorAssignment":"hostWhite","timeControl":"1+0"}`)
	host, err := f.svc.Create(t.Context(), service.CreateInput{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	if task := f.ports.lastScheduled(t); task.GameID != host.GameID {
		t.Fatalf("after one failure: %+v; want the game's timer", task)
	}

	// Every immediate retry fails: the commit's effects go to the
	// background, which arms the timer once the scheduler answers again.
	f.ports.set(func(p *flakyPorts) { p.scheduleFails = -1 })
	if _, err := f.svc.Join(t.Context(), host.GameID, service.JoinInput{}); err != nil {
		t.Fatal(err)
	}
	if f.svc.PendingEffects() != 1 {
		t.Fatalf("pending effects = %d; want the failed timer kept for a retry", f.svc.PendingEffects())
	}
	f.ports.set(func(p *flakyPorts) { p.scheduleFails = 0 })
	deadline := time.Now().Add(10 * time.Second)
	for f.svc.PendingEffects() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the background retry never armed the timer")
		}
		time.Sleep(50 * time.Millisecond)
	}
	task := f.ports.lastScheduled(t)
	v, _ := f.svc.Get(t.Context(), host.GameID, service.Caller{}, nil, 0)
	if task.Version != v.Version {
		t.Fatalf("recovered timer for version %d; want %d", task.Version, v.Version)
	}
	f.clock.Set(task.Deadline)
	if err := f.svc.HandleTimeout(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	if v, _ := f.svc.Get(t.Context(), host.GameID, service.Caller{}, nil, 0); v.Phase != game.PhaseFinished || v.Result.Reason != game.ReasonAborted {
		t.Errorf("after the recovered deadline: %s %v; want aborted (white never moved)", v.Phase, v.Result)
	}
}

// TestEarlyDeliveryRearmsTheLatest: the armed timer fires early (the
// game moved on since it was armed, its deadline later) and arms the
// game's timer for the latest version's deadline, never the fired one's;
// a superseded timer's delivery then does nothing.
func TestEarlyDeliveryRearmsTheLatest(t *testing.T) {
	f := newFaultFixture(t)
	o := options(t, `{"colorAssignment":"hostWhite","timeControl":"10+0"}`)
	host, err := f.svc.Create(t.Context(), service.CreateInput{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	guest, err := f.svc.Join(t.Context(), host.GameID, service.JoinInput{})
	if err != nil {
		t.Fatal(err)
	}
	armed := f.ports.lastScheduled(t)
	var latest service.Outcome
	for i, uci := range []string{"e2e4", "e7e5", "g1f3"} {
		tok := []string{host.Token, guest.Token}[i%2]
		f.clock.Advance(time.Second)
		if latest, err = f.svc.Act(t.Context(), host.GameID, service.Caller{Token: tok}, service.ActionInput{Action: moveUCI(uci)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.ports.lastScheduled(t); got != armed {
		t.Fatalf("moves whose deadlines only moved later armed %+v; want the join's timer %+v kept", got, armed)
	}
	// The armed timer fires at its instant, before the latest deadline.
	f.clock.Set(armed.Deadline)
	f.ports.set(func(p *flakyPorts) { p.scheduled = nil })
	if err := f.svc.HandleTimeout(t.Context(), armed); err != nil {
		t.Fatal(err)
	}
	got := f.ports.lastScheduled(t)
	if want := time.UnixMilli(*latest.Game.Deadline); got.Version != latest.Game.Version || !got.Deadline.Equal(want) {
		t.Errorf("re-armed %+v after an early delivery; want version %d at the latest deadline %v", got, latest.Game.Version, want)
	}
	// The superseded join timer delivered again (at least once) arms
	// nothing more.
	f.ports.set(func(p *flakyPorts) { p.scheduled = nil })
	if err := f.svc.HandleTimeout(t.Context(), armed); err != nil {
		t.Fatal(err)
	}
	if n := len(f.ports.scheduled); n != 0 {
		t.Errorf("a superseded timer's delivery armed %d timers; want none", n)
	}
}
