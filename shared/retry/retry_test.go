package retry

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// sleeps is a Sleep that records the waits instead of sleeping; after
// stopAfter waits (0: never) it reports context.Canceled.
type sleeps struct {
	waits     []time.Duration
	stopAfter int
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	if s.stopAfter > 0 && len(s.waits) >= s.stopAfter {
		return context.Canceled
	}
	return ctx.Err()
}

func TestDelay(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		want []time.Duration // after failures 1, 2, ...
	}{
		{"doubling", Policy{Base: time.Second}, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{"capped", Policy{Base: time.Second, Max: 3 * time.Second}, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}},
		{"max below base", Policy{Base: 2 * time.Second, Max: time.Second}, []time.Duration{time.Second, time.Second}},
		{"at once", Policy{Attempts: 8}, []time.Duration{0, 0, 0}},
		{"full jitter at its lowest", Policy{Base: time.Second, Jitter: 1, Rand: func() float64 { return 0 }}, []time.Duration{0, 0}},
		{"half jitter at its lowest", Policy{Base: time.Second, Jitter: 0.5, Rand: func() float64 { return 0 }}, []time.Duration{500 * time.Millisecond, time.Second}},
		{"half jitter in the middle", Policy{Base: time.Second, Jitter: 0.5, Rand: func() float64 { return 0.5 }}, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond}},
		{"a source out of range is clamped", Policy{Base: time.Second, Jitter: 0.5, Rand: func() float64 { return 7 }}, []time.Duration{time.Second, 2 * time.Second}},
		{"jitter above 1 is 1", Policy{Base: time.Second, Jitter: 3, Rand: func() float64 { return 0.25 }}, []time.Duration{250 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i, want := range tt.want {
				if got := tt.p.Delay(i + 1); got != want {
					t.Errorf("Delay(%d) = %v; want %v", i+1, got, want)
				}
			}
		})
	}
}

func TestDelayNeverOverflows(t *testing.T) {
	p := Policy{Base: time.Hour}
	for _, n := range []int{10, 40, 100, 1 << 20} {
		if d := p.Delay(n); d <= 0 {
			t.Fatalf("Delay(%d) = %v; want a positive wait", n, d)
		}
	}
}

func TestJitterStaysInItsRange(t *testing.T) {
	p := Policy{Base: 100 * time.Millisecond, Jitter: 0.5}
	for range 1000 {
		if d := p.Delay(1); d < 50*time.Millisecond || d >= 100*time.Millisecond {
			t.Fatalf("Delay(1) = %v; want in [50ms, 100ms)", d)
		}
	}
}

func TestDoSucceedsAfterFailures(t *testing.T) {
	var sl sleeps
	var retried []int
	p := Policy{Attempts: 5, Base: 10 * time.Millisecond, Sleep: sl.sleep,
		OnRetry: func(attempt int, err error, wait time.Duration) { retried = append(retried, attempt) }}
	var seen []int
	err := p.Do(context.Background(), func(attempt int) error {
		seen = append(seen, attempt)
		if attempt < 3 {
			return errors.New("flaky")
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Do = %v; want nil", err)
	}
	if want := []int{1, 2, 3}; !slices.Equal(seen, want) {
		t.Errorf("attempts %v; want %v", seen, want)
	}
	if want := []int{1, 2}; !slices.Equal(retried, want) {
		t.Errorf("OnRetry told of %v; want %v", retried, want)
	}
	if want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}; !slices.Equal(sl.waits, want) {
		t.Errorf("waits %v; want %v", sl.waits, want)
	}
}

func TestDoGivesUpAfterTheAttempts(t *testing.T) {
	var sl sleeps
	boom := errors.New("store unavailable")
	calls := 0
	err := Policy{Attempts: 3, Base: time.Second, Sleep: sl.sleep}.Do(context.Background(), func(int) error {
		calls++
		return boom
	})
	var re *Error
	if !errors.As(err, &re) || re.Attempts != 3 || re.Stopped != nil || !errors.Is(err, boom) {
		t.Fatalf("Do = %v; want an *Error after 3 attempts wrapping the last error", err)
	}
	if calls != 3 || len(sl.waits) != 2 {
		t.Errorf("%d calls, %d waits; want 3 and 2 (no wait after the last)", calls, len(sl.waits))
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "retry: 3 attempts: ") || !strings.Contains(msg, "store unavailable") {
		t.Errorf("message %q", msg)
	}
}

func TestDoStopsOnAPermanentError(t *testing.T) {
	gone := errors.New("gone")
	calls := 0
	err := Policy{Attempts: 10, Sleep: (&sleeps{}).sleep}.Do(context.Background(), func(int) error {
		calls++
		if calls == 2 {
			return Permanent(gone)
		}
		return errors.New("again")
	})
	if err != gone { // unwrapped: callers may compare it
		t.Fatalf("Do = %v; want the permanent error itself", err)
	}
	if calls != 2 {
		t.Errorf("%d calls; want 2", calls)
	}
}

func TestDoStopsWhenTheContextEnds(t *testing.T) {
	sl := sleeps{stopAfter: 2}
	boom := errors.New("throttled")
	calls := 0
	err := Policy{Attempts: Unlimited, Sleep: sl.sleep}.Do(context.Background(), func(int) error {
		calls++
		return boom
	})
	var re *Error
	if !errors.As(err, &re) || !errors.Is(err, context.Canceled) || !errors.Is(err, boom) || re.Attempts != 2 {
		t.Fatalf("Do = %v; want an *Error wrapping the last error and context.Canceled after 2 attempts", err)
	}
	if calls != 2 {
		t.Errorf("%d calls; want 2", calls)
	}
}

// With the real timer, a canceled context ends the wait at once, also for a
// policy that retries without waiting.
func TestDoWithTheRealTimer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Policy{Attempts: 8}.Do(ctx, func(int) error {
		calls++
		if calls == 2 {
			cancel()
		}
		return errors.New("conflict")
	})
	if !errors.Is(err, context.Canceled) || calls != 2 {
		t.Fatalf("Do = %v after %d calls; want context.Canceled after 2", err, calls)
	}
	start := time.Now()
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	err = Policy{Attempts: 2, Base: time.Hour}.Do(ctx, func(int) error { return errors.New("x") })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v; want context.Canceled", err)
	}
	if time.Since(start) > time.Minute {
		t.Fatal("the wait did not end with the context")
	}
	if err := (Policy{Attempts: 2, Base: time.Microsecond}).Do(context.Background(), func(n int) error {
		if n == 1 {
			return errors.New("once")
		}
		return nil
	}); err != nil {
		t.Fatalf("Do with a short real wait = %v", err)
	}
}

