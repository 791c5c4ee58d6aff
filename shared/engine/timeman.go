package engine

import (
	"context"
	"time"
)

// Time management. A search has two limits:
//   - soft: do not start another iteration after it (the next one would
//     most likely not finish); it stretches when the best move keeps
//     changing and shrinks when it is stable;
//   - hard: stop wherever the search is, checked every pollInterval nodes.
//
// Fixed move time: hard = movetime less a small safety margin (the search
// must answer inside its budget), soft = a share of it. Clock: the budget is
// the remaining time spread over the moves still to play plus most of the
// increment; hard allows several times that but never more than a fraction
// of the clock. The context deadline caps both.

const (
	// pollInterval is how many nodes pass between clock checks (about
	// 0.2–0.5 ms at this engine's speed).
	pollInterval = 512

	// movetimeSafety keeps back a share of a fixed move time (at most
	// movetimeSafetyMax) for returning the move.
	movetimeSafetyDivisor = 20
	movetimeSafetyMax     = 10 * time.Millisecond
	movetimeSoftShare     = 0.6

	defaultMovesToGo   = 30
	clockIncShare      = 0.8
	clockHardFactor    = 4
	clockHardMaxShare  = 0.35 // of the remaining time
	minimumSearchTime  = time.Millisecond
	ctxDeadlineSafety  = 2 * time.Millisecond
	stabilityMinFactor = 0.55
	stabilityMaxFactor = 1.8
)

type timeBudget struct {
	soft, hard time.Duration // 0 = unlimited
}

// planTime derives the budget of a search from its parameters.
func planTime(ctx context.Context, start time.Time, p *Params, white bool, overhead time.Duration) timeBudget {
	var tb timeBudget
	left, inc := p.WhiteTime, p.WhiteInc
	if !white {
		left, inc = p.BlackTime, p.BlackInc
	}
	switch {
	case p.MoveTime > 0:
		safety := min(p.MoveTime/movetimeSafetyDivisor, movetimeSafetyMax)
		tb.hard = max(p.MoveTime-safety, minimumSearchTime)
		tb.soft = time.Duration(float64(tb.hard) * movetimeSoftShare)
	case left > 0 || inc > 0:
		mtg := p.MovesToGo
		if mtg <= 0 {
			mtg = defaultMovesToGo
		}
		usable := max(left-overhead, minimumSearchTime)
		base := usable/time.Duration(mtg) + time.Duration(float64(inc)*clockIncShare)
		tb.soft = min(base, usable)
		tb.hard = min(base*clockHardFactor, time.Duration(float64(usable)*clockHardMaxShare))
		tb.hard = max(tb.hard, min(tb.soft, usable))
		if mtg == 1 {
			tb.soft, tb.hard = usable*9/10, usable*9/10
		}
	}
	if dl, ok := ctx.Deadline(); ok {
		room := max(dl.Sub(start)-ctxDeadlineSafety, minimumSearchTime)
		if tb.hard == 0 || tb.hard > room {
			tb.hard = room
		}
		if tb.soft == 0 || tb.soft > room {
			tb.soft = room
		}
	}
	return tb
}

// stabilityFactor scales the soft limit by how settled the best move is:
// stableIterations counts the last iterations that kept the same move.
func stabilityFactor(stableIterations int) float64 {
	f := 1.5 - 0.15*float64(stableIterations)
	return min(max(f, stabilityMinFactor), stabilityMaxFactor)
}
