package service

import (
	"context"
	"errors"

	"chessapi/shared/game"
)

// HandleTimeout is the target of scheduled deadlines (the timeout function,
// the local scheduler). Deliveries are at least once and may be stale, so it
// decides from the stored game alone: nothing due → nothing to do (re-arming
// the schedule if it fired early for the current version); a due human turn
// → the timeout is applied; a due AI turn → the AI is started again, because
// an AI seat never loses on time. It returns an error only when the work
// could not be done, so the scheduler retries.
func (s *Service) HandleTimeout(ctx context.Context, task TimeoutTask) error {
	for attempt := 0; attempt < s.cfg.MaxAttempts; attempt++ {
		cur, err := s.load(ctx, task.GameID)
		if errors.Is(err, ErrNotFound) {
			s.log.Warn("timeout for unknown game", "game", task.GameID)
			return nil
		}
		if err != nil {
			return err
		}
		st := cur.state
		deadline, ok := game.Deadline(st)
		if !ok {
			return nil // finished, or still waiting for a second player
		}
		now := s.cfg.Now()
		if now.Before(deadline) {
			if st.Version == task.Version {
				s.scheduleDeadline(ctx, st, deadline)
			}
			return nil
		}
		if _, aiTurn := st.AITurn(); aiTurn {
			return s.retriggerAI(ctx, st)
		}
		next, _ := applyDue(st, now)
		if next == st {
			return nil
		}
		err = s.write(ctx, cur, next)
		if errors.Is(err, ErrVersionConflict) {
			continue
		}
		return err
	}
	return ErrBusy
}

// retriggerAI starts a due AI turn again and schedules another check in
// case this attempt fails too.
func (s *Service) retriggerAI(ctx context.Context, st *game.State) error {
	if s.cfg.AITrigger == nil {
		return nil
	}
	s.log.Warn("AI turn overdue, triggering again", "game", st.GameID, "version", st.Version)
	if err := s.cfg.AITrigger.TriggerAI(ctx, AITask{GameID: st.GameID, Version: st.Version}); err != nil {
		return err
	}
	s.scheduleDeadline(ctx, st, s.cfg.Now().Add(s.cfg.AIRetryAfter))
	return nil
}
