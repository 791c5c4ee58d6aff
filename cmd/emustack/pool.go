package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"chessapi/infra/rie"
)

// pool runs one function of the template as Lambda scales it: an instance
// (a bootstrap under aws-lambda-rie) serves one invocation at a time, a new
// one is started when every instance is busy (a cold start), up to max
// instances; past that, invocations wait for a free one (where Lambda
// would throttle at the function's reserved concurrency, emustack queues,
// so that a run measures counts rather than the machine's limits).
//
// The emulator misbehaves on overlapping invokes, which is why concurrency
// comes from more processes, never from more requests to one.
type pool struct {
	spec  fnSpec
	opts  rie.Options // Bootstrap, Emulator, Env, ...: one instance's start options
	max   int
	stats *functionStats

	idle chan *rie.Function

	mu      sync.Mutex
	started int             // instances running or starting
	all     []*rie.Function // every instance started, for close
	closed  bool
}

func newPool(spec fnSpec, opts rie.Options, max int, stats *functionStats) *pool {
	return &pool{spec: spec, opts: opts, max: max, stats: stats, idle: make(chan *rie.Function, max)}
}

// invoker runs invocations of one function: a pool, or a stand-in in
// tests of what drives it.
type invoker interface {
	invoke(ctx context.Context, payload []byte) (rie.Result, error)
}

var _ invoker = (*pool)(nil)

// errPoolClosed is returned by invoke after close.
var errPoolClosed = errors.New("emustack: the stack is shutting down")

// invoke runs one invocation on a free instance. ctx bounds only the wait
// for an instance: once started, an invocation runs to its end or the
// function's timeout whatever the caller does, as on Lambda (a client that
// hangs up, or API Gateway giving up at its integration timeout, does not
// stop the function), and an instance is never handed a second invocation
// while the emulator still runs the first. A transport failure (the
// instance died) retires that instance; the error is returned, as Lambda
// returns a service error to a synchronous caller.
func (p *pool) invoke(ctx context.Context, payload []byte) (rie.Result, error) {
	f, err := p.acquire(ctx)
	if err != nil {
		return rie.Result{}, err
	}
	p.stats.begin()
	// Without a deadline, rie allows the function's timeout and a margin.
	res, err := f.Invoke(context.WithoutCancel(ctx), payload)
	p.stats.end(res, err)
	if err != nil && errors.Is(err, rie.ErrExited) {
		p.retire(f)
		return res, fmt.Errorf("%s: %w", p.spec.LogicalID, err)
	}
	p.release(f)
	if err != nil {
		return res, fmt.Errorf("%s: %w", p.spec.LogicalID, err)
	}
	return res, nil
}

// acquire takes an idle instance, starts one when all are busy and the
// pool is below max, or waits for one to be released.
func (p *pool) acquire(ctx context.Context) (*rie.Function, error) {
	select {
	case f := <-p.idle:
		return f, nil
	default:
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errPoolClosed
	}
	if p.started < p.max {
		p.started++
		p.mu.Unlock()
		f, err := p.start(ctx)
		if err != nil {
			p.mu.Lock()
			p.started--
			p.mu.Unlock()
			return nil, err
		}
		return f, nil
	}
	p.mu.Unlock()
	select {
	case f := <-p.idle:
		return f, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: waiting for a free instance (all %d busy): %w", p.spec.LogicalID, p.max, ctx.Err())
	}
}

func (p *pool) start(ctx context.Context) (*rie.Function, error) {
	startCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	f, err := rie.Start(startCtx, p.opts)
	if err != nil {
		return nil, fmt.Errorf("%s: starting an instance: %w", p.spec.LogicalID, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		f.Close()
		return nil, errPoolClosed
	}
	p.all = append(p.all, f)
	p.stats.instance()
	return f, nil
}

func (p *pool) release(f *rie.Function) {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return
	}
	p.idle <- f // never blocks: at most max instances exist
}

func (p *pool) retire(f *rie.Function) {
	f.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started--
}

// close stops every instance; invocations in flight fail.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	all := p.all
	p.all = nil
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, f := range all {
		wg.Go(func() { f.Close() })
	}
	wg.Wait()
}
