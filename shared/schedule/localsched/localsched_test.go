package localsched

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
)

// fakeClock is a manual clock: timers fire only when Advance passes them.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	clock   *fakeClock
	at      time.Time
	c       chan time.Time
	stopped bool // guarded by clock.mu
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }
func (t *fakeTimer) Stop() bool {
	t.clock.mu.Lock()
	defer t.clock.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(at time.Time) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{clock: c, at: at, c: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	return t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			if !t.stopped {
				t.c <- c.now
			}
			continue
		}
		kept = append(kept, t)
	}
	c.timers = kept
}

// recorder is a handler that reports each delivery on a channel.
type recorder struct {
	got chan service.TimeoutTask
}

func newRecorder() *recorder { return &recorder{got: make(chan service.TimeoutTask, 100)} }

func (r *recorder) handle(ctx context.Context, task service.TimeoutTask) { r.got <- task }

// next waits for one delivery.
func (r *recorder) next(t *testing.T) service.TimeoutTask {
	t.Helper()
	select {
	case task := <-r.got:
		return task
	case <-time.After(5 * time.Second):
		t.Fatal("no delivery within 5s")
		return service.TimeoutTask{}
	}
}

// none checks nothing is delivered for a while (it cannot prove a negative,
// only catch an early delivery that happens within the window).
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case task := <-r.got:
		t.Fatalf("unexpected delivery %+v", task)
	case <-time.After(30 * time.Millisecond):
	}
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newFake(t *testing.T) (*Scheduler, *fakeClock, *recorder) {
	t.Helper()
	clock := &fakeClock{now: epoch}
	rec := newRecorder()
	s, err := newWithClock(rec.handle, clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, clock, rec
}

func mustSchedule(t *testing.T, s *Scheduler, task service.TimeoutTask) {
	t.Helper()
	if err := s.ScheduleTimeout(context.Background(), task); err != nil {
		t.Fatalf("ScheduleTimeout(%+v) = %v", task, err)
	}
}

func TestDeliversInDeadlineOrderAndNotBefore(t *testing.T) {
	s, clock, rec := newFake(t)
	offsets := []int{50, 10, 30, 20, 40} // milliseconds, scheduled out of order
	for i, ms := range offsets {
		mustSchedule(t, s, service.TimeoutTask{GameID: string(rune('a' + i)), Version: 1, Deadline: epoch.Add(time.Duration(ms) * time.Millisecond)})
	}
	rec.none(t) // nothing is due at the start
	wantOrder := []string{"b", "d", "c", "e", "a"}
	for step, want := range wantOrder {
		clock.Advance(9 * time.Millisecond)
		rec.none(t) // 1 ms early: still nothing
		clock.Advance(time.Millisecond)
		got := rec.next(t)
		if got.GameID != want {
			t.Fatalf("delivery %d = game %q; want %q", step+1, got.GameID, want)
		}
		if now := clock.Now(); got.Deadline.After(now) {
			t.Fatalf("game %q delivered at %v before its deadline %v", got.GameID, now, got.Deadline)
		}
	}
	if n := s.Pending(); n != 0 {
		t.Errorf("Pending() after all deliveries = %d; want 0", n)
	}
}

func TestPastDeadlineDeliveredAtOnce(t *testing.T) {
	s, _, rec := newFake(t)
	mustSchedule(t, s, service.TimeoutTask{GameID: "late", Version: 3, Deadline: epoch.Add(-time.Hour)})
	if got := rec.next(t); got.GameID != "late" || got.Version != 3 {
		t.Fatalf("delivered %+v; want game late version 3", got)
	}
}

func TestDuplicatesAndOlderVersionsIgnored(t *testing.T) {
	s, clock, rec := newFake(t)
	d := epoch.Add(time.Second)
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 2, Deadline: d})
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 2, Deadline: d}) // duplicate
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 1, Deadline: d}) // older
	if n := s.Pending(); n != 1 {
		t.Fatalf("Pending() = %d; want 1", n)
	}
	clock.Advance(time.Second)
	if got := rec.next(t); got.Version != 2 {
		t.Fatalf("delivered version %d; want 2", got.Version)
	}
	rec.none(t)
}

func TestNewerVersionReplacesPending(t *testing.T) {
	s, clock, rec := newFake(t)
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 1, Deadline: epoch.Add(time.Second)})
	mustSchedule(t, s, service.TimeoutTask{GameID: "other", Version: 1, Deadline: epoch.Add(3 * time.Second)})
	// The move that made version 2 also moved the deadline later.
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 2, Deadline: epoch.Add(2 * time.Second)})
	if n := s.Pending(); n != 2 {
		t.Fatalf("Pending() = %d; want 2 (version 1 dropped)", n)
	}
	clock.Advance(time.Second)
	rec.none(t) // version 1's deadline passed, but it was replaced
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "g" || got.Version != 2 {
		t.Fatalf("delivered %+v; want game g version 2", got)
	}
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "other" {
		t.Fatalf("delivered %+v; want game other", got)
	}
}

