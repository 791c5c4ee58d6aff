// Package storetest is the conformance suite every service.Store adapter
// must pass: the same tests run against the embedded bbolt store, against
// DynamoDB on moto_server and against DynamoDB on dynalite.
//
// Besides the contract written on service.Store, the suite pins down what the
// service may rely on:
//   - Get returns exactly what was written, with Deadline and ArmedAt rounded
//     up to the millisecond and ExpiresAt rounded up to the second, all in
//     UTC; a nil and an empty State are the same.
//   - Update replaces the whole record (a field set to zero is cleared).
//   - Update may keep the version (rec.Version == expectedVersion): the
//     write of a timer's armed instant alone, conditioned like any other.
//   - A record whose State alone passes 400 KiB is refused with
//     service.ErrTooLarge and nothing is written; a 300 KiB state fits.
//   - An empty game id is an error (never a panic, never stored).
//   - Conditional writes are atomic: of N writers racing from one version
//     exactly one wins, and retrying writers lose no update.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
)

// Run runs the conformance suite. newStore is called once per subtest and
// must return a store that is empty (or at least holds none of the ids the
// suite generates); it registers its own cleanup with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) service.Store) {
	t.Run("RoundTrip", func(t *testing.T) { testRoundTrip(t, newStore(t)) })
	t.Run("CreateTwice", func(t *testing.T) { testCreateTwice(t, newStore(t)) })
	t.Run("GetUnknown", func(t *testing.T) { testGetUnknown(t, newStore(t)) })
	t.Run("Update", func(t *testing.T) { testUpdate(t, newStore(t)) })
	t.Run("UpdateStale", func(t *testing.T) { testUpdateStale(t, newStore(t)) })
	t.Run("UpdateSameVersion", func(t *testing.T) { testUpdateSameVersion(t, newStore(t)) })
	t.Run("UpdateMissing", func(t *testing.T) { testUpdateMissing(t, newStore(t)) })
	t.Run("TooLarge", func(t *testing.T) { testTooLarge(t, newStore(t)) })
	t.Run("EmptyID", func(t *testing.T) { testEmptyID(t, newStore(t)) })
	t.Run("CanceledContext", func(t *testing.T) { testCanceledContext(t, newStore(t)) })
	t.Run("RaceOneWinner", func(t *testing.T) { testRaceOneWinner(t, newStore(t)) })
	t.Run("RaceNoLostUpdate", func(t *testing.T) { testRaceNoLostUpdate(t, newStore(t)) })
}

const (
	// tooLargeState is over every store's limit (DynamoDB's item limit is
	// 400 KiB including the other attributes).
	tooLargeState = 400<<10 + 1
	// fitsState must fit: SPEC §6 wants a 1,000-ply game comfortably under
	// the item limit.
	fitsState = 300 << 10
	// opTimeout bounds every store call so a hung emulator fails the test
	// instead of the whole binary.
	opTimeout = 30 * time.Second
)

// idSeq makes game ids unique across subtests and across stores that share
// a backend.
var idSeq struct {
	sync.Mutex
	n int
}

func newID() string {
	idSeq.Lock()
	defer idSeq.Unlock()
	idSeq.n++
	return fmt.Sprintf("g%d-%d", time.Now().UnixNano()%1e9, idSeq.n)
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	t.Cleanup(cancel)
	return ctx
}

// allBytes is a state holding every byte value, so a store that treats State
// as text (or trims zeros) fails.
func allBytes() []byte {
	b := make([]byte, 512)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// patterned is a state of n bytes that differs from any other length. The
// bytes come from a seeded random generator, so they do not compress: a
// store that compresses (dynamostore) still meets the size limit with them.
func patterned(n int) []byte {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(n), 0x9e3779b97f4a7c15))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// stored is what Get must return for a written record: the same record
// with Deadline rounded up to the millisecond, ExpiresAt rounded up to the
// second.
func stored(rec service.GameRecord) service.GameRecord {
	rec.Deadline = ceil(rec.Deadline, time.Millisecond)
	rec.ArmedAt = ceil(rec.ArmedAt, time.Millisecond)
	rec.ExpiresAt = ceil(rec.ExpiresAt, time.Second)
	return rec
}

