package workqueue

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/shared/retry"
)

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

func textLogger(buf *syncBuffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%s: not reached within 5s", what)
}

// gatedSleep is a retry wait that ends when the test releases it (or the
// context ends), recording each wait asked for.
type gatedSleep struct {
	mu      sync.Mutex
	waits   []time.Duration
	release chan struct{}
}

func newGatedSleep() *gatedSleep { return &gatedSleep{release: make(chan struct{}, 100)} }

func (g *gatedSleep) sleep(ctx context.Context, d time.Duration) error {
	g.mu.Lock()
	g.waits = append(g.waits, d)
	g.mu.Unlock()
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *gatedSleep) asked() []time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]time.Duration(nil), g.waits...)
}

// outcome collects Done calls.
type outcome struct {
	mu   sync.Mutex
	errs map[string]error
}

func newOutcome() *outcome { return &outcome{errs: map[string]error{}} }

func (o *outcome) done(key string) func(error) {
	return func(err error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		if _, twice := o.errs[key]; twice {
			panic("Done called twice for " + key)
		}
		o.errs[key] = err
	}
}

func (o *outcome) get(key string) (error, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	err, ok := o.errs[key]
	return err, ok
}

func mustAdd(t *testing.T, q *Queue[string], key string, job Job) {
	t.Helper()
	if added, err := q.Add(key, job); err != nil || !added {
		t.Fatalf("Add(%q) = %v, %v; want true, nil", key, added, err)
	}
}

func TestRunsJobsAndReportsTheirOutcome(t *testing.T) {
	q := New[string](Options{Name: "test job", Workers: 2, Logger: slog.New(slog.DiscardHandler)})
	defer q.Close(time.Second)
	out := newOutcome()
	boom := errors.New("boom")
	mustAdd(t, q, "ok", Job{Run: func(context.Context) error { return nil }, Done: out.done("ok")})
	mustAdd(t, q, "bad", Job{Run: func(context.Context) error { return boom }, Done: out.done("bad")})
	waitFor(t, "both done", func() bool { return q.Stats().Accepted == 0 })
	if err, ok := out.get("ok"); !ok || err != nil {
		t.Errorf("Done of ok = %v (called %v); want nil", err, ok)
	}
	if err, ok := out.get("bad"); !ok || !errors.Is(err, boom) {
		t.Errorf("Done of bad = %v (called %v); want boom (the zero Policy runs once)", err, ok)
	}
	if _, err := q.Add("nil", Job{}); err == nil {
		t.Error("Add of a job without Run = nil error")
	}
}

func TestDuplicateKeysAreCoalesced(t *testing.T) {
	release := make(chan struct{})
	var runs atomic.Int32
	q := New[string](Options{Workers: 1, Logger: slog.New(slog.DiscardHandler)})
	defer q.Close(time.Second)
	job := Job{Run: func(ctx context.Context) error {
		runs.Add(1)
		<-release
		return nil
	}}
	mustAdd(t, q, "running", job)
	waitFor(t, "first job running", func() bool { return q.Stats().Running == 1 })
	mustAdd(t, q, "queued", job)
	for _, key := range []string{"running", "queued", "queued"} {
		if added, err := q.Add(key, job); added || err != nil {
			t.Errorf("Add(%q) again = %v, %v; want false, nil", key, added, err)
		}
	}
	if s := q.Stats(); s.Accepted != 2 || s.Running != 1 || s.Queued != 1 {
		t.Errorf("Stats = %+v; want 2 accepted, 1 running, 1 queued", s)
	}
	close(release)
	waitFor(t, "drained", func() bool { return q.Stats().Accepted == 0 })
	if n := runs.Load(); n != 2 {
		t.Errorf("%d runs; want 2", n)
	}
	mustAdd(t, q, "running", job) // finished: its key is free again
}