func TestEarlierTaskWakesTheLoop(t *testing.T) {
	s, clock, rec := newFake(t)
	mustSchedule(t, s, service.TimeoutTask{GameID: "far", Version: 1, Deadline: epoch.Add(time.Hour)})
	time.Sleep(10 * time.Millisecond) // let the loop arm its timer for an hour
	mustSchedule(t, s, service.TimeoutTask{GameID: "near", Version: 1, Deadline: epoch.Add(time.Second)})
	// Give the loop time to re-arm for the earlier deadline, then pass it.
	waitFor(t, func() bool { return clock.hasTimerAt(epoch.Add(time.Second)) })
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "near" {
		t.Fatalf("delivered %+v; want game near", got)
	}
}

func (c *fakeClock) hasTimerAt(at time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.at.Equal(at) && !t.stopped {
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition not reached within 5s")
}

func TestInvalidTasks(t *testing.T) {
	s, _, _ := newFake(t)
	for _, task := range []service.TimeoutTask{
		{GameID: "", Version: 1, Deadline: epoch},
		{GameID: "g", Version: 1},
	} {
		if err := s.ScheduleTimeout(context.Background(), task); err == nil {
			t.Errorf("ScheduleTimeout(%+v) = nil; want an error", task)
		}
	}
	if _, err := New(nil); err == nil {
		t.Error("New(nil) = nil error; want an error")
	}
}

// TestRealClock uses real, short deadlines: every task arrives, none before
// its deadline.
func TestRealClock(t *testing.T) {
	rec := newRecorder()
	s, err := New(rec.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	want := map[string]time.Time{}
	for i, ms := range []int{30, 10, 20} {
		task := service.TimeoutTask{GameID: string(rune('x' + i)), Version: 1, Deadline: start.Add(time.Duration(ms) * time.Millisecond)}
		want[task.GameID] = task.Deadline
		mustSchedule(t, s, task)
	}
	for range want {
		got := rec.next(t)
		if now := time.Now(); now.Before(want[got.GameID]) {
			t.Errorf("game %q delivered at +%v, before its deadline +%v", got.GameID, now.Sub(start), want[got.GameID].Sub(start))
		}
		delete(want, got.GameID)
	}
}

func TestCloseStopsEverythingWithoutLeaks(t *testing.T) {
	before := runtime.NumGoroutine()

	clock := &fakeClock{now: epoch}
	started := make(chan struct{})
	finished := make(chan error, 1)
	s, err := newWithClock(func(ctx context.Context, task service.TimeoutTask) {
		close(started)
		<-ctx.Done() // a handler still busy when Close is called
		finished <- ctx.Err()
	}, clock)
	if err != nil {
		t.Fatal(err)
	}
	mustSchedule(t, s, service.TimeoutTask{GameID: "busy", Version: 1, Deadline: epoch})
	mustSchedule(t, s, service.TimeoutTask{GameID: "queued", Version: 1, Deadline: epoch.Add(time.Hour)})
	<-started

	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	select {
	case err := <-finished:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("handler context error = %v; want context.Canceled", err)
		}
	default:
		t.Fatal("Close returned before the running handler did")
	}
	if err := s.ScheduleTimeout(context.Background(), service.TimeoutTask{GameID: "g", Version: 1, Deadline: epoch}); !errors.Is(err, ErrClosed) {
		t.Errorf("ScheduleTimeout after Close = %v; want ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() = %v; want nil", err)
	}
	clock.Advance(2 * time.Hour) // the queued task must not run now

	// Goroutines wind down asynchronously after the last Done.
	for i := 0; ; i++ {
		if n := runtime.NumGoroutine(); n <= before {
			break
		} else if i == 100 {
			t.Fatalf("goroutines: %d before New, %d after Close; want no more than before", before, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func BenchmarkScheduleAndDeliver(b *testing.B) {
	var wg sync.WaitGroup
	s, err := New(func(ctx context.Context, task service.TimeoutTask) { wg.Done() })
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	past := time.Now().Add(-time.Second)
	for i := 0; b.Loop(); i++ {
		wg.Add(1)
		// Distinct games: a newer version of one game would replace a
		// task not yet delivered.
		if err := s.ScheduleTimeout(context.Background(), service.TimeoutTask{GameID: strconv.Itoa(i), Version: 1, Deadline: past}); err != nil {
			b.Fatal(err)
		}
	}
	wg.Wait()
}