func ceil(t time.Time, unit time.Duration) time.Time {
	if t.IsZero() {
		return t
	}
	down := t.Truncate(unit)
	if down.Equal(t) {
		return t
	}
	return down.Add(unit)
}

// diff describes how got differs from want, or "" if they are the same
// record.
func diff(got, want service.GameRecord) string {
	var d []string
	if got.GameID != want.GameID {
		d = append(d, fmt.Sprintf("GameID %q, want %q", got.GameID, want.GameID))
	}
	if got.Version != want.Version {
		d = append(d, fmt.Sprintf("Version %d, want %d", got.Version, want.Version))
	}
	if got.StateVersion != want.StateVersion {
		d = append(d, fmt.Sprintf("StateVersion %d, want %d", got.StateVersion, want.StateVersion))
	}
	if !bytes.Equal(got.State, want.State) {
		d = append(d, fmt.Sprintf("State %d bytes %.16x…, want %d bytes %.16x…", len(got.State), got.State, len(want.State), want.State))
	}
	if !got.Deadline.Equal(want.Deadline) {
		d = append(d, fmt.Sprintf("Deadline %v, want %v", got.Deadline, want.Deadline))
	}
	if !got.ArmedAt.Equal(want.ArmedAt) {
		d = append(d, fmt.Sprintf("ArmedAt %v, want %v", got.ArmedAt, want.ArmedAt))
	}
	if !got.ExpiresAt.Equal(want.ExpiresAt) {
		d = append(d, fmt.Sprintf("ExpiresAt %v, want %v", got.ExpiresAt, want.ExpiresAt))
	}
	if len(d) == 0 {
		return ""
	}
	return fmt.Sprint(d)
}

// mustGet reads id and checks it equals stored(want).
func mustGet(t *testing.T, s service.Store, want service.GameRecord) {
	t.Helper()
	got, err := s.Get(ctxFor(t), want.GameID)
	if err != nil {
		t.Fatalf("Get(%q) error = %v; want the record", want.GameID, err)
	}
	if d := diff(got, stored(want)); d != "" {
		t.Fatalf("Get(%q) = %s", want.GameID, d)
	}
	for name, tm := range map[string]time.Time{"Deadline": got.Deadline, "ArmedAt": got.ArmedAt, "ExpiresAt": got.ExpiresAt} {
		if !tm.IsZero() && tm.Location() != time.UTC {
			t.Errorf("Get(%q).%s location = %v; want UTC", want.GameID, name, tm.Location())
		}
	}
}

func mustCreate(t *testing.T, s service.Store, rec service.GameRecord) {
	t.Helper()
	if err := s.Create(ctxFor(t), rec); err != nil {
		t.Fatalf("Create(%q) = %v; want nil", rec.GameID, err)
	}
}

func baseRecord(t *testing.T) service.GameRecord {
	return service.GameRecord{
		GameID:       newID(),
		Version:      1,
		StateVersion: 1,
		State:        []byte("initial state"),
	}
}

