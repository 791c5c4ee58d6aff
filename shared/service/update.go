package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/obs"
	"chessapi/shared/retry"
)

// How a game changes: every use case (create, act, join, presence, a read
// that enforces the clock, the scheduled timeout, the AI's move, a rematch
// link) describes its change as a txn and calls update, which owns the
// whole sequence:
//
//	load → authorize → idempotency → expected version → reducer step
//	(the due timeout first) → conditional write → bounded retry on a lost
//	race → the effects of the commit
//
// A use case differs only in who may ask, the step it asks for and what it
// answers with.

// access is who may run a txn.
type access uint8

const (
	// watching: a seat or a spectator; a player token whose player holds
	// no seat of the game is a spectator (reads and the stream's
	// subscriptions, SPEC §15); a seat token of another game is refused.
	watching access = iota
	// seatOnly: a seat token is required.
	seatOnly
	// system: the service itself (timers, the AI); no caller.
	system
)

// txn is one change asked of a game.
type txn struct {
	gameID string
	caller Caller
	access access
	// requestID and requestHash make an action idempotent per seat.
	requestID, requestHash string
	// expectedVersion pins the change to that version (else a
	// *ConflictError with the current game).
	expectedVersion *int64
	// lookOnly marks a txn that only reads the game for the caller (a
	// view, the stream): a player token is resolved without recording
	// the session's use (the functions that serve views read players and
	// write none).
	lookOnly bool
	// step returns the reducer step for the current state and the caller's
	// seat (nil for a spectator or the system); a nil step asks only for
	// the timeout that is due.
	step func(st *game.State, seat *chess.Color) (game.Step, error)
}

// outcome is what update did.
type outcome struct {
	state *game.State
	// seat is the caller's colour (nil: spectator or system).
	seat *chess.Color
	// events are the events of the committed change (nil when nothing
	// changed).
	events []game.Event
	// replayed is the stored outcome when the request id had been applied
	// before; nothing was changed then.
	replayed *game.AppliedRequest
}

// update runs t until it commits, is refused, or loses the rounds
// retry.GameWrite allows (ErrBusy).
func (s *Service) update(ctx context.Context, t txn) (outcome, error) {
	resolve := s.resolve
	if t.lookOnly {
		resolve = s.resolveLooking
	}
	caller, err := resolve(ctx, t.caller)
	if err != nil {
		return outcome{}, err
	}
	t.caller = caller
	var out outcome
	err = s.retries.game.Do(ctx, func(int) error {
		var err error
		out, err = s.round(ctx, t)
		if errors.Is(err, errLostRace) {
			return err // again, from a fresh read
		}
		return retry.Permanent(err)
	})
	if errors.Is(err, errLostRace) {
		return outcome{}, ErrBusy
	}
	return out, err
}

// errLostRace is a round's answer when its write lost to a concurrent one
// and the txn may run again from a fresh read.
var errLostRace = errors.New("service: lost a write race")

// round is one load → apply → conditional write of t; errLostRace asks
// for another.
func (s *Service) round(ctx context.Context, t txn) (outcome, error) {
	cur, err := s.load(ctx, t.gameID)
	if err != nil {
		return outcome{}, err
	}
	seat, err := s.authorize(cur.state, t.caller, t.access)
	if err != nil {
		return outcome{}, err
	}
	if t.requestID != "" && seat != nil {
		if done, ok := cur.state.AppliedRequest(*seat, t.requestID); ok {
			if done.Hash != "" && t.requestHash != "" && done.Hash != t.requestHash {
				return outcome{}, ErrRequestIDReused
			}
			return outcome{state: cur.state, seat: seat, replayed: &done}, nil
		}
	}
	if t.expectedVersion != nil && *t.expectedVersion != cur.state.Version {
		return outcome{}, s.conflict(cur.state, seat)
	}
	var step game.Step = game.Timeout{}
	if t.step != nil {
		asked, err := t.step(cur.state, seat)
		if err != nil {
			return outcome{}, err
		}
		if asked != nil {
			step = asked
		}
	}
	now := s.now()
	next, events, stepErr := game.Reduce(cur.state, step, now)
	if game.EndsRatedGame(cur.state, next) {
		// The step ends a rated game: again, with both players'
		// standings, so the result carries its rating change (the
		// reducer is deterministic: same step, same outcome).
		standings, err := s.standings(ctx, next)
		if err != nil {
			return outcome{}, err
		}
		next, events, stepErr = game.Reduce(cur.state, game.Rated{Step: step, Players: standings}, now)
	}
	if next == nil || next == cur.state {
		return outcome{state: cur.state, seat: seat}, stepErr
	}
	// next is committed by the reducer: either the step (and the due
	// timeout before it), or, when the step was refused, that timeout
	// alone, which stands for everybody.
	err = s.write(ctx, cur, next, events)
	switch {
	case errors.Is(err, ErrVersionConflict):
		s.cfg.Metrics.Count(obs.MetricConflicts, 1)
		if stepErr != nil {
			return outcome{}, stepErr // the timeout is someone else's to write now
		}
		if t.expectedVersion != nil {
			// Pinned to a version: never run again; the lost race is
			// answered here.
			return s.afterLostPinnedRace(ctx, t, seat)
		}
		return outcome{}, errLostRace
	case err != nil:
		return outcome{}, err
	case stepErr != nil:
		return outcome{}, stepErr
	}
	return outcome{state: next, seat: seat, events: events}, nil
}

