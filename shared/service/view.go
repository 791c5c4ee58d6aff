package service

import (
	"context"
	"errors"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// Get returns the game as the viewer sees it, after applying any timeout
// already due. With afterVersion set it waits (up to maxWait) until the game
// is newer than afterVersion, then answers with the game as it is then.
func (s *Service) Get(ctx context.Context, gameID string, v Viewer, afterVersion *int64, maxWait time.Duration) (*game.View, error) {
	var deadline time.Time
	if afterVersion != nil {
		deadline = s.cfg.Now().Add(maxWait)
	}
	for {
		// Watch before reading, so a write between the read and the wait
		// is not missed.
		changed, stop := noWatch, func() {}
		if afterVersion != nil {
			changed, stop = s.watchers.watch(gameID)
		}
		st, color, err := s.current(ctx, gameID, v)
		if err != nil {
			stop()
			return nil, err
		}
		now := s.cfg.Now()
		if afterVersion == nil || st.Version > *afterVersion || !now.Before(deadline) {
			stop()
			return game.ViewOf(st, color, now)
		}
		wait := deadline.Sub(now)
		if d, ok := game.Deadline(st); ok && d.Sub(now) < wait {
			wait = max(d.Sub(now), 0) + time.Millisecond // wake to enforce it
		}
		if s.cfg.PollInterval > 0 && s.cfg.PollInterval < wait {
			wait = s.cfg.PollInterval
		}
		timer := time.NewTimer(wait)
		select {
		case <-changed:
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			stop()
			return nil, ctx.Err()
		}
		timer.Stop()
		stop()
	}
}

// noWatch never fires: a plain read does not wait.
var noWatch = make(<-chan struct{})

// current loads a game, authorizes the viewer and applies a due timeout
// (writing it, so the game ends for everybody).
func (s *Service) current(ctx context.Context, gameID string, v Viewer) (*game.State, *chess.Color, error) {
	for attempt := 0; attempt < s.cfg.MaxAttempts; attempt++ {
		cur, err := s.load(ctx, gameID)
		if err != nil {
			return nil, nil, err
		}
		color, err := authorize(cur.state, v, false)
		if err != nil {
			return nil, nil, err
		}
		next, _ := applyDue(cur.state, s.cfg.Now())
		if next == cur.state {
			return cur.state, color, nil
		}
		err = s.write(ctx, cur, next)
		if errors.Is(err, ErrVersionConflict) {
			continue // someone else changed it (maybe applied the same timeout)
		}
		if err != nil {
			return nil, nil, err
		}
		return next, color, nil
	}
	return nil, nil, ErrBusy
}

// PGN returns the game's PGN text.
func (s *Service) PGN(ctx context.Context, gameID string, v Viewer) (string, error) {
	st, _, err := s.current(ctx, gameID, v)
	if err != nil {
		return "", err
	}
	return game.PGN(st)
}
