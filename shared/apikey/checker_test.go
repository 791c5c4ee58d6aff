package apikey

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
)

// checkerFixture is a checker on a memory store and counter with a fixed
// clock, and one key in the store.
type checkerFixture struct {
	store   *MemoryStore
	counter *MemoryCounter
	clock   *fakeclock.Clock
	checker *Checker
	key     Key
	rec     Record
}

// start is 10:00:00.250 UTC: a quarter second into a second, 14 h into a day.
var start = time.Date(2026, 11, 29, 10, 0, 0, 250_000_000, time.UTC)

func newCheckerFixture(t *testing.T, limits Limits) *checkerFixture {
	t.Helper()
	f := &checkerFixture{store: NewMemoryStore(), counter: NewMemoryCounter(), clock: fakeclock.New(start)}
	var err error
	f.checker, err = NewChecker(Options{Store: f.store, Counter: f.counter, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f.key, f.rec = f.add(t, "partner", limits)
	return f
}

func (f *checkerFixture) add(t *testing.T, name string, limits Limits) (Key, Record) {
	t.Helper()
	k, rec, err := NewRecord(rand.Reader, name, limits, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.PutAPIKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return k, rec
}

func (f *checkerFixture) check(text string) (string, error) {
	return checkOnce(f.checker, text)
}

// checkOnce admits one request and releases it at once (a request
// answered before the next one comes).
func checkOnce(c *Checker, text string) (string, error) {
	a, err := c.Admit(context.Background(), text)
	if err == nil {
		if rerr := a.Release(context.Background()); rerr != nil {
			return a.KeyID, rerr
		}
	}
	return a.KeyID, err
}

func TestCheckAccepts(t *testing.T) {
	f := newCheckerFixture(t, DefaultLimits)
	id, err := f.check(f.key.String())
	if err != nil || id != f.key.ID {
		t.Fatalf("Check(valid key) = %q, %v; want %q, nil", id, err, f.key.ID)
	}
}

func TestCheckRefusesInvalidKeys(t *testing.T) {
	f := newCheckerFixture(t, DefaultLimits)
	other, _ := Generate(rand.Reader)
	// Same id, another secret: the stored hash does not match.
	forged, err := Parse("ak_" + f.key.ID + "_" + other.String()[len("ak_")+IDLen+1:])
	if err != nil {
		t.Fatal(err)
	}
	revokedKey, revoked := f.add(t, "former partner", DefaultLimits)
	if _, _, err := f.store.RevokeAPIKey(context.Background(), revoked.ID, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		want       error
		wantID     string
	}{
		{"missing", "", ErrMissing, ""},
		{"malformed", "sample-partner-key-5f2c9e1a7b3d", ErrMalformed, ""},
		{"blank around", " " + f.key.String() + " ", ErrMalformed, ""},
		{"unknown id", other.String(), ErrUnknown, other.ID},
		{"wrong secret", forged.String(), ErrWrongSecret, f.key.ID},
		{"revoked", revokedKey.String(), ErrRevoked, revoked.ID},
	}
	for _, tt := range tests {
		id, err := f.check(tt.text)
		if !errors.Is(err, tt.want) || !errors.Is(err, ErrInvalidKey) || id != tt.wantID {
			t.Errorf("%s: Check = %q, %v; want %q, %v (an ErrInvalidKey)", tt.name, id, err, tt.wantID, tt.want)
		}
		if err != nil && tt.text != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.text)) {
			t.Errorf("%s: the error %q contains the presented key", tt.name, err)
		}
	}
	// Refused keys use no counts: the valid key still has its full rate.
	for i := range DefaultLimits.PerSecond {
		if _, err := f.check(f.key.String()); err != nil {
			t.Fatalf("request %d of the valid key: %v", i+1, err)
		}
	}
}

// TestRevocationTakesEffectAtOnce: a key that worked is refused on the
// next request after its revocation.
func TestRevocationTakesEffectAtOnce(t *testing.T) {
	f := newCheckerFixture(t, DefaultLimits)
	if _, err := f.check(f.key.String()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.store.RevokeAPIKey(context.Background(), f.key.ID, f.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.check(f.key.String()); !errors.Is(err, ErrRevoked) {
		t.Errorf("after revocation: %v; want ErrRevoked", err)
	}
}

func limitError(t *testing.T, err error, limit string) *LimitError {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != limit {
		t.Fatalf("err = %v; want a %s LimitError", err, limit)
	}
	return le
}

// TestRate: PerSecond requests pass in one second, the next is refused
// with a wait to the next second; the next second passes again.
func TestRate(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 3, PerDay: 100})
	for i := range 3 {
		if _, err := f.check(f.key.String()); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	f.clock.Advance(700 * time.Millisecond) // 10:00:00.950, same second
	_, err := f.check(f.key.String())
	le := limitError(t, err, "perSecond")
	if le.Max != 3 || le.KeyID != f.key.ID || le.Wait != time.Second || le.RetryAfter() != time.Second ||
		!le.WindowEnd.Equal(time.Date(2026, 11, 29, 10, 0, 1, 0, time.UTC)) {
		t.Errorf("rate limit = %+v; want max 3, wait 1 s, window end 10:00:01", le)
	}
	f.clock.Advance(50 * time.Millisecond) // 10:00:01.000: a new window
	for i := range 3 {
		if _, err := f.check(f.key.String()); err != nil {
			t.Fatalf("next second, request %d: %v", i+1, err)
		}
	}
}

// TestRateRefusalsDoNotUseQuota: requests refused by the rate are not
// counted against the day.
func TestRateRefusalsDoNotUseQuota(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 1, PerDay: 3})
	passed := 0
	for range 3 { // three seconds, five requests each: one passes per second
		for range 5 {
			if _, err := f.check(f.key.String()); err == nil {
				passed++
			} else {
				limitError(t, err, "perSecond")
			}
		}
		f.clock.Advance(time.Second)
	}
	if passed != 3 {
		t.Fatalf("%d passed; want 3 (one a second)", passed)
	}
	_, err := f.check(f.key.String())
	limitError(t, err, "perDay")
}

