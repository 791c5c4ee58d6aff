// Package inprocess runs AI turns on a small pool of goroutines of this
// process: the local server's stand-in for the async Lambda invoke used in
// AWS, with the retries Lambda gives async invokes.
//
// Turns run on a workqueue.Queue: bounded, so a burst of triggers (many
// games restored after a restart) cannot start unbounded goroutines and
// searches; coalesced by game and version; a turn that fails or panics is
// logged with its game and retried as retry.AITurn says; a panic never
// takes the process down.
package inprocess

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"chessapi/shared/retry"
	"chessapi/shared/service"
	"chessapi/shared/workqueue"
)

// Runner plays one AI turn (service.(*Service).PlayAITurn).
type Runner func(ctx context.Context, task service.AITask) error

// ErrQueueFull is wrapped by TriggerAI's error when the queue cannot take
// another turn; the caller records the failure (the game's deadline check
// triggers the AI again).
var ErrQueueFull = errors.New("inprocess: AI turn queue full")

// ErrClosed is returned by TriggerAI after Close.
var ErrClosed = errors.New("inprocess: trigger closed")

// Options tune the trigger; zero values take the defaults.
type Options struct {
	// Workers is how many turns run at once (default 2). More workers than
	// engines reserved for AI seats only makes turns wait for an engine.
	Workers int
	// QueueSize bounds the accepted turns that have not finished: queued,
	// running or waiting to be retried (default workqueue.DefaultCapacity).
	QueueSize int
	// Retry says how often a failed turn runs again (default retry.AITurn).
	Retry retry.Policy
	// Logger receives failures and panics (default slog.Default()).
	Logger *slog.Logger
}

const defaultWorkers = 2

// Trigger is a service.AITrigger that runs AI turns on its workers and can
// wait for them on shutdown.
type Trigger struct {
	run   Runner
	turns *workqueue.Queue[turnKey]
}

var _ service.AITrigger = (*Trigger)(nil)

// turnKey identifies a turn for coalescing: the same game at the same
// version is the same turn, however often it is triggered.
type turnKey struct {
	gameID  string
	version int64
}

// New starts a Trigger whose workers play turns with run. The composition
// root passes a closure over the service, which is built after the trigger.
func New(run Runner, opts Options) *Trigger {
	if run == nil {
		panic("inprocess: nil runner")
	}
	if opts.Workers <= 0 {
		opts.Workers = defaultWorkers
	}
	if opts.Retry.IsZero() {
		opts.Retry = retry.AITurn
	}
	return &Trigger{run: run, turns: workqueue.New[turnKey](workqueue.Options{
		Name:     "AI turn",
		Workers:  opts.Workers,
		Capacity: opts.QueueSize,
		Retry:    opts.Retry,
		GiveUp:   "the game's deadline check triggers it again",
		Abandon:  "the game's deadline check triggers it again after a restart",
		Logger:   opts.Logger,
	})}
}

// TriggerAI queues the turn and returns at once. A turn already queued,
// running or waiting to be retried is not queued twice. The turn never uses
// the caller's context: the request that made the human move ends before
// the AI has thought. It fails with ErrQueueFull when the queue is full and
// with ErrClosed after Close.
func (t *Trigger) TriggerAI(_ context.Context, task service.AITask) error {
	_, err := t.turns.Add(turnKey{task.GameID, task.Version}, workqueue.Job{
		Run:   func(ctx context.Context) error { return t.run(ctx, task) },
		Attrs: []any{"game", task.GameID, "version", task.Version},
	})
	switch {
	case errors.Is(err, workqueue.ErrFull):
		return fmt.Errorf("AI turn of game %s version %d: %w (%d turns waiting)", task.GameID, task.Version, ErrQueueFull, t.turns.Stats().Accepted)
	case errors.Is(err, workqueue.ErrClosed):
		return ErrClosed
	}
	return err
}

// Close refuses new turns and waits up to timeout for the accepted ones (an
// AI move in flight is a write the user is waiting for); then it cancels
// them: running turns see their context canceled, queued turns and pending
// retries are dropped (the game's deadline check triggers them again after
// a restart). Close returns when every worker has exited. Later calls do
// nothing.
func (t *Trigger) Close(timeout time.Duration) { t.turns.Close(timeout) }
