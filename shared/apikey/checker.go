package apikey

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"
)

// Counter counts events in fixed windows, exactly and across every
// process that shares it. It is the one method service.Players declares
// (shared/service/index_ports.go): Hit counts one event for key in the
// window of the given length that contains now (windows start at
// multiples of the length since the Unix epoch, so a day's window is a
// UTC day) and returns the count in that window including this event, and
// when the window ends.
type Counter interface {
	Hit(ctx context.Context, key string, window time.Duration, now time.Time) (count int64, windowEnd time.Time, err error)
}

// The counters of a key (Counter keys): its requests in the current
// second and in the current UTC day.
const (
	RateCounterPrefix  = "apikey-rate#"
	DailyCounterPrefix = "apikey-day#"
	rateWindow         = time.Second
	dailyWindow        = 24 * time.Hour
)

// Why a presented key is refused. Each of them is ErrInvalidKey (errors.Is),
// which the API answers with 401 invalid_api_key whatever the reason: a
// caller learns nothing about which keys exist, and "revoked" is as final
// as "wrong" (a revoked key no longer authenticates anyone, so it is an
// authentication failure, not a permission one). The reasons are for logs
// and tests.
var (
	ErrInvalidKey        = errors.New("apikey: invalid API key")
	ErrMissing     error = &invalidError{"missing"}
	ErrMalformed   error = &invalidError{"malformed"}
	ErrUnknown     error = &invalidError{"unknown key id"}
	ErrWrongSecret error = &invalidError{"wrong secret"}
	ErrRevoked     error = &invalidError{"revoked"}
)

type invalidError struct{ reason string }

func (e *invalidError) Error() string        { return "apikey: invalid API key: " + e.reason }
func (e *invalidError) Is(target error) bool { return target == ErrInvalidKey }

// ErrNoKeys is returned for a well-formed key when keys are required but
// the checker has nowhere to look them up (a deployment without its key
// store): nothing can be accepted, and it is the service's fault, not the
// caller's (503).
var ErrNoKeys = errors.New("apikey: keys are required but no key store is configured")

// LimitError is a request over one of its key's limits: retry after Wait.
type LimitError struct {
	KeyID string
	// Limit is "perSecond", "perDay" or "inFlight".
	Limit string
	Max   int64
	// WindowEnd is when the counted window ends; Wait is the time from
	// the request to it, rounded up to whole seconds (at least one), as
	// Retry-After says it. For inFlight, a second from the request.
	WindowEnd time.Time
	Wait      time.Duration
}

func (e *LimitError) Error() string {
	if e.Limit == "inFlight" {
		return fmt.Sprintf("apikey: key %s has %d requests in flight, its limit; retry in %s", e.KeyID, e.Max, e.Wait)
	}
	return fmt.Sprintf("apikey: key %s is over its %s limit of %d; retry in %s", e.KeyID, e.Limit, e.Max, e.Wait)
}

// RetryAfter is how long the caller should wait (the API's Retry-After).
func (e *LimitError) RetryAfter() time.Duration { return e.Wait }

// BootstrapID is the id the bootstrap key is counted under (it cannot be
// the id of a generated key, which has 16 characters).
const BootstrapID = "bootstrap"

// inFlightWait is the Retry-After of a request refused because its key
// has every in-flight request it may: the requests it waits for end
// within their think time, and the rate limit bounds how often a client
// that retries sooner is refused.
const inFlightWait = time.Second

// Options configure a Checker.
type Options struct {
	// Store holds the keys; nil when keys come only from Bootstrap.
	Store Store
	// Counter holds the rate and quota counts; required as soon as any
	// key can be accepted (a key without limits is what this package
	// exists to prevent). A Counter that is also a LimitedCounter (the
	// data table, the memory counter) counts no refused request; with a
	// plain Counter a refused request is still counted (the window's
	// count passes the limit, which refuses the same requests).
	Counter Counter
	// Leases bound the requests of a key in flight at once; nil takes the
	// Counter's when it is also Leases (the data table: the bound holds
	// across every instance), else leases in this process's memory
	// (exact for a process that answers every request itself: the local
	// server).
	Leases Leases
	// LeaseTTL is how long a lease lasts unless released (0:
	// DefaultLeaseTTL); it must exceed the longest request.
	LeaseTTL time.Duration
	// Bootstrap, when set, is one more key accepted as its exact text
	// (AI_API_KEY, the local server's -ai-api-key), of any form. Only its
	// hash is kept. Its limits are BootstrapLimits (DefaultLimits when
	// zero), counted under BootstrapID.
	Bootstrap       string
	BootstrapLimits Limits
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Random is the source of the leases' holder ids (nil: crypto/rand).
	Random io.Reader
}

