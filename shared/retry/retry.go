// Package retry is how this codebase tries a failing operation again: one
// Policy type (how many tries, how far apart, how much jitter) and one Do
// loop that honours it, so every retry reads the same way and its bounds
// are declared in one place (policies.go).
//
//	err := retry.ConnectionPost.Do(ctx, func(attempt int) error {
//		res, err := post(ctx)
//		if err != nil {
//			return err // tried again
//		}
//		if res.StatusCode == 410 {
//			return retry.Permanent(ErrGone) // never tried again
//		}
//		return nil
//	})
//
// The waits grow exponentially: Base before the second try, twice that
// before the third, and so on up to Max. Jitter draws part of each wait at
// random so that clients failing together do not retry together (AWS
// Well-Architected REL05-BP03, "Control and limit retry calls":
// https://docs.aws.amazon.com/wellarchitected/2023-04-10/framework/rel_mitigate_interaction_failure_limit_retries.html).
//
// Work that retries asynchronously (a queue that must not hold a worker
// through a wait) reads the same Policy through Delay, Retryable and Wait.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy says how often and how far apart an operation is tried. The zero
// value tries once. Policies are values: copy a named one and change a
// field to adjust it (tests inject Rand and Sleep that way).
type Policy struct {
	// Attempts bounds the tries, the first included: 0 and 1 try once;
	// Unlimited never gives up on its own (the loop ends on success, on a
	// permanent error or with its context).
	Attempts int
	// Base is the wait after the first failure; each later wait doubles,
	// up to Max (0: no cap). Base 0 tries again at once.
	Base, Max time.Duration
	// Jitter is the part of each wait drawn at random, from 0 (none) to 1:
	// a wait d becomes d·(1−Jitter) plus a uniform draw in [0, d·Jitter).
	Jitter float64
	// Rand is the jitter's source of uniform numbers in [0, 1); nil uses
	// math/rand/v2.
	Rand func() float64
	// Sleep waits d or until ctx ends, returning ctx's error then; nil uses
	// a timer. A test with a fake clock injects its own.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, if set, is told of every failed try that will be tried
	// again, with the wait before the next (for logs and metrics).
	OnRetry func(attempt int, err error, wait time.Duration)
}

// Unlimited as Policy.Attempts puts no bound on the tries.
const Unlimited = -1

// IsZero reports whether p is the zero Policy (an Options field left unset
// takes its named default then).
func (p Policy) IsZero() bool {
	return p.Attempts == 0 && p.Base == 0 && p.Max == 0 && p.Jitter == 0 && p.Rand == nil && p.Sleep == nil && p.OnRetry == nil
}

// WithAttempts returns p with Attempts set to n, or p itself when n ≤ 0
// (a config field left at zero keeps the named default).
func (p Policy) WithAttempts(n int) Policy {
	if n > 0 {
		p.Attempts = n
	}
	return p
}

// WithBase returns p with Base set to d, or p itself when d ≤ 0.
func (p Policy) WithBase(d time.Duration) Policy {
	if d > 0 {
		p.Base = d
	}
	return p
}

// Delay is the wait after failed attempt n (1 for the first failure):
// Base·2^(n−1), at most Max, with the jitter drawn.
func (p Policy) Delay(n int) time.Duration {
	d := p.backoff(n)
	if p.Jitter <= 0 || d <= 0 {
		return d
	}
	j := min(p.Jitter, 1)
	r := rand.Float64
	if p.Rand != nil {
		r = p.Rand
	}
	u := min(max(r(), 0), 1) // a source out of range must not stretch a wait
	return time.Duration(float64(d)*(1-j) + float64(d)*j*u)
}

// backoff is the wait after failed attempt n before jitter.
func (p Policy) backoff(n int) time.Duration {
	d := p.Base
	if d <= 0 {
		return 0
	}
	for i := 1; i < n; i++ {
		if p.Max > 0 && d >= p.Max {
			break
		}
		if d > time.Duration(1<<62) { // doubling would overflow
			break
		}
		d *= 2
	}
	if p.Max > 0 {
		d = min(d, p.Max)
	}
	return d
}

// Retryable reports whether a try that failed with err after attempt n
// (counting from 1) may be tried again: err is not permanent and the
// attempts are not spent.
func (p Policy) Retryable(n int, err error) bool {
	if err == nil || IsPermanent(err) {
		return false
	}
	return p.Attempts == Unlimited || n < p.Attempts
}

// Wait sleeps d, or less when ctx ends first (its error is returned then).
// A zero wait still reports an ended context.
func (p Policy) Wait(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Do calls try until it succeeds, returns a permanent error, the attempts
// are spent, or ctx ends while waiting for the next try; attempt counts
// from 1. The first try is always made (try sees ctx itself and decides
// what an ended context means to it).
//
// Do returns nil on success; the error wrapped by Permanent as it was
// given; otherwise an *Error with the last try's error.
func (p Policy) Do(ctx context.Context, try func(attempt int) error) error {
	for attempt := 1; ; attempt++ {
		err := try(attempt)
		if err == nil {
			return nil
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			return perm.err
		}
		if !p.Retryable(attempt, err) {
			return &Error{Attempts: attempt, Last: err}
		}
		wait := p.Delay(attempt)
		if p.OnRetry != nil {
			p.OnRetry(attempt, err, wait)
		}
		if stop := p.Wait(ctx, wait); stop != nil {
			return &Error{Attempts: attempt, Last: err, Stopped: stop}
		}
	}
}

// Error is Do's error when it gives up on an error that could have been
// tried again: the attempts are spent (Stopped is nil) or the context
// ended before the next try (Stopped is its error). errors.Is and As see
// both the last error and the context's.
type Error struct {
	Attempts int
	Last     error
	Stopped  error
}

func (e *Error) Error() string {
	if e.Stopped != nil {
		return fmt.Sprintf("retry: stopped after %d attempts (%v): %v", e.Attempts, e.Stopped, e.Last)
	}
	return fmt.Sprintf("retry: %d attempts: %v", e.Attempts, e.Last)
}

// Unwrap returns the last error and, when the context ended, its error.
func (e *Error) Unwrap() []error {
	if e.Stopped != nil {
		return []error{e.Last, e.Stopped}
	}
	return []error{e.Last}
}

// Permanent marks err as not worth another try: Do returns it at once (as
// err itself, unwrapped). Permanent(nil) is nil, so a try can end with
// "return retry.Permanent(err)" whatever err is.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err, or an error it wraps, was marked by
// Permanent.
func IsPermanent(err error) bool {
	var perm *permanentError
	return errors.As(err, &perm)
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }
