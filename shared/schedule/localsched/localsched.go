// Package localsched is the local server's in-process deadline scheduler: a
// timer heap whose due tasks run on a small pool of workers, the job
// EventBridge Scheduler does in AWS.
//
// Each game has at most one live timer. Scheduling replaces the game's
// pending timer when the new task's version is the same or newer (an equal
// version may move the deadline: the timeout handler re-arms an early
// delivery, and an overdue AI turn is checked again later) and is ignored
// when it is older (its delivery would be a stale no-op, SPEC §7).
//
// Due tasks run on a workqueue.Queue (bounded workers, panics recovered and
// logged). A handler that fails or panics is retried as retry.Timeout says
// unless the game was scheduled again meanwhile; the newer task wins: a
// task superseded while it waited for a worker or for its retry is skipped.
// After the last attempt the game is left to lazy enforcement: its next
// request applies the due timeout.
//
// Pending timers live in memory only; at start-up Restore re-arms them from
// the store (boltstore.Store.PendingTimeouts).
package localsched

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"chessapi/shared/retry"
	"chessapi/shared/service"
	"chessapi/shared/workqueue"
)

// Handler runs a due timeout; a non-nil error (or a panic) asks for a retry.
// ctx is canceled when the scheduler closes.
type Handler func(ctx context.Context, task service.TimeoutTask) error

// ErrClosed is returned by ScheduleTimeout and Restore after Close.
var ErrClosed = errors.New("localsched: scheduler closed")

// Options tune the scheduler; zero values take the defaults.
type Options struct {
	// Workers is how many handlers may run at once (default 4). Due tasks
	// beyond that wait their turn; one superseded meanwhile is skipped.
	Workers int
	// QueueSize bounds the due tasks handed to the workers and not
	// finished, retries included (default workqueue.DefaultCapacity);
	// beyond that, due tasks stay in the timer heap, where a newer version
	// still replaces them.
	QueueSize int
	// Retry says how often and how far apart a failed handler is called
	// again (default retry.Timeout). Its waits run on the scheduler's clock
	// unless it brings its own Sleep.
	Retry retry.Policy
	// Logger receives handler failures and panics (default slog.Default()).
	Logger *slog.Logger
}

const defaultWorkers = 4

// Scheduler is a service.Scheduler running in this process.
type Scheduler struct {
	handle Handler
	log    *slog.Logger
	clock  clock

	mu     sync.Mutex
	queue  taskQueue             // timers by due time
	games  map[string]*gameTimer // games with a queued timer or a task handed to the workers
	seq    uint64                // numbers every accepted ScheduleTimeout and CancelTimeout
	closed bool

	// work runs due tasks, keyed by the seq of the call that scheduled
	// them (unique: no two tasks coalesce). The loop is its only producer
	// and waits for room before it takes a task off the heap, so a task
	// waiting for room stays replaceable.
	work     *workqueue.Queue[uint64]
	wake     chan struct{} // capacity 1: "the earliest due time changed"
	ctx      context.Context
	cancel   context.CancelFunc
	loopDone chan struct{}
}

var _ service.Scheduler = (*Scheduler)(nil)

// gameTimer is what the scheduler knows of one game while it has a queued
// timer or a task with the workers.
type gameTimer struct {
	queued *item // nil when nothing is queued
	// handed counts the game's tasks with the workers: waiting for one,
	// running, or waiting for a retry.
	handed int
	// version is the version of the newest accepted task: older ones are
	// ignored.
	version int64
	// seq identifies the newest ScheduleTimeout or CancelTimeout call for
	// the game; a failed handler is retried only if its task is still that
	// newest call.
	seq uint64
}

// New starts a scheduler that calls handle at each deadline. Close it to
// stop its goroutines.
func New(handle Handler, opts Options) (*Scheduler, error) {
	return newWithClock(handle, opts, realClock{})
}

