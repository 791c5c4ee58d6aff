package apikey

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestInFlightLimit: a key holds at most its in-flight limit of admitted,
// unreleased requests; the next is refused 429-style (a LimitError with a
// second to wait) until one is released, and a refusal leaves the rate
// and the day's quota as they were.
func TestInFlightLimit(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 10, PerDay: 100, InFlight: 2})
	ctx := context.Background()
	var held []Admission
	for i := range 2 {
		a, err := f.checker.Admit(ctx, f.key.String())
		if err != nil || a.KeyID != f.key.ID {
			t.Fatalf("request %d: %+v, %v", i+1, a, err)
		}
		held = append(held, a)
	}
	_, err := f.checker.Admit(ctx, f.key.String())
	le := limitError(t, err, "inFlight")
	if le.Max != 2 || le.Wait != time.Second || le.RetryAfter() != time.Second || !strings.Contains(le.Error(), "in flight") {
		t.Errorf("in-flight refusal = %+v (%v); want max 2, retry in 1 s", le, le)
	}
	if err := held[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
	a, err := f.checker.Admit(ctx, f.key.String())
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	// Three admitted and one refused (by the in-flight limit, after the
	// counters) used four of the second's ten.
	if n, _, _ := f.counter.Hit(ctx, RateCounterPrefix+f.key.ID, time.Second, f.clock.Now()); n != 5 {
		t.Errorf("rate count after 4 requests and this hit = %d; want 5", n)
	}
	for _, a := range []Admission{held[1], a} {
		if err := a.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Releasing twice, or a refused admission's zero value, is harmless.
	if err := held[1].Release(ctx); err != nil {
		t.Errorf("second release: %v", err)
	}
	if err := (Admission{}).Release(ctx); err != nil {
		t.Errorf("release of no admission: %v", err)
	}
}

// TestInFlightLeaseExpires: a lease whose holder never releases it (an
// instance killed mid-request) ends at its TTL.
func TestInFlightLeaseExpires(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 10, PerDay: 100, InFlight: 1})
	ctx := context.Background()
	if _, err := f.checker.Admit(ctx, f.key.String()); err != nil { // never released
		t.Fatal(err)
	}
	f.clock.Advance(DefaultLeaseTTL - time.Millisecond)
	_, err := f.checker.Admit(ctx, f.key.String())
	limitError(t, err, "inFlight")
	f.clock.Advance(time.Millisecond)
	if _, err := f.checker.Admit(ctx, f.key.String()); err != nil {
		t.Errorf("at the lease's end: %v; want it free", err)
	}
}

// TestInFlightDefault: a key stored without an in-flight limit (InFlight
// 0, as records written before it existed) gets DefaultInFlight.
func TestInFlightDefault(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 10, PerDay: 100})
	for i := range DefaultInFlight {
		if _, err := f.checker.Admit(context.Background(), f.key.String()); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	_, err := f.checker.Admit(context.Background(), f.key.String())
	if le := limitError(t, err, "inFlight"); le.Max != DefaultInFlight {
		t.Errorf("max %d; want %d", le.Max, DefaultInFlight)
	}
}