func TestCapacityAndWaitRoom(t *testing.T) {
	release := make(chan struct{})
	q := New[string](Options{Workers: 1, Capacity: 2, Logger: slog.New(slog.DiscardHandler)})
	defer q.Close(time.Second)
	job := Job{Run: func(ctx context.Context) error { <-release; return nil }}
	mustAdd(t, q, "a", job)
	mustAdd(t, q, "b", job)
	if _, err := q.Add("c", job); !errors.Is(err, ErrFull) {
		t.Fatalf("Add on a full queue = %v; want ErrFull", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := q.WaitRoom(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitRoom on a full queue = %v; want the context's error", err)
	}
	roomed := make(chan error, 1)
	go func() { roomed <- q.WaitRoom(context.Background()) }()
	release <- struct{}{} // a finishes
	if err := <-roomed; err != nil {
		t.Fatalf("WaitRoom after a job finished = %v", err)
	}
	mustAdd(t, q, "c", job)
	close(release)
}

func TestFailedJobsAreRetriedOffTheWorkers(t *testing.T) {
	logs := &syncBuffer{}
	sl := newGatedSleep()
	var flakyRuns atomic.Int32
	otherRan := make(chan struct{})
	q := New[string](Options{
		Name: "test job", Workers: 1, Logger: textLogger(logs),
		Retry: retry.Policy{Attempts: 5, Base: time.Second, Max: 3 * time.Second, Sleep: sl.sleep},
	})
	defer q.Close(time.Second)
	out := newOutcome()
	mustAdd(t, q, "flaky", Job{Attrs: []any{"game", "g1"}, Done: out.done("flaky"), Run: func(context.Context) error {
		if flakyRuns.Add(1) < 4 {
			return errors.New("store unavailable")
		}
		return nil
	}})
	waitFor(t, "first retry waiting", func() bool { return len(sl.asked()) == 1 })
	if s := q.Stats(); s.Retrying != 1 || s.Running != 0 || s.Accepted != 1 {
		t.Errorf("Stats while retrying = %+v; want 1 accepted, retrying", s)
	}
	// The only worker is free during the wait: another job runs.
	mustAdd(t, q, "other", Job{Run: func(context.Context) error { close(otherRan); return nil }})
	select {
	case <-otherRan:
	case <-time.After(5 * time.Second):
		t.Fatal("a job waited for another's retry")
	}
	for i := 2; i <= 3; i++ {
		sl.release <- struct{}{}
		waitFor(t, "next retry waiting", func() bool { return len(sl.asked()) == i })
	}
	sl.release <- struct{}{}
	waitFor(t, "flaky done", func() bool { _, ok := out.get("flaky"); return ok })
	if err, _ := out.get("flaky"); err != nil {
		t.Errorf("Done of flaky = %v; want nil after its fourth run", err)
	}
	if got, want := sl.asked(), []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("retry waits %v; want %v", got, want)
	}
	if s := logs.String(); strings.Count(s, "test job failed; retrying") != 3 || !strings.Contains(s, "game=g1") || !strings.Contains(s, "store unavailable") || !strings.Contains(s, "retryIn=") {
		t.Errorf("retries not logged with the job's attributes and the error:\n%s", s)
	}
}

func TestLastAttemptAndPermanentErrorsEndTheJob(t *testing.T) {
	logs := &syncBuffer{}
	var brokenRuns, refusedRuns atomic.Int32
	q := New[string](Options{
		Name: "test job", Logger: textLogger(logs), GiveUp: "someone else picks it up",
		Retry: retry.Policy{Attempts: 3, Base: time.Microsecond},
	})
	defer q.Close(time.Second)
	out := newOutcome()
	refused := errors.New("refused")
	mustAdd(t, q, "broken", Job{Attrs: []any{"game", "broken"}, Done: out.done("broken"), Run: func(context.Context) error {
		brokenRuns.Add(1)
		return errors.New("engine refuses")
	}})
	mustAdd(t, q, "refused", Job{Done: out.done("refused"), Run: func(context.Context) error {
		refusedRuns.Add(1)
		return retry.Permanent(refused)
	}})
	waitFor(t, "both done", func() bool { return q.Stats().Accepted == 0 })
	if n := brokenRuns.Load(); n != 3 {
		t.Errorf("broken ran %d times; want Attempts = 3", n)
	}
	if n := refusedRuns.Load(); n != 1 {
		t.Errorf("a permanent error ran %d times; want 1", n)
	}
	if err, _ := out.get("refused"); !errors.Is(err, refused) {
		t.Errorf("Done of refused = %v; want the permanent error", err)
	}
	s := logs.String()
	if !strings.Contains(s, "level=ERROR") || !strings.Contains(s, "test job failed for the last time; someone else picks it up") || !strings.Contains(s, "game=broken") {
		t.Errorf("giving up not logged as an error with the job and what becomes of it:\n%s", s)
	}
}

func TestPanicsAreRecoveredLoggedAndRetried(t *testing.T) {
	logs := &syncBuffer{}
	var calls atomic.Int32
	q := New[string](Options{Name: "AI turn", Logger: textLogger(logs), Retry: retry.Policy{Attempts: 2, Base: time.Microsecond}})
	defer q.Close(time.Second)
	out := newOutcome()
	mustAdd(t, q, "cursed", Job{Attrs: []any{"game", "cursed", "version", 5}, Done: out.done("cursed"), Run: func(context.Context) error {
		if calls.Add(1) == 1 {
			var board []int
			_ = board[3] // a real runtime panic
		}
		return nil
	}})
	waitFor(t, "done", func() bool { _, ok := out.get("cursed"); return ok })
	if err, _ := out.get("cursed"); err != nil || calls.Load() != 2 {
		t.Errorf("after a panic: Done = %v after %d runs; want nil after 2", err, calls.Load())
	}
	for _, want := range []string{"AI turn panicked", "game=cursed", "version=5", "index out of range", "goroutine"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
}

func TestConcurrencyIsBoundedByWorkers(t *testing.T) {
	const workers, jobs = 3, 100
	var active, peak, done atomic.Int32
	gate := make(chan struct{})
	q := New[int](Options{Workers: workers, Logger: slog.New(slog.DiscardHandler)})
	defer q.Close(time.Second)
	var openGate sync.Once
	defer openGate.Do(func() { close(gate) })
	for i := range jobs {
		if _, err := q.Add(i, Job{Run: func(context.Context) error {
			n := active.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			<-gate
			active.Add(-1)
			done.Add(1)
			return nil
		}}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "workers busy", func() bool { return active.Load() >= workers })
	time.Sleep(20 * time.Millisecond) // room for jobs beyond the bound to start
	if n := active.Load(); n != workers {
		t.Fatalf("%d jobs running at once; want %d", n, workers)
	}
	openGate.Do(func() { close(gate) })
	waitFor(t, "all done", func() bool { return done.Load() == jobs })
	if p := peak.Load(); p > workers {
		t.Fatalf("peak %d jobs at once; want at most %d", p, workers)
	}
}

// Close with a drain waits for queued jobs and for retries, not only the
// running ones.
func TestCloseDrainsQueuedAndRetriedJobs(t *testing.T) {
	var ran atomic.Int32
	var failedOnce atomic.Bool
	q := New[string](Options{Workers: 1, Logger: slog.New(slog.DiscardHandler), Retry: retry.Policy{Attempts: 3, Base: 10 * time.Millisecond}})
	for _, key := range []string{"retry", "a", "b"} {
		mustAdd(t, q, key, Job{Run: func(context.Context) error {
			time.Sleep(5 * time.Millisecond)
			if key == "retry" && failedOnce.CompareAndSwap(false, true) {
				return errors.New("first run fails")
			}
			ran.Add(1)
			return nil
		}})
	}
	q.Close(5 * time.Second)
	if n := ran.Load(); n != 3 {
		t.Errorf("%d jobs succeeded before Close returned; want 3", n)
	}
	if _, err := q.Add("late", Job{Run: func(context.Context) error { return nil }}); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close = %v; want ErrClosed", err)
	}
	if err := q.WaitRoom(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitRoom after Close = %v; want ErrClosed", err)
	}
	q.Close(time.Second) // a second Close does nothing
}

// Close without a drain abandons at once: the running job's context is
// canceled and it is not retried, the queued job and the pending retry are
// dropped, every Done is called, and no goroutine is left behind.
func TestCloseAbandonsWithoutLeaks(t *testing.T) {
	before := runtime.NumGoroutine()
	logs := &syncBuffer{}
	sl := newGatedSleep()
	q := New[string](Options{Name: "test job", Workers: 1, Logger: textLogger(logs), Abandon: "re-armed at the next start",
		Retry: retry.Policy{Attempts: 5, Base: time.Hour, Sleep: sl.sleep}})
	out := newOutcome()
	started := make(chan struct{})
	var busyRuns atomic.Int32
	mustAdd(t, q, "waiting", Job{Done: out.done("waiting"), Run: func(context.Context) error { return errors.New("fails") }})
	waitFor(t, "retry pending", func() bool { return q.Stats().Retrying == 1 })
	mustAdd(t, q, "busy", Job{Done: out.done("busy"), Run: func(ctx context.Context) error {
		busyRuns.Add(1)
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}})
	<-started
	mustAdd(t, q, "queued", Job{Done: out.done("queued"), Run: func(context.Context) error { t.Error("queued job ran after Close"); return nil }})
	q.Close(0)
	for key, want := range map[string]error{"busy": context.Canceled, "queued": ErrAbandoned, "waiting": ErrAbandoned} {
		if err, ok := out.get(key); !ok || !errors.Is(err, want) {
			t.Errorf("Done of %s = %v (called %v); want %v", key, err, ok, want)
		}
	}
	if n := busyRuns.Load(); n != 1 {
		t.Errorf("the canceled job ran %d times; want 1 (not retried)", n)
	}
	for _, want := range []string{"test job failed at shutdown; re-armed at the next start", "test job dropped at shutdown", "test job retry dropped at shutdown"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	for i := 0; ; i++ {
		if n := runtime.NumGoroutine(); n <= before {
			break
		} else if i == 100 {
			t.Fatalf("goroutines: %d before New, %d after Close", before, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
