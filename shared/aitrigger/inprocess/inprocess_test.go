package inprocess

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/shared/retry"
	"chessapi/shared/service"
)

// testLogger sends the trigger's log to the test log and to buf (when
// non-nil) for checks.
func testLogger(t *testing.T, buf *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(logWriter{t: t, buf: buf}, nil))
}

type logWriter struct {
	t   *testing.T
	buf *syncBuffer
}

func (w logWriter) Write(p []byte) (int, error) {
	if w.buf != nil {
		w.buf.Write(p)
	}
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

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

func TestTriggerRunsAndDrains(t *testing.T) {
	var ran atomic.Int32
	tr := New(func(ctx context.Context, task service.AITask) error {
		time.Sleep(20 * time.Millisecond)
		ran.Add(1)
		return nil
	}, Options{Logger: testLogger(t, nil)})
	for i := 0; i < 5; i++ {
		if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "g", Version: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	tr.Close(5 * time.Second)
	if n := ran.Load(); n != 5 {
		t.Errorf("ran %d turns before Close returned; want 5", n)
	}
	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "g", Version: 9}); !errors.Is(err, ErrClosed) {
		t.Errorf("trigger after Close = %v; want ErrClosed", err)
	}
	tr.Close(time.Second) // a second Close does nothing
}

func TestCloseCancelsSlowTurns(t *testing.T) {
	started := make(chan struct{})
	tr := New(func(ctx context.Context, task service.AITask) error {
		close(started)
		<-ctx.Done()
		return ctx.Err()
	}, Options{Logger: testLogger(t, nil)})
	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "g"}); err != nil {
		t.Fatal(err)
	}
	<-started
	start := time.Now()
	tr.Close(50 * time.Millisecond)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %v", took)
	}
}

// The request that triggers the AI ends (and cancels its context) long
// before the AI has moved; the turn must not inherit that cancellation.
func TestTurnDoesNotUseTheCallersContext(t *testing.T) {
	got := make(chan error, 1)
	tr := New(func(ctx context.Context, task service.AITask) error {
		got <- ctx.Err()
		return nil
	}, Options{Logger: testLogger(t, nil)})
	defer tr.Close(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tr.TriggerAI(ctx, service.AITask{GameID: "g", Version: 1}); err != nil {
		t.Fatalf("TriggerAI with a canceled context = %v", err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("turn context error = %v; want a live context", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("turn did not run")
	}
}

// A panic in a turn is logged with the game, the turn is retried, and the
// process and the other turns carry on.
func TestPanicIsLoggedAndRetried(t *testing.T) {
	logs := &syncBuffer{}
	var calls atomic.Int32
	succeeded := make(chan service.AITask, 2)
	tr := New(func(ctx context.Context, task service.AITask) error {
		if task.GameID == "cursed" && calls.Add(1) == 1 {
			var board []int
			_ = board[3] // a real runtime panic
		}
		succeeded <- task
		return nil
	}, Options{Workers: 1, Retry: retry.Policy{Attempts: 5, Base: time.Millisecond}, Logger: testLogger(t, logs)})
	defer tr.Close(time.Second)
	for _, task := range []service.AITask{{GameID: "cursed", Version: 5}, {GameID: "fine", Version: 2}} {
		if err := tr.TriggerAI(context.Background(), task); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for range 2 {
		select {
		case task := <-succeeded:
			seen[task.GameID] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("turns that succeeded: %v; want cursed (on its retry) and fine", seen)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("game cursed ran %d times; want 2 (the panic, then the retry)", n)
	}
	out := logs.String()
	for _, want := range []string{"AI turn panicked", "game=cursed", "version=5", "index out of range", "goroutine"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// Failing runs are retried after the policy's Base, then twice that, and
// so on up to its Attempts.
func TestErrorsAreRetriedWithBackoff(t *testing.T) {
	const first = 20 * time.Millisecond
	logs := &syncBuffer{}
	var mu sync.Mutex
	var runs []time.Time
	tr := New(func(ctx context.Context, task service.AITask) error {
		mu.Lock()
		defer mu.Unlock()
		runs = append(runs, time.Now())
		if task.GameID == "flaky" && len(runs) < 3 {
			return errors.New("store unavailable")
		}
		if task.GameID == "broken" {
			return errors.New("engine refuses")
		}
		return nil
	}, Options{Retry: retry.Policy{Attempts: 3, Base: first}, Logger: testLogger(t, logs)})
	defer tr.Close(time.Second)

	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "flaky", Version: 1}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "flaky turn done", func() bool { return tr.unfinishedTurns() == 0 })
	mu.Lock()
	flaky := append([]time.Time(nil), runs...)
	runs = nil
	mu.Unlock()
	if len(flaky) != 3 {
		t.Fatalf("flaky turn ran %d times; want 3 (two failures, then success)", len(flaky))
	}
	if gap := flaky[1].Sub(flaky[0]); gap < first {
		t.Errorf("first retry after %v; want ≥ %v", gap, first)
	}
	if gap := flaky[2].Sub(flaky[1]); gap < 2*first {
		t.Errorf("second retry after %v; want ≥ %v (doubled)", gap, 2*first)
	}

	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "broken", Version: 1}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "broken turn given up", func() bool { return tr.unfinishedTurns() == 0 })
	mu.Lock()
	n := len(runs)
	mu.Unlock()
	if n != 3 {
		t.Errorf("broken turn ran %d times; want the policy's Attempts = 3", n)
	}
	out := logs.String()
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "game=flaky") || !strings.Contains(out, "store unavailable") {
		t.Errorf("retries not logged with the game and the error:\n%s", out)
	}
	if !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "game=broken") {
		t.Errorf("giving up not logged as an error with the game:\n%s", out)
	}
}

func TestConcurrencyIsBounded(t *testing.T) {
	const workers, turns = 3, 200
	var active, peak, done atomic.Int32
	gate := make(chan struct{})
	tr := New(func(ctx context.Context, task service.AITask) error {
		n := active.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-gate
		active.Add(-1)
		done.Add(1)
		return nil
	}, Options{Workers: workers, Logger: testLogger(t, nil)})
	defer tr.Close(time.Second)
	var openGate sync.Once
	defer openGate.Do(func() { close(gate) }) // before Close, which waits for the turns
	for i := range turns {
		if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "g", Version: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "workers busy", func() bool { return active.Load() >= workers })
	time.Sleep(20 * time.Millisecond) // room for turns beyond the bound to start
	if n := active.Load(); n != workers {
		t.Fatalf("%d turns running at once; want %d", n, workers)
	}
	openGate.Do(func() { close(gate) })
	waitFor(t, "all turns done", func() bool { return done.Load() == turns })
	if p := peak.Load(); p > workers {
		t.Fatalf("peak %d turns at once; want at most %d", p, workers)
	}
}

func TestQueueFull(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 3) // one per run
	tr := New(func(ctx context.Context, task service.AITask) error {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done(): // Close after a failed check
		}
		return nil
	}, Options{Workers: 1, QueueSize: 2, Logger: testLogger(t, nil)})
	defer tr.Close(time.Second)
	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "a", Version: 1}); err != nil {
		t.Fatal(err)
	}
	<-started // a runs, b waits: the queue holds two unfinished turns
	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "b", Version: 1}); err != nil {
		t.Fatal(err)
	}
	err := tr.TriggerAI(context.Background(), service.AITask{GameID: "c", Version: 1})
	if !errors.Is(err, ErrQueueFull) || !strings.Contains(err.Error(), "game c ") {
		t.Fatalf("TriggerAI on a full queue = %v; want an error naming game c wrapping ErrQueueFull", err)
	}
	close(release)
	waitFor(t, "queue drained", func() bool { return tr.unfinishedTurns() == 0 })
	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "c", Version: 1}); err != nil {
		t.Errorf("TriggerAI after the queue drained = %v", err)
	}
}

