package localsched

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/shared/retry"
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
	if !at.After(c.now) { // like a real timer for an instant already past
		t.c <- c.now
		return t
	}
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

func (r *recorder) handle(ctx context.Context, task service.TimeoutTask) error {
	r.got <- task
	return nil
}

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
	rec := newRecorder()
	s, clock := newFakeWith(t, rec.handle, Options{})
	return s, clock, rec
}

// newFakeWith starts a scheduler on a fake clock at epoch; its log goes to
// the test log unless opts names a logger.
func newFakeWith(t *testing.T, handle Handler, opts Options) (*Scheduler, *fakeClock) {
	t.Helper()
	clock := &fakeClock{now: epoch}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(tWriter{t}, nil))
	}
	s, err := newWithClock(handle, opts, clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, clock
}

// tWriter sends log lines to the test log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
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
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New(nil) = nil error; want an error")
	}
}

// TestRealClock uses real, short deadlines: every task arrives, none before
// its deadline.
func TestRealClock(t *testing.T) {
	rec := newRecorder()
	s, err := New(rec.handle, Options{})
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
	s, err := newWithClock(func(ctx context.Context, task service.TimeoutTask) error {
		close(started)
		<-ctx.Done() // a handler still busy when Close is called
		finished <- ctx.Err()
		return ctx.Err() // failing during shutdown: must not be retried
	}, Options{Logger: slog.New(slog.DiscardHandler)}, clock)
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
	s, err := New(func(ctx context.Context, task service.TimeoutTask) error {
		wg.Done()
		return nil
	}, Options{})
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

// A client that hangs up right after its move cancels the request context
// before the deadline is scheduled; the game must still get its timer.
func TestScheduleWithCanceledContextStillFires(t *testing.T) {
	s, clock, rec := newFake(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.ScheduleTimeout(ctx, service.TimeoutTask{GameID: "g", Version: 4, Deadline: epoch.Add(time.Second)}); err != nil {
		t.Fatalf("ScheduleTimeout with a canceled context = %v; want nil", err)
	}
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "g" || got.Version != 4 {
		t.Fatalf("delivered %+v; want game g version 4", got)
	}
}

// The same version scheduled again carries the deadline of the newest call,
// whether it moved later (an early delivery re-armed) or earlier.
func TestEqualVersionTakesTheNewestDeadline(t *testing.T) {
	s, clock, rec := newFake(t)
	mustSchedule(t, s, service.TimeoutTask{GameID: "later", Version: 2, Deadline: epoch.Add(time.Second)})
	mustSchedule(t, s, service.TimeoutTask{GameID: "later", Version: 2, Deadline: epoch.Add(3 * time.Second)})
	mustSchedule(t, s, service.TimeoutTask{GameID: "earlier", Version: 5, Deadline: epoch.Add(4 * time.Second)})
	mustSchedule(t, s, service.TimeoutTask{GameID: "earlier", Version: 5, Deadline: epoch.Add(2 * time.Second)})
	if n := s.Pending(); n != 2 {
		t.Fatalf("Pending() = %d; want 2 (one timer per game)", n)
	}
	clock.Advance(time.Second)
	rec.none(t) // "later" no longer fires at its first deadline
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "earlier" || !got.Deadline.Equal(epoch.Add(2*time.Second)) {
		t.Fatalf("delivered %+v; want game earlier with its newest deadline +2s", got)
	}
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "later" || !got.Deadline.Equal(epoch.Add(3*time.Second)) {
		t.Fatalf("delivered %+v; want game later with its newest deadline +3s", got)
	}
	clock.Advance(time.Hour)
	rec.none(t)
}

// An older version is ignored also while the newer one's handler runs.
func TestOlderVersionIgnoredWhileHandlerRuns(t *testing.T) {
	release := make(chan struct{})
	got := make(chan service.TimeoutTask, 10)
	s, clock := newFakeWith(t, func(ctx context.Context, task service.TimeoutTask) error {
		got <- task
		if task.Version == 7 {
			<-release
		}
		return nil
	}, Options{})
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 7, Deadline: epoch})
	if task := receive(t, got); task.Version != 7 {
		t.Fatalf("delivered version %d; want 7", task.Version)
	}
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 6, Deadline: epoch}) // a slow, stale request
	if n := s.Pending(); n != 0 {
		t.Errorf("Pending() = %d after scheduling an older version; want 0", n)
	}
	close(release)
	clock.Advance(time.Second)
	select {
	case task := <-got:
		t.Fatalf("stale version delivered: %+v", task)
	case <-time.After(30 * time.Millisecond):
	}
}

