package load

import (
	"slices"
	"sync"
	"time"
)

// Summary describes a set of durations.
type Summary struct {
	N                  int
	P50, P95, P99, Max time.Duration
}

// Summarize returns the nearest-rank percentiles of ds (which it does not
// modify); the zero Summary for none.
func Summarize(ds []time.Duration) Summary {
	if len(ds) == 0 {
		return Summary{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return Summary{N: len(s), P50: rank(s, 50), P95: rank(s, 95), P99: rank(s, 99), Max: s[len(s)-1]}
}

// rank is the nearest-rank p-th percentile of sorted s: the smallest value
// with at least p % of the values at or below it.
func rank(s []time.Duration, p int) time.Duration {
	i := (len(s)*p + 99) / 100 // ⌈n·p/100⌉, 1-based
	return s[max(i, 1)-1]
}

// delivery is one move's times: the mover's (sent, answered) and the
// opponent's (notified), and the server's stamp of the move.
type delivery struct {
	sent, answered, notified time.Time
	stampMs                  int64
	moved, seen              bool
}

// tracker pairs, per game, the mover's record of a move with the
// opponent's, by the version the move made. Either may come first: the
// opponent can hear of a move before the mover has read its answer.
type tracker struct {
	mu        sync.Mutex
	byVersion map[int64]*delivery
	done      func(delivery)
}

func newTracker(done func(delivery)) *tracker {
	return &tracker{byVersion: map[int64]*delivery{}, done: done}
}

func (t *tracker) entry(version int64) *delivery {
	d := t.byVersion[version]
	if d == nil {
		d = &delivery{}
		t.byVersion[version] = d
	}
	return d
}

// moved records the mover's side of the move that made version.
func (t *tracker) moved(version int64, sent, answered time.Time) {
	t.mu.Lock()
	d := t.entry(version)
	d.sent, d.answered, d.moved = sent, answered, true
	t.complete(version, d)
	t.mu.Unlock()
}

// seen records that the opponent learnt of version at notified; stampMs is
// the server's stamp of the move.
func (t *tracker) seen(version int64, notified time.Time, stampMs int64) {
	t.mu.Lock()
	d := t.entry(version)
	if !d.seen { // the first notification counts
		d.notified, d.stampMs, d.seen = notified, stampMs, true
	}
	t.complete(version, d)
	t.mu.Unlock()
}

func (t *tracker) complete(version int64, d *delivery) {
	if d.moved && d.seen {
		delete(t.byVersion, version)
		t.done(*d)
	}
}

// undelivered is how many recorded moves the opponent has not seen.
func (t *tracker) undelivered() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, d := range t.byVersion {
		if d.moved && !d.seen {
			n++
		}
	}
	return n
}
