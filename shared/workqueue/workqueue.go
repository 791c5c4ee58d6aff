// Package workqueue runs jobs on a fixed pool of goroutines of this
// process: the one in-process work queue under the local scheduler
// (shared/schedule/localsched) and the in-process AI trigger
// (shared/aitrigger/inprocess).
//
//   - Bounded: at most Capacity jobs are accepted and unfinished (queued,
//     running or waiting for a retry); Add refuses more with ErrFull, and
//     WaitRoom lets a single producer wait for room instead. At most
//     Workers jobs run at once.
//   - Coalesced: a job whose key is already accepted and unfinished is not
//     added again.
//   - Retried: a job that fails is tried again as its retry.Policy says,
//     the wait spent off the workers (one failing job does not hold a
//     worker through its backoff); a permanent error (retry.Permanent) or
//     the last attempt ends it, logged as an error with the job's
//     attributes.
//   - Panics are recovered: logged with the job's attributes, the panic
//     and the stack, and counted as a failed attempt.
//   - Close(drain) refuses new jobs, then waits up to drain for every
//     accepted job to finish, retries included; then it abandons the rest:
//     running jobs see their context canceled (and are not retried),
//     queued jobs and pending retries are dropped, each logged. Close
//     returns when every job has finished or been dropped and every
//     worker has exited. A drain of 0 abandons at once.
package workqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"chessapi/shared/retry"
)

var (
	// ErrFull is returned by Add when Capacity jobs are accepted and
	// unfinished.
	ErrFull = errors.New("workqueue: queue full")
	// ErrClosed is returned by Add and WaitRoom after Close.
	ErrClosed = errors.New("workqueue: queue closed")
	// ErrAbandoned is the outcome handed to Job.Done for a job that Close
	// dropped before it could run (again).
	ErrAbandoned = errors.New("workqueue: abandoned at close")
)

// Default sizes, for Options fields left at zero.
const (
	DefaultWorkers  = 1
	DefaultCapacity = 1024
)

// Options configure a Queue; zero values take the defaults.
type Options struct {
	// Name says what a job is, in log lines ("AI turn").
	Name string
	// Workers is how many jobs run at once (default DefaultWorkers).
	Workers int
	// Capacity bounds the accepted, unfinished jobs (default
	// DefaultCapacity).
	Capacity int
	// Retry says how often and how far apart a failed job is tried again.
	// The zero Policy runs each job once.
	Retry retry.Policy
	// GiveUp ends the error line logged when a job fails for the last
	// time: what becomes of the work ("the game is left to lazy
	// enforcement").
	GiveUp string
	// Abandon ends the lines logged for jobs Close gives up on.
	Abandon string
	// Logger receives failures and panics (default slog.Default()).
	Logger *slog.Logger
}

// Job is one piece of work.
type Job struct {
	// Run does the work; ctx is canceled when Close gives up waiting.
	Run func(ctx context.Context) error
	// Attrs name the job in log lines ("game", id, "version", v).
	Attrs []any
	// Done, if set, is called once with the job's outcome: nil, the last
	// error, or ErrAbandoned.
	Done func(err error)
}

// Stats is a snapshot of a queue's jobs.
type Stats struct {
	// Accepted jobs are not finished: Queued + Running + Retrying.
	Accepted int
	Queued   int // waiting for a worker
	Running  int
	Retrying int // waiting out a retry's delay
}

// Queue runs jobs keyed by K (the key coalesces duplicates). It is safe
// for concurrent use.
type Queue[K comparable] struct {
	opts Options
	log  *slog.Logger
	msg  messages

	// base is every job's context: a job outlives the call that added it
	// and is canceled only by Close.
	base   context.Context
	cancel context.CancelFunc

	// ready never blocks a sender: it has room for Capacity entries and
	// at most Capacity jobs are accepted.
	ready chan *entry[K]

	mu       sync.Mutex
	accepted map[K]struct{}
	running  int
	retrying int
	closed   bool
	room     chan struct{} // closed when a job finishes (or at Close); nil until WaitRoom needs it

	unfinished  sync.WaitGroup // one per accepted job
	workersDone sync.WaitGroup
	stop        chan struct{} // closed when the workers may exit
	closeOnce   sync.Once
}

// entry is one accepted job; failed counts its runs that failed.
type entry[K comparable] struct {
	key    K
	job    Job
	failed int
}

// messages are the queue's log lines, worded once from its Name.
type messages struct {
	panicked, retrying, lastFailure, shutdownFailure, dropped, retryDropped string
}

func wording(o Options) messages {
	giveUp, abandon := "", ""
	if o.GiveUp != "" {
		giveUp = "; " + o.GiveUp
	}
	if o.Abandon != "" {
		abandon = "; " + o.Abandon
	}
	return messages{
		panicked:        o.Name + " panicked",
		retrying:        o.Name + " failed; retrying",
		lastFailure:     o.Name + " failed for the last time" + giveUp,
		shutdownFailure: o.Name + " failed at shutdown" + abandon,
		dropped:         o.Name + " dropped at shutdown" + abandon,
		retryDropped:    o.Name + " retry dropped at shutdown" + abandon,
	}
}

