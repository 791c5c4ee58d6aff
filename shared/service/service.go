// Package service is the application service of the chess API: it loads a
// game, applies any timeout already due (lazy enforcement), applies the
// action through the pure reducer (shared/game), writes the new state with a
// conditional write, schedules the new deadline and starts AI turns. It
// owns seat tokens and request idempotency. Storage, scheduling and AI
// triggering are ports (ports.go) with adapters elsewhere.
package service

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"chessapi/shared/game"
)

// Errors the HTTP layer maps to status codes (besides the store's
// ErrNotFound, *game.InputError and *game.RuleError).
var (
	// ErrUnauthorized: a seat token is required and none (or a malformed
	// one) was given.
	ErrUnauthorized = errors.New("seat token required")
	// ErrForbidden: the token is not a seat of this game.
	ErrForbidden = errors.New("token is not a seat of this game")
	// ErrBusy: the game kept changing under us; the client may retry.
	ErrBusy = errors.New("game is busy, retry")
)

// ConflictError is returned when the client's expectedVersion is stale; it
// carries the current game as the client sees it.
type ConflictError struct {
	Current *game.View
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("expected version is stale (current %d)", e.Current.Version)
}

// Config wires a Service.
type Config struct {
	Store Store
	// Scheduler receives each new deadline; nil disables scheduling (lazy
	// enforcement still ends games when anyone calls).
	Scheduler Scheduler
	// AITrigger starts AI turns asynchronously; nil disables AI seats'
	// automatic moves (PlayAITurn can still be called).
	AITrigger AITrigger
	// AIMover chooses AI moves in PlayAITurn.
	AIMover AIMover
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Random is the source of ids, tokens and game seeds; crypto/rand when
	// nil.
	Random io.Reader
	Logger *slog.Logger
	// MaxAttempts bounds load→apply→write rounds on lost races (default 8).
	MaxAttempts int
	// PollInterval is how often a long poll re-reads the store for changes
	// made by other processes (Lambda); 0 relies on in-process
	// notifications only (the local server, where every write is ours).
	PollInterval time.Duration
	// FinishedTTL is how long a finished game is kept (default 30 days).
	FinishedTTL time.Duration
	// AIRetryAfter is when a due AI turn is re-triggered again if the AI
	// still has not moved (default 30 s).
	AIRetryAfter time.Duration
}

// Service runs games. It is safe for concurrent use.
type Service struct {
	cfg      Config
	log      *slog.Logger
	watchers *watchers
}

// New returns a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil {
		return nil, errors.New("service: a Store is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Random == nil {
		cfg.Random = rand.Reader
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 8
	}
	if cfg.FinishedTTL <= 0 {
		cfg.FinishedTTL = 30 * 24 * time.Hour
	}
	if cfg.AIRetryAfter <= 0 {
		cfg.AIRetryAfter = 30 * time.Second
	}
	return &Service{cfg: cfg, log: cfg.Logger, watchers: newWatchers()}, nil
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
	st, err := game.Decode(rec.State)
	if err != nil {
		return loaded{}, fmt.Errorf("decode game %s v%d: %w", gameID, rec.Version, err)
	}
	if st.GameID == "" && st.Version == 0 {
		// A migrated version-1 state: that schema kept the id and version
		// outside the state, in the record.
		st.GameID, st.Version = rec.GameID, rec.Version
	}
	if st.GameID != rec.GameID || st.Version != rec.Version {
		return loaded{}, fmt.Errorf("game %s v%d: the stored state says game %s v%d", gameID, rec.Version, st.GameID, st.Version)
	}
	return loaded{rec: rec, state: st}, nil
}

// record builds the stored record of a state.
func (s *Service) record(st *game.State) (GameRecord, error) {
	data, err := game.Encode(st)
	if err != nil {
		return GameRecord{}, fmt.Errorf("encode game %s: %w", st.GameID, err)
	}
	rec := GameRecord{GameID: st.GameID, Version: st.Version, StateVersion: st.StateVersion, State: data}
	if d, ok := game.Deadline(st); ok {
		rec.Deadline = d
	}
	if st.Phase == game.PhaseFinished {
		rec.ExpiresAt = s.cfg.Now().Add(s.cfg.FinishedTTL)
	}
	return rec, nil
}

// write stores next over the loaded version and runs the follow-ups of a
// successful write. It returns ErrVersionConflict if another writer won.
func (s *Service) write(ctx context.Context, prev loaded, next *game.State) error {
	rec, err := s.record(next)
	if err != nil {
		return err
	}
	if err := s.cfg.Store.Update(ctx, rec, prev.rec.Version); err != nil {
		return err
	}
	s.afterWrite(ctx, next, rec)
	return nil
}

// afterWrite wakes long polls, schedules the new deadline and starts the AI
// if it is to move. Failures are logged, not returned: the write stands, and
// lazy enforcement still ends the game on the next request; the scheduling
// is retried when a retried request (same requestId) is answered.
func (s *Service) afterWrite(ctx context.Context, st *game.State, rec GameRecord) {
	s.watchers.notify(st.GameID)
	s.scheduleDeadline(ctx, st, rec.Deadline)
	if _, ok := st.AITurn(); ok && s.cfg.AITrigger != nil {
		task := AITask{GameID: st.GameID, Version: st.Version}
		if err := s.cfg.AITrigger.TriggerAI(ctx, task); err != nil {
			s.log.Error("trigger AI", "game", st.GameID, "version", st.Version, "err", err)
		}
	}
}

func (s *Service) scheduleDeadline(ctx context.Context, st *game.State, deadline time.Time) {
	if s.cfg.Scheduler == nil || deadline.IsZero() {
		return
	}
	task := TimeoutTask{GameID: st.GameID, Version: st.Version, Deadline: deadline}
	if err := s.cfg.Scheduler.ScheduleTimeout(ctx, task); err != nil {
		s.log.Error("schedule deadline", "game", st.GameID, "version", st.Version, "deadline", deadline, "err", err)
	}
}

// applyDue applies a timeout that is already due at now (lazy enforcement).
func applyDue(st *game.State, now time.Time) (*game.State, []game.Event) {
	next, events, ok := game.ApplyTimeout(st, now)
	if !ok {
		return st, nil
	}
	return next, events
}
