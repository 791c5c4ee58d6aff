package service

import (
	"context"
	"errors"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/game"
	"chessapi/shared/obs"
	"chessapi/shared/retry"
)

// The game's one timer, armed lazily (SPEC §7, §16.4).
//
// Every request applies a due timeout itself, so the timer is the backstop
// for a game nobody calls. It does not have to fire at the deadline: it has
// to fire at or before it, and a delivery that finds nothing due arms the
// timer again for the deadline as it then is. So:
//
//   - the record of every version carries the instant the game's timer is
//     armed for (GameRecord.ArmedAt), written in the same conditional write
//     as the state. A new version's writer keeps the armed instant when it
//     is still ahead and at or before the new deadline, and otherwise arms
//     the new deadline (armedFor); two writers of one version cannot both
//     win, and the loser decides again from what the winner wrote;
//   - the scheduler gets a timer only when a record claims an armed instant
//     its predecessor did not (ArmTimer): on AWS the games table's change
//     stream carries both records' claims to the effects consumer, so a
//     claim is backed even when its writer dies right after the write, and
//     no timer is made for a write that was lost. Timers are never deleted:
//     a moving clock keeps its armed instant, and a finished game's
//     leftover fires once and does nothing (EventBridge Scheduler deletes a
//     one-time schedule after it fires);
//   - a delivery (HandleTimeout) applies a timeout that is due, starts
//     again an AI seat that has not answered, and otherwise, if it is the
//     timer the game counts on, arms the game's deadline as it now is: a
//     write of the armed instant alone (the same version), backed by the
//     stream like any other. A delivery of a superseded timer (the game's
//     armed instant is another one, still ahead and at or before the
//     deadline) and a delivery for a finished game do nothing.
//
// A Fischer clock's deadline only moves later while a player thinks (the
// opponent's time and the increment are added), so a game between humans
// arms about one timer per fire, not per move (docs/operations.md measures
// it).

// storedInstant is t as stores keep armed and deadline instants (epoch
// milliseconds, rounded up; DeadlineMillis), so that an instant compared
// with a stored one compares equal when it is the same.
func storedInstant(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(DeadlineMillis(t)).UTC()
}

// timer is the instant st's timer should fire, as of now: the game's
// deadline on a human's turn, or the turn's next timeRunningOut reminder
// when that comes first (a registered player's, with notifications on,
// SPEC §16.3); the AI watchdog's next look on an AI seat's turn (an AI
// never loses on time; one that does not answer is started again, look by
// look). False when the game has no deadline.
func (s *Service) timer(st *game.State) (time.Time, bool) {
	deadline, ok := game.Deadline(st)
	if !ok {
		return time.Time{}, false
	}
	if _, ai := st.AITurn(); ai {
		now := s.now()
		attempt := s.watchdogAttempt(st, now)
		if !s.watchdog(st, attempt).After(now) {
			attempt++
		}
		return s.watchdog(st, attempt), true
	}
	if r, ok := s.nextReminder(st, s.now()); ok && r.At.Before(deadline) {
		return r.At, true
	}
	return deadline, true
}

// armedFor is the armed instant the record of a new version carries, from
// the one its predecessor carried (zero for a new game) and the new
// record's deadline (zero: none). A timer armed at or before the deadline
// and still ahead is kept: its delivery re-arms for the deadline. One armed
// after the deadline, or one already due (it fired, or is about to: its
// delivery decides from the game as it is by then), gives way to the
// deadline. A game without a deadline keeps whatever was armed.
func (s *Service) armedFor(armed, deadline time.Time) time.Time {
	armed, deadline = storedInstant(armed), storedInstant(deadline)
	switch {
	case deadline.IsZero():
		return armed
	case armed.IsZero(), !armed.After(s.now()), deadline.Before(armed):
		return deadline
	}
	return armed
}

// ArmTimer backs the armed instant a stored version of st claims: when
// its record claims an instant (nextArmed) its predecessor's did not
// (prevArmed), the scheduler gets a timer for it, with bounded retries.
// Records that keep their predecessor's claim cost nothing. The table's
// change stream consumer calls it for every record; locally the commit
// does.
func (s *Service) ArmTimer(ctx context.Context, st *game.State, prevArmed, nextArmed time.Time) error {
	prevArmed, nextArmed = storedInstant(prevArmed), storedInstant(nextArmed)
	if s.cfg.Scheduler == nil || nextArmed.IsZero() || nextArmed.Equal(prevArmed) {
		return nil
	}
	task := TimeoutTask{GameID: st.GameID, Version: st.Version, Deadline: nextArmed}
	if err := s.retry(ctx, "timer", func(ctx context.Context) error { return s.cfg.Scheduler.ScheduleTimeout(ctx, task) }); err != nil {
		s.cfg.Metrics.Count(obs.MetricScheduleFailures, 1)
		return err
	}
	return nil
}