func TestZeroPolicyTriesOnce(t *testing.T) {
	calls := 0
	err := Policy{}.Do(context.Background(), func(int) error { calls++; return errors.New("no") })
	if calls != 1 || err == nil {
		t.Fatalf("zero Policy: %d calls, %v; want 1 call and its error", calls, err)
	}
	if !(Policy{}).IsZero() || (Policy{Attempts: 1}).IsZero() || AITurn.IsZero() {
		t.Error("IsZero is wrong")
	}
}

func TestRetryable(t *testing.T) {
	p := Policy{Attempts: 3}
	boom := errors.New("boom")
	for _, tt := range []struct {
		n    int
		err  error
		want bool
	}{
		{1, boom, true}, {2, boom, true}, {3, boom, false},
		{1, nil, false}, {1, Permanent(boom), false},
	} {
		if got := p.Retryable(tt.n, tt.err); got != tt.want {
			t.Errorf("Retryable(%d, %v) = %v; want %v", tt.n, tt.err, got, tt.want)
		}
	}
	if !(Policy{Attempts: Unlimited}).Retryable(1_000_000, boom) {
		t.Error("Unlimited gave up")
	}
	if (Policy{}).Retryable(1, boom) {
		t.Error("the zero Policy retries")
	}
}

func TestPermanent(t *testing.T) {
	if Permanent(nil) != nil {
		t.Error("Permanent(nil) != nil")
	}
	base := errors.New("base")
	if err := Permanent(base); !errors.Is(err, base) || !IsPermanent(err) || err.Error() != "base" {
		t.Errorf("Permanent(base) = %v", err)
	}
	if IsPermanent(base) {
		t.Error("IsPermanent of an unmarked error")
	}
}

func TestWithAttemptsAndBase(t *testing.T) {
	p := Effect.WithAttempts(2).WithBase(time.Millisecond)
	if p.Attempts != 2 || p.Base != time.Millisecond || p.Jitter != Effect.Jitter {
		t.Errorf("adjusted policy %+v", p)
	}
	if q := Effect.WithAttempts(0).WithBase(0); q.Attempts != Effect.Attempts || q.Base != Effect.Base {
		t.Errorf("zero adjustments changed the policy: %+v", q)
	}
}

// The named policies keep the bounds the loops they replaced had.
func TestNamedPolicies(t *testing.T) {
	noJitter := func(p Policy) Policy { p.Jitter = 0; return p }
	tests := []struct {
		name     string
		p        Policy
		attempts int
		waits    []time.Duration
	}{
		{"GameWrite", GameWrite, 8, []time.Duration{0, 0}},
		{"PlayerWrite", noJitter(PlayerWrite), 24, []time.Duration{2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, 16 * time.Millisecond, 32 * time.Millisecond, 64 * time.Millisecond, 100 * time.Millisecond}},
		{"Effect", noJitter(Effect), 4, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"EffectBacklog", EffectBacklog, Unlimited, []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, 64 * time.Second, 128 * time.Second, 256 * time.Second, 5 * time.Minute, 5 * time.Minute}},
		{"AITurn", AITurn, 5, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second}},
		{"Timeout", Timeout, 8, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute}},
		{"ConnectionPost", noJitter(ConnectionPost), 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"QuickPair", noJitter(QuickPair), 40, []time.Duration{20 * time.Millisecond, 20 * time.Millisecond}},
	}
	for _, tt := range tests {
		if tt.p.Attempts != tt.attempts {
			t.Errorf("%s.Attempts = %d; want %d", tt.name, tt.p.Attempts, tt.attempts)
		}
		for i, want := range tt.waits {
			if got := tt.p.Delay(i + 1); got != want {
				t.Errorf("%s.Delay(%d) = %v; want %v", tt.name, i+1, got, want)
			}
		}
	}
}
