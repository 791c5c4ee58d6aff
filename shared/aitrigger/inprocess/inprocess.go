// Package inprocess runs AI turns on a small pool of goroutines of this
// process: the local server's stand-in for the async Lambda invoke used in
// AWS, with the retries Lambda gives async invokes.
//
// Turns wait in a bounded queue served by a fixed number of workers, so a
// burst of triggers (many games restored after a restart) cannot start
// unbounded goroutines and searches. A turn that fails or panics is logged
// with its game and retried with exponential backoff; a panic never takes
// the process down.
package inprocess

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"chessapi/shared/service"
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
	// running or waiting to be retried (default 1024).
	QueueSize int
	// MaxAttempts bounds the runs of one turn, the first included
	// (default 5).
	MaxAttempts int
	// RetryFirst is the wait before the first retry (default 500 ms); each
	// further retry waits twice as long, up to RetryMax (default 8 s).
	RetryFirst, RetryMax time.Duration
	// Logger receives failures and panics (default slog.Default()).
	Logger *slog.Logger
}

const (
	defaultWorkers     = 2
	defaultQueueSize   = 1024
	defaultMaxAttempts = 5
	defaultRetryFirst  = 500 * time.Millisecond
	defaultRetryMax    = 8 * time.Second
)

func (o Options) withDefaults() Options {
	if o.Workers <= 0 {
		o.Workers = defaultWorkers
	}
	if o.QueueSize <= 0 {
		o.QueueSize = defaultQueueSize
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = defaultMaxAttempts
	}
	if o.RetryFirst <= 0 {
		o.RetryFirst = defaultRetryFirst
	}
	if o.RetryMax <= 0 {
		o.RetryMax = defaultRetryMax
	}
	o.RetryMax = max(o.RetryMax, o.RetryFirst)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Trigger is a service.AITrigger that runs AI turns on its workers and can
// wait for them on shutdown.
type Trigger struct {
	run  Runner
	opts Options
	log  *slog.Logger

	// base is every turn's context: a turn outlives the request that
	// triggered it, and is canceled only by Close.
	base   context.Context
	cancel context.CancelFunc

	// queue never blocks a sender: it has room for QueueSize jobs, and at
	// most QueueSize turns are accepted and unfinished.
	queue chan job

	mu       sync.Mutex
	accepted map[turnKey]struct{} // queued, running or waiting to retry
	closed   bool

	unfinished  sync.WaitGroup // one per accepted turn
	workersDone sync.WaitGroup
	stop        chan struct{} // closed when the workers may exit
	closeOnce   sync.Once
}

var _ service.AITrigger = (*Trigger)(nil)

// turnKey identifies a turn for coalescing: the same game at the same
// version is the same turn, however often it is triggered.
type turnKey struct {
	gameID  string
	version int64
}

func keyOf(task service.AITask) turnKey { return turnKey{task.GameID, task.Version} }

// job is one run of an accepted turn; attempt counts the runs that already
// failed.
type job struct {
	task    service.AITask
	attempt int
}

// New starts a Trigger whose workers play turns with run. The composition
// root passes a closure over the service, which is built after the trigger.
func New(run Runner, opts Options) *Trigger {
	if run == nil {
		panic("inprocess: nil runner")
	}
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	t := &Trigger{
		run:      run,
		opts:     opts,
		log:      opts.Logger,
		base:     ctx,
		cancel:   cancel,
		queue:    make(chan job, opts.QueueSize),
		accepted: map[turnKey]struct{}{},
		stop:     make(chan struct{}),
	}
	t.workersDone.Add(opts.Workers)
	for range opts.Workers {
		go t.work()
	}
	return t
}

// TriggerAI queues the turn and returns at once. A turn already queued,
// running or waiting to be retried is not queued twice. The turn never uses
// the caller's context: the request that made the human move ends before
// the AI has thought. It fails with ErrQueueFull when the queue is full and
// with ErrClosed after Close.
func (t *Trigger) TriggerAI(_ context.Context, task service.AITask) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	if _, dup := t.accepted[keyOf(task)]; dup {
		return nil
	}
	if len(t.accepted) >= t.opts.QueueSize {
		return fmt.Errorf("AI turn of game %s version %d: %w (%d turns waiting)", task.GameID, task.Version, ErrQueueFull, len(t.accepted))
	}
	t.accepted[keyOf(task)] = struct{}{}
	t.unfinished.Add(1)
	t.queue <- job{task: task}
	return nil
}

// Close refuses new turns and waits up to timeout for the accepted ones (an
// AI move in flight is a write the user is waiting for); then it cancels
// them: running turns see their context canceled, queued turns and pending
// retries are dropped (the game's deadline check triggers them again after
// a restart). Close returns when every worker has exited. Later calls do
// nothing.
func (t *Trigger) Close(timeout time.Duration) {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		done := make(chan struct{})
		go func() { t.unfinished.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(timeout):
			t.cancel()
			<-done
		}
		t.cancel()
		close(t.stop)
		t.workersDone.Wait()
	})
}

func (t *Trigger) work() {
	defer t.workersDone.Done()
	for {
		select {
		case j := <-t.queue:
			t.runJob(j)
		case <-t.stop:
			return
		}
	}
}

func (t *Trigger) runJob(j job) {
	if t.base.Err() != nil {
		t.log.Warn("AI turn dropped at shutdown", "game", j.task.GameID, "version", j.task.Version)
		t.finish(j.task)
		return
	}
	err := t.call(j.task)
	if err == nil {
		t.finish(j.task)
		return
	}
	attempts := j.attempt + 1
	attrs := []any{"game", j.task.GameID, "version", j.task.Version, "attempt", attempts, "err", err}
	switch {
	case t.base.Err() != nil:
		t.log.Warn("AI turn failed at shutdown", attrs...)
		t.finish(j.task)
	case attempts >= t.opts.MaxAttempts:
		t.log.Error("AI turn failed for the last time; the game's deadline check triggers it again", attrs...)
		t.finish(j.task)
	default:
		delay := t.backoff(attempts)
		t.log.Warn("AI turn failed; retrying", append(attrs, "retryIn", delay)...)
		// The retry waits off the workers, so one failing game does not hold
		// a worker through its backoff.
		go t.retryAfter(delay, job{task: j.task, attempt: attempts})
	}
}

// call runs one turn, turning a panic into an error.
func (t *Trigger) call(task service.AITask) (err error) {
	defer func() {
		if p := recover(); p != nil {
			t.log.Error("AI turn panicked", "game", task.GameID, "version", task.Version,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("AI turn panicked: %v", p)
		}
	}()
	return t.run(t.base, task)
}

func (t *Trigger) retryAfter(delay time.Duration, j job) {
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case <-timer.C:
		t.queue <- j // the turn still counts as accepted: there is room
	case <-t.base.Done():
		t.log.Warn("AI turn retry dropped at shutdown", "game", j.task.GameID, "version", j.task.Version)
		t.finish(j.task)
	}
}

func (t *Trigger) finish(task service.AITask) {
	t.mu.Lock()
	delete(t.accepted, keyOf(task))
	t.mu.Unlock()
	t.unfinished.Done()
}

// backoff is the wait before the retry that follows failed attempt n (1
// for the first failure): RetryFirst doubling each time, at most RetryMax.
func (t *Trigger) backoff(n int) time.Duration {
	d := t.opts.RetryFirst
	for i := 1; i < n && d < t.opts.RetryMax; i++ {
		d *= 2
	}
	return min(d, t.opts.RetryMax)
}
