// Package aiplayer shares chess engines between concurrent callers: the
// third-party AI endpoint and the AI seats of games. An engine runs one
// search at a time and owns a large transposition table, so a process keeps
// a small fixed pool of them instead of one per request.
package aiplayer

import (
	"context"

	"chessapi/shared/engine"
)

// Pool hands out engines to searches, at most its size at a time.
type Pool struct {
	hashMB int
	// noPacing makes AI seats answer as soon as their search ends (tests).
	noPacing bool
	// slots holds one entry per engine; nil until the engine is first used,
	// so start-up stays cheap (a Lambda cold start allocates no table).
	slots chan *engine.Engine
}

// NewPool returns a pool of size engines with hashMB megabytes of
// transposition table each (engine.DefaultHashMB when 0).
func NewPool(size, hashMB int) *Pool {
	size = max(size, 1)
	if hashMB <= 0 {
		hashMB = engine.DefaultHashMB
	}
	p := &Pool{hashMB: hashMB, slots: make(chan *engine.Engine, size)}
	for range size {
		p.slots <- nil
	}
	return p
}

// WithoutPacing makes ChooseMove answer as soon as the search ends instead
// of after the level's think time (for tests and load generation).
func (p *Pool) WithoutPacing() *Pool {
	p.noPacing = true
	return p
}

// Search runs one search on a free engine, waiting for one if all are busy
// (the wait counts against ctx's deadline).
func (p *Pool) Search(ctx context.Context, params engine.Params) (engine.Result, error) {
	var e *engine.Engine
	select {
	case e = <-p.slots:
	case <-ctx.Done():
		return engine.Result{}, ctx.Err()
	}
	defer func() { p.slots <- e }()
	if e == nil {
		e = engine.New(engine.Options{HashMB: p.hashMB})
	}
	return e.Search(ctx, params)
}