// HandleTimeout is the target of the game's timers (the timeout function,
// the local scheduler). Deliveries are at least once and may be early,
// late or superseded, so it decides from the stored game: a due timeout
// is applied; an AI seat's turn past the watchdog's look this timer stood
// for starts the AI again (or, after AIRestarts looks, the AI seat
// forfeits); a delivery of the game's armed timer that finds nothing due
// arms the game's timer for its deadline as it now is. A superseded timer
// and a finished or unknown game are no-ops. An error means the work
// could not be done and the delivery should be retried.
func (s *Service) HandleTimeout(ctx context.Context, task TimeoutTask) error {
	return s.timerDue(ctx, task, false)
}

// RearmTimer is HandleTimeout for a game whose armed instant cannot be
// trusted (its table was restored: the scheduler's timers are gone, the
// records still claim them). It does what a delivery of the game's armed
// timer does, and then gives the scheduler a timer for the game's timer
// (its deadline, or the AI watchdog's next look) itself, whether or not
// the record claimed it already, and makes the record claim it; so it is
// safe to repeat (cmd/ops rearm).
func (s *Service) RearmTimer(ctx context.Context, task TimeoutTask) error {
	return s.timerDue(ctx, task, true)
}

func (s *Service) timerDue(ctx context.Context, task TimeoutTask, force bool) error {
	task.Deadline = storedInstant(task.Deadline)
	err := s.retries.game.Do(ctx, func(int) error {
		err := s.timerRound(ctx, task, force)
		if errors.Is(err, ErrVersionConflict) {
			return err // another writer: decide again from what it wrote
		}
		return retry.Permanent(err)
	})
	if errors.Is(err, ErrNotFound) {
		s.log.Warn("timeout for unknown game", "game", task.GameID)
		return nil
	}
	if errors.Is(err, ErrVersionConflict) {
		return ErrBusy
	}
	return err
}

// timerRound is one read of the game and what the delivery of task does
// to it; ErrVersionConflict asks for another round.
func (s *Service) timerRound(ctx context.Context, task TimeoutTask, force bool) error {
	cur, err := s.load(ctx, task.GameID)
	if err != nil {
		return err
	}
	st, now := cur.state, s.now()
	if st.Phase == game.PhaseFinished {
		return nil // a leftover timer: nothing to do
	}
	_, aiTurn := st.AITurn()
	attempt := 0
	if aiTurn {
		attempt = s.watchdogAttempt(st, task.Deadline)
	}
	forfeit := aiTurn && attempt >= s.cfg.AIRestarts && !now.Before(s.watchdog(st, attempt))
	if next, _, _ := game.Reduce(st, game.Timeout{}, now); forfeit || (next != nil && next != st) {
		return s.applyDue(ctx, task)
	}
	want, ok := s.timer(st)
	if !ok {
		return nil // no deadline: no timer to keep
	}
	armed := cur.rec.ArmedAt
	theArmed := armed.Equal(task.Deadline)
	if !force && !theArmed && armed.After(now) && !armed.After(want) {
		// Superseded: the game's armed timer is still ahead. The reminders
		// due are sent all the same (a retried delivery whose reminder
		// failed after it armed the next timer comes this way).
		return s.remindDue(ctx, st)
	}
	if aiTurn && !now.Before(s.watchdog(st, attempt)) {
		// The AI has not answered by this look: the next look first, so
		// that whatever happens to this trigger the turn is looked at
		// again; then the trigger, retried. A trigger that still fails is
		// a metric, not an error: the next look starts the AI again (or,
		// the looks spent, the AI seat forfeits).
		if err := s.armAt(ctx, cur, s.watchdog(st, attempt+1), force); err != nil {
			return err
		}
		s.cfg.Metrics.Count(obs.MetricAIRetriggers, 1)
		s.log.WarnContext(ctx, "AI turn overdue, starting it again", "game", st.GameID, "version", st.Version, "attempt", attempt+1)
		if err := s.retry(ctx, "AI trigger", func(ctx context.Context) error { return s.triggerAI(ctx, st) }); err != nil {
			s.cfg.Metrics.Count(obs.MetricAITriggerFailures, 1)
			s.log.ErrorContext(ctx, "AI turn could not be started again; the watchdog will try once more", "game", st.GameID, "err", err)
		}
		return nil
	}
	if !force && theArmed && !want.After(task.Deadline) {
		// The armed timer fired before this clock says it was due (the
		// scheduler's clock runs ahead): the next timer must be a later
		// one, or nothing would be left to fire.
		want = task.Deadline.Add(time.Millisecond)
	}
	// The timer for what comes next first (the turn's next reminder or its
	// deadline), then the reminders due by now: a delivery retried after a
	// failed reminder finds the timer armed and the reminder not sent yet
	// (each is sent once: its id is its turn and due time).
	if err := s.armAt(ctx, cur, want, force); err != nil {
		return err
	}
	return s.remindDue(ctx, st)
}