// afterLostPinnedRace answers a request pinned to a version whose write
// lost the race: a concurrent duplicate of the same request id gets the
// stored outcome, anything else a 409 with the current game.
func (s *Service) afterLostPinnedRace(ctx context.Context, t txn, seat *chess.Color) (outcome, error) {
	cur, err := s.load(ctx, t.gameID)
	if err != nil {
		return outcome{}, err
	}
	if t.requestID != "" && seat != nil {
		if done, ok := cur.state.AppliedRequest(*seat, t.requestID); ok {
			return outcome{state: cur.state, seat: seat, replayed: &done}, nil
		}
	}
	return outcome{}, s.conflict(cur.state, seat)
}

func (s *Service) conflict(st *game.State, seat *chess.Color) error {
	view, err := game.ViewOf(st, seat, s.now())
	if err != nil {
		return err
	}
	return &ConflictError{Current: view}
}

// insert stores a new game made by newGame and runs the effects of its
// first version. The id is id when given (a rematch claims its id on the
// old game first), else a fresh one per attempt: a 128-bit id collision is
// practically impossible, but an id is never reused.
func (s *Service) insert(ctx context.Context, id string, newGame func(id string) (*game.State, []game.Event, error)) (*game.State, error) {
	for attempt := 0; ; attempt++ {
		gameID := id
		if gameID == "" {
			var err error
			if gameID, err = s.newGameID(); err != nil {
				return nil, err
			}
		}
		st, events, err := newGame(gameID)
		if err != nil {
			return nil, err
		}
		rec, err := s.record(st, loaded{})
		if err != nil {
			return nil, err
		}
		rec.ArmedAt = s.armedFor(time.Time{}, rec.Deadline)
		err = s.cfg.Store.Create(ctx, rec)
		if err == nil {
			s.effects.committed(ctx, commit{next: st, nextArmed: rec.ArmedAt}, events)
			return st, nil
		}
		if !errors.Is(err, ErrAlreadyExists) || attempt > 0 || id != "" {
			return nil, err
		}
	}
}

// loaded is a game read from the store.
type loaded struct {
	rec   GameRecord
	state *game.State
}

func (s *Service) load(ctx context.Context, gameID string) (loaded, error) {
	if !validGameID(gameID) {
		return loaded{}, ErrNotFound
	}
	rec, err := s.cfg.Store.Get(ctx, gameID)
	if err != nil {
		return loaded{}, err
	}
	st, err := s.decode(rec)
	if err != nil {
		return loaded{}, err
	}
	return loaded{rec: rec, state: st}, nil
}

// decode reads a stored record.
func (s *Service) decode(rec GameRecord) (*game.State, error) {
	st, err := storedgame.Decode(rec.State)
	if err != nil {
		return nil, fmt.Errorf("decode game %s v%d: %w", rec.GameID, rec.Version, err)
	}
	if st.GameID == "" && st.Version == 0 {
		// A migrated version-1 state: that schema kept the id and version
		// outside the state, in the record.
		st.GameID, st.Version = rec.GameID, rec.Version
	}
	if st.GameID != rec.GameID || st.Version != rec.Version {
		return nil, fmt.Errorf("game %s v%d: the stored state says game %s v%d", rec.GameID, rec.Version, st.GameID, st.Version)
	}
	return st, nil
}

// record builds the stored record of a state; prev is the version it
// replaces (the zero loaded for a new game: indexOf).
func (s *Service) record(st *game.State, prev loaded) (GameRecord, error) {
	rec := GameRecord{GameID: st.GameID, Version: st.Version, StateVersion: st.StateVersion, State: storedgame.Encode(st)}
	// The stored deadline is the game's timer (on an AI's turn, its
	// watchdog's next look), so timers re-armed from the store after a
	// restart are the ones the game had (a reminder's among them).
	if deadline, ok := s.timer(st); ok {
		rec.Deadline = deadline
	}
	if st.Phase == game.PhaseFinished {
		rec.ExpiresAt = s.now().Add(s.cfg.FinishedTTL)
	}
	index, err := s.indexOf(st, prev)
	if err != nil {
		return GameRecord{}, err
	}
	rec.Index = index
	return rec, nil
}

// write stores next over the loaded version and runs the effects of the
// commit. It returns ErrVersionConflict if another writer won.
func (s *Service) write(ctx context.Context, prev loaded, next *game.State, events []game.Event) error {
	rec, err := s.record(next, prev)
	if err != nil {
		return err
	}
	// The armed instant goes in the same conditional write: a writer that
	// loses the race decides it again from the winner's record.
	rec.ArmedAt = s.armedFor(prev.rec.ArmedAt, rec.Deadline)
	if err := s.cfg.Store.Update(ctx, rec, prev.rec.Version); err != nil {
		return err
	}
	s.effects.committed(ctx, commit{prev: prev.state, next: next, prevArmed: prev.rec.ArmedAt, nextArmed: rec.ArmedAt}, events)
	return nil
}
