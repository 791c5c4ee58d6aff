package apikey

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"
)

// MemoryStore is a Store in one process's memory: for tests, and for a
// process that is the only one counting (it forgets everything when the
// process ends).
type MemoryStore struct {
	mu   sync.Mutex
	keys map[string]Record
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{keys: map[string]Record{}} }

// PutAPIKey stores a new record.
func (m *MemoryStore) PutAPIKey(ctx context.Context, rec Record) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.keys[rec.ID]; ok {
		return ErrExists
	}
	rec.CreatedAt, rec.RevokedAt = StoredTime(rec.CreatedAt), StoredTime(rec.RevokedAt)
	m.keys[rec.ID] = rec
	return nil
}

// APIKey reads a record.
func (m *MemoryStore) APIKey(ctx context.Context, id string) (Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.keys[id]
	if !ok {
		return Record{}, ErrNotFound
	}
	return rec, nil
}

// APIKeys lists the records, oldest first.
func (m *MemoryStore) APIKeys(ctx context.Context) ([]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Record, 0, len(m.keys))
	for _, rec := range m.keys {
		out = append(out, rec)
	}
	SortRecords(out)
	return out, nil
}

// RevokeAPIKey marks a key revoked.
func (m *MemoryStore) RevokeAPIKey(ctx context.Context, id string, at time.Time) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec, ok := m.keys[id]
	if !ok {
		return Record{}, false, ErrNotFound
	}
	if rec.Revoked() {
		return rec, false, nil
	}
	rec.RevokedAt = StoredTime(at)
	m.keys[id] = rec
	return rec, true, nil
}

// SortRecords orders records as APIKeys lists them: oldest first, ties by
// id.
func SortRecords(recs []Record) {
	slices.SortFunc(recs, func(a, b Record) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
}

// MemoryCounter is a Counter in one process's memory: exact within the
// process, unaware of any other (the local server; tests). Windows whose
// end has passed are dropped as new ones begin, so memory stays bounded
// by the keys in use.
type MemoryCounter struct {
	mu     sync.Mutex
	counts map[counterWindow]int64
}

type counterWindow struct {
	key   string
	start int64 // window start, nanoseconds since the epoch
	len   time.Duration
}

var _ Counter = (*MemoryCounter)(nil)

// NewMemoryCounter returns an empty MemoryCounter.
func NewMemoryCounter() *MemoryCounter { return &MemoryCounter{counts: map[counterWindow]int64{}} }

// ErrBadWindow is returned by MemoryCounter.Hit for a window that is not
// positive.
var ErrBadWindow = errors.New("apikey: counter window must be positive")

// Hit counts one event in key's window of the given length containing now.
func (m *MemoryCounter) Hit(ctx context.Context, key string, window time.Duration, now time.Time) (int64, time.Time, error) {
	if window <= 0 {
		return 0, time.Time{}, ErrBadWindow
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	w, end := m.window(key, window, now)
	m.counts[w]++
	return m.counts[w], end, nil
}

// window is key's window of the given length containing now, and its
// end. A window not counted yet drops the windows of this key that have
// ended. m.mu is held.
func (m *MemoryCounter) window(key string, window time.Duration, now time.Time) (counterWindow, time.Time) {
	start := now.UnixNano() - mod(now.UnixNano(), int64(window))
	end := time.Unix(0, start).Add(window)
	w := counterWindow{key, start, window}
	if _, ok := m.counts[w]; !ok {
		for old := range m.counts {
			if old.key == key && old.start+int64(old.len) <= now.UnixNano() {
				delete(m.counts, old)
			}
		}
	}
	return w, end
}

// mod is the non-negative remainder (times before 1970 are still aligned
// to the epoch).
func mod(a, b int64) int64 {
	r := a % b
	if r < 0 {
		r += b
	}
	return r
}