func testRoundTrip(t *testing.T, s service.Store) {
	// A fixed instant with sub-millisecond digits, in a non-UTC zone.
	seoul := time.FixedZone("KST", 9*3600)
	deadline := time.Date(2026, 3, 4, 5, 6, 7, 123456789, seoul)
	tests := []struct {
		name string
		rec  service.GameRecord
	}{
		{"zero times and empty state", service.GameRecord{Version: 1, StateVersion: 1}},
		{"nil vs empty state", service.GameRecord{Version: 1, StateVersion: 2, State: []byte{}}},
		{"binary state", service.GameRecord{Version: 1, StateVersion: 3, State: allBytes()}},
		{"deadline only", service.GameRecord{Version: 7, StateVersion: 1, State: []byte{0}, Deadline: deadline}},
		{"whole millisecond deadline", service.GameRecord{Version: 1, StateVersion: 1, State: []byte{1}, Deadline: time.UnixMilli(1_800_000_000_123)}},
		{"expiry only", service.GameRecord{Version: 2, StateVersion: 1, State: []byte{2}, ExpiresAt: deadline.Add(30 * 24 * time.Hour)}},
		{"deadline and expiry", service.GameRecord{Version: 1 << 40, StateVersion: 9, State: []byte("x"), Deadline: deadline, ExpiresAt: deadline.Add(time.Hour)}},
		{"armed before the deadline", service.GameRecord{Version: 3, StateVersion: 1, State: []byte{3}, Deadline: deadline, ArmedAt: deadline.Add(-time.Minute)}},
		{"armed, no deadline (finished)", service.GameRecord{Version: 4, StateVersion: 1, State: []byte{4}, ArmedAt: deadline, ExpiresAt: deadline.Add(time.Hour)}},
		{"large state fits", service.GameRecord{Version: 1, StateVersion: 1, State: patterned(fitsState), Deadline: deadline}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := tt.rec
			rec.GameID = newID()
			mustCreate(t, s, rec)
			mustGet(t, s, rec)
		})
	}
}

func testCreateTwice(t *testing.T, s service.Store) {
	first := baseRecord(t)
	mustCreate(t, s, first)
	second := first
	second.State = []byte("intruder")
	second.Deadline = time.Now()
	if err := s.Create(ctxFor(t), second); !errors.Is(err, service.ErrAlreadyExists) {
		t.Fatalf("second Create(%q) = %v; want ErrAlreadyExists", first.GameID, err)
	}
	mustGet(t, s, first)
}

func testGetUnknown(t *testing.T, s service.Store) {
	id := newID()
	if got, err := s.Get(ctxFor(t), id); !errors.Is(err, service.ErrNotFound) {
		t.Fatalf("Get(%q) = %+v, %v; want ErrNotFound", id, got, err)
	}
}

func testUpdate(t *testing.T, s service.Store) {
	rec := baseRecord(t)
	rec.Deadline = time.Now().Add(time.Minute)
	mustCreate(t, s, rec)

	next := rec
	next.Version = 2
	next.StateVersion = 2
	next.State = allBytes()
	next.Deadline = time.Now().Add(2 * time.Minute)
	next.ArmedAt = time.Now().Add(90 * time.Second)
	if err := s.Update(ctxFor(t), next, 1); err != nil {
		t.Fatalf("Update(%q, 1) = %v; want nil", rec.GameID, err)
	}
	mustGet(t, s, next)

	// A finished game: the deadline is cleared, the expiry set, the state
	// emptied. Nothing of the previous item may survive.
	final := next
	final.Version = 3
	final.State = nil
	final.Deadline = time.Time{}
	final.ArmedAt = time.Time{}
	final.ExpiresAt = time.Now().Add(24 * time.Hour)
	if err := s.Update(ctxFor(t), final, 2); err != nil {
		t.Fatalf("Update(%q, 2) = %v; want nil", rec.GameID, err)
	}
	mustGet(t, s, final)
}

func testUpdateStale(t *testing.T, s service.Store) {
	rec := baseRecord(t)
	mustCreate(t, s, rec)
	v2 := rec
	v2.Version = 2
	v2.State = []byte("second")
	if err := s.Update(ctxFor(t), v2, 1); err != nil {
		t.Fatalf("Update(%q, 1) = %v; want nil", rec.GameID, err)
	}
	for _, expected := range []int64{1, 3, 0} {
		stale := rec
		stale.Version = expected + 1
		stale.State = []byte("stale writer")
		if err := s.Update(ctxFor(t), stale, expected); !errors.Is(err, service.ErrVersionConflict) {
			t.Errorf("Update(%q, %d) with stored version 2 = %v; want ErrVersionConflict", rec.GameID, expected, err)
		}
	}
	mustGet(t, s, v2)
}

