package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"chessapi/shared/engine"
	"chessapi/shared/game"
	"chessapi/shared/obs"
)

// The effects of a commit: what must happen because a version was stored.
//
//   - announce it to this process's watchers (long polls, the local stream
//     hub) — always, in the committing process;
//   - keep the game's one timer on its next deadline: armed when the
//     deadline changes, removed when the game has none any more;
//   - start the AI when its turn begins.
//
// They run on a context detached from the request (a client that hangs up
// after its move must not cancel its game's timer), each retried with
// backoff (retry.Effect); one that still fails is queued and retried in the
// background (retry.EffectBacklog) until it succeeds or a newer commit of
// the game supersedes it, and the
// failure is logged as an error. With EffectsByStream the timer and the AI
// are left to the stream consumer (Service.Committed).

// effectTimeout bounds one attempt of the effects of a commit.
const effectTimeout = 10 * time.Second

type effects struct {
	s *Service

	mu      sync.Mutex
	pending map[string]pendingEffect // game id → effects to retry
	wake    chan struct{}
	closed  bool
	stop    context.CancelFunc
	done    chan struct{}
}

// pendingEffect is a commit whose effects failed.
type pendingEffect struct {
	prev, next *game.State
	attempts   int
	due        time.Time
}

func newEffects(s *Service) *effects {
	ctx, cancel := context.WithCancel(context.Background())
	e := &effects{s: s, pending: map[string]pendingEffect{}, wake: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	go e.retryLoop(ctx)
	return e
}

// committed runs the effects of next, the version after prev (nil for a
// new game).
func (e *effects) committed(ctx context.Context, prev, next *game.State, events []game.Event) {
	e.s.feed.publish(Change{Prev: prev, State: next, Events: events})
	if e.s.cfg.Effects == EffectsByStream {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), effectTimeout)
	defer cancel()
	if err := e.s.applyEffects(ctx, prev, next); err != nil {
		e.s.log.Error("effects of a commit failed; retrying in the background",
			"game", next.GameID, "version", next.Version, "err", err)
		e.enqueue(prev, next, 1)
	}
}

