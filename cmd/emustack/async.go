package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// asyncInvoker does what Lambda does with an asynchronous invocation (the
// AI trigger's Invoke with InvocationType Event, a schedule firing): it
// runs the function with the payload and, when that fails, retries it as
// the function's EventInvokeConfig says (MaximumRetryAttempts,
// MaximumEventAgeInSeconds), then hands it to the on-failure destination,
// here a count and a log line naming the queue.
//
// Lambda waits one minute before the first retry and two before the
// second; emustack waits retryDelay, doubling, so that a run sees the
// retries without waiting minutes (-async-retry-delay).
type asyncInvoker struct {
	functions  map[string]invoker // by logical ID
	counts     *counters
	log        io.Writer
	retryDelay time.Duration
	ctx        context.Context

	mu       sync.Mutex
	inflight int // events queued or running, not waiting for a retry
	wg       sync.WaitGroup
}

func newAsyncInvoker(ctx context.Context, functions map[string]invoker, counts *counters, log io.Writer, retryDelay time.Duration) *asyncInvoker {
	return &asyncInvoker{functions: functions, counts: counts, log: log, retryDelay: retryDelay, ctx: ctx}
}

// enqueue accepts an event for fn, received at the given time.
func (a *asyncInvoker) enqueue(fn fnSpec, payload []byte, received time.Time) {
	a.mu.Lock()
	a.inflight++
	a.mu.Unlock()
	a.counts.event("lambda:AsyncEvents", 1)
	a.wg.Go(func() { a.run(fn, payload, received) })
}

func (a *asyncInvoker) run(fn fnSpec, payload []byte, received time.Time) {
	defer func() {
		a.mu.Lock()
		a.inflight--
		a.mu.Unlock()
	}()
	delay := a.retryDelay
	for attempt := 0; ; attempt++ {
		res, err := a.functions[fn.LogicalID].invoke(a.ctx, payload)
		if err == nil && res.FunctionError == nil {
			return
		}
		if a.ctx.Err() != nil {
			return // shutting down
		}
		why := fmt.Sprint(err)
		if res.FunctionError != nil {
			why = res.FunctionError.Error()
		}
		if attempt >= fn.AsyncRetries || time.Since(received)+delay > fn.AsyncMaxAge {
			a.counts.event("lambda:AsyncFailed:"+fn.LogicalID, 1)
			dest := "dropped (no on-failure destination)"
			if fn.AsyncFailures != "" {
				a.counts.event("sqs:SendMessage:"+fn.AsyncFailures, 1)
				dest = "sent to " + fn.AsyncFailures
			}
			fmt.Fprintf(a.log, "emustack: asynchronous invocation of %s failed %d times (%s): %s; payload %s\n",
				fn.LogicalID, attempt+1, why, dest, payload)
			return
		}
		a.counts.event("lambda:AsyncRetries:"+fn.LogicalID, 1)
		// A retry waiting for its time does not keep the stack from
		// settling: nothing happens until it is due.
		a.mu.Lock()
		a.inflight--
		a.mu.Unlock()
		select {
		case <-time.After(delay):
		case <-a.ctx.Done():
			a.mu.Lock()
			a.inflight++
			a.mu.Unlock()
			return
		}
		a.mu.Lock()
		a.inflight++
		a.mu.Unlock()
		delay *= 2
	}
}

// idle reports whether no event is queued or running.
func (a *asyncInvoker) idle() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inflight == 0
}

// wait waits for every event to finish (after the context is cancelled,
// at shutdown).
func (a *asyncInvoker) wait() { a.wg.Wait() }