// remindDue sends the timeRunningOut reminders of st's turn due by now,
// with the effects' retries.
func (s *Service) remindDue(ctx context.Context, st *game.State) error {
	if s.cfg.Notifications == nil {
		return nil
	}
	if err := s.retry(ctx, "reminders", func(ctx context.Context) error { return s.remind(ctx, st) }); err != nil {
		s.cfg.Metrics.Count(obs.MetricNotificationFailures, 1)
		return err
	}
	return nil
}

// applyDue writes what a delivery finds due: the timeout, or the AI
// seat's forfeit; the write's own armed instant (armedFor) and its stream
// record do the rest.
func (s *Service) applyDue(ctx context.Context, task TimeoutTask) error {
	_, err := s.update(ctx, txn{
		gameID: task.GameID,
		access: system,
		step: func(st *game.State, _ *chess.Color) (game.Step, error) {
			if _, ai := st.AITurn(); ai {
				attempt := s.watchdogAttempt(st, task.Deadline)
				if attempt >= s.cfg.AIRestarts && !s.now().Before(s.watchdog(st, attempt)) {
					s.log.Error("AI seat did not answer; it forfeits", "game", st.GameID, "version", st.Version, "attempts", attempt+1)
					return game.AIForfeit{}, nil
				}
			}
			return nil, nil // only the timeout that is due
		},
	})
	return err
}

// armAt makes cur's record claim at as its armed instant: a write of that
// alone (the same version, conditioned on it: ErrVersionConflict when the
// game moved on meanwhile). The stream (or, locally, the commit's effects)
// backs the claim; force gives the scheduler the timer first, itself, for
// a record whose claims cannot be trusted.
func (s *Service) armAt(ctx context.Context, cur loaded, at time.Time, force bool) error {
	at = storedInstant(at)
	if force && s.cfg.Scheduler != nil {
		task := TimeoutTask{GameID: cur.rec.GameID, Version: cur.rec.Version, Deadline: at}
		if err := s.retry(ctx, "timer", func(ctx context.Context) error { return s.cfg.Scheduler.ScheduleTimeout(ctx, task) }); err != nil {
			s.cfg.Metrics.Count(obs.MetricScheduleFailures, 1)
			return err
		}
	}
	rec := cur.rec
	if deadline, ok := s.timer(cur.state); ok {
		// On an AI seat's turn the next look moved on: the record says
		// so (the deadline a restart re-arms from).
		rec.Deadline = deadline
	}
	if rec.ArmedAt.Equal(at) && rec.Deadline.Equal(storedInstant(cur.rec.Deadline)) {
		return nil
	}
	rec.ArmedAt = at
	if err := s.cfg.Store.Update(ctx, rec, rec.Version); err != nil {
		return err
	}
	if !force {
		s.effects.armed(ctx, cur.state, cur.rec.ArmedAt, at)
	}
	return nil
}

// watchdog is when the AI watchdog looks at an AI seat's turn for the
// attempt-th time (0: the first look, the level's think time plus the
// slack after the turn began).
func (s *Service) watchdog(st *game.State, attempt int) time.Time {
	return time.UnixMilli(st.Clock.TurnStartedAt).Add(time.Duration(attempt+1) * s.aiTurnBound(st))
}

// watchdogAttempt is the look of st's AI turn that falls at or just before
// at (0 for any instant before the first look): a timer armed for a look
// says which look it is.
func (s *Service) watchdogAttempt(st *game.State, at time.Time) int {
	n := int(at.Sub(time.UnixMilli(st.Clock.TurnStartedAt))/s.aiTurnBound(st)) - 1
	return max(n, 0)
}

// aiTurnBound is how long an AI seat's turn may take before the AI is
// started again: its think time (the level's; at full strength with a
// running clock, up to the longest search) plus the watchdog's slack.
func (s *Service) aiTurnBound(st *game.State) time.Duration {
	level, _ := st.AITurn()
	lv, err := engine.ParseLevel(level)
	if err != nil {
		return engine.MaxMoveTime + s.cfg.AIWatchdog
	}
	think := lv.ThinkTime()
	if lv == engine.LevelMax {
		think = engine.LevelHard.ThinkTime()
		if st.Clock.Started[st.Turn()] && st.Options.TimeControl.Kind == game.TimeFischer {
			think = engine.MaxMoveTime
		}
	}
	return think + s.cfg.AIWatchdog
}