func newWithClock(handle Handler, opts Options, c clock) (*Scheduler, error) {
	if handle == nil {
		return nil, errors.New("localsched: nil handler")
	}
	if opts.Workers <= 0 {
		opts.Workers = defaultWorkers
	}
	if opts.Retry.IsZero() {
		opts.Retry = retry.Timeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{
		handle:   handle,
		log:      opts.Logger,
		clock:    c,
		games:    map[string]*gameTimer{},
		wake:     make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
		loopDone: make(chan struct{}),
	}
	if opts.Retry.Sleep == nil {
		opts.Retry.Sleep = s.sleep
	}
	s.work = workqueue.New[uint64](workqueue.Options{
		Name:     "timeout handler",
		Workers:  opts.Workers,
		Capacity: opts.QueueSize,
		Retry:    opts.Retry,
		GiveUp:   "the game is left to lazy enforcement",
		Abandon:  "the game is re-armed at the next start",
		Logger:   opts.Logger,
	})
	go s.loop()
	return s, nil
}

// ScheduleTimeout arms the game's timer for task (a deadline already past
// is due at once), replacing a pending timer of the same or an older
// version; a task older than the pending one is ignored. ctx is not
// consulted: scheduling is an in-memory step that must happen even when
// the request that made the move has already hung up.
func (s *Scheduler) ScheduleTimeout(_ context.Context, task service.TimeoutTask) error {
	switch {
	case task.GameID == "":
		return errors.New("localsched: timeout task has an empty game id")
	case task.Deadline.IsZero():
		return fmt.Errorf("localsched: timeout task of game %q version %d has no deadline", task.GameID, task.Version)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	g := s.games[task.GameID]
	if g == nil {
		g = &gameTimer{version: task.Version}
		s.games[task.GameID] = g
	}
	if task.Version < g.version {
		return nil // superseded
	}
	g.version = task.Version
	s.seq++
	g.seq = s.seq
	s.queueLocked(g, item{task: task, due: task.Deadline, seq: g.seq})
	return nil
}

// CancelTimeout drops the game's pending timer: the game has no deadline
// any more. A handler already running for it is not retried if it fails.
func (s *Scheduler) CancelTimeout(_ context.Context, gameID string) error {
	if gameID == "" {
		return errors.New("localsched: cancel with an empty game id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.games[gameID]
	if g == nil {
		return nil
	}
	s.seq++
	g.seq = s.seq
	if g.queued != nil {
		heap.Remove(&s.queue, g.queued.index)
		g.queued = nil
	}
	s.forgetIfIdleLocked(gameID, g)
	return nil
}

// Restore re-arms the timers of live games listed by list (the store's
// pending deadlines) and returns how many it armed. An error from list is
// returned, so a server can refuse to start without its deadlines; tasks
// that cannot be armed are reported too, after every valid one is armed.
func (s *Scheduler) Restore(ctx context.Context, list func(context.Context) ([]service.TimeoutTask, error)) (int, error) {
	tasks, err := list(ctx)
	if err != nil {
		return 0, fmt.Errorf("localsched: list pending timeouts: %w", err)
	}
	armed := 0
	var errs []error
	for _, task := range tasks {
		if err := s.ScheduleTimeout(ctx, task); err != nil {
			if errors.Is(err, ErrClosed) {
				return armed, err
			}
			errs = append(errs, err)
			continue
		}
		armed++
	}
	return armed, errors.Join(errs...)
}

// Pending is the number of timers not yet running: in the heap, handed to
// the workers and waiting for one, or waiting for a retry.
func (s *Scheduler) Pending() int {
	s.mu.Lock()
	n := len(s.queue)
	s.mu.Unlock()
	st := s.work.Stats()
	return n + st.Queued + st.Retrying
}

// Close stops the scheduler: queued timers are dropped, running handlers
// see their context canceled and are not retried, and Close returns once the
// loop and every handler call have returned (the timers of live games are
// re-armed from the store at the next start, so nothing waits to drain).
// Later calls do nothing.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	<-s.loopDone
	s.work.Close(0)
	return nil
}

// queueLocked puts it in the heap as the game's only queued timer,
// replacing the one queued before.
func (s *Scheduler) queueLocked(g *gameTimer, it item) {
	if g.queued != nil {
		*g.queued = item{task: it.task, due: it.due, seq: it.seq, index: g.queued.index}
		heap.Fix(&s.queue, g.queued.index)
	} else {
		g.queued = &it
		heap.Push(&s.queue, g.queued)
	}
	if g.queued.index == 0 { // new earliest due time: the loop must re-arm
		select {
		case s.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

func (s *Scheduler) forgetIfIdleLocked(gameID string, g *gameTimer) {
	if g.queued == nil && g.handed == 0 {
		delete(s.games, gameID)
	}
}

// loop hands due tasks to the workers, one at a time as there is room.
func (s *Scheduler) loop() {
	defer close(s.loopDone)
	for {
		if err := s.work.WaitRoom(s.ctx); err != nil {
			return
		}
		it, ok := s.nextDue()
		if !ok {
			return
		}
		job := s.job(it)
		if _, err := s.work.Add(it.seq, job); err != nil {
			job.Done(err) // only after Close: the task is dropped like the queued ones
			return
		}
	}
}

// nextDue waits until the earliest timer is due and takes it off the heap;
// ok is false once the scheduler is closed.
func (s *Scheduler) nextDue() (it item, ok bool) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return item{}, false
		}
		var next time.Time
		if len(s.queue) > 0 {
			first := s.queue[0]
			if !first.due.After(s.clock.Now()) {
				heap.Pop(&s.queue)
				g := s.games[first.task.GameID]
				g.queued = nil
				g.handed++
				s.mu.Unlock()
				return *first, true
			}
			next = first.due
		}
		s.mu.Unlock()

		var fire <-chan time.Time
		var t timer
		if !next.IsZero() {
			t = s.clock.NewTimer(next)
			fire = t.C()
		}
		select {
		case <-fire:
		case <-s.wake:
		case <-s.ctx.Done():
		}
		if t != nil {
			t.Stop()
		}
	}
}

// job is the work of a due task: the handler call, skipped when a newer
// ScheduleTimeout or CancelTimeout of the game came meanwhile (the newer
// call's task wins, also over a retry of this one).
func (s *Scheduler) job(it item) workqueue.Job {
	id := it.task.GameID
	return workqueue.Job{
		Attrs: []any{"game", id, "version", it.task.Version},
		Run: func(ctx context.Context) error {
			if !s.current(it) {
				return nil
			}
			err := s.handle(ctx, it.task)
			if err != nil && ctx.Err() == nil && !s.current(it) {
				s.log.Warn("timeout handler failed; a newer timer of the game replaces it",
					"game", id, "version", it.task.Version, "err", err)
				return nil
			}
			return err
		},
		Done: func(error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			g := s.games[id]
			g.handed--
			s.forgetIfIdleLocked(id, g)
		},
	}
}

// current reports whether it is still the game's newest scheduling call.
func (s *Scheduler) current(it item) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.games[it.task.GameID]
	return g != nil && g.seq == it.seq
}

// sleep is the retries' wait on the scheduler's clock.
func (s *Scheduler) sleep(ctx context.Context, d time.Duration) error {
	t := s.clock.NewTimer(s.clock.Now().Add(d))
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// item is one queued timer; index is its place in the heap, kept up to date
// by taskQueue so a replaced timer can be moved or removed.
type item struct {
	task service.TimeoutTask
	// due is when the handler runs: the deadline.
	due   time.Time
	seq   uint64 // the ScheduleTimeout call this task came from
	index int
}

// taskQueue is a min-heap of items by due time (then game id, so equal
// times come out in a stable order).
type taskQueue []*item

func (q taskQueue) Len() int { return len(q) }

func (q taskQueue) Less(i, j int) bool {
	a, b := q[i], q[j]
	if !a.due.Equal(b.due) {
		return a.due.Before(b.due)
	}
	return a.task.GameID < b.task.GameID
}

func (q taskQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *taskQueue) Push(x any) {
	it := x.(*item)
	it.index = len(*q)
	*q = append(*q, it)
}

func (q *taskQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	it.index = -1
	return it
}

// clock is time as the scheduler sees it; tests replace it. Timers take an
// instant, not a duration, so time passing between reading Now and arming
// the timer cannot shift the deadline.
type clock interface {
	Now() time.Time
	NewTimer(at time.Time) timer
}

type timer interface {
	C() <-chan time.Time
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time              { return time.Now() }
func (realClock) NewTimer(at time.Time) timer { return realTimer{time.NewTimer(time.Until(at))} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }
