package service

import (
	"context"
	"errors"
	"time"
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
	// Deadline is when the game times out if nobody acts (zero: none).
	Deadline time.Time
	// ExpiresAt is set once a game is finished: the store may delete the
	// record after it (DynamoDB TTL). Zero while the game is live.
	ExpiresAt time.Time
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

// TimeoutTask asks for the timeout handler to run for a game version at its
// deadline. It is also the JSON input of the timeout function.
type TimeoutTask struct {
	GameID   string    `json:"gameId"`
	Version  int64     `json:"version"`
	Deadline time.Time `json:"deadline"`
}

// Scheduler arranges for TimeoutTask to be delivered at (or shortly after)
// its deadline, at least once. Scheduling the same game and version twice is
// not an error (the second call is a no-op).
type Scheduler interface {
	ScheduleTimeout(ctx context.Context, task TimeoutTask) error
}

// AITask asks for the AI seat of a game to move, if the game is still at
// Version and the AI is to move. It is the JSON input of the async AI
// invocation.
type AITask struct {
	GameID  string `json:"gameId"`
	Version int64  `json:"version"`
}

// AITrigger starts an AI turn asynchronously (an async Lambda invoke in AWS,
// a goroutine locally). It returns once the request is accepted.
type AITrigger interface {
	TriggerAI(ctx context.Context, task AITask) error
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