func TestCancelTimeoutDropsThePendingTimer(t *testing.T) {
	s, clock, rec := newFake(t)
	mustSchedule(t, s, service.TimeoutTask{GameID: "over", Version: 9, Deadline: epoch.Add(time.Second)})
	mustSchedule(t, s, service.TimeoutTask{GameID: "live", Version: 1, Deadline: epoch.Add(2 * time.Second)})
	if err := s.CancelTimeout(context.Background(), "over"); err != nil {
		t.Fatalf("CancelTimeout = %v", err)
	}
	if err := s.CancelTimeout(context.Background(), "never-scheduled"); err != nil {
		t.Fatalf("CancelTimeout of an unknown game = %v; want nil", err)
	}
	if err := s.CancelTimeout(context.Background(), ""); err == nil {
		t.Error("CancelTimeout with an empty game id = nil; want an error")
	}
	if n := s.Pending(); n != 1 {
		t.Fatalf("Pending() = %d after CancelTimeout; want 1", n)
	}
	clock.Advance(time.Second)
	rec.none(t)
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "live" {
		t.Fatalf("delivered %+v; want game live", got)
	}
	// A later deadline of the cancelled game (say, after a rematch of the
	// same id in a test store) is armed as usual.
	mustSchedule(t, s, service.TimeoutTask{GameID: "over", Version: 10, Deadline: epoch.Add(3 * time.Second)})
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "over" || got.Version != 10 {
		t.Fatalf("delivered %+v; want game over version 10", got)
	}
}

func TestFailedHandlerIsRetriedAfterBackoff(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	got := make(chan service.TimeoutTask, 10)
	s, clock := newFakeWith(t, func(ctx context.Context, task service.TimeoutTask) error {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		got <- task
		if n == 1 {
			return errors.New("store unavailable")
		}
		return nil
	}, Options{})
	task := service.TimeoutTask{GameID: "g", Version: 3, Deadline: epoch}
	mustSchedule(t, s, task)
	if first := receive(t, got); first != task {
		t.Fatalf("first delivery %+v; want %+v", first, task)
	}
	waitFor(t, func() bool { return clock.hasTimerAt(epoch.Add(time.Second)) })
	clock.Advance(999 * time.Millisecond)
	expectNone(t, got) // not before the backoff
	clock.Advance(time.Millisecond)
	if retry := receive(t, got); retry != task {
		t.Fatalf("retry delivered %+v; want the same task %+v", retry, task)
	}
	waitFor(t, func() bool { return s.Pending() == 0 && s.idle() })
	clock.Advance(time.Hour)
	expectNone(t, got) // success ends the retries
}