// testUpdateSameVersion: a write that keeps the version (the armed
// instant of the game's timer, alone) is conditioned on that version like
// any other: it replaces the record while the version is still the one
// it read, and a writer of the next version that read before it still
// wins over it (its condition holds: the version did not change).
func testUpdateSameVersion(t *testing.T, s service.Store) {
	rec := baseRecord(t)
	rec.Deadline = time.Now().Add(time.Minute)
	rec.ArmedAt = time.Now().Add(10 * time.Second)
	mustCreate(t, s, rec)
	armed := rec
	armed.ArmedAt = rec.Deadline
	if err := s.Update(ctxFor(t), armed, 1); err != nil {
		t.Fatalf("Update(%q, 1) keeping version 1 = %v; want nil", rec.GameID, err)
	}
	mustGet(t, s, armed)
	next := rec // read before the armed write
	next.Version = 2
	next.State = []byte("second")
	if err := s.Update(ctxFor(t), next, 1); err != nil {
		t.Fatalf("Update(%q, 1) to version 2 after a same-version write = %v; want nil", rec.GameID, err)
	}
	mustGet(t, s, next)
	stale := armed
	if err := s.Update(ctxFor(t), stale, 1); !errors.Is(err, service.ErrVersionConflict) {
		t.Fatalf("same-version Update(%q, 1) with stored version 2 = %v; want ErrVersionConflict", rec.GameID, err)
	}
	mustGet(t, s, next)
}

func testUpdateMissing(t *testing.T, s service.Store) {
	rec := baseRecord(t)
	rec.Version = 2
	if err := s.Update(ctxFor(t), rec, 1); !errors.Is(err, service.ErrVersionConflict) {
		t.Fatalf("Update(%q, 1) of a missing game = %v; want ErrVersionConflict", rec.GameID, err)
	}
	if _, err := s.Get(ctxFor(t), rec.GameID); !errors.Is(err, service.ErrNotFound) {
		t.Fatalf("Get(%q) after a refused update = %v; want ErrNotFound (nothing written)", rec.GameID, err)
	}
}

func testTooLarge(t *testing.T, s service.Store) {
	big := baseRecord(t)
	big.State = patterned(tooLargeState)
	if err := s.Create(ctxFor(t), big); !errors.Is(err, service.ErrTooLarge) {
		t.Fatalf("Create(%q) with a %d-byte state = %v; want ErrTooLarge", big.GameID, len(big.State), err)
	}
	if _, err := s.Get(ctxFor(t), big.GameID); !errors.Is(err, service.ErrNotFound) {
		t.Fatalf("Get(%q) after a refused create = %v; want ErrNotFound (nothing written)", big.GameID, err)
	}

	rec := baseRecord(t)
	mustCreate(t, s, rec)
	grown := rec
	grown.Version = 2
	grown.State = patterned(tooLargeState)
	if err := s.Update(ctxFor(t), grown, 1); !errors.Is(err, service.ErrTooLarge) {
		t.Fatalf("Update(%q, 1) with a %d-byte state = %v; want ErrTooLarge", rec.GameID, len(grown.State), err)
	}
	mustGet(t, s, rec)
}

func testEmptyID(t *testing.T, s service.Store) {
	rec := baseRecord(t)
	rec.GameID = ""
	if err := s.Create(ctxFor(t), rec); err == nil {
		t.Errorf("Create with an empty id = nil; want an error")
	}
	if err := s.Update(ctxFor(t), rec, 1); err == nil {
		t.Errorf("Update with an empty id = nil; want an error")
	}
	if got, err := s.Get(ctxFor(t), ""); err == nil {
		t.Errorf("Get(\"\") = %+v, nil; want an error", got)
	}
}

