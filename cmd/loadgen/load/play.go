package load

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// errBudget ends a game early: the run's MaxMoves are spent.
var errBudget = errors.New("move budget spent")

// gameRun is one game of a population, from creation to its end (or the
// end of the run).
type gameRun struct {
	pop  *population
	seed [2]uint64
	// runCtx is the run's context; move requests use it rather than the
	// game's, so that a seat stopping the game cannot cancel the
	// opponent's move in flight (whose commit it may already have heard).
	runCtx context.Context
	id     string
	tokens map[string]string
	track  *tracker
	// stop ends both seats (a seat that failed, or the budget).
	stop     context.CancelCauseFunc
	finished atomic.Bool
	// Seats start only when both are listening (subscribed, or holding
	// their first view), so that no move is made before the opponent can
	// hear of it.
	readyCount atomic.Int32
	allReady   chan struct{}
}

// play creates the game and plays it. The error is the first failure of a
// seat; the end of the run or of the budget is not one.
func (g *gameRun) play(ctx context.Context) error {
	id, tokens, err := g.pop.api.newGame(ctx)
	if err != nil {
		return err
	}
	g.id, g.tokens, g.runCtx = id, tokens, ctx
	g.track = newTracker(g.pop.delivered)
	g.allReady = make(chan struct{})
	gctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	g.stop = stop
	if g.pop.mode == ModeFetch {
		if err := g.fetchGame(gctx); err != nil {
			stop(err)
		}
	} else {
		var wg sync.WaitGroup
		for i, color := range [2]string{"white", "black"} {
			rng := rand.New(rand.NewPCG(g.seed[0], g.seed[1]<<1|uint64(i)))
			wg.Go(func() {
				seat := g.pollSeat
				if g.pop.mode == ModeStream {
					seat = g.streamSeat
				}
				if err := seat(gctx, color, rng); err != nil {
					stop(err) // the first cause stands; the other seat's ends are its echo
				}
			})
		}
		wg.Wait()
	}
	g.pop.gameOver(g.track.undelivered(), g.finished.Load())
	if ctx.Err() != nil {
		return nil // the run is over
	}
	if cause := context.Cause(gctx); cause != nil && !errors.Is(cause, errBudget) && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return nil
}

// ready marks a seat as listening and waits for the other one.
func (g *gameRun) ready(ctx context.Context) error {
	if g.readyCount.Add(1) == 2 {
		close(g.allReady)
	}
	select {
	case <-g.allReady:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// takeTurn makes me's move, chosen at random among the legal moves of its
// view v, after the thinking pause, and records it. It fails with errBudget
// when the run has no moves left.
func (g *gameRun) takeTurn(ctx context.Context, me string, v *view, rng *rand.Rand) (*view, error) {
	if len(v.LegalMoves) == 0 {
		return nil, fmt.Errorf("%s: the view of the seat to move (version %d) has no legalMoves", me, v.Version)
	}
	if !g.pop.budget.take() {
		g.stop(errBudget)
		return nil, errBudget
	}
	if think := g.pop.cfg.Think; think > 0 {
		// Players think independently: uniform in [think/2, 3·think/2).
		pause := think/2 + time.Duration(rng.Int64N(int64(think)))
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	uci := v.LegalMoves[rng.IntN(len(v.LegalMoves))].UCI
	ans, x, err := g.pop.api.move(g.runCtx, g.id, g.tokens[me], uci)
	if err != nil {
		return nil, err
	}
	g.pop.moved(x.arrived.Sub(x.sent))
	g.track.moved(ans.Version, x.sent, x.arrived)
	if ans.Phase == phaseFinished {
		g.finished.Store(true)
	}
	return ans, nil
}

// fetchGame is ModeFetch: the mover moves, then the opponent reads the view
// at once and becomes the mover.
func (g *gameRun) fetchGame(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(g.seed[0], g.seed[1]))
	me := "white"
	v, _, err := g.pop.api.view(ctx, g.id, g.tokens[me], nil)
	if err != nil {
		return err
	}
	for v.Phase == phasePlaying {
		if v.Turn != me {
			return fmt.Errorf("fetch: %s's view has %s to move", me, v.Turn)
		}
		ans, err := g.takeTurn(ctx, me, v, rng)
		if err != nil {
			return err
		}
		w, x, err := g.pop.api.view(ctx, g.id, g.tokens[opponent(me)], nil)
		if err != nil {
			return err
		}
		if stamp, ok := w.lastMoveBy(me); ok && w.Version == ans.Version {
			g.track.seen(w.Version, x.arrived, stamp)
		}
		v, me = w, opponent(me)
	}
	return nil
}

// pollSeat is one seat of ModePoll: it holds a long poll while the
// opponent is to move, and moves when it returns with the opponent's move.
func (g *gameRun) pollSeat(ctx context.Context, me string, rng *rand.Rand) error {
	v, _, err := g.pop.api.view(ctx, g.id, g.tokens[me], nil)
	if err != nil {
		return err
	}
	if err := g.ready(ctx); err != nil {
		return err
	}
	known, lastMine := v.Version, int64(0)
	waitingSince := time.Now()
	for v.Phase != phaseFinished {
		if v.Phase == phasePlaying && v.Turn == me && v.Version > lastMine {
			ans, err := g.takeTurn(ctx, me, v, rng)
			if err != nil {
				return err
			}
			v, known, lastMine = ans, ans.Version, ans.Version
			waitingSince = time.Now()
			continue
		}
		if time.Since(waitingSince) > g.pop.cfg.StallTimeout {
			return fmt.Errorf("poll stall: no move of the opponent within %v", g.pop.cfg.StallTimeout)
		}
		w, x, err := g.pop.api.view(ctx, g.id, g.tokens[me], &known)
		if err != nil {
			return err
		}
		if w.Version > known && len(w.Moves) > len(v.Moves) {
			if stamp, ok := w.lastMoveBy(opponent(me)); ok {
				g.track.seen(w.Version, x.arrived, stamp)
				waitingSince = time.Now()
			}
		}
		v, known = w, max(known, w.Version)
	}
	return nil
}
