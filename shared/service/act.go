package service

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// ActionInput is one player action.
type ActionInput struct {
	Type    string
	Payload json.RawMessage
	// ExpectedVersion, when set, makes the action apply only to that version
	// (else a *ConflictError with the current game).
	ExpectedVersion *int64
	// RequestID, when set, makes the action idempotent for this seat.
	RequestID string
}

// Outcome is the answer to an action: the game as the actor sees it and the
// events the action (and any timeout applied before it) produced.
type Outcome struct {
	Game   *game.View
	Events json.RawMessage // a JSON array
}

// MaxRequestIDLen bounds requestId.
const MaxRequestIDLen = 128

// Act applies a seat's action: load → apply any due timeout → check the
// request log → apply → conditional write, retried on lost races (unless
// ExpectedVersion pins the version).
func (s *Service) Act(ctx context.Context, gameID string, v Viewer, in ActionInput) (Outcome, error) {
	if len(in.RequestID) > MaxRequestIDLen || !printable(in.RequestID) {
		return Outcome{}, &game.InputError{Field: "requestId", Message: "requestId는 128자 이하의 일반 문자여야 해요"}
	}
	action, err := game.DecodeAction(in.Type, in.Payload)
	if err != nil {
		return Outcome{}, err
	}
	action.RequestID = in.RequestID

	for attempt := 0; attempt < s.cfg.MaxAttempts; attempt++ {
		cur, err := s.load(ctx, gameID)
		if err != nil {
			return Outcome{}, err
		}
		color, err := authorize(cur.state, v, true)
		if err != nil {
			return Outcome{}, err
		}
		now := s.cfg.Now()
		if in.RequestID != "" {
			if done, ok := cur.state.AppliedRequest(*color, in.RequestID); ok {
				return s.replayOutcome(ctx, cur, *color, done)
			}
		}
		if in.ExpectedVersion != nil && *in.ExpectedVersion != cur.state.Version {
			return Outcome{}, s.conflict(cur.state, color)
		}
		timedOut, timeoutEvents := applyDue(cur.state, now)
		next, events, applyErr := game.Apply(timedOut, *color, action, now)
		if applyErr != nil {
			// The action is refused; a timeout found on the way still stands.
			if timedOut != cur.state {
				if err := s.write(ctx, cur, timedOut); err != nil && !errors.Is(err, ErrVersionConflict) {
					return Outcome{}, err
				}
			}
			return Outcome{}, applyErr
		}
		err = s.write(ctx, cur, next)
		if errors.Is(err, ErrVersionConflict) {
			if in.ExpectedVersion != nil {
				return s.conflictAfterLostRace(ctx, gameID, color, in.RequestID)
			}
			continue
		}
		if err != nil {
			return Outcome{}, err
		}
		return s.outcome(next, *color, now, append(timeoutEvents, events...))
	}
	return Outcome{}, ErrBusy
}

func (s *Service) outcome(st *game.State, you chess.Color, now time.Time, events []game.Event) (Outcome, error) {
	view, err := game.ViewOf(st, &you, now)
	if err != nil {
		return Outcome{}, err
	}
	if events == nil {
		events = []game.Event{}
	}
	raw, err := json.Marshal(events)
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Game: view, Events: raw}, nil
}

// replayOutcome answers a retried request with its stored events and the
// current game, and re-arms the deadline in case the first answer was lost
// before scheduling finished.
func (s *Service) replayOutcome(ctx context.Context, cur loaded, you chess.Color, done game.AppliedRequest) (Outcome, error) {
	s.scheduleDeadline(ctx, cur.state, cur.rec.Deadline)
	view, err := game.ViewOf(cur.state, &you, s.cfg.Now())
	if err != nil {
		return Outcome{}, err
	}
	events := done.Events
	if len(events) == 0 {
		events = json.RawMessage("[]")
	}
	return Outcome{Game: view, Events: events}, nil
}

func (s *Service) conflict(st *game.State, you *chess.Color) error {
	view, err := game.ViewOf(st, you, s.cfg.Now())
	if err != nil {
		return err
	}
	return &ConflictError{Current: view}
}

// conflictAfterLostRace reloads after a lost conditional write of a request
// pinned to a version: a concurrent duplicate of the same requestId gets the
// stored outcome, anything else a 409 with the current game.
func (s *Service) conflictAfterLostRace(ctx context.Context, gameID string, you *chess.Color, requestID string) (Outcome, error) {
	cur, err := s.load(ctx, gameID)
	if err != nil {
		return Outcome{}, err
	}
	if requestID != "" {
		if done, ok := cur.state.AppliedRequest(*you, requestID); ok {
			return s.replayOutcome(ctx, cur, *you, done)
		}
	}
	return Outcome{}, s.conflict(cur.state, you)
}

// SetPresence records a seat connecting or disconnecting (disconnect grace,
// seeds/000 §8.5) and returns the game as that seat sees it.
func (s *Service) SetPresence(ctx context.Context, gameID string, v Viewer, connected bool) (*game.View, error) {
	for attempt := 0; attempt < s.cfg.MaxAttempts; attempt++ {
		cur, err := s.load(ctx, gameID)
		if err != nil {
			return nil, err
		}
		color, err := authorize(cur.state, v, true)
		if err != nil {
			return nil, err
		}
		now := s.cfg.Now()
		next, _ := applyDue(cur.state, now)
		next, _, _ = game.SetPresence(next, *color, connected, now)
		if next == cur.state {
			return game.ViewOf(cur.state, color, now)
		}
		err = s.write(ctx, cur, next)
		if errors.Is(err, ErrVersionConflict) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return game.ViewOf(next, color, now)
	}
	return nil, ErrBusy
}
