package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/obs"
)

// The effects of a commit: what must happen because a version was stored.
//
//   - announce it to this process's watchers (long polls, the local stream
//     hub) — always, in the committing process;
//   - back the game's timer: when the record claims an armed time its
//     predecessor did not, the scheduler gets that timer (timers.go);
//   - start the AI when its turn begins;
//   - apply a rated result.
//
// They run on a context detached from the request (a client that hangs up
// after its move must not cancel its game's timer), each retried with
// backoff (retry.Effect); one that still fails is queued and retried in the
// background (retry.EffectBacklog) until it succeeds or a newer commit of
// the game supersedes it, and the failure is logged as an error. With
// EffectsByStream all but the announcement are left to the table's change
// stream, whose consumer calls ArmTimer and Committed for each record.

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

// commit is one stored version as its effects see it: the states before
// and after (prev nil for a new game) and the records' armed times.
type commit struct {
	prev, next           *game.State
	prevArmed, nextArmed time.Time
	// steps are the versions whose notifications the commit owes, oldest
	// first; nil for a commit on its own (prev → next). A retry that took
	// over older failed commits of its game (enqueue) owes theirs too,
	// version by version, as the change stream's consumer on AWS delivers
	// them record by record: the span from the oldest prev to next would
	// miss a turn that came and went (a yourTurn of a version in between,
	// or the one after two moves), and what it found would carry the
	// newest version's id instead of its own.
	steps []step
}

// step is one committed version's transition, for its notifications.
type step struct{ prev, next *game.State }

// notificationSteps are the transitions whose notifications c delivers.
func (c commit) notificationSteps() []step {
	if c.steps != nil {
		return c.steps
	}
	return []step{{c.prev, c.next}}
}

// maxOwedSteps bounds the versions a game's pending retry keeps for their
// notifications (each holds a state in memory while the effects fail);
// past it the oldest are dropped, logged.
const maxOwedSteps = 64

// pendingEffect is a commit whose effects failed.
type pendingEffect struct {
	c        commit
	attempts int
	due      time.Time
}

func newEffects(s *Service) *effects {
	ctx, cancel := context.WithCancel(context.Background())
	e := &effects{s: s, pending: map[string]pendingEffect{}, wake: make(chan struct{}, 1), stop: cancel, done: make(chan struct{})}
	go e.retryLoop(ctx)
	return e
}

// committed runs the effects of a new version c.next (after c.prev, nil
// for a new game).
func (e *effects) committed(ctx context.Context, c commit, events []game.Event) {
	e.s.feed.publish(Change{Prev: c.prev, State: c.next, Events: events})
	e.apply(ctx, c)
}

// armed runs the effects of a write that changed only the armed time of
// st's timer (timers.go): nothing is announced, no new version exists.
func (e *effects) armed(ctx context.Context, st *game.State, prevArmed, nextArmed time.Time) {
	e.apply(ctx, commit{prev: st, next: st, prevArmed: prevArmed, nextArmed: nextArmed})
}

func (e *effects) apply(ctx context.Context, c commit) {
	if e.s.cfg.Effects == EffectsByStream {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), effectTimeout)
	defer cancel()
	if err := e.s.applyEffects(ctx, c); err != nil {
		e.s.log.Error("effects of a commit failed; retrying in the background",
			"game", c.next.GameID, "version", c.next.Version, "err", err)
		e.enqueue(c, 1)
	}
}

// applyEffects backs the timer, starts the AI and applies a rated result
// for c, each with bounded retries.
func (s *Service) applyEffects(ctx context.Context, c commit) error {
	return errors.Join(s.ArmTimer(ctx, c.next, c.prevArmed, c.nextArmed), s.stateEffects(ctx, c.prev, c.next, c.notificationSteps()))
}

// stateEffects are the effects decided by the states alone: the AI's turn
// and a rated result from prev to next, and the notifications of steps.
func (s *Service) stateEffects(ctx context.Context, prev, next *game.State, steps []step) error {
	var errs []error
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
		if err := s.retry(ctx, "notifications", func(ctx context.Context) error {
			var errs []error
			for _, st := range steps {
				errs = append(errs, s.notifyCommitted(ctx, st.prev, st.next))
			}
			return errors.Join(errs...)
		}); err != nil {
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

// enqueue keeps a commit whose effects failed for the retry loop. A game
// has one pending retry: two failed commits of it become one, the newer's
// (its timer and AI supersede the older's), from the older's prev.
func (e *effects) enqueue(c commit, attempts int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	if old, ok := e.pending[c.next.GameID]; ok {
		// Either may be the older: a retry of an older commit can fail
		// after a newer one was queued.
		older, newer := old.c, c
		if older.next.Version > newer.next.Version {
			older, newer = newer, older
		}
		attempts = max(attempts, old.attempts)
		// What happened in between still counts: from the older commit's
		// prev, a game that finished rated in between still has its
		// ratings applied, once, and an armed time the older commit
		// claimed and could not back is backed unless the newer one
		// claims another; and every version's notifications are owed.
		steps := append(slices.Clip(older.notificationSteps()), newer.notificationSteps()...)
		if drop := len(steps) - maxOwedSteps; drop > 0 {
			e.s.log.Error("notifications of a game's failed commits dropped: too many pending",
				"game", c.next.GameID, "versions", drop, "from", steps[0].next.Version)
			steps = steps[drop:]
		}
		c = newer
		c.prev, c.prevArmed, c.steps = older.prev, older.prevArmed, steps
	}
	e.pending[c.next.GameID] = pendingEffect{c: c, attempts: attempts, due: time.Now().Add(e.s.retries.backlog.Delay(attempts))}
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
			err := e.s.applyEffects(actx, p.c)
			cancel()
			if err != nil {
				e.s.log.Error("effects still failing", "game", p.c.next.GameID, "version", p.c.next.Version, "attempts", p.attempts+1, "err", err)
				e.enqueue(p.c, p.attempts+1)
			} else {
				e.s.log.Info("effects recovered", "game", p.c.next.GameID, "version", p.c.next.Version, "attempts", p.attempts+1)
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
		e.s.log.Warn("effects not recovered before shutdown", "game", id, "version", p.c.next.Version)
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

// Committed runs the effects of a stored version that its states decide
// (the AI's turn, a rated result) for the table's change stream
// (EffectsByStream): next is the committed state and prev the one it
// replaced (nil for a new game), both decoded once by the stream's
// consumer, which also calls ArmTimer with the records' armed times. An
// error means the effects could not be done and the stream should deliver
// the record again.
func (s *Service) Committed(ctx context.Context, prev, next *game.State) error {
	return s.stateEffects(ctx, prev, next, []step{{prev, next}})
}
