// Package service is the application service of the chess API. Every change
// of a game goes through one transaction (update.go): load, authorize, the
// timeout that is due (lazy enforcement), idempotency, one reducer step
// (shared/game), a conditional write retried on lost races, and the work
// after the commit (effects.go: wake waiters and subscribers, arm the one
// timer of the game, start the AI). It owns seat tokens and request
// idempotency, and the stateless analysis behind POST /v1/positions and
// POST /v1/ai/move. Storage, scheduling, AI triggering and the engine are
// ports (ports.go) with adapters elsewhere; the HTTP edge (shared/api)
// decodes requests, calls this package and encodes its typed answers.
package service

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/notify"
	"chessapi/shared/obs"
	"chessapi/shared/retry"
)

// Errors the edge maps to status codes (besides the store's ErrNotFound,
// *game.InputError and *game.RuleError).
var (
	// ErrUnauthorized: a seat token is required and none was given.
	ErrUnauthorized = errors.New("seat token required")
	// ErrForbidden: the token is not a seat of this game.
	ErrForbidden = errors.New("token is not a seat of this game")
	// ErrBusy: the game kept changing under us; the client may retry.
	ErrBusy = errors.New("game is busy, retry")
	// ErrRequestIDReused: a request id came back with a different request.
	ErrRequestIDReused = errors.New("request id reused for a different request")
	// ErrNoEngine: this process has no engine for AI searches.
	ErrNoEngine = errors.New("no engine configured")
	// ErrPlayerRequired: the request needs a player token (rated rooms,
	// the player routes).
	ErrPlayerRequired = errors.New("player token required")
	// ErrLinkCodeInvalid: a link code that is unknown, used or expired.
	ErrLinkCodeInvalid = errors.New("link code invalid")
	// ErrNoPlayers: this process keeps no players.
	ErrNoPlayers = errors.New("players are not configured")
)

// RateLimitError refuses a request over a limit until its window ends
// (the edge answers 429 with Retry-After).
type RateLimitError struct {
	Wait time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("too many attempts; retry after %s", e.Wait)
}

// RetryAfter is how long until the limit's window ends.
func (e *RateLimitError) RetryAfter() time.Duration { return e.Wait }

// ConflictError is returned when the client's expectedVersion is stale; it
// carries the current game as the client sees it.
type ConflictError struct {
	Current *game.View
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("expected version is stale (current %d)", e.Current.Version)
}

// EffectsMode says where the work after a commit runs.
type EffectsMode uint8

const (
	// EffectsInline runs it in the process that committed, right after
	// the write (the local server, tests).
	EffectsInline EffectsMode = iota
	// EffectsByStream leaves it to the table's change stream, whose
	// consumer calls Service.Committed for every committed version (AWS:
	// a commit's effects then happen even if its writer dies right after
	// the write, and each happens once).
	EffectsByStream
)