// TestDailyQuota: PerDay requests pass over the day, then every request
// is refused with Retry-After to UTC midnight, until the next day.
func TestDailyQuota(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 10, PerDay: 5})
	for i := range 5 {
		if _, err := f.check(f.key.String()); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		f.clock.Advance(time.Hour)
	}
	// 15:00:00.250: 8 h 59 min 59.75 s to midnight, rounded up.
	_, err := f.check(f.key.String())
	le := limitError(t, err, "perDay")
	midnight := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if want := 9 * time.Hour; le.Wait != want || !le.WindowEnd.Equal(midnight) || le.Max != 5 {
		t.Errorf("quota = %+v; want wait %s to %s", le, want, midnight)
	}
	f.clock.Set(midnight.Add(-time.Millisecond)) // 23:59:59.999: still refused, wait 1 s
	_, err = f.check(f.key.String())
	if le := limitError(t, err, "perDay"); le.Wait != time.Second {
		t.Errorf("a millisecond before midnight: wait %s; want 1s", le.Wait)
	}
	f.clock.Set(midnight) // the next day
	if _, err := f.check(f.key.String()); err != nil {
		t.Fatalf("the next day: %v", err)
	}
}

// TestKeysHaveTheirOwnLimits: one key's use does not count against another.
func TestKeysHaveTheirOwnLimits(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 1, PerDay: 1})
	second, _ := f.add(t, "second partner", Limits{PerSecond: 2, PerDay: 2})
	if _, err := f.check(f.key.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.check(f.key.String()); err == nil {
		t.Fatal("the first key's second request passed")
	}
	for i := range 2 {
		if _, err := f.check(second.String()); err != nil {
			t.Fatalf("second key, request %d: %v", i+1, err)
		}
	}
}

func TestWaitUntil(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range []struct{ d, want time.Duration }{
		{0, time.Second}, {-time.Second, time.Second}, {time.Nanosecond, time.Second}, {time.Second, time.Second},
		{time.Second + time.Nanosecond, 2 * time.Second}, {24 * time.Hour, 24 * time.Hour},
	} {
		if got := WaitUntil(now, now.Add(tt.d)); got != tt.want {
			t.Errorf("WaitUntil(+%s) = %s; want %s", tt.d, got, tt.want)
		}
	}
}

