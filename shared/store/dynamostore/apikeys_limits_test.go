package dynamostore_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/internal/fakeclock"
	"chessapi/shared/apikey"
	"chessapi/shared/store/dynamostore"
)

// TestAPIKeyLimitsAgainstEmulators: the data table's conditional counters
// and in-flight leases on moto and dynalite, through two checkers on two
// clients of one table (two Lambda instances, in effect).
func TestAPIKeyLimitsAgainstEmulators(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the emulators; skipped with -short")
	}
	for _, kind := range emulators {
		t.Run(string(kind), func(t *testing.T) {
			endpoint := emulatortest.Start(t, kind)
			t.Run("InFlightAcrossCheckers", func(t *testing.T) { testInFlightAcrossCheckers(t, endpoint) })
			t.Run("InFlightRace", func(t *testing.T) { testInFlightRace(t, endpoint) })
			t.Run("RefusedRequestsWriteNothing", func(t *testing.T) { testRefusedWriteNothing(t, endpoint) })
			t.Run("ThrottledIsRetryAfter", func(t *testing.T) { testThrottled(t, endpoint) })
		})
	}
}

// twoCheckers are two checkers, each on a client of its own, on one new
// data table holding one key with limits.
func twoCheckers(t *testing.T, endpoint string, limits apikey.Limits, clock *fakeclock.Clock) ([2]*apikey.Checker, apikey.Key, string) {
	t.Helper()
	table := emulatortest.NewDataTable(t, endpoint)
	var out [2]*apikey.Checker
	var k apikey.Key
	for i := range out {
		d, err := dynamostore.NewData(dynamodb.NewFromConfig(emulator.Config(endpoint)), table)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			var rec apikey.Record
			if k, rec, err = apikey.NewRecord(rand.Reader, "partner", limits, clock.Now()); err != nil {
				t.Fatal(err)
			}
			if err := d.PutAPIKey(t.Context(), rec); err != nil {
				t.Fatal(err)
			}
		}
		if out[i], err = apikey.NewChecker(apikey.Options{Store: d, Counter: d, Now: clock.Now}); err != nil {
			t.Fatal(err)
		}
	}
	return out, k, table
}

func wantInFlightRefusal(t *testing.T, err error, max int64) {
	t.Helper()
	var le *apikey.LimitError
	if !errors.As(err, &le) || le.Limit != "inFlight" || le.Max != max || le.RetryAfter() != time.Second {
		t.Fatalf("err = %v; want an inFlight LimitError of %d, retry in 1 s", err, max)
	}
}

// testInFlightAcrossCheckers: leases taken through either checker count
// against the one limit; a release frees a slot for the other; a lease
// never released ends at its TTL.
func testInFlightAcrossCheckers(t *testing.T, endpoint string) {
	clock := fakeclock.New(time.Now().Truncate(time.Second))
	c, k, _ := twoCheckers(t, endpoint, apikey.Limits{PerSecond: 100, PerDay: 1000, InFlight: 3}, clock)
	ctx := t.Context()
	var held []apikey.Admission
	for i := range 3 {
		a, err := c[i%2].Admit(ctx, k.String())
		if err != nil {
			t.Fatalf("admission %d: %v", i+1, err)
		}
		held = append(held, a)
	}
	for i := range 2 {
		_, err := c[i].Admit(ctx, k.String())
		wantInFlightRefusal(t, err, 3)
	}
	if err := held[1].Release(ctx); err != nil { // taken through the second checker
		t.Fatal(err)
	}
	a, err := c[0].Admit(ctx, k.String())
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx); err != nil {
		t.Errorf("second release: %v", err)
	}
	// held[0] and held[2] are never released (their instances died):
	// at the TTL they stop counting, and the expired entries are removed
	// by the next admission.
	clock.Advance(apikey.DefaultLeaseTTL)
	for i := range 3 {
		if _, err := c[1].Admit(ctx, k.String()); err != nil {
			t.Fatalf("after the TTL, admission %d: %v", i+1, err)
		}
	}
	_, err = c[0].Admit(ctx, k.String())
	wantInFlightRefusal(t, err, 3)
}

