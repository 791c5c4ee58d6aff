package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
)

// The ports of the application service: what it needs from storage, from a
// deadline scheduler and from whatever runs AI turns. Adapters live in their
// own packages (shared/store/..., shared/schedule/..., shared/aitrigger/...)
// and assert `var _ service.Store = (*X)(nil)`.

// GameRecord is one stored game: one item in DynamoDB, one key in the
// embedded store.
type GameRecord struct {
	GameID       string
	Version      int64  // 1 at creation, +1 on every write
	StateVersion int    // schema version of State (game.StateVersion)
	State        []byte // the encoded game state; opaque to stores
	// Deadline is when the game times out if nobody acts (zero: none):
	// on an AI seat's turn, the AI watchdog's next look at it.
	Deadline time.Time
	// ArmedAt is the instant the game's one timer is armed to fire (zero:
	// none armed): written with the state, in the same conditional write,
	// by the writer that decided it (timers.go). A timer armed at or before
	// the deadline is left alone by later writes, whose deadline is then
	// enforced when it fires (SPEC §16.4); a stored ArmedAt is a claim that
	// the scheduler has (or is being given, from the table's change
	// stream) a timer for that instant.
	ArmedAt time.Time
	// ExpiresAt is set once a game is finished: the store may delete the
	// record after it (DynamoDB TTL). Zero while the game is live.
	ExpiresAt time.Time
	// Index is what the game index (me/games, the lobby) knows of the
	// game; stores that implement GameLister keep it with the record.
	Index GameIndex
}

// Store errors. Adapters return these (possibly wrapped) so the service can
// tell a lost race from a failure.
var (
	ErrNotFound        = errors.New("game not found")
	ErrAlreadyExists   = errors.New("game already exists")
	ErrVersionConflict = errors.New("game version changed")
	ErrTooLarge        = errors.New("game record too large to store")
)

// Store keeps games with optimistic concurrency.
type Store interface {
	// Create stores a new record; ErrAlreadyExists if the id is taken.
	Create(ctx context.Context, rec GameRecord) error
	// Get returns the latest record (strongly consistent read); ErrNotFound
	// if there is none.
	Get(ctx context.Context, gameID string) (GameRecord, error)
	// Update replaces the record only if the stored version is still
	// expectedVersion (rec.Version is normally expectedVersion+1); otherwise
	// ErrVersionConflict, also when the record does not exist. ErrTooLarge if
	// the record cannot be stored; nothing is written then.
	Update(ctx context.Context, rec GameRecord, expectedVersion int64) error
}

// TimeoutTask asks for the timeout handler to run for a game at an
// instant its timer was armed for. It is also the JSON input of the
// timeout function.
type TimeoutTask struct {
	GameID string `json:"gameId"`
	// Version is the game version whose write armed the timer (for the
	// logs); the handler decides from the stored game.
	Version int64 `json:"version"`
	// Deadline is the instant the timer was armed for (the record's
	// ArmedAt): the handler tells the game's armed timer from a superseded
	// one by it, and an AI watchdog's attempt from where it falls in the
	// AI's turn.
	Deadline time.Time `json:"deadline"`
}

// Validate reports what makes t unfit to arm: a scheduler refuses such a
// task rather than arm a timer whose delivery names no game or no instant.
func (t TimeoutTask) Validate() error {
	switch {
	case t.GameID == "":
		return errors.New("timeout task has an empty game id")
	case t.Version < 1:
		return fmt.Errorf("timeout task of game %q has version %d; want ≥ 1", t.GameID, t.Version)
	case t.Deadline.IsZero():
		return fmt.Errorf("timeout task of game %q version %d has no deadline", t.GameID, t.Version)
	}
	return nil
}

// Scheduler delivers a TimeoutTask at (or shortly after) its Deadline, at
// least once. Timers are never removed: the service arms one only when a
// game's deadline moves earlier than the armed one, and a delivery that
// finds nothing due re-arms or does nothing (timers.go), so a superseded
// timer costs one harmless delivery. An adapter may replace a game's
// pending timer with a newer one (the in-process scheduler does); one
// that keeps them (EventBridge Scheduler) lets each fire once and delete
// itself.
type Scheduler interface {
	// ScheduleTimeout arms a timer for task. Arming the same game for the
	// same instant again is a no-op (retries are idempotent).
	ScheduleTimeout(ctx context.Context, task TimeoutTask) error
}

// AITask asks for the AI seat of a game to move, if the AI is still to
// move at Ply: a later version of the same position (an offer, a
// reconnect) still wants that move. Version is the version that started
// the turn, for logs. It is the JSON input of the async AI invocation.
type AITask struct {
	GameID  string `json:"gameId"`
	Version int64  `json:"version"`
	Ply     int    `json:"ply"`
}

// AITrigger starts an AI turn asynchronously (an async Lambda invoke in AWS,
// a goroutine locally). It returns once the request is accepted.
type AITrigger interface {
	TriggerAI(ctx context.Context, task AITask) error
}

// AIMoveRequest is what an AI seat needs to choose a move.
type AIMoveRequest struct {
	Position *chess.Position
	// History holds the hashes of the game's earlier positions, oldest
	// first, so the engine sees repetitions.
	History []uint64
	Level   string // one of game.AILevels
	// Remaining and Increment are the AI's own clock (zero: no clock).
	Remaining, Increment time.Duration
	// Seed makes a weakened level's choice reproducible for this game and ply.
	Seed uint64
}

// AIMover chooses AI seats' moves.
type AIMover interface {
	// ChooseMove picks an AI seat's move, paced to the level's think time.
	ChooseMove(ctx context.Context, req AIMoveRequest) (chess.Move, error)
}

// Engine is the chess engine behind AI seats and the analysis routes
// (shared/aiplayer adapts shared/engine). AI seats and public searches use
// separate capacity, so public requests cannot starve seats.
type Engine interface {
	AIMover
	// Search runs a public search (POST /v1/ai/move).
	Search(ctx context.Context, p engine.Params) (engine.Result, error)
}

// DeadlineMillis is how stores keep a Deadline: epoch milliseconds, rounded
// up, so a stored deadline is never earlier than the one written.
func DeadlineMillis(t time.Time) int64 {
	ms := t.UnixMilli() // floor: Nanosecond() is never negative
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		ms++
	}
	return ms
}

// ExpirySeconds is how stores keep ExpiresAt: epoch seconds (the resolution
// of DynamoDB TTL), rounded up.
func ExpirySeconds(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() != 0 {
		s++
	}
	return s
}