// Checker authenticates presented keys and holds them to their limits.
// Safe for concurrent use.
type Checker struct {
	store         Store
	counter       Counter
	limited       LimitedCounter // counter, when it is one
	leases        Leases
	leaseTTL      time.Duration
	bootstrapHash string
	bootstrap     Record
	now           func() time.Time
	random        io.Reader
}

// NewChecker returns the checker of o. A checker without a store or a
// bootstrap key refuses every key (ErrNoKeys).
func NewChecker(o Options) (*Checker, error) {
	c := &Checker{store: o.Store, counter: o.Counter, leases: o.Leases, leaseTTL: o.LeaseTTL, now: o.Now, random: o.Random}
	if c.now == nil {
		c.now = time.Now
	}
	if c.random == nil {
		c.random = rand.Reader
	}
	if c.leaseTTL == 0 {
		c.leaseTTL = DefaultLeaseTTL
	}
	if c.leaseTTL < 0 {
		return nil, fmt.Errorf("apikey: lease TTL %s is negative", c.leaseTTL)
	}
	if o.Bootstrap != "" {
		limits := o.BootstrapLimits
		if limits == (Limits{}) {
			limits = DefaultLimits
		}
		if err := limits.Validate(); err != nil {
			return nil, fmt.Errorf("bootstrap key: %w", err)
		}
		c.bootstrapHash = HashText(o.Bootstrap)
		c.bootstrap = Record{ID: BootstrapID, Name: "bootstrap key", Hash: c.bootstrapHash, Limits: limits}
	}
	if (c.store != nil || c.bootstrapHash != "") && c.counter == nil {
		return nil, errors.New("apikey: a checker that accepts keys needs a counter for their limits")
	}
	c.limited, _ = c.counter.(LimitedCounter)
	if c.leases == nil {
		if l, ok := c.counter.(Leases); ok {
			c.leases = l
		} else {
			c.leases = NewMemoryLeases()
		}
	}
	return c, nil
}

// Admission is an accepted request: its key's id (safe to log) and the
// in-flight lease it holds until Release.
type Admission struct {
	KeyID  string
	c      *Checker
	holder string
}

// releaseTimeout bounds a release, which runs on a context of its own: a
// client that hung up must not keep its key's slot taken.
const releaseTimeout = 2 * time.Second

// Release ends the request's hold on its key's in-flight limit. Call it
// once the answer is written (a deferred call). A release that fails
// leaves the lease to end at its TTL; the error says why (for the log).
func (a Admission) Release(ctx context.Context) error {
	if a.c == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := a.c.leases.ReleaseLease(ctx, InFlightPrefix+a.KeyID, a.holder); err != nil {
		return fmt.Errorf("apikey: release the in-flight lease of key %s: %w", a.KeyID, err)
	}
	return nil
}