// testInFlightRace: instances racing for the leases of one key never hold
// more than its limit at once (the version condition), and every request
// is either admitted or refused as over the limit.
func testInFlightRace(t *testing.T, endpoint string) {
	clock := fakeclock.New(time.Now())
	c, k, _ := twoCheckers(t, endpoint, apikey.Limits{PerSecond: apikey.MaxPerSecond, PerDay: apikey.MaxPerDay, InFlight: 2}, clock)
	var inside, most, admitted atomic.Int64
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			for range 6 {
				a, err := c[i%2].Admit(context.Background(), k.String())
				var le *apikey.LimitError
				var th *dynamostore.ThrottledError
				switch {
				case errors.As(err, &le) && le.Limit == "inFlight", errors.As(err, &th):
					continue // refused, or the lease item contended: retry later
				case err != nil:
					t.Error(err)
					return
				}
				admitted.Add(1)
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				inside.Add(-1)
				if err := a.Release(context.Background()); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if most.Load() > 2 || admitted.Load() == 0 {
		t.Errorf("at most %d in flight at once (limit 2), %d admitted in all", most.Load(), admitted.Load())
	}
}

// testRefusedWriteNothing: requests refused by the rate leave the
// counter's item at the limit (no write past it), and the day's count
// holds only the admitted ones.
func testRefusedWriteNothing(t *testing.T, endpoint string) {
	clock := fakeclock.New(time.Date(2026, 11, 29, 10, 0, 0, 100_000_000, time.UTC))
	c, k, table := twoCheckers(t, endpoint, apikey.Limits{PerSecond: 3, PerDay: 1000}, clock)
	admitted := 0
	for i := range 20 {
		a, err := c[i%2].Admit(t.Context(), k.String())
		var le *apikey.LimitError
		switch {
		case err == nil:
			admitted++
			if err := a.Release(t.Context()); err != nil {
				t.Fatal(err)
			}
		case errors.As(err, &le) && le.Limit == "perSecond":
		default:
			t.Fatal(err)
		}
	}
	if admitted != 3 {
		t.Errorf("%d admitted; want 3", admitted)
	}
	client := dynamodb.NewFromConfig(emulator.Config(endpoint))
	counts := map[string]int64{}
	for _, prefix := range []string{apikey.RateCounterPrefix, apikey.DailyCounterPrefix} {
		out, err := client.Scan(t.Context(), &dynamodb.ScanInput{
			TableName:                 aws.String(table),
			FilterExpression:          aws.String("begins_with(pk, :p)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "hit#" + prefix + k.ID + "#"}},
		})
		if err != nil || len(out.Items) != 1 {
			t.Fatalf("counter items of %s: %d, %v; want one", prefix, len(out.Items), err)
		}
		n, _ := out.Items[0]["count"].(*types.AttributeValueMemberN)
		counts[prefix], _ = strconv.ParseInt(n.Value, 10, 64)
	}
	if counts[apikey.RateCounterPrefix] != 3 || counts[apikey.DailyCounterPrefix] != 3 {
		t.Errorf("stored counts %v; want 3 and 3 (the refused 17 wrote nothing)", counts)
	}
}

// throttlingProxy answers every UpdateItem with DynamoDB's throughput
// error while on, passing everything else to the emulator.
type throttlingProxy struct {
	on    atomic.Bool
	calls atomic.Int64
	proxy *httputil.ReverseProxy
}

func (p *throttlingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.on.Load() && strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".UpdateItem") {
		p.calls.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("X-Amzn-ErrorType", "ProvisionedThroughputExceededException")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"The level of configured provisioned throughput for the table was exceeded."}`))
		return
	}
	p.proxy.ServeHTTP(w, r)
}

// testThrottled: a throttled counter or lease write is a
// dynamostore.ThrottledError that says when to retry, through the
// checker's wrapping (the API answers it 429 with Retry-After).
func testThrottled(t *testing.T, endpoint string) {
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	p := &throttlingProxy{proxy: httputil.NewSingleHostReverseProxy(u)}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	table := emulatortest.NewDataTable(t, endpoint)
	// One attempt: the SDK's retries of a throttle are not what is tested.
	client := dynamodb.NewFromConfig(emulator.Config(srv.URL), func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	d, err := dynamostore.NewData(client, table)
	if err != nil {
		t.Fatal(err)
	}
	k, rec, _ := apikey.NewRecord(rand.Reader, "partner", apikey.DefaultLimits, time.Now())
	if err := d.PutAPIKey(t.Context(), rec); err != nil {
		t.Fatal(err)
	}
	c, err := apikey.NewChecker(apikey.Options{Store: d, Counter: d})
	if err != nil {
		t.Fatal(err)
	}
	p.on.Store(true)
	_, err = c.Admit(t.Context(), k.String())
	var th *dynamostore.ThrottledError
	var later interface{ RetryAfter() time.Duration }
	if !errors.As(err, &th) || !errors.As(err, &later) || later.RetryAfter() != time.Second || p.calls.Load() == 0 {
		t.Errorf("a throttled counter: %v (%d throttled calls); want a ThrottledError with RetryAfter 1 s", err, p.calls.Load())
	}
	// The lease's own write, throttled after the counters passed.
	if _, _, _, err := d.HitUnder(t.Context(), "probe", time.Second, 1, time.Now()); !errors.As(err, &th) {
		t.Errorf("HitUnder throttled: %v", err)
	}
	if err := d.AcquireLease(t.Context(), "probe", "h", 1, time.Now().Add(time.Second), time.Now()); err != nil {
		t.Fatalf("first lease (a PutItem, not throttled): %v", err)
	}
	if err := d.AcquireLease(t.Context(), "probe", "h2", 2, time.Now().Add(time.Second), time.Now()); !errors.As(err, &th) {
		t.Errorf("AcquireLease throttled: %v", err)
	}
	if err := d.ReleaseLease(t.Context(), "probe", "h"); !errors.As(err, &th) {
		t.Errorf("ReleaseLease throttled: %v", err)
	}
	p.on.Store(false)
	if a, err := c.Admit(t.Context(), k.String()); err != nil {
		t.Errorf("after the throttle: %v", err)
	} else if err := a.Release(t.Context()); err != nil {
		t.Error(err)
	}
}