func testCanceledContext(t *testing.T, s service.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rec := baseRecord(t)
	if err := s.Create(ctx, rec); err == nil {
		t.Fatalf("Create(%q) with a canceled context = nil; want an error", rec.GameID)
	}
	if _, err := s.Get(ctxFor(t), rec.GameID); !errors.Is(err, service.ErrNotFound) {
		t.Fatalf("Get(%q) after a canceled create = %v; want ErrNotFound", rec.GameID, err)
	}
}

// testRaceOneWinner starts writers together, all updating from version 1:
// exactly one may win, and its state must be the stored one.
func testRaceOneWinner(t *testing.T, s service.Store) {
	const writers = 8
	rec := baseRecord(t)
	mustCreate(t, s, rec)

	start := make(chan struct{})
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			next := rec
			next.Version = 2
			next.State = []byte("writer " + strconv.Itoa(w))
			<-start
			errs[w] = s.Update(ctxFor(t), next, 1)
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for w, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won the update from version 1", winner, w)
		case err == nil:
			winner = w
		case !errors.Is(err, service.ErrVersionConflict):
			t.Fatalf("writer %d: Update = %v; want nil or ErrVersionConflict", w, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer won the update from version 1")
	}
	want := rec
	want.Version = 2
	want.State = []byte("writer " + strconv.Itoa(winner))
	mustGet(t, s, want)
}

// testRaceNoLostUpdate runs writers that each add increments to a counter
// kept in State, re-reading and retrying on conflict the way the service
// does. Every write that reported success must be in the final counter and
// version.
func testRaceNoLostUpdate(t *testing.T, s service.Store) {
	const (
		writers    = 20
		increments = 5
		// A writer loses a round only to another writer's success, so it
		// can never lose more often than all the others succeed: with this
		// bound every increment lands and a failure means a broken store.
		maxRetries = writers * increments
	)
	rec := baseRecord(t)
	rec.State = []byte("0")
	mustCreate(t, s, rec)

	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var successes, conflicts int
	var failures []error
	for w := range writers {
		wg.Go(func() {
			<-start
			for range increments {
				err := increment(ctxFor(t), s, rec.GameID, maxRetries, func() {
					mu.Lock()
					conflicts++
					mu.Unlock()
				})
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Errorf("writer %d: %w", w, err))
				} else {
					successes++
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()

	for _, err := range failures {
		t.Error(err)
	}
	got, err := s.Get(ctxFor(t), rec.GameID)
	if err != nil {
		t.Fatalf("Get(%q) = %v", rec.GameID, err)
	}
	if got.Version != int64(1+successes) {
		t.Errorf("final version = %d; want %d (1 + %d successful writes)", got.Version, 1+successes, successes)
	}
	if counter := string(got.State); counter != strconv.Itoa(successes) {
		t.Errorf("final counter = %s; want %d (a successful write was lost)", counter, successes)
	}
	if successes != writers*increments {
		t.Errorf("successful writes = %d; want %d", successes, writers*increments)
	}
	t.Logf("%d writes, %d conflicts retried", successes, conflicts)
}

// increment reads the counter and writes counter+1 at version+1, retrying
// on ErrVersionConflict up to maxRetries times.
func increment(ctx context.Context, s service.Store, id string, maxRetries int, onConflict func()) error {
	for range maxRetries + 1 {
		cur, err := s.Get(ctx, id)
		if err != nil {
			return fmt.Errorf("get: %w", err)
		}
		n, err := strconv.Atoi(string(cur.State))
		if err != nil {
			return fmt.Errorf("counter %q: %w", cur.State, err)
		}
		next := cur
		next.Version = cur.Version + 1
		next.State = []byte(strconv.Itoa(n + 1))
		err = s.Update(ctx, next, cur.Version)
		if err == nil {
			return nil
		}
		if !errors.Is(err, service.ErrVersionConflict) {
			return fmt.Errorf("update from %d: %w", cur.Version, err)
		}
		onConflict()
	}
	return fmt.Errorf("still conflicting after %d retries", maxRetries)
}
