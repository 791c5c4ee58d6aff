// Package localsched is the local server's in-process deadline scheduler: a
// timer heap served by one goroutine that calls the timeout handler when a
// game's deadline passes, the job EventBridge Scheduler does in AWS.
//
// Only the newest version of each game is kept: scheduling version N+1
// drops a pending version N (its delivery would be a stale no-op for the
// timeout handler, SPEC §7), and scheduling an older or equal version than
// the pending one is ignored. Pending timers live in memory only; after a
// restart the server re-arms them from the store
// (boltstore.Store.PendingTimeouts).
package localsched

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"chessapi/shared/service"
)

// Handler runs a due timeout. Each call runs on its own goroutine; ctx is
// canceled when the scheduler closes.
type Handler func(ctx context.Context, task service.TimeoutTask)

// ErrClosed is returned by ScheduleTimeout after Close.
var ErrClosed = errors.New("localsched: scheduler closed")

// Scheduler is a service.Scheduler running in this process.
type Scheduler struct {
	handler Handler
	clock   clock

	mu      sync.Mutex
	queue   taskQueue        // by deadline
	pending map[string]*item // game id → its queued item
	closed  bool

	wake     chan struct{} // capacity 1: "the earliest deadline changed"
	ctx      context.Context
	cancel   context.CancelFunc
	loopDone chan struct{}
	running  sync.WaitGroup // handler calls in flight
}

var _ service.Scheduler = (*Scheduler)(nil)

// New starts a scheduler that calls handler at each deadline. Close it to
// stop its goroutine.
func New(handler Handler) (*Scheduler, error) {
	return newWithClock(handler, realClock{})
}

func newWithClock(handler Handler, c clock) (*Scheduler, error) {
	if handler == nil {
		return nil, errors.New("localsched: nil handler")
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Scheduler{
		handler:  handler,
		clock:    c,
		pending:  map[string]*item{},
		wake:     make(chan struct{}, 1),
		ctx:      ctx,
		cancel:   cancel,
		loopDone: make(chan struct{}),
	}
	go s.loop()
	return s, nil
}

// ScheduleTimeout queues task for its deadline (a deadline already past is
// delivered at once). A task for a game whose pending task has the same or
// a newer version is ignored.
func (s *Scheduler) ScheduleTimeout(ctx context.Context, task service.TimeoutTask) error {
	switch {
	case task.GameID == "":
		return errors.New("localsched: timeout task has an empty game id")
	case task.Deadline.IsZero():
		return fmt.Errorf("localsched: timeout task of game %q version %d has no deadline", task.GameID, task.Version)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("localsched: schedule game %q: %w", task.GameID, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if old, ok := s.pending[task.GameID]; ok {
		if old.task.Version >= task.Version {
			return nil // duplicate or superseded
		}
		heap.Remove(&s.queue, old.index)
	}
	it := &item{task: task}
	heap.Push(&s.queue, it)
	s.pending[task.GameID] = it
	if it.index == 0 { // new earliest deadline: the loop must re-arm its timer
		select {
		case s.wake <- struct{}{}:
		default: // a wake-up is already due
		}
	}
	return nil
}

// Pending is the number of queued tasks.
func (s *Scheduler) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Close stops the scheduler: queued tasks are dropped, running handlers see
// their context canceled, and Close returns once the loop and every handler
// call have returned. Later calls do nothing.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	<-s.loopDone
	if !already {
		s.running.Wait()
	}
	return nil
}

// loop delivers due tasks and sleeps until the next deadline or a wake-up.
func (s *Scheduler) loop() {
	defer close(s.loopDone)
	for {
		next, armed := s.dispatchDue()
		var fire <-chan time.Time
		var t timer
		if armed {
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
		if s.ctx.Err() != nil {
			return
		}
	}
}

// dispatchDue starts the handler for every task whose deadline has passed
// and returns the next deadline (armed is false if none is queued).
func (s *Scheduler) dispatchDue() (next time.Time, armed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return time.Time{}, false
	}
	now := s.clock.Now()
	for len(s.queue) > 0 {
		first := s.queue[0]
		if first.task.Deadline.After(now) {
			return first.task.Deadline, true
		}
		heap.Pop(&s.queue)
		delete(s.pending, first.task.GameID)
		s.running.Add(1)
		go func(task service.TimeoutTask) {
			defer s.running.Done()
			s.handler(s.ctx, task)
		}(first.task)
	}
	return time.Time{}, false
}

// item is one queued task; index is its place in the heap, kept up to date
// by taskQueue so a superseded task can be removed.
type item struct {
	task  service.TimeoutTask
	index int
}

// taskQueue is a min-heap of items by deadline (then game id, so equal
// deadlines come out in a stable order).
type taskQueue []*item

func (q taskQueue) Len() int { return len(q) }

func (q taskQueue) Less(i, j int) bool {
	a, b := q[i].task, q[j].task
	if !a.Deadline.Equal(b.Deadline) {
		return a.Deadline.Before(b.Deadline)
	}
	return a.GameID < b.GameID
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
