package apikey

import (
	"context"
	"errors"
	"sync"
	"time"
)

// The in-flight limit and the conditional counters: the two ports a
// Checker uses beyond Counter when its counter offers them (the data
// table does; the memory counter does), so that the limits hold across
// every instance and a refused request writes nothing past a limit.

// Leases bounds the requests of a key that are being answered at once,
// across every process that shares it. A lease is held from a request's
// admission to its answer; one whose holder dies (a Lambda instance
// killed at its timeout) ends by itself at its until, so a crash costs
// the key a slot for that long at most.
type Leases interface {
	// AcquireLease takes a lease on key for holder (a random id, unique
	// per request) until until, unless max leases of key are held at now
	// (ErrLeasesTaken). Leases whose until is not after now are not held.
	AcquireLease(ctx context.Context, key, holder string, max int64, until, now time.Time) error
	// ReleaseLease ends holder's lease on key; releasing a lease that has
	// ended (or was never taken) is not an error.
	ReleaseLease(ctx context.Context, key, holder string) error
}

// ErrLeasesTaken is AcquireLease's answer when every lease of the key is
// held.
var ErrLeasesTaken = errors.New("apikey: every lease of the key is held")

// LimitedCounter is a Counter that refuses to count past a limit: a
// refused event changes nothing, so a flood of refused requests leaves
// the count at the limit (and the store's item unwritten).
type LimitedCounter interface {
	// HitUnder counts one event for key in the window containing now if
	// fewer than max were counted in it, and returns the count including
	// this event. When max were counted already it counts nothing and
	// returns counted false. windowEnd is when the window ends either way.
	HitUnder(ctx context.Context, key string, window time.Duration, max int64, now time.Time) (count int64, windowEnd time.Time, counted bool, err error)
}

// The leases of a key (Leases keys).
const InFlightPrefix = "apikey-inflight#"

// DefaultLeaseTTL is how long a lease lasts unless released: longer than
// any request can run (the AI function's timeout, 15 s in template.yaml,
// which deploy's tests hold below this), so that a live request never
// loses its lease, and short enough that a dead instance's lease is back
// soon.
const DefaultLeaseTTL = 20 * time.Second

// HitUnder counts one event unless max were counted in the window.
func (m *MemoryCounter) HitUnder(ctx context.Context, key string, window time.Duration, max int64, now time.Time) (int64, time.Time, bool, error) {
	if window <= 0 {
		return 0, time.Time{}, false, ErrBadWindow
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	w, end := m.window(key, window, now)
	if m.counts[w] >= max {
		return m.counts[w], end, false, nil
	}
	m.counts[w]++
	return m.counts[w], end, true, nil
}

var (
	_ LimitedCounter = (*MemoryCounter)(nil)
	_ Leases         = (*MemoryLeases)(nil)
)

// MemoryLeases are Leases in one process's memory: exact within the
// process (the local server, where one process answers every request;
// tests).
type MemoryLeases struct {
	mu   sync.Mutex
	held map[string]map[string]time.Time // key → holder → until
}

// NewMemoryLeases returns MemoryLeases with none held.
func NewMemoryLeases() *MemoryLeases { return &MemoryLeases{held: map[string]map[string]time.Time{}} }

// AcquireLease takes a lease unless max are held.
func (m *MemoryLeases) AcquireLease(ctx context.Context, key, holder string, max int64, until, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	leases := m.held[key]
	for h, u := range leases {
		if !u.After(now) {
			delete(leases, h)
		}
	}
	if int64(len(leases)) >= max {
		return ErrLeasesTaken
	}
	if leases == nil {
		leases = map[string]time.Time{}
		m.held[key] = leases
	}
	leases[holder] = until
	return nil
}

// ReleaseLease ends a lease.
func (m *MemoryLeases) ReleaseLease(ctx context.Context, key, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.held[key], holder)
	if len(m.held[key]) == 0 {
		delete(m.held, key)
	}
	return nil
}
