// Package inprocess runs AI turns on goroutines of this process: the local
// server's stand-in for the async Lambda invoke used in AWS.
package inprocess

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"chessapi/shared/service"
)

// Runner plays one AI turn (service.(*Service).PlayAITurn).
type Runner func(ctx context.Context, task service.AITask) error

// Trigger is a service.AITrigger that starts each AI turn on its own
// goroutine and can wait for them all on shutdown.
type Trigger struct {
	run    Runner
	log    *slog.Logger
	base   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	closed bool
}

var _ service.AITrigger = (*Trigger)(nil)

// New returns a Trigger calling run. run may be set later with SetRunner
// (the service that runs turns is built with the trigger).
func New(run Runner, log *slog.Logger) *Trigger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Trigger{run: run, log: log, base: ctx, cancel: cancel}
}

// SetRunner sets the function that plays AI turns; call before the first
// trigger.
func (t *Trigger) SetRunner(run Runner) { t.run = run }

// TriggerAI starts the turn and returns at once. The turn does not use the
// caller's context: the request that made the human move ends before the
// AI has thought.
func (t *Trigger) TriggerAI(_ context.Context, task service.AITask) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return context.Canceled
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		if err := t.run(t.base, task); err != nil {
			t.log.Error("AI turn failed", "game", task.GameID, "version", task.Version, "err", err)
		}
	}()
	return nil
}

// Close refuses new turns and waits up to timeout for running ones (an AI
// move in flight is a write the user is waiting for); then it cancels them.
func (t *Trigger) Close(timeout time.Duration) {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		t.cancel()
		<-done
	}
	t.cancel()
}