// Admit authenticates presented (the x-api-key header's value, "" when
// there is none), counts one request against the key's rate and daily
// quota and takes one of its in-flight leases. It returns the admission
// (Release it when the request is answered), or the key's id if known
// and
//   - an ErrInvalidKey error (missing, malformed, unknown, wrong secret,
//     revoked);
//   - a *LimitError when the key is over its rate (checked first, so a
//     request refused by the rate does not use the day's quota), its
//     daily quota, or has every in-flight request it may;
//   - ErrNoKeys when there is nowhere to look keys up;
//   - a store or counter failure (the request is refused: limits that
//     cannot be counted are not enforced otherwise). A failure that says
//     when to retry (RetryAfter, a throttled table) keeps saying so.
func (c *Checker) Admit(ctx context.Context, presented string) (Admission, error) {
	if presented == "" {
		return Admission{}, ErrMissing
	}
	now := c.now()
	rec, err := c.lookup(ctx, presented)
	if err != nil {
		return Admission{KeyID: rec.ID}, err
	}
	if err := c.count(ctx, rec, RateCounterPrefix, "perSecond", rec.Limits.PerSecond, rateWindow, now); err != nil {
		return Admission{KeyID: rec.ID}, err
	}
	if err := c.count(ctx, rec, DailyCounterPrefix, "perDay", rec.Limits.PerDay, dailyWindow, now); err != nil {
		return Admission{KeyID: rec.ID}, err
	}
	holder, err := c.holderID()
	if err != nil {
		return Admission{KeyID: rec.ID}, err
	}
	max := rec.Limits.MaxInFlightRequests()
	switch err := c.leases.AcquireLease(ctx, InFlightPrefix+rec.ID, holder, max, now.Add(c.leaseTTL), now); {
	case errors.Is(err, ErrLeasesTaken):
		return Admission{KeyID: rec.ID}, &LimitError{KeyID: rec.ID, Limit: "inFlight", Max: max, WindowEnd: now.Add(inFlightWait), Wait: inFlightWait}
	case err != nil:
		return Admission{KeyID: rec.ID}, fmt.Errorf("apikey: in-flight lease of key %s: %w", rec.ID, err)
	}
	return Admission{KeyID: rec.ID, c: c, holder: holder}, nil
}

// holderID is a new lease holder's id: 16 random bytes, hex.
func (c *Checker) holderID() (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(c.random, b[:]); err != nil {
		return "", fmt.Errorf("apikey: lease id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// lookup finds the record of a presented key and checks the key against
// it. The returned record has at least the ID when the id is known.
func (c *Checker) lookup(ctx context.Context, presented string) (Record, error) {
	if c.bootstrapHash != "" && subtle.ConstantTimeCompare([]byte(HashText(presented)), []byte(c.bootstrapHash)) == 1 {
		return c.bootstrap, nil
	}
	k, err := Parse(presented)
	if err != nil {
		return Record{}, ErrMalformed
	}
	if c.store == nil {
		if c.bootstrapHash != "" {
			return Record{ID: k.ID}, ErrUnknown
		}
		return Record{ID: k.ID}, ErrNoKeys
	}
	rec, err := c.store.APIKey(ctx, k.ID)
	switch {
	case errors.Is(err, ErrNotFound):
		return Record{ID: k.ID}, ErrUnknown
	case err != nil:
		return Record{ID: k.ID}, fmt.Errorf("apikey: read key %s: %w", k.ID, err)
	case !k.Matches(rec.Hash):
		return Record{ID: k.ID}, ErrWrongSecret
	case rec.Revoked():
		return Record{ID: k.ID}, ErrRevoked
	}
	return rec, nil
}

// count hits one of the key's counters and refuses the request when the
// window already holds max (a LimitedCounter then counts nothing) or the
// count is over max (a plain Counter).
func (c *Checker) count(ctx context.Context, rec Record, counterPrefix, limit string, max int64, window time.Duration, now time.Time) error {
	var (
		n       int64
		end     time.Time
		counted = true
		err     error
	)
	if c.limited != nil {
		n, end, counted, err = c.limited.HitUnder(ctx, counterPrefix+rec.ID, window, max, now)
	} else {
		n, end, err = c.counter.Hit(ctx, counterPrefix+rec.ID, window, now)
	}
	if err != nil {
		return fmt.Errorf("apikey: count %s of key %s: %w", limit, rec.ID, err)
	}
	if counted && n <= max {
		return nil
	}
	return &LimitError{KeyID: rec.ID, Limit: limit, Max: max, WindowEnd: end, Wait: WaitUntil(now, end)}
}

// WaitUntil is the wait from now to end as Retry-After states it: whole
// seconds, rounded up, at least one (a client told 0 would retry at once
// into the same window).
func WaitUntil(now, end time.Time) time.Duration {
	d := end.Sub(now)
	secs := (d + time.Second - 1) / time.Second
	if secs < 1 {
		secs = 1
	}
	return secs * time.Second
}