// Config wires a Service.
type Config struct {
	Store Store
	// Scheduler arms each game's timer; nil disables scheduled enforcement
	// (lazy enforcement still ends games when anyone calls).
	Scheduler Scheduler
	// AITrigger starts AI turns asynchronously; nil disables AI seats'
	// automatic moves (PlayAITurn can still be called).
	AITrigger AITrigger
	// Engine chooses AI-seat moves (PlayAITurn) and answers the analysis
	// routes; nil in processes that never search.
	Engine Engine
	// Metrics receives the service's metrics (moves, conflicts, AI time
	// and nodes, effect retries and failures); nil for none.
	Metrics *obs.Metrics
	// Players keeps players, link codes, counters and pairing slots; nil
	// disables the player routes (SPEC §12) and rated rooms.
	Players Players
	// Lister answers game lists and the lobby from the game index (the
	// store, when it keeps one); nil disables those routes.
	Lister GameLister
	// Notifications keeps devices and inboxes (SPEC §16.3); nil disables
	// the device and inbox routes and notifications (notifications.go).
	Notifications NotificationStore
	// Sender delivers device notifications (Amazon SNS, the local
	// webhook); nil keeps devices but sends nothing (inbox only).
	Sender notify.Sender
	// RenderNotification words a notification in a locale (the edge's
	// text catalogue: api.NotificationMessage); without it nothing is sent.
	RenderNotification func(n Notification, l notify.Locale) notify.Message
	// Followers tells who follows their account on the stream (they get
	// no device notification); nil: nobody.
	Followers AccountFollowers
	// Effects says who runs the work after a commit (default inline).
	Effects EffectsMode
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Random is the source of ids, tokens and game seeds; crypto/rand when
	// nil.
	Random io.Reader
	Logger *slog.Logger
	// MaxAttempts bounds load→apply→write rounds on lost races, of a game
	// and of a player (default: retry.GameWrite's and retry.PlayerWrite's,
	// 8).
	MaxAttempts int
	// PollInterval is how often a long poll re-reads the store for changes
	// made by other processes (Lambda); 0 relies on in-process
	// notifications only (the local server, where every write is ours).
	PollInterval time.Duration
	// FinishedTTL is how long a finished game is kept (default 30 days).
	FinishedTTL time.Duration
	// AIWatchdog is how long past its think time an AI turn may go
	// unanswered before the AI is started again (default 30 s, SPEC §13:
	// "think time + 30 s").
	AIWatchdog time.Duration
	// AIRestarts bounds how often an unanswered AI turn is started again
	// before the AI seat forfeits (default 3).
	AIRestarts int
	// MaxBlocks bounds the players one player may block (default
	// DefaultMaxBlocks).
	MaxBlocks int
	// EffectRetries bounds the attempts of each effect after a commit,
	// spaced by EffectBackoff doubling (default: retry.Effect's, 4 and
	// 100 ms).
	EffectRetries int
	EffectBackoff time.Duration
}

// retries are the service's retry policies: the named ones of package
// retry, narrowed by the Config.
type retries struct {
	game, player, effect, backlog retry.Policy
}

func retriesOf(cfg Config) retries {
	return retries{
		game:    retry.GameWrite.WithAttempts(cfg.MaxAttempts),
		player:  retry.PlayerWrite.WithAttempts(cfg.MaxAttempts),
		effect:  retry.Effect.WithAttempts(cfg.EffectRetries).WithBase(cfg.EffectBackoff),
		backlog: retry.EffectBacklog,
	}
}

// Service runs games. It is safe for concurrent use.
type Service struct {
	cfg     Config
	retries retries
	log     *slog.Logger
	feed    *feed
	effects *effects
	// draining is closed by StopWaiting: long polls answer at once.
	draining     chan struct{}
	drainingOnce sync.Once
	// sessionHooks are told of ended sessions (accounts.go).
	sessionHooks sessionHooks
	// playerLocks serialise the changes of each player in this process
	// (updatePlayer).
	playerLocks keyedLocks
}

// StopWaiting makes every long poll in progress, and every one to come,
// answer with the game as it is now instead of waiting: a server shutting
// down lets its clients go at once (they poll again elsewhere).
func (s *Service) StopWaiting() {
	s.drainingOnce.Do(func() { close(s.draining) })
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
	if cfg.FinishedTTL <= 0 {
		cfg.FinishedTTL = 30 * 24 * time.Hour
	}
	if cfg.AIWatchdog <= 0 {
		cfg.AIWatchdog = 30 * time.Second
	}
	if cfg.AIRestarts <= 0 {
		cfg.AIRestarts = 3
	}
	if cfg.MaxBlocks <= 0 {
		cfg.MaxBlocks = DefaultMaxBlocks
	}
	s := &Service{cfg: cfg, retries: retriesOf(cfg), log: cfg.Logger, feed: newFeed(), draining: make(chan struct{})}
	s.effects = newEffects(s)
	if cfg.Notifications != nil {
		// A revoked session's devices go with it (SPEC §16.3).
		s.OnSessionsEnded(s.devicesOfEndedSessions)
	}
	return s, nil
}

// Close stops the background work of the service (retries of failed
// effects), waiting up to timeout for work in flight.
func (s *Service) Close(timeout time.Duration) { s.effects.close(timeout) }

func (s *Service) now() time.Time { return s.cfg.Now() }
