package aiplayer

import (
	"context"
	"fmt"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/service"
)

var _ service.AIMover = (*Pool)(nil)

// ChooseMove picks the AI seat's move: the level's think time, and never
// more than a safe share of the AI's own clock when the game has one. It
// searches on an engine reserved for AI seats (or a public one that is
// free), so public Search traffic cannot make it wait.
//
// A weakened level often finds its move long before its think time (its
// depth is capped), but an AI seat still answers after about that time —
// the pace seeds/003 promises players ("about 0.2 / 0.9 / 2.2 s"), so a
// weak opponent does not reply instantly. The wait never exceeds the budget
// the clock allows.
func (p *Pool) ChooseMove(ctx context.Context, req service.AIMoveRequest) (chess.Move, error) {
	start := time.Now()
	level, err := engine.ParseLevel(req.Level)
	if err != nil {
		return chess.NoMove, fmt.Errorf("ai seat level %q: %w", req.Level, err)
	}
	params := engine.Params{
		Position: req.Position,
		History:  req.History,
		Level:    level,
		Seed:     req.Seed,
		MoveTime: level.ThinkTime(),
	}
	if level == engine.LevelMax {
		// Full strength uses the time its clock allows (up to the request
		// limit); without a clock, the strongest labelled level's time.
		params.MoveTime = engine.LevelHard.ThinkTime()
		if req.Remaining > 0 {
			params.MoveTime = engine.MaxMoveTime
		}
	}
	if req.Remaining > 0 {
		// Spend at most a fortieth of the clock plus most of the increment,
		// keeping a margin for the round trip of writing the move.
		budget := req.Remaining/40 + req.Increment*3/4 - 100*time.Millisecond
		params.MoveTime = max(min(params.MoveTime, budget), engine.MinMoveTime)
	}
	// The margin covers waiting for an engine when every seat engine is
	// busy with other games' turns; public searches never take seat engines.
	ctx, cancel := context.WithTimeout(ctx, params.MoveTime+2*time.Second)
	defer cancel()
	res, err := p.seatSearch(ctx, params)
	if err != nil {
		return chess.NoMove, err
	}
	if level.Weakened() && !p.noPacing {
		if rest := params.MoveTime - time.Since(start); rest > 0 {
			select {
			case <-time.After(rest):
			case <-ctx.Done():
			}
		}
	}
	return res.BestMove, nil
}