// TestInFlightConcurrent: many goroutines admitting and releasing on one
// key never hold more than its limit at once (run with -race).
func TestInFlightConcurrent(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: MaxPerSecond, PerDay: MaxPerDay, InFlight: 3})
	var inside, most, refused atomic.Int64
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			for range 50 {
				a, err := f.checker.Admit(context.Background(), f.key.String())
				var le *LimitError
				if errors.As(err, &le) && le.Limit == "inFlight" {
					refused.Add(1)
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				inside.Add(-1)
				if err := a.Release(context.Background()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if most.Load() > 3 {
		t.Errorf("%d requests of the key were in flight at once; the limit is 3", most.Load())
	}
}

// TestRefusedRequestsDoNotCount: with a LimitedCounter a refused request
// counts nothing, so the window's count stays at the limit however many
// are refused (and a later window starts from zero); with a plain Counter
// the count passes the limit but the same requests are refused.
func TestRefusedRequestsDoNotCount(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 2, PerDay: 100})
	for range 10 {
		_, _ = f.check(f.key.String())
	}
	n, _, counted, err := f.counter.HitUnder(context.Background(), RateCounterPrefix+f.key.ID, time.Second, 1000, f.clock.Now())
	if err != nil || !counted || n != 3 {
		t.Errorf("after 2 admitted and 8 refused the rate count is %d (then this hit); want 2", n-1)
	}
	// The day's count has only the two admitted requests.
	if n, _, _, _ := f.counter.HitUnder(context.Background(), DailyCounterPrefix+f.key.ID, 24*time.Hour, 1000, f.clock.Now()); n != 3 {
		t.Errorf("day count = %d (with this hit); want 3", n)
	}

	plain := plainCounter{NewMemoryCounter()}
	c, err := NewChecker(Options{Store: f.store, Counter: plain, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Second)
	passed := 0
	for range 5 {
		if _, err := checkOnce(c, f.key.String()); err == nil {
			passed++
		}
	}
	if passed != 2 {
		t.Errorf("plain counter: %d passed; want 2", passed)
	}
}

// plainCounter hides MemoryCounter's HitUnder and its leases: a Counter
// and nothing else (the local server's embedded store is one).
type plainCounter struct{ c *MemoryCounter }

func (p plainCounter) Hit(ctx context.Context, key string, window time.Duration, now time.Time) (int64, time.Time, error) {
	return p.c.Hit(ctx, key, window, now)
}

// retryable is a store failure that says when to retry (a throttled
// table, dynamostore.ThrottledError).
type retryable struct{}

func (retryable) Error() string             { return "throttled" }
func (retryable) RetryAfter() time.Duration { return time.Second }

type throttledLeases struct{}

func (throttledLeases) AcquireLease(context.Context, string, string, int64, time.Time, time.Time) error {
	return retryable{}
}
func (throttledLeases) ReleaseLease(context.Context, string, string) error { return retryable{} }

// TestFailuresKeepTheirRetryAfter: a throttled lease or counter keeps
// saying when to retry through the checker's wrapping, so the API answers
// it with Retry-After rather than as an internal error.
func TestFailuresKeepTheirRetryAfter(t *testing.T) {
	f := newCheckerFixture(t, DefaultLimits)
	c, err := NewChecker(Options{Store: f.store, Counter: f.counter, Leases: throttledLeases{}, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Admit(context.Background(), f.key.String())
	var later interface{ RetryAfter() time.Duration }
	if !errors.As(err, &later) || later.RetryAfter() != time.Second {
		t.Errorf("throttled lease: %v; want an error with RetryAfter", err)
	}
	c, _ = NewChecker(Options{Store: f.store, Counter: throttledCounter{}, Now: f.clock.Now})
	if _, err = c.Admit(context.Background(), f.key.String()); !errors.As(err, &later) {
		t.Errorf("throttled counter: %v; want an error with RetryAfter", err)
	}
}

type throttledCounter struct{}

func (throttledCounter) Hit(context.Context, string, time.Duration, time.Time) (int64, time.Time, error) {
	return 0, time.Time{}, retryable{}
}

func TestMemoryLeases(t *testing.T) {
	l := NewMemoryLeases()
	ctx := context.Background()
	now := start
	if err := l.AcquireLease(ctx, "k", "a", 1, now.Add(time.Second), now); err != nil {
		t.Fatal(err)
	}
	if err := l.AcquireLease(ctx, "k", "b", 1, now.Add(time.Second), now); !errors.Is(err, ErrLeasesTaken) {
		t.Errorf("second lease of 1: %v; want ErrLeasesTaken", err)
	}
	if err := l.AcquireLease(ctx, "other", "b", 1, now.Add(time.Second), now); err != nil {
		t.Errorf("another key: %v", err)
	}
	if err := l.AcquireLease(ctx, "k", "b", 1, now.Add(2*time.Second), now.Add(time.Second)); err != nil {
		t.Errorf("after a's lease ended: %v", err)
	}
	if err := l.ReleaseLease(ctx, "k", "a"); err != nil { // ended already
		t.Error(err)
	}
	if err := l.ReleaseLease(ctx, "k", "b"); err != nil {
		t.Error(err)
	}
	if len(l.held["k"]) != 0 {
		t.Errorf("leases left: %v", l.held)
	}
}

func TestInFlightValidation(t *testing.T) {
	for _, n := range []int64{-1, MaxInFlight + 1} {
		err := Limits{PerSecond: 1, PerDay: 1, InFlight: n}.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "inFlight" {
			t.Errorf("InFlight %d: %v; want an inFlight FieldError", n, err)
		}
	}
	for _, n := range []int64{0, 1, MaxInFlight} {
		if err := (Limits{PerSecond: 1, PerDay: 1, InFlight: n}).Validate(); err != nil {
			t.Errorf("InFlight %d: %v", n, err)
		}
	}
	if _, err := NewChecker(Options{Counter: NewMemoryCounter(), Bootstrap: "k", LeaseTTL: -time.Second}); err == nil {
		t.Error("a negative lease TTL was accepted")
	}
}