func TestBootstrapKey(t *testing.T) {
	counter := NewMemoryCounter()
	clock := fakeclock.New(start)
	c, err := NewChecker(Options{Counter: counter, Bootstrap: "sample-partner-key-5f2c9e1a7b3d", BootstrapLimits: Limits{PerSecond: 2, PerDay: 10}, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if id, err := checkOnce(c, "sample-partner-key-5f2c9e1a7b3d"); err != nil || id != BootstrapID {
			t.Fatalf("bootstrap request %d: %q, %v", i+1, id, err)
		}
	}
	_, err = checkOnce(c, "sample-partner-key-5f2c9e1a7b3d")
	limitError(t, err, "perSecond")
	// Without a store, other texts are wrong or unknown, never ErrNoKeys.
	for text, want := range map[string]error{"sample-partner-key-5f2c9e1a7b3": ErrMalformed, "": ErrMissing} {
		if _, err := checkOnce(c, text); !errors.Is(err, want) {
			t.Errorf("Check(%q) = %v; want %v", text, err, want)
		}
	}
	k, _ := Generate(rand.Reader)
	if _, err := checkOnce(c, k.String()); !errors.Is(err, ErrUnknown) {
		t.Errorf("a well-formed key without a store: %v; want ErrUnknown", err)
	}
	// Zero limits are the defaults.
	c, err = NewChecker(Options{Counter: counter, Bootstrap: "k", Now: clock.Now})
	if err != nil || c.bootstrap.Limits != DefaultLimits {
		t.Errorf("bootstrap without limits: %+v, %v; want DefaultLimits", c, err)
	}
	if _, err := NewChecker(Options{Counter: counter, Bootstrap: "k", BootstrapLimits: Limits{PerSecond: 0, PerDay: 5}}); err == nil || !strings.Contains(err.Error(), "perSecond") {
		t.Errorf("bootstrap with bad limits: %v; want a perSecond error", err)
	}
}

func TestCheckerWithoutKeys(t *testing.T) {
	c, err := NewChecker(Options{})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := Generate(rand.Reader)
	if _, err := checkOnce(c, ""); !errors.Is(err, ErrMissing) {
		t.Errorf("no key: %v; want ErrMissing", err)
	}
	if _, err := checkOnce(c, "nonsense"); !errors.Is(err, ErrMalformed) {
		t.Errorf("malformed: %v; want ErrMalformed", err)
	}
	if _, err := checkOnce(c, k.String()); !errors.Is(err, ErrNoKeys) || errors.Is(err, ErrInvalidKey) {
		t.Errorf("well-formed key, nowhere to look: %v; want ErrNoKeys (not an invalid key)", err)
	}
	if _, err := NewChecker(Options{Store: NewMemoryStore()}); err == nil {
		t.Error("a checker with a store and no counter was made")
	}
	if _, err := NewChecker(Options{Bootstrap: "k"}); err == nil {
		t.Error("a checker with a bootstrap key and no counter was made")
	}
}

// failingStore and failingCounter fail every call.
type failingStore struct{ *MemoryStore }

func (*failingStore) APIKey(context.Context, string) (Record, error) {
	return Record{}, errors.New("table unavailable")
}

type failingCounter struct{}

func (failingCounter) Hit(context.Context, string, time.Duration, time.Time) (int64, time.Time, error) {
	return 0, time.Time{}, errors.New("throttled")
}

// TestCheckFailsClosed: when the store or the counter fails the request
// is refused with that failure (not as an invalid key, not let through).
func TestCheckFailsClosed(t *testing.T) {
	f := newCheckerFixture(t, DefaultLimits)
	c, _ := NewChecker(Options{Store: &failingStore{f.store}, Counter: f.counter})
	if _, err := checkOnce(c, f.key.String()); err == nil || errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), "table unavailable") {
		t.Errorf("store failure: %v", err)
	}
	c, _ = NewChecker(Options{Store: f.store, Counter: failingCounter{}})
	if _, err := checkOnce(c, f.key.String()); err == nil || !strings.Contains(err.Error(), "throttled") {
		t.Errorf("counter failure: %v", err)
	}
}

