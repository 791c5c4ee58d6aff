// Package aiplayer shares chess engines between concurrent callers: the
// third-party AI endpoint and the AI seats of games. An engine runs one
// search at a time and owns a large transposition table, so a process keeps
// a small fixed pool of them instead of one per request.
//
// The pool is split so that public requests cannot starve AI seats (SPEC
// §13): AI seats have engines of their own that Search never takes, and
// public searches (up to 10 s each) queue only for the public engines. A
// seat whose own engines are all busy also takes an idle public engine, or
// whichever engine of either kind frees first.
package aiplayer

import (
	"context"

	"chessapi/shared/engine"
)

// Options size a Pool.
type Options struct {
	// SeatEngines are reserved for AI seats' moves (ChooseMove); at least 1.
	SeatEngines int
	// PublicEngines serve the public endpoint (Search); at least 1.
	PublicEngines int
	// HashMB is each engine's transposition table in megabytes
	// (engine.DefaultHashMB when 0). An engine's table is allocated on its
	// first search, so an engine never used costs nothing.
	HashMB int
}

// Pool hands out engines to searches: Search waits for a public engine,
// ChooseMove for a seat engine (or a public one that is free).
type Pool struct {
	hashMB int
	// noPacing makes AI seats answer as soon as their search ends (tests).
	noPacing bool
	// seats and public hold one entry per engine of their kind; nil until the
	// engine is first used, so start-up stays cheap (a Lambda cold start
	// allocates no table).
	seats, public chan *engine.Engine
}

// New returns a pool with opts.SeatEngines engines reserved for AI seats and
// opts.PublicEngines for public searches.
func New(opts Options) *Pool {
	hashMB := opts.HashMB
	if hashMB <= 0 {
		hashMB = engine.DefaultHashMB
	}
	return &Pool{
		hashMB: hashMB,
		seats:  idleSlots(max(opts.SeatEngines, 1)),
		public: idleSlots(max(opts.PublicEngines, 1)),
	}
}

// NewPool returns a pool of size public engines and size more reserved for
// AI seats, each with hashMB megabytes of transposition table
// (engine.DefaultHashMB when 0).
func NewPool(size, hashMB int) *Pool {
	return New(Options{SeatEngines: size, PublicEngines: size, HashMB: hashMB})
}

func idleSlots(n int) chan *engine.Engine {
	slots := make(chan *engine.Engine, n)
	for range n {
		slots <- nil
	}
	return slots
}

// WithoutPacing makes ChooseMove answer as soon as the search ends instead
// of after the level's think time (for tests and load generation).
func (p *Pool) WithoutPacing() *Pool {
	p.noPacing = true
	return p
}

// Search runs one public search on a public engine, waiting for one if all
// are busy (the wait counts against ctx's deadline). It never takes an
// engine reserved for AI seats.
func (p *Pool) Search(ctx context.Context, params engine.Params) (engine.Result, error) {
	var e *engine.Engine
	select {
	case e = <-p.public:
	case <-ctx.Done():
		return engine.Result{}, ctx.Err()
	}
	return p.searchOn(ctx, e, p.public, params)
}

// seatSearch runs an AI seat's search on its own engines, preferring a free
// seat engine, then a free public one, then the first of either to free up.
// Public searches cannot hold seats back: they never take seat engines.
func (p *Pool) seatSearch(ctx context.Context, params engine.Params) (engine.Result, error) {
	select {
	case e := <-p.seats:
		return p.searchOn(ctx, e, p.seats, params)
	default:
	}
	select {
	case e := <-p.seats:
		return p.searchOn(ctx, e, p.seats, params)
	case e := <-p.public:
		return p.searchOn(ctx, e, p.public, params)
	case <-ctx.Done():
		return engine.Result{}, ctx.Err()
	}
}

// searchOn searches on e, taken from home, and gives it back there.
func (p *Pool) searchOn(ctx context.Context, e *engine.Engine, home chan *engine.Engine, params engine.Params) (engine.Result, error) {
	if e == nil {
		e = engine.New(engine.Options{HashMB: p.hashMB})
	}
	defer func() { home <- e }()
	return e.Search(ctx, params)
}
