package app_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"chessapi/shared/app"
	"chessapi/shared/game"
	"chessapi/shared/schedule/localsched"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// steps records what the app did, in order.
type steps struct {
	mu  sync.Mutex
	log []string
}

func (s *steps) add(step string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, step)
}

func (s *steps) all() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// closingTrigger is an in-process AI trigger: Close waits for turns.
type closingTrigger struct{ steps *steps }

func (closingTrigger) TriggerAI(context.Context, service.AITask) error { return nil }
func (c closingTrigger) Close(time.Duration)                           { c.steps.add("AI turns") }

// recordingScheduler keeps its timers in memory, like localsched.
type recordingScheduler struct {
	steps    *steps
	restored []service.TimeoutTask
}

func (*recordingScheduler) ScheduleTimeout(context.Context, service.TimeoutTask) error { return nil }
func (*recordingScheduler) CancelTimeout(context.Context, string) error                { return nil }
func (s *recordingScheduler) Restore(ctx context.Context, list func(context.Context) ([]service.TimeoutTask, error)) (int, error) {
	tasks, err := list(ctx)
	s.restored = tasks
	return len(tasks), err
}
func (s *recordingScheduler) Close() error { s.steps.add("timers"); return nil }

// TestStartAndShutdownOrder: Start re-arms the listed deadlines, looks for
// ratings to recover over the last day and starts the sweeper; Shutdown
// lets the stream's clients and long polls go, stops serving, then AI
// turns, timers, the sweeper and the store, in that order.
func TestStartAndShutdownOrder(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &steps{}
	sched := &recordingScheduler{steps: rec}
	pending := []service.TimeoutTask{{GameID: "g1", Version: 3, Deadline: time.Now().Add(time.Minute)}}
	var since time.Time
	wired, err := app.New(app.Config{
		Config: service.Config{Store: store, Scheduler: sched, AITrigger: closingTrigger{rec}},
		Stream: true,
		Housekeeping: app.Housekeeping{
			PendingTimeouts: func(context.Context) ([]service.TimeoutTask, error) { return pending, nil },
			FinishedSince: func(_ context.Context, t time.Time) ([]service.GameRecord, error) {
				since = t
				return nil, nil
			},
			StartSweeper: func(time.Duration, *slog.Logger) func() {
				rec.add("sweeper started")
				return func() { rec.add("sweeper") }
			},
			Close: func() error { rec.add("store"); return store.Close() },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := wired.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sched.restored, pending) {
		t.Errorf("re-armed %+v; want %+v", sched.restored, pending)
	}
	if d := time.Since(since); d < 23*time.Hour || d > 25*time.Hour {
		t.Errorf("ratings recovered over the games finished since %v ago; want a day", d)
	}
	// A long poll in progress answers at shutdown, before serving stops.
	created, err := wired.Service.Create(t.Context(), service.CreateInput{Options: game.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	polled := make(chan error, 1)
	go func() {
		after := int64(1)
		_, err := wired.Service.Get(context.Background(), created.GameID, service.Caller{Token: created.Token}, &after, time.Minute)
		polled <- err
	}()
	err = wired.Shutdown(t.Context(), func(context.Context) error {
		select {
		case err := <-polled:
			rec.add("long polls answered")
			if err != nil {
				t.Errorf("long poll at shutdown: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("the long poll still waits when serving stops")
		}
		rec.add("serving")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sweeper started", "long polls answered", "serving", "AI turns", "timers", "sweeper", "store"}
	if got := rec.all(); !slices.Equal(got, want) {
		t.Errorf("steps %q; want %q", got, want)
	}
	if n := wired.Stream.Connections(); n != 0 {
		t.Errorf("%d stream connections after shutdown", n)
	}
}

// TestStartFailsWithoutItsDeadlines: a store that cannot list its live
// games' deadlines is a failed start, and Shutdown still releases it.
func TestStartFailsWithoutItsDeadlines(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	down := errors.New("disk gone")
	closed := false
	wired, err := app.New(app.Config{
		Config: service.Config{Store: store},
		NewScheduler: func(handle app.TimeoutHandler) (service.Scheduler, error) {
			return localsched.New(handle, localsched.Options{})
		},
		Housekeeping: app.Housekeeping{
			PendingTimeouts: func(context.Context) ([]service.TimeoutTask, error) { return nil, down },
			Close:           func() error { closed = true; return store.Close() },
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := wired.Start(t.Context()); !errors.Is(err, down) {
		t.Errorf("Start = %v; want the listing's error", err)
	}
	if err := wired.Shutdown(t.Context(), nil); err != nil || !closed {
		t.Errorf("Shutdown = %v, store closed %v; want nil and closed", err, closed)
	}
}

// TestStartRearmsTheEmbeddedStoresTimers: the local server's wiring (the
// embedded store, the in-process scheduler) re-arms a live game's
// deadline after a restart.
func TestStartRearmsTheEmbeddedStoresTimers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "games.db")
	open := func() (*app.App, *localsched.Scheduler) {
		store, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var sched *localsched.Scheduler
		wired, err := app.New(app.Config{
			Config: service.Config{Store: store},
			NewScheduler: func(handle app.TimeoutHandler) (service.Scheduler, error) {
				s, err := localsched.New(handle, localsched.Options{})
				sched = s
				return s, err
			},
			Housekeeping: app.Housekeeping{PendingTimeouts: store.PendingTimeouts, FinishedSince: store.FinishedSince,
				StartSweeper: store.StartSweeper, Close: store.Close},
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := wired.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		return wired, sched
	}
	first, _ := open()
	if _, err := first.Service.Create(t.Context(), service.CreateInput{Options: game.DefaultOptions()}); err != nil {
		t.Fatal(err)
	}
	if err := first.Shutdown(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	second, sched := open()
	defer second.Shutdown(context.Background(), nil)
	if n := sched.Pending(); n != 1 {
		t.Errorf("timers after the restart = %d; want the waiting game's one", n)
	}
}