// Retries wait the policy's Base, doubling up to its Max, and stop after
// its Attempts with an error that tells the game is left to lazy
// enforcement.
func TestRetriesBackOffAndGiveUp(t *testing.T) {
	logs := &syncBuffer{}
	attempts := make(chan time.Time, 10)
	var s *Scheduler
	var clock *fakeClock
	s, clock = newFakeWith(t, func(ctx context.Context, task service.TimeoutTask) error {
		attempts <- clock.Now()
		return errors.New("always failing")
	}, Options{Retry: retry.Policy{Attempts: 4, Base: time.Second, Max: 3 * time.Second}, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	mustSchedule(t, s, service.TimeoutTask{GameID: "doomed", Version: 1, Deadline: epoch})
	var at []time.Duration
	at = append(at, receiveTime(t, attempts).Sub(epoch))
	for _, wait := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} {
		due := clock.Now().Add(wait)
		waitFor(t, func() bool { return clock.hasTimerAt(due) })
		clock.Advance(wait)
		at = append(at, receiveTime(t, attempts).Sub(epoch))
	}
	want := []time.Duration{0, time.Second, 3 * time.Second, 6 * time.Second}
	for i := range want {
		if at[i] != want[i] {
			t.Fatalf("attempts at %v; want %v", at, want)
		}
	}
	waitFor(t, func() bool { return s.idle() })
	if n := s.Pending(); n != 0 {
		t.Errorf("Pending() = %d after the last attempt; want 0", n)
	}
	clock.Advance(time.Hour)
	select {
	case a := <-attempts:
		t.Fatalf("attempt %d at +%v; want %d attempts only", len(want)+1, a.Sub(epoch), len(want))
	case <-time.After(30 * time.Millisecond):
	}
	out := logs.String()
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "lazy enforcement") || !strings.Contains(out, "game=doomed") {
		t.Errorf("no final error naming the game and lazy enforcement in the log:\n%s", out)
	}
}

// A newer task scheduled while a handler runs wins over that handler's
// retry.
func TestNewerTaskWinsOverRetry(t *testing.T) {
	release := make(chan struct{})
	got := make(chan service.TimeoutTask, 10)
	s, clock := newFakeWith(t, func(ctx context.Context, task service.TimeoutTask) error {
		got <- task
		if task.Version == 1 {
			<-release
			return errors.New("conflict storm")
		}
		return nil
	}, Options{})
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 1, Deadline: epoch})
	receive(t, got)
	mustSchedule(t, s, service.TimeoutTask{GameID: "g", Version: 2, Deadline: epoch.Add(10 * time.Second)})
	close(release)
	waitFor(t, func() bool { return s.idle() })
	clock.Advance(time.Second)
	expectNone(t, got) // no retry of version 1
	clock.Advance(9 * time.Second)
	if task := receive(t, got); task.Version != 2 {
		t.Fatalf("delivered version %d; want 2", task.Version)
	}
}