// The same (game, version) triggered again while queued or running (the
// move's trigger, then the deadline check's) runs once.
func TestDuplicatesAreCoalesced(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	count := map[service.AITask]int{}
	tr := New(func(ctx context.Context, task service.AITask) error {
		mu.Lock()
		count[task]++
		mu.Unlock()
		select {
		case <-release:
		case <-ctx.Done(): // Close after a failed check
		}
		return nil
	}, Options{Workers: 1, Logger: testLogger(t, nil)})
	defer tr.Close(time.Second)
	running := service.AITask{GameID: "g", Version: 3}
	queued := service.AITask{GameID: "h", Version: 7}
	for _, task := range []service.AITask{running, queued, running, queued, queued} {
		if err := tr.TriggerAI(context.Background(), task); err != nil {
			t.Fatal(err)
		}
	}
	if n := tr.unfinishedTurns(); n != 2 {
		t.Errorf("%d turns accepted; want 2", n)
	}
	close(release)
	waitFor(t, "turns done", func() bool { return tr.unfinishedTurns() == 0 })
	mu.Lock()
	defer mu.Unlock()
	if count[running] != 1 || count[queued] != 1 {
		t.Errorf("runs per turn = %v; want 1 each", count)
	}
}

// Close waits for queued turns and for retries, not only running ones.
func TestCloseWaitsForQueuedAndRetriedTurns(t *testing.T) {
	var ran atomic.Int32
	var failedOnce atomic.Bool
	tr := New(func(ctx context.Context, task service.AITask) error {
		time.Sleep(10 * time.Millisecond)
		if task.GameID == "retry" && failedOnce.CompareAndSwap(false, true) {
			return errors.New("first run fails")
		}
		ran.Add(1)
		return nil
	}, Options{Workers: 1, Retry: retry.Policy{Attempts: 5, Base: 10 * time.Millisecond}, Logger: testLogger(t, nil)})
	for _, task := range []service.AITask{{GameID: "retry", Version: 1}, {GameID: "a", Version: 1}, {GameID: "b", Version: 1}} {
		if err := tr.TriggerAI(context.Background(), task); err != nil {
			t.Fatal(err)
		}
	}
	tr.Close(5 * time.Second)
	if n := ran.Load(); n != 3 {
		t.Errorf("%d turns succeeded before Close returned; want 3", n)
	}
}

// unfinishedTurns is the number of accepted turns not yet finished.
func (t *Trigger) unfinishedTurns() int { return t.turns.Stats().Accepted }