// applyEffects arms the timer, starts the AI, applies a rated result and
// delivers the notifications of next, each with bounded retries.
func (s *Service) applyEffects(ctx context.Context, prev, next *game.State) error {
	var errs []error
	if err := s.retry(ctx, "timer", func(ctx context.Context) error { return s.syncTimer(ctx, prev, next) }); err != nil {
		s.cfg.Metrics.Count(obs.MetricScheduleFailures, 1)
		errs = append(errs, err)
	}
	if aiTurnBegins(prev, next) {
		if err := s.retry(ctx, "AI trigger", func(ctx context.Context) error { return s.triggerAI(ctx, next) }); err != nil {
			s.cfg.Metrics.Count(obs.MetricAITriggerFailures, 1)
			errs = append(errs, err)
		}
	}
	if ratingFinished(prev, next) {
		if err := s.retry(ctx, "ratings", func(ctx context.Context) error { _, err := s.applyRatings(ctx, next); return err }); err != nil {
			errs = append(errs, err)
		}
	}
	// After the ratings: a gameEnded notification tells the rating change
	// the result carries (the players' records are the ratings' effect).
	if s.cfg.Notifications != nil {
		if err := s.retry(ctx, "notifications", func(ctx context.Context) error { return s.notifyCommitted(ctx, prev, next) }); err != nil {
			s.cfg.Metrics.Count(obs.MetricNotificationFailures, 1)
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// retry calls f as the effect policy says (EffectRetries tries, from
// EffectBackoff doubling), counting and logging every failure it retries.
func (s *Service) retry(ctx context.Context, what string, f func(context.Context) error) error {
	p := s.retries.effect
	p.OnRetry = func(attempt int, err error, wait time.Duration) {
		s.cfg.Metrics.Count(obs.MetricEffectRetries, 1)
		s.log.WarnContext(ctx, "effect failed, retrying", "effect", what, "attempt", attempt, "retryIn", wait, "err", err)
	}
	if err := p.Do(ctx, func(int) error { return f(ctx) }); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// timerFor returns the task the game's one timer should hold at time
// after, if any: the game's deadline on a human's turn, or the turn's
// next timeRunningOut reminder after after when that comes first (a
// registered player's, with notifications on); on an AI seat's turn the
// AI watchdog (an AI never loses on time, but an AI that does not answer
// is started again, attempt by attempt).
func (s *Service) timerFor(st *game.State, attempt int, after time.Time) (TimeoutTask, bool) {
	deadline, ok := game.Deadline(st)
	if !ok {
		return TimeoutTask{}, false
	}
	if _, ai := st.AITurn(); ai {
		deadline = time.UnixMilli(st.Clock.TurnStartedAt).Add(time.Duration(attempt+1) * s.aiTurnBound(st))
	} else if r, ok := s.nextReminder(st, after); ok && r.At.Before(deadline) {
		deadline = r.At
	}
	return TimeoutTask{GameID: st.GameID, Version: st.Version, Deadline: deadline, Attempt: attempt}, true
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

// syncTimer keeps the game's timer on next's deadline (or reminder):
// armed when it differs from prev's, both as of now, removed when next
// has none. Writes that leave the deadline alone (an offer, a reconnect)
// touch no timer.
func (s *Service) syncTimer(ctx context.Context, prev, next *game.State) error {
	if s.cfg.Scheduler == nil {
		return nil
	}
	now := s.now()
	task, ok := s.timerFor(next, 0, now)
	var before TimeoutTask
	var had bool
	if prev != nil {
		before, had = s.timerFor(prev, 0, now)
	}
	switch {
	case ok && had && task.Deadline.Equal(before.Deadline):
		return nil
	case ok:
		if had {
			task.Replaces = before.Deadline
		}
		return s.cfg.Scheduler.ScheduleTimeout(ctx, task)
	case had:
		return s.cfg.Scheduler.CancelTimeout(ctx, next.GameID)
	}
	return nil
}

// aiTurnBegins reports whether next puts an AI seat to move where prev did
// not (a new game, or a move): the AI is started once per turn; later
// commits during its turn (an offer, a reconnect) do not start it again.
func aiTurnBegins(prev, next *game.State) bool {
	if _, ok := next.AITurn(); !ok {
		return false
	}
	if prev == nil {
		return true
	}
	_, was := prev.AITurn()
	return !was || prev.Ply() != next.Ply()
}

func (s *Service) triggerAI(ctx context.Context, st *game.State) error {
	if s.cfg.AITrigger == nil {
		return nil
	}
	return s.cfg.AITrigger.TriggerAI(ctx, AITask{GameID: st.GameID, Version: st.Version, Ply: st.Ply()})
}

// enqueue keeps a commit whose effects failed for the retry loop; a newer
// commit of the same game replaces an older one (its effects supersede
// them: the timer follows the latest deadline).
func (e *effects) enqueue(prev, next *game.State, attempts int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if old, ok := e.pending[next.GameID]; ok {
		if old.next.Version > next.Version {
			return
		}
		// The newer commit's effects supersede the older one's (the timer
		// follows the latest deadline), but what happened in between still
		// counts: from the older commit's prev, a game that finished rated
		// in between still has its ratings applied, once.
		prev = old.prev
	}
	e.pending[next.GameID] = pendingEffect{prev: prev, next: next, attempts: attempts, due: time.Now().Add(e.s.retries.backlog.Delay(attempts))}
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// retryLoop retries failed effects until they succeed; each game's latest
// failed commit is retried with a growing pause.
func (e *effects) retryLoop(ctx context.Context) {
	defer close(e.done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.mu.Lock()
		next := time.Now().Add(time.Hour)
		var due []pendingEffect
		for id, p := range e.pending {
			if !p.due.After(time.Now()) {
				due = append(due, p)
				delete(e.pending, id)
			} else if p.due.Before(next) {
				next = p.due
			}
		}
		e.mu.Unlock()
		for _, p := range due {
			actx, cancel := context.WithTimeout(ctx, effectTimeout)
			err := e.s.applyEffects(actx, p.prev, p.next)
			cancel()
			if err != nil {
				e.s.log.Error("effects still failing", "game", p.next.GameID, "version", p.next.Version, "attempts", p.attempts+1, "err", err)
				e.enqueue(p.prev, p.next, p.attempts+1)
			} else {
				e.s.log.Info("effects recovered", "game", p.next.GameID, "version", p.next.Version, "attempts", p.attempts+1)
			}
		}
		if len(due) > 0 {
			continue
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		case <-timer.C:
		}
	}
}

// close stops the retry loop; failed effects still pending are logged (the
// timers are re-armed from the store at the next start).
func (e *effects) close(timeout time.Duration) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	for id, p := range e.pending {
		e.s.log.Warn("effects not recovered before shutdown", "game", id, "version", p.next.Version)
	}
	e.mu.Unlock()
	e.stop()
	select {
	case <-e.done:
	case <-time.After(timeout):
	}
}

// PendingEffects is the number of commits whose effects are waiting for a
// retry (for health checks and tests).
func (s *Service) PendingEffects() int {
	s.effects.mu.Lock()
	defer s.effects.mu.Unlock()
	return len(s.effects.pending)
}

// Committed runs the effects of a stored version for the table's change
// stream (EffectsByStream): next is the committed state and prev the one it
// replaced (nil for a new game), both decoded once by the stream's consumer.
// An error means the effects could not be done and the stream should
// deliver the record again.
func (s *Service) Committed(ctx context.Context, prev, next *game.State) error {
	return s.applyEffects(ctx, prev, next)
}