// A panicking handler must not take the server down: it is recovered,
// logged with the game, the panic and the stack, retried, and the other
// games' timers keep firing.
func TestPanickingHandlerIsRecoveredAndRetried(t *testing.T) {
	logs := &syncBuffer{}
	var mu sync.Mutex
	panicked := false
	got := make(chan service.TimeoutTask, 10)
	s, clock := newFakeWith(t, func(ctx context.Context, task service.TimeoutTask) error {
		if task.GameID == "cursed" {
			mu.Lock()
			first := !panicked
			panicked = true
			mu.Unlock()
			if first {
				panic("corrupt game record")
			}
		}
		got <- task
		return nil
	}, Options{Workers: 1, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	mustSchedule(t, s, service.TimeoutTask{GameID: "cursed", Version: 1, Deadline: epoch})
	mustSchedule(t, s, service.TimeoutTask{GameID: "other", Version: 1, Deadline: epoch.Add(500 * time.Millisecond)})
	waitFor(t, func() bool { return clock.hasTimerAt(epoch.Add(time.Second)) }) // the retry of cursed, retry.Timeout's first wait
	clock.Advance(500 * time.Millisecond)
	if task := receive(t, got); task.GameID != "other" {
		t.Fatalf("delivered %+v; want game other", task)
	}
	clock.Advance(500 * time.Millisecond)
	if task := receive(t, got); task.GameID != "cursed" {
		t.Fatalf("delivered %+v; want the retry of game cursed", task)
	}
	out := logs.String()
	for _, want := range []string{"panicked", "game=cursed", "version=1", "corrupt game record", "goroutine"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// A burst of due tasks (a restart after downtime) runs on Workers handlers,
// never more.
func TestBurstRunsOnBoundedWorkers(t *testing.T) {
	const workers, games = 4, 10_000
	var mu sync.Mutex
	active, peak, done := 0, 0, 0
	gate := make(chan struct{})
	s, _ := newFakeWith(t, func(ctx context.Context, task service.TimeoutTask) error {
		mu.Lock()
		active++
		peak = max(peak, active)
		mu.Unlock()
		<-gate
		mu.Lock()
		active--
		done++
		mu.Unlock()
		return nil
	}, Options{Workers: workers})
	var openGate sync.Once
	t.Cleanup(func() { openGate.Do(func() { close(gate) }) }) // before Close, which waits for handlers
	for i := range games {
		mustSchedule(t, s, service.TimeoutTask{GameID: strconv.Itoa(i), Version: 1, Deadline: epoch.Add(-time.Minute)})
	}
	read := func() (int, int, int) {
		mu.Lock()
		defer mu.Unlock()
		return active, peak, done
	}
	waitFor(t, func() bool { a, _, _ := read(); return a >= workers })
	time.Sleep(20 * time.Millisecond) // room for handlers beyond the bound to start
	if a, _, _ := read(); a != workers {
		t.Fatalf("%d handlers running with %d tasks due; want %d", a, games, workers)
	}
	if n := s.Pending(); n != games-workers {
		t.Errorf("Pending() = %d; want %d due tasks waiting in the heap", n, games-workers)
	}
	openGate.Do(func() { close(gate) })
	waitFor(t, func() bool { _, _, d := read(); return d == games })
	if _, p, _ := read(); p > workers {
		t.Fatalf("peak %d concurrent handlers; want at most %d", p, workers)
	}
}

func TestRestoreArmsTasksAndSurfacesListErrors(t *testing.T) {
	s, clock, rec := newFake(t)
	storeDown := errors.New("store unavailable")
	n, err := s.Restore(context.Background(), func(context.Context) ([]service.TimeoutTask, error) { return nil, storeDown })
	if !errors.Is(err, storeDown) {
		t.Fatalf("Restore with a failing list = %d, %v; want the list error", n, err)
	}
	n, err = s.Restore(context.Background(), func(context.Context) ([]service.TimeoutTask, error) {
		return []service.TimeoutTask{
			{GameID: "a", Version: 3, Deadline: epoch.Add(time.Second)},
			{GameID: "b", Version: 8, Deadline: epoch.Add(-time.Hour)}, // came due while the server was down
			{GameID: "bad", Version: 1},                                // no deadline: cannot be armed
		}, nil
	})
	if n != 2 || err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Fatalf("Restore = %d, %v; want 2 armed and an error naming game bad", n, err)
	}
	if got := rec.next(t); got.GameID != "b" {
		t.Fatalf("delivered %+v; want the overdue game b at once", got)
	}
	clock.Advance(time.Second)
	if got := rec.next(t); got.GameID != "a" {
		t.Fatalf("delivered %+v; want game a", got)
	}
	s.Close()
	if _, err := s.Restore(context.Background(), func(context.Context) ([]service.TimeoutTask, error) {
		return []service.TimeoutTask{{GameID: "a", Version: 4, Deadline: epoch}}, nil
	}); !errors.Is(err, ErrClosed) {
		t.Errorf("Restore after Close = %v; want ErrClosed", err)
	}
}

// idle reports that no task is with the workers: none waits for one, runs,
// waits for a retry or is about to record its outcome.
func (s *Scheduler) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.games {
		if g.handed > 0 {
			return false
		}
	}
	return true
}

func receive(t *testing.T, c <-chan service.TimeoutTask) service.TimeoutTask {
	t.Helper()
	select {
	case task := <-c:
		return task
	case <-time.After(5 * time.Second):
		t.Fatal("no delivery within 5s")
		return service.TimeoutTask{}
	}
}

func receiveTime(t *testing.T, c <-chan time.Time) time.Time {
	t.Helper()
	select {
	case at := <-c:
		return at
	case <-time.After(5 * time.Second):
		t.Fatal("no attempt within 5s")
		return time.Time{}
	}
}

func expectNone(t *testing.T, c <-chan service.TimeoutTask) {
	t.Helper()
	select {
	case task := <-c:
		t.Fatalf("unexpected delivery %+v", task)
	case <-time.After(30 * time.Millisecond):
	}
}

// syncBuffer is a log destination safe for concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A due task that waits for a worker, and a retry that waits out its
// delay, are skipped when a newer call for the game comes meanwhile: only
// the newer task is delivered.
func TestSupersededWhileWaitingIsSkipped(t *testing.T) {
	release := make(chan struct{})
	got := make(chan service.TimeoutTask, 10)
	var mu sync.Mutex
	failedOnce := false
	s, clock := newFakeWith(t, func(ctx context.Context, task service.TimeoutTask) error {
		got <- task
		switch task.GameID {
		case "slow":
			<-release
		case "flaky":
			mu.Lock()
			defer mu.Unlock()
			if !failedOnce {
				failedOnce = true
				return errors.New("store unavailable")
			}
		}
		return nil
	}, Options{Workers: 1})
	mustSchedule(t, s, service.TimeoutTask{GameID: "slow", Version: 1, Deadline: epoch})
	if task := receive(t, got); task.GameID != "slow" {
		t.Fatalf("delivered %+v; want game slow", task)
	}
	// The only worker is busy: "waiting" is handed over and waits for it.
	mustSchedule(t, s, service.TimeoutTask{GameID: "waiting", Version: 1, Deadline: epoch})
	waitFor(t, func() bool { return s.work.Stats().Queued == 1 })
	mustSchedule(t, s, service.TimeoutTask{GameID: "waiting", Version: 2, Deadline: epoch.Add(5 * time.Second)})
	close(release)
	expectNone(t, got) // version 1 is skipped when the worker frees up

	mustSchedule(t, s, service.TimeoutTask{GameID: "flaky", Version: 1, Deadline: epoch})
	if task := receive(t, got); task.GameID != "flaky" {
		t.Fatalf("delivered %+v; want game flaky", task)
	}
	waitFor(t, func() bool { return clock.hasTimerAt(epoch.Add(time.Second)) }) // its retry
	mustSchedule(t, s, service.TimeoutTask{GameID: "flaky", Version: 2, Deadline: epoch.Add(10 * time.Second)})
	clock.Advance(time.Second)
	expectNone(t, got) // the retry of version 1 is skipped
	clock.Advance(4 * time.Second)
	if task := receive(t, got); task.GameID != "waiting" || task.Version != 2 {
		t.Fatalf("delivered %+v; want game waiting version 2", task)
	}
	clock.Advance(5 * time.Second)
	if task := receive(t, got); task.GameID != "flaky" || task.Version != 2 {
		t.Fatalf("delivered %+v; want game flaky version 2", task)
	}
	waitFor(t, func() bool { return s.idle() && s.Pending() == 0 })
}

// With the workers' queue full, due tasks stay in the heap (and count as
// pending) until there is room.
func TestFullQueueLeavesDueTasksInTheHeap(t *testing.T) {
	gate := make(chan struct{})
	got := make(chan service.TimeoutTask, 10)
	s, _ := newFakeWith(t, func(ctx context.Context, task service.TimeoutTask) error {
		got <- task
		<-gate
		return nil
	}, Options{Workers: 1, QueueSize: 1})
	var openGate sync.Once
	t.Cleanup(func() { openGate.Do(func() { close(gate) }) })
	for _, id := range []string{"a", "b", "c"} {
		mustSchedule(t, s, service.TimeoutTask{GameID: id, Version: 1, Deadline: epoch})
	}
	receive(t, got)
	waitFor(t, func() bool { return s.Pending() == 2 })
	s.mu.Lock()
	inHeap := len(s.queue)
	s.mu.Unlock()
	if inHeap != 2 {
		t.Errorf("%d tasks in the heap; want 2 (the queue holds only the running one)", inHeap)
	}
	openGate.Do(func() { close(gate) })
	receive(t, got)
	receive(t, got)
	waitFor(t, func() bool { return s.idle() && s.Pending() == 0 })
}