// TestConcurrentChecksAreExact: many goroutines on one key in one second
// and one day: exactly the limit passes (run with -race). The in-flight
// limit is as wide as the goroutines: a request it refuses has counted
// against the quota (docs/api-keys.md), which would leave fewer than the
// quota passing, by chance.
func TestConcurrentChecksAreExact(t *testing.T) {
	f := newCheckerFixture(t, Limits{PerSecond: 1000, PerDay: 37, InFlight: 16})
	var passed, limited atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 10 {
				_, err := f.check(f.key.String())
				var le *LimitError
				switch {
				case err == nil:
					passed.Add(1)
				case errors.As(err, &le):
					limited.Add(1)
				default:
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if passed.Load() != 37 || limited.Load() != 160-37 {
		t.Errorf("passed %d, limited %d; want 37 and %d", passed.Load(), limited.Load(), 160-37)
	}
}

func TestMemoryCounterWindows(t *testing.T) {
	c := NewMemoryCounter()
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 23, 59, 59, 900_000_000, time.UTC)
	n, end, err := c.Hit(ctx, "k", time.Second, at)
	if err != nil || n != 1 || !end.Equal(at.Truncate(time.Second).Add(time.Second)) {
		t.Fatalf("first hit = %d, %s, %v", n, end, err)
	}
	n, _, _ = c.Hit(ctx, "k", time.Second, at.Add(50*time.Millisecond))
	if n != 2 {
		t.Errorf("same second: %d; want 2", n)
	}
	n, _, _ = c.Hit(ctx, "k", time.Second, at.Add(100*time.Millisecond))
	if n != 1 {
		t.Errorf("next second: %d; want 1", n)
	}
	if len(c.counts) != 1 {
		t.Errorf("%d windows kept; the ended one should be dropped", len(c.counts))
	}
	n, end, _ = c.Hit(ctx, "k", 24*time.Hour, at)
	if n != 1 || !end.Equal(time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("day window: %d ending %s; want 1 ending at UTC midnight", n, end)
	}
	before := time.Date(1969, 12, 31, 23, 59, 59, 500_000_000, time.UTC)
	if _, end, _ := c.Hit(ctx, "k", time.Second, before); !end.Equal(time.Unix(0, 0)) {
		t.Errorf("window before the epoch ends %s; want the epoch", end)
	}
	if _, _, err := c.Hit(ctx, "k", 0, at); !errors.Is(err, ErrBadWindow) {
		t.Errorf("zero window: %v", err)
	}
}

func TestRecordValidation(t *testing.T) {
	k, rec, err := NewRecord(rand.Reader, "파트너 A", DefaultLimits, start)
	if err != nil || rec.Validate() != nil || !k.Matches(rec.Hash) || !rec.CreatedAt.Equal(start.Truncate(time.Millisecond)) {
		t.Fatalf("NewRecord = %+v, %v", rec, err)
	}
	for _, tt := range []struct {
		name   string
		limits Limits
		field  string
	}{
		{"", DefaultLimits, "name"},
		{"line\nbreak", DefaultLimits, "name"},
		{strings.Repeat("가", MaxNameLen+1), DefaultLimits, "name"},
		{"\xff", DefaultLimits, "name"},
		{"p", Limits{PerSecond: 0, PerDay: 1}, "perSecond"},
		{"p", Limits{PerSecond: MaxPerSecond + 1, PerDay: 1}, "perSecond"},
		{"p", Limits{PerSecond: 1, PerDay: 0}, "perDay"},
		{"p", Limits{PerSecond: 1, PerDay: MaxPerDay + 1}, "perDay"},
	} {
		_, _, err := NewRecord(rand.Reader, tt.name, tt.limits, start)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("NewRecord(%q, %+v) = %v; want a %s error", tt.name, tt.limits, err, tt.field)
		}
	}
	if _, _, err := NewRecord(rand.Reader, strings.Repeat("가", MaxNameLen), DefaultLimits, start); err != nil {
		t.Errorf("a name of %d characters: %v", MaxNameLen, err)
	}
	bad := rec
	bad.ID = "bootstrap"
	if err := bad.Validate(); err == nil {
		t.Error("a record with id bootstrap validated")
	}
}

// BenchmarkCheck: the checker's own cost per request (parse, hash,
// constant-time compare, two counter hits) on the memory store and
// counter; the stores add their round trips.
func BenchmarkCheck(b *testing.B) {
	store, counter := NewMemoryStore(), NewMemoryCounter()
	k, rec, _ := NewRecord(rand.Reader, "bench", Limits{PerSecond: MaxPerSecond, PerDay: MaxPerDay}, start)
	if err := store.PutAPIKey(context.Background(), rec); err != nil {
		b.Fatal(err)
	}
	// A clock that moves a millisecond a call keeps the rate under its limit.
	now := start
	c, _ := NewChecker(Options{Store: store, Counter: counter, Now: func() time.Time { now = now.Add(time.Millisecond); return now }})
	text := k.String()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := checkOnce(c, text); err != nil {
			b.Fatal(err)
		}
	}
}
