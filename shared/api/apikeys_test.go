package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/apikey"
)

// keysFixture is a handler whose AI endpoint requires keys from a memory
// store, counted on a memory counter, on a clock of its own; its logs
// (debug and up) are kept.
type keysFixture struct {
	api   *testAPI
	store *apikey.MemoryStore
	clock *fakeclock.Clock
	logs  *syncBuffer
}

// keysNoon is the checker's clock: 12:00:00.400 UTC, 12 h to midnight.
var keysNoon = time.Date(2026, 11, 29, 12, 0, 0, 400_000_000, time.UTC)

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newKeysFixture(t *testing.T, opts apikey.Options) *keysFixture {
	t.Helper()
	f := &keysFixture{store: apikey.NewMemoryStore(), clock: fakeclock.New(keysNoon), logs: &syncBuffer{}}
	if opts.Store == nil {
		opts.Store = f.store
	}
	if opts.Counter == nil {
		opts.Counter = apikey.NewMemoryCounter()
	}
	opts.Now = f.clock.Now
	checker, err := apikey.NewChecker(opts)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.api = newTestAPI(t, func(d *Deps) { d.AIKeys = checker; d.Logger = log })
	return f
}

// addKey stores a new key with limits; revoked keys are revoked at once.
func (f *keysFixture) addKey(t *testing.T, limits apikey.Limits, revoked bool) string {
	t.Helper()
	k, rec, err := apikey.NewRecord(rand.Reader, "partner", limits, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.store.PutAPIKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if revoked {
		if _, _, err := f.store.RevokeAPIKey(context.Background(), rec.ID, f.clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	return k.String()
}

// aiMove asks for a depth-1 move with the key (none when "") in lang.
func (f *keysFixture) aiMove(key string, lang Lang) response {
	h := http.Header{}
	if key != "" {
		h.Set("X-Api-Key", key)
	}
	if lang == English {
		h.Set("Accept-Language", "en")
	}
	return f.api.doHeaders("POST", "/v1/ai/move", h, map[string]any{"depth": 1})
}

// checkRefusal: the answer is status/code with the catalogue's text in
// lang, and says nothing of the key.
func checkRefusal(t *testing.T, r response, status int, code string, lang Lang, key string) {
	t.Helper()
	got, field := r.errorCode()
	msg, _ := r.json["error"].(map[string]any)["message"].(string)
	if r.status != status || got != code || field != "" || msg != catalogue(lang).codes[code] || r.header.Get("Content-Language") != lang.String() {
		t.Errorf("%d %s %q (field %q, %s); want %d %s in %s", r.status, got, msg, field, r.header.Get("Content-Language"), status, code, lang)
	}
	if key != "" && bytes.Contains(r.body, []byte(key)) {
		t.Errorf("the answer quotes the key: %s", r.body)
	}
}

func TestAIMoveKeyRefusals(t *testing.T) {
	f := newKeysFixture(t, apikey.Options{})
	good := f.addKey(t, apikey.DefaultLimits, false)
	revoked := f.addKey(t, apikey.DefaultLimits, true)
	unknown, _ := apikey.Generate(rand.Reader)
	wrongSecret := good[:len(good)-4] + "aaaa"
	if wrongSecret == good {
		wrongSecret = good[:len(good)-4] + "qaaa"
	}
	for _, lang := range []Lang{Korean, English} {
		for name, key := range map[string]string{
			"missing": "", "malformed": "sekret", "unknown": unknown.String(), "wrong secret": wrongSecret,
			"revoked": revoked, "good key with a blank": good + " ",
		} {
			t.Run(lang.String()+"/"+name, func(t *testing.T) {
				checkRefusal(t, f.aiMove(key, lang), http.StatusUnauthorized, "invalid_api_key", lang, key)
			})
		}
	}
	f.aiMove(good, Korean).expect(t, http.StatusOK)
	if logs := f.logs.String(); strings.Contains(logs, good[len("ak_")+apikey.IDLen+1:]) || strings.Contains(logs, revoked[len("ak_")+apikey.IDLen+1:]) {
		t.Errorf("a key's secret is in the logs:\n%s", logs)
	}
	if logs := f.logs.String(); !strings.Contains(logs, `"reason":"apikey: invalid API key: revoked"`) {
		t.Errorf("the refusal of the revoked key is not logged with its reason:\n%s", logs)
	}
}

// TestAIMoveKeyCheckedFirst: without a key, a bad body is still 401: the
// body is not read (nor searched) for an unauthenticated caller.
func TestAIMoveKeyCheckedFirst(t *testing.T) {
	f := newKeysFixture(t, apikey.Options{})
	r := f.api.doHeaders("POST", "/v1/ai/move", nil, "{not json")
	checkRefusal(t, r, http.StatusUnauthorized, "invalid_api_key", Korean, "")
}

func TestAIMoveRateLimit(t *testing.T) {
	f := newKeysFixture(t, apikey.Options{})
	key := f.addKey(t, apikey.Limits{PerSecond: 2, PerDay: 100}, false)
	for _, lang := range []Lang{Korean, English} {
		f.aiMove(key, lang).expect(t, http.StatusOK)
		f.aiMove(key, lang).expect(t, http.StatusOK)
		r := f.aiMove(key, lang)
		checkRefusal(t, r, http.StatusTooManyRequests, "rate_limited", lang, key)
		if ra := r.header.Get("Retry-After"); ra != "1" {
			t.Errorf("%s: Retry-After %q; want 1 (the rest of the second)", lang, ra)
		}
		f.clock.Advance(time.Second) // the next second
	}
}

func TestAIMoveDailyQuota(t *testing.T) {
	f := newKeysFixture(t, apikey.Options{})
	key := f.addKey(t, apikey.Limits{PerSecond: 10, PerDay: 3}, false)
	other := f.addKey(t, apikey.Limits{PerSecond: 10, PerDay: 3}, false)
	for range 3 {
		f.aiMove(key, Korean).expect(t, http.StatusOK)
	}
	f.clock.Advance(6 * time.Hour) // 18:00:00.400: 6 h less 0.4 s to midnight
	r := f.aiMove(key, English)
	checkRefusal(t, r, http.StatusTooManyRequests, "rate_limited", English, key)
	if ra := r.header.Get("Retry-After"); ra != "21600" {
		t.Errorf("Retry-After %q; want 21600 (to UTC midnight, rounded up)", ra)
	}
	f.aiMove(other, English).expect(t, http.StatusOK) // the other key has its own quota
	f.clock.Set(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC))
	f.aiMove(key, English).expect(t, http.StatusOK)
}

func TestAIMoveWithoutKeyStore(t *testing.T) {
	c, err := apikey.NewChecker(apikey.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := newTestAPI(t, func(d *Deps) { d.AIKeys = c })
	k, _ := apikey.Generate(rand.Reader)
	r := a.doHeaders("POST", "/v1/ai/move", http.Header{"X-Api-Key": {k.String()}}, map[string]any{"depth": 1})
	checkRefusal(t, r, http.StatusServiceUnavailable, "unavailable", Korean, k.String())
	r = a.doHeaders("POST", "/v1/ai/move", nil, map[string]any{"depth": 1})
	checkRefusal(t, r, http.StatusUnauthorized, "invalid_api_key", Korean, "")
}

// brokenKeys fails every read, with the id in its error as the stores do.
type brokenKeys struct{ *apikey.MemoryStore }

func (brokenKeys) APIKey(_ context.Context, id string) (apikey.Record, error) {
	return apikey.Record{}, errors.New("store down reading " + id)
}

// TestAIMoveKeyStoreFailure: a store failure is a 500 whose text stays in
// the log (which then has the key's id, never its secret).
func TestAIMoveKeyStoreFailure(t *testing.T) {
	f := newKeysFixture(t, apikey.Options{Store: brokenKeys{apikey.NewMemoryStore()}})
	k, _ := apikey.Generate(rand.Reader)
	r := f.aiMove(k.String(), English)
	checkRefusal(t, r, http.StatusInternalServerError, "internal", English, k.String())
	logs := f.logs.String()
	if !strings.Contains(logs, "store down reading "+k.ID) {
		t.Errorf("the failure is not logged:\n%s", logs)
	}
	if strings.Contains(logs, k.String()[len("ak_")+apikey.IDLen+1:]) {
		t.Errorf("the key's secret is in the logs:\n%s", logs)
	}
}

// TestRetryAfterRoundsUp: any limit error's wait becomes whole seconds,
// at least one.
func TestRetryAfterRoundsUp(t *testing.T) {
	for wait, want := range map[time.Duration]string{time.Millisecond: "1", time.Second: "1", 1500 * time.Millisecond: "2", 24 * time.Hour: "86400"} {
		d := describe(&apikey.LimitError{Wait: wait}, English)
		rec := httptest.NewRecorder()
		writeError(rec, d)
		if got := rec.Header().Get("Retry-After"); d.Status != http.StatusTooManyRequests || got != want {
			t.Errorf("wait %s: %d Retry-After %q; want 429 and %q", wait, d.Status, got, want)
		}
	}
	rec := httptest.NewRecorder()
	writeError(rec, describe(errBadAPIKey, English))
	if got := rec.Header().Get("Retry-After"); got != "" {
		t.Errorf("a 401 has Retry-After %q", got)
	}
}

// contractKeys is a checker on a memory store and counter with a stopped
// clock, holding one key that allows one request a second and 100 a day;
// it returns the checker and the key (the catalogue's cases).
func contractKeys() (AIKeyChecker, string) {
	store := apikey.NewMemoryStore()
	k, rec, err := apikey.NewRecord(rand.Reader, "contract", apikey.Limits{PerSecond: 1, PerDay: 100}, keysNoon)
	if err == nil {
		err = store.PutAPIKey(context.Background(), rec)
	}
	checker, cerr := apikey.NewChecker(apikey.Options{Store: store, Counter: apikey.NewMemoryCounter(), Now: func() time.Time { return keysNoon }})
	if err != nil || cerr != nil {
		panic(errors.Join(err, cerr)) // a memory store and counter cannot fail
	}
	return checker, k.String()
}

// TestAIMoveInFlightLimit: a key's requests in flight elsewhere (another
// instance holds its leases) refuse the next one 429 with Retry-After 1;
// a request answered here releases its own, so requests one after the
// other never pile up against the limit.
func TestAIMoveInFlightLimit(t *testing.T) {
	leases := apikey.NewMemoryLeases()
	f := newKeysFixture(t, apikey.Options{Leases: leases})
	key := f.addKey(t, apikey.Limits{PerSecond: 10, PerDay: 100, InFlight: 1}, false)
	for range 3 {
		f.aiMove(key, Korean).expect(t, http.StatusOK)
	}
	k, _ := apikey.Parse(key)
	now := f.clock.Now()
	if err := leases.AcquireLease(context.Background(), apikey.InFlightPrefix+k.ID, "other-instance", 1, now.Add(time.Minute), now); err != nil {
		t.Fatal(err)
	}
	r := f.aiMove(key, English)
	checkRefusal(t, r, http.StatusTooManyRequests, "rate_limited", English, key)
	if ra := r.header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q; want 1", ra)
	}
	if err := leases.ReleaseLease(context.Background(), apikey.InFlightPrefix+k.ID, "other-instance"); err != nil {
		t.Fatal(err)
	}
	f.aiMove(key, English).expect(t, http.StatusOK)
}

// throttledTable is a key table that DynamoDB throttles: every count
// fails with an error that says when to retry (dynamostore.ThrottledError).
type throttledTable struct{}

func (throttledTable) Hit(context.Context, string, time.Duration, time.Time) (int64, time.Time, error) {
	return 0, time.Time{}, throttleErr{}
}

type throttleErr struct{}

func (throttleErr) Error() string             { return "ProvisionedThroughputExceededException" }
func (throttleErr) RetryAfter() time.Duration { return 2 * time.Second }

// TestAIMoveThrottledKeyTable: a throttled counter write is 429 with
// Retry-After, never a 500.
func TestAIMoveThrottledKeyTable(t *testing.T) {
	f := newKeysFixture(t, apikey.Options{Counter: throttledTable{}})
	key := f.addKey(t, apikey.DefaultLimits, false)
	r := f.aiMove(key, English)
	checkRefusal(t, r, http.StatusTooManyRequests, "rate_limited", English, key)
	if ra := r.header.Get("Retry-After"); ra != "2" {
		t.Errorf("Retry-After %q; want 2", ra)
	}
}
