// Package apikeytest holds every apikey.Store to the same behaviour: the
// memory store, the embedded store and the DynamoDB data table (on moto
// and dynalite) run Run.
package apikeytest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/shared/apikey"
)

// base is the creation time of the first record (with nanoseconds the
// stores must drop).
var base = time.Date(2026, 11, 29, 9, 30, 15, 123_456_789, time.FixedZone("KST", 9*3600))

// Run runs the conformance tests on the stores newStore returns (a fresh,
// empty store each call).
func Run(t *testing.T, newStore func(t *testing.T) apikey.Store) {
	t.Run("PutGet", func(t *testing.T) { testPutGet(t, newStore(t)) })
	t.Run("PutRefusesBadRecords", func(t *testing.T) { testPutRefuses(t, newStore(t)) })
	t.Run("List", func(t *testing.T) { testList(t, newStore(t)) })
	t.Run("Revoke", func(t *testing.T) { testRevoke(t, newStore(t)) })
	t.Run("ConcurrentPutsOfOneID", func(t *testing.T) { testConcurrentPuts(t, newStore(t)) })
	t.Run("ConcurrentRevokes", func(t *testing.T) { testConcurrentRevokes(t, newStore(t)) })
}

func newRecord(t *testing.T, name string, limits apikey.Limits, at time.Time) apikey.Record {
	t.Helper()
	_, rec, err := apikey.NewRecord(rand.Reader, name, limits, at)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func put(t *testing.T, s apikey.Store, rec apikey.Record) {
	t.Helper()
	if err := s.PutAPIKey(context.Background(), rec); err != nil {
		t.Fatalf("PutAPIKey(%s): %v", rec.ID, err)
	}
}

// same compares records field by field (times by instant and zone: the
// stores return UTC).
func same(a, b apikey.Record) bool {
	return a.ID == b.ID && a.Name == b.Name && a.Hash == b.Hash && a.Limits == b.Limits &&
		a.CreatedAt.Equal(b.CreatedAt) && a.RevokedAt.Equal(b.RevokedAt) &&
		a.CreatedAt.Location() == time.UTC && (a.RevokedAt.IsZero() || a.RevokedAt.Location() == time.UTC)
}

func testPutGet(t *testing.T, s apikey.Store) {
	ctx := context.Background()
	rec := newRecord(t, "파트너 — partner \"A\" 🙂", apikey.Limits{PerSecond: apikey.MaxPerSecond, PerDay: apikey.MaxPerDay, InFlight: apikey.MaxInFlight}, base)
	put(t, s, rec)
	got, err := s.APIKey(ctx, rec.ID)
	if err != nil || !same(got, rec) || got.Revoked() {
		t.Fatalf("APIKey = %+v, %v; want %+v", got, err, rec)
	}
	if !got.CreatedAt.Equal(base.Truncate(time.Millisecond)) {
		t.Errorf("CreatedAt = %s; want %s to the millisecond", got.CreatedAt, base)
	}
	if err := s.PutAPIKey(ctx, rec); !errors.Is(err, apikey.ErrExists) {
		t.Errorf("second PutAPIKey of %s = %v; want ErrExists", rec.ID, err)
	}
	other := newRecord(t, "other", apikey.DefaultLimits, base)
	other.ID = rec.ID
	if err := s.PutAPIKey(ctx, other); !errors.Is(err, apikey.ErrExists) {
		t.Errorf("PutAPIKey of another record with id %s = %v; want ErrExists", rec.ID, err)
	}
	if got, _ := s.APIKey(ctx, rec.ID); !same(got, rec) {
		t.Errorf("after the refused puts: %+v; want the first record", got)
	}
	unknown := newRecord(t, "never stored", apikey.DefaultLimits, base)
	if _, err := s.APIKey(ctx, unknown.ID); !errors.Is(err, apikey.ErrNotFound) {
		t.Errorf("APIKey(unknown) = %v; want ErrNotFound", err)
	}
}

func testPutRefuses(t *testing.T, s apikey.Store) {
	good := newRecord(t, "p", apikey.DefaultLimits, base)
	for name, mutate := range map[string]func(*apikey.Record){
		"bad id":       func(r *apikey.Record) { r.ID = "bootstrap" },
		"no hash":      func(r *apikey.Record) { r.Hash = "" },
		"hash not hex": func(r *apikey.Record) { r.Hash = strings.Repeat("g", 64) },
		"upper hex":    func(r *apikey.Record) { r.Hash = strings.ToUpper(r.Hash) },
		"no name":      func(r *apikey.Record) { r.Name = "" },
		"no limits":    func(r *apikey.Record) { r.Limits = apikey.Limits{} },
		"no created":   func(r *apikey.Record) { r.CreatedAt = time.Time{} },
		"in flight":    func(r *apikey.Record) { r.Limits.InFlight = apikey.MaxInFlight + 1 },
	} {
		rec := good
		mutate(&rec)
		var fe *apikey.FieldError
		if err := s.PutAPIKey(context.Background(), rec); !errors.As(err, &fe) {
			t.Errorf("%s: PutAPIKey = %v; want a FieldError", name, err)
		}
	}
	if recs, err := s.APIKeys(context.Background()); err != nil || len(recs) != 0 {
		t.Errorf("after refused puts: %d records, %v; want none", len(recs), err)
	}
}

func testList(t *testing.T, s apikey.Store) {
	ctx := context.Background()
	if recs, err := s.APIKeys(ctx); err != nil || len(recs) != 0 {
		t.Fatalf("empty store: %v, %v", recs, err)
	}
	var want []apikey.Record
	// Created out of order, two at the same millisecond (ordered by id).
	for i, offset := range []time.Duration{3 * time.Hour, 0, time.Hour, time.Hour, 2 * time.Second} {
		rec := newRecord(t, fmt.Sprintf("partner %d", i), apikey.Limits{PerSecond: int64(i + 1), PerDay: int64(100 * (i + 1)), InFlight: int64(i % 3)}, base.Add(offset))
		put(t, s, rec)
		want = append(want, rec)
	}
	revoked, _, err := s.RevokeAPIKey(ctx, want[2].ID, base.Add(4*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want[2] = revoked
	apikey.SortRecords(want)
	got, err := s.APIKeys(ctx)
	if err != nil || len(got) != len(want) {
		t.Fatalf("APIKeys = %d records, %v; want %d", len(got), err, len(want))
	}
	for i := range want {
		if !same(got[i], want[i]) {
			t.Errorf("APIKeys[%d] = %+v; want %+v", i, got[i], want[i])
		}
	}
}

func testRevoke(t *testing.T, s apikey.Store) {
	ctx := context.Background()
	rec := newRecord(t, "p", apikey.DefaultLimits, base)
	put(t, s, rec)
	at := base.Add(90*time.Minute + 7*time.Nanosecond)
	got, revoked, err := s.RevokeAPIKey(ctx, rec.ID, at)
	if err != nil || !revoked || !got.Revoked() || !got.RevokedAt.Equal(at.Truncate(time.Millisecond)) || got.Hash != rec.Hash || got.Name != rec.Name {
		t.Fatalf("RevokeAPIKey = %+v, %v, %v; want revoked at %s", got, revoked, err, at)
	}
	read, err := s.APIKey(ctx, rec.ID)
	if err != nil || !same(read, got) {
		t.Errorf("APIKey after revoke = %+v, %v; want %+v", read, err, got)
	}
	again, revoked, err := s.RevokeAPIKey(ctx, rec.ID, at.Add(time.Hour))
	if err != nil || revoked || !same(again, got) {
		t.Errorf("second revoke = %+v, %v, %v; want the record as revoked the first time, and revoked false", again, revoked, err)
	}
	unknown := newRecord(t, "never stored", apikey.DefaultLimits, base)
	if _, _, err := s.RevokeAPIKey(ctx, unknown.ID, at); !errors.Is(err, apikey.ErrNotFound) {
		t.Errorf("RevokeAPIKey(unknown) = %v; want ErrNotFound", err)
	}
	if _, err := s.APIKey(ctx, unknown.ID); !errors.Is(err, apikey.ErrNotFound) {
		t.Errorf("revoking an unknown key created it: %v", err)
	}
}

// testConcurrentPuts: of records racing for one id exactly one is stored.
func testConcurrentPuts(t *testing.T, s apikey.Store) {
	first := newRecord(t, "racer 0", apikey.DefaultLimits, base)
	const racers = 8
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		rec := newRecord(t, fmt.Sprintf("racer %d", i), apikey.DefaultLimits, base)
		rec.ID = first.ID
		wg.Go(func() { errs[i] = s.PutAPIKey(context.Background(), rec) })
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, apikey.ErrExists):
			t.Errorf("racer %d: %v", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d puts of one id succeeded; want 1", won)
	}
}

// testConcurrentRevokes: of racing revocations exactly one revokes, and
// all agree on its time.
func testConcurrentRevokes(t *testing.T, s apikey.Store) {
	rec := newRecord(t, "p", apikey.DefaultLimits, base)
	put(t, s, rec)
	const racers = 8
	got := make([]apikey.Record, racers)
	won := make([]bool, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			var err error
			got[i], won[i], err = s.RevokeAPIKey(context.Background(), rec.ID, base.Add(time.Duration(i+1)*time.Minute))
			if err != nil {
				t.Errorf("racer %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	winners := 0
	for _, w := range won {
		if w {
			winners++
		}
	}
	if winners != 1 {
		t.Errorf("%d racers revoked the key; want exactly 1", winners)
	}
	stored, err := s.APIKey(context.Background(), rec.ID)
	if err != nil || !stored.Revoked() {
		t.Fatalf("after the race: %+v, %v", stored, err)
	}
	for i, r := range got {
		if !r.RevokedAt.Equal(stored.RevokedAt) {
			t.Errorf("racer %d saw revocation at %s; the store keeps %s", i, r.RevokedAt, stored.RevokedAt)
		}
	}
}