// New starts a queue and its workers; Close stops them.
func New[K comparable](opts Options) *Queue[K] {
	if opts.Name == "" {
		opts.Name = "job"
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if opts.Capacity <= 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &Queue[K]{
		opts:     opts,
		log:      opts.Logger,
		msg:      wording(opts),
		base:     ctx,
		cancel:   cancel,
		ready:    make(chan *entry[K], opts.Capacity),
		accepted: map[K]struct{}{},
		stop:     make(chan struct{}),
	}
	q.workersDone.Add(opts.Workers)
	for range opts.Workers {
		go q.work()
	}
	return q
}

// Add accepts job under key and returns at once. added is false, with a
// nil error, when a job of that key is already accepted and unfinished
// (job is dropped then and its Done never called). The error is ErrFull
// when the queue holds Capacity jobs and ErrClosed after Close.
func (q *Queue[K]) Add(key K, job Job) (added bool, err error) {
	if job.Run == nil {
		return false, errors.New("workqueue: job without Run")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	switch _, dup := q.accepted[key]; {
	case q.closed:
		return false, ErrClosed
	case dup:
		return false, nil
	case len(q.accepted) >= q.opts.Capacity:
		return false, ErrFull
	}
	q.accepted[key] = struct{}{}
	q.unfinished.Add(1)
	q.ready <- &entry[K]{key: key, job: job}
	return true, nil
}

// WaitRoom waits until the queue can accept a job: a producer that is the
// queue's only one may then Add without ErrFull. It returns ctx's error if
// ctx ends first, ErrClosed after Close.
func (q *Queue[K]) WaitRoom(ctx context.Context) error {
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return ErrClosed
		}
		if len(q.accepted) < q.opts.Capacity {
			q.mu.Unlock()
			return nil
		}
		if q.room == nil {
			q.room = make(chan struct{})
		}
		room := q.room
		q.mu.Unlock()
		select {
		case <-room:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Stats returns the queue's counts now.
func (q *Queue[K]) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.accepted)
	return Stats{Accepted: n, Queued: n - q.running - q.retrying, Running: q.running, Retrying: q.retrying}
}

// Close refuses new jobs, waits up to drain for the accepted ones, then
// abandons the rest (see the package doc). A job that ignores its
// context's cancellation holds Close until it returns. Later calls do
// nothing.
func (q *Queue[K]) Close(drain time.Duration) {
	q.closeOnce.Do(func() {
		q.mu.Lock()
		q.closed = true
		q.wakeRoomLocked()
		q.mu.Unlock()
		if drain > 0 {
			done := make(chan struct{})
			go func() { q.unfinished.Wait(); close(done) }()
			t := time.NewTimer(drain)
			select {
			case <-done:
			case <-t.C:
			}
			t.Stop()
		}
		q.cancel()
		q.unfinished.Wait()
		close(q.stop)
		q.workersDone.Wait()
	})
}

func (q *Queue[K]) work() {
	defer q.workersDone.Done()
	for {
		select {
		case e := <-q.ready:
			q.runEntry(e)
		case <-q.stop:
			return
		}
	}
}

func (q *Queue[K]) runEntry(e *entry[K]) {
	if q.base.Err() != nil {
		q.log.Warn(q.msg.dropped, e.job.Attrs...)
		q.finish(e, ErrAbandoned)
		return
	}
	q.mu.Lock()
	q.running++
	q.mu.Unlock()
	err := q.call(e)
	if err != nil {
		e.failed++
	}
	// One step takes the job off the running count and puts it where it
	// goes next (finished or waiting for a retry), so Stats never counts
	// it as queued on the way.
	q.mu.Lock()
	q.running--
	shutdown := q.base.Err() != nil
	again := err != nil && !shutdown && q.opts.Retry.Retryable(e.failed, err)
	if again {
		q.retrying++
	} else {
		q.removeLocked(e)
	}
	q.mu.Unlock()
	if err == nil {
		q.done(e, nil)
		return
	}
	attrs := append(slices.Clip(e.job.Attrs), "attempt", e.failed, "err", err)
	switch {
	case shutdown:
		q.log.Warn(q.msg.shutdownFailure, attrs...)
		q.done(e, err)
	case !again:
		q.log.Error(q.msg.lastFailure, attrs...)
		q.done(e, err)
	default:
		delay := q.opts.Retry.Delay(e.failed)
		q.log.Warn(q.msg.retrying, append(attrs, "retryIn", delay)...)
		go q.retryAfter(delay, e)
	}
}

// call runs one attempt of a job, turning a panic into an error.
func (q *Queue[K]) call(e *entry[K]) (err error) {
	defer func() {
		if p := recover(); p != nil {
			q.log.Error(q.msg.panicked, append(slices.Clip(e.job.Attrs), "panic", fmt.Sprint(p), "stack", string(debug.Stack()))...)
			err = fmt.Errorf("workqueue: %s panicked: %v", q.opts.Name, p)
		}
	}()
	return e.job.Run(q.base)
}

// retryAfter waits out a retry's delay off the workers, then queues the
// job again (it still counts as accepted, so there is room for it).
func (q *Queue[K]) retryAfter(delay time.Duration, e *entry[K]) {
	err := q.opts.Retry.Wait(q.base, delay)
	q.mu.Lock()
	q.retrying--
	if err != nil {
		q.removeLocked(e)
	}
	q.mu.Unlock()
	if err != nil {
		q.log.Warn(q.msg.retryDropped, e.job.Attrs...)
		q.done(e, ErrAbandoned)
		return
	}
	q.ready <- e
}

// finish ends an accepted job with its outcome.
func (q *Queue[K]) finish(e *entry[K], err error) {
	q.mu.Lock()
	q.removeLocked(e)
	q.mu.Unlock()
	q.done(e, err)
}

// removeLocked forgets a finished job's key and wakes a producer waiting
// for room.
func (q *Queue[K]) removeLocked(e *entry[K]) {
	delete(q.accepted, e.key)
	q.wakeRoomLocked()
}

// done reports a removed job's outcome; Close waits for it.
func (q *Queue[K]) done(e *entry[K], err error) {
	if e.job.Done != nil {
		e.job.Done(err)
	}
	q.unfinished.Done()
}

func (q *Queue[K]) wakeRoomLocked() {
	if q.room != nil {
		close(q.room)
		q.room = nil
	}
}
