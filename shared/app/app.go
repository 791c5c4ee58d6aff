// Package app is the composition root: the one place where the application
// service is built from its adapters, with the HTTP edge in front of it,
// for the Lambda functions (shared/lambdafn) and the local server
// (cmd/local) alike, and the one owner of a process's life: what runs at
// start (re-arming timers, recovering ratings, the store's sweeper) and the
// order things stop in. Adapters that call back into the service (the
// in-process scheduler and AI runner) get the service's handlers at
// construction.
//
//	a, err := app.New(cfg)  // wire
//	err = a.Start(ctx)      // start-up work
//	...serve a.Handler...
//	err = a.Shutdown(ctx, srv.Shutdown)
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"chessapi/shared/api"
	"chessapi/shared/notify"
	"chessapi/shared/obs"
	"chessapi/shared/service"
)

// TimeoutHandler and AIRunner are the service's entry points for the work
// its own adapters deliver: a due timer, an AI turn.
type (
	TimeoutHandler = func(ctx context.Context, task service.TimeoutTask) error
	AIRunner       = func(ctx context.Context, task service.AITask) error
)

// Config is everything a process runs on: the service's configuration
// (its ports and tuning, declared once in service.Config) and what the
// process adds around it.
type Config struct {
	service.Config
	// NewScheduler, when set, builds the timer adapter instead of
	// Config.Scheduler; it receives the service's timeout handler, which
	// in-process schedulers call (EventBridge invokes the timeout function
	// instead). Neither: no scheduled enforcement.
	NewScheduler func(handle TimeoutHandler) (service.Scheduler, error)
	// NewAITrigger, when set, builds the AI trigger instead of
	// Config.AITrigger; it receives the service's AI turn, which
	// in-process runners call. Neither: AI seats do not move by themselves.
	NewAITrigger func(run AIRunner) (service.AITrigger, error)
	// AIKeys, when set, authenticates and limits the API keys of POST
	// /v1/ai/move (an *apikey.Checker); nil leaves the endpoint open.
	AIKeys api.AIKeyChecker
	// AllowedOrigins, when not nil, answers browsers with the CORS policy
	// of the HTTP API (api.WithCORS): the local server, where no API
	// Gateway does it; "*" allows any origin.
	AllowedOrigins []string
	// Stream serves the WebSocket stream at /v1/stream on the handler,
	// fed by this process's commits (the local server; on AWS the stream
	// is an API Gateway WebSocket API fed by the table's change stream).
	Stream bool
	// StreamOptions tune the local stream.
	StreamOptions api.StreamOptions
	// Housekeeping is the store's own work, which the app runs at start
	// and stops in order; zero on AWS, where DynamoDB expires items itself
	// and the timers live in EventBridge Scheduler.
	Housekeeping Housekeeping
}

// Housekeeping is what a store offers beyond the service's ports (the
// embedded store: boltstore.Store's methods of these names). Each is
// optional.
type Housekeeping struct {
	// PendingTimeouts lists the deadlines of live games: a scheduler that
	// keeps its timers in memory re-arms them from it at start.
	PendingTimeouts func(ctx context.Context) ([]service.TimeoutTask, error)
	// FinishedSince lists the games finished since a time: the ratings a
	// crash kept from being applied are applied at start.
	FinishedSince func(ctx context.Context, since time.Time) ([]service.GameRecord, error)
	// StartSweeper deletes expired records every interval until its stop
	// is called (the local stand-in for DynamoDB's TTL).
	StartSweeper func(interval time.Duration, log *slog.Logger) (stop func())
	// Close releases the store, after everything else has stopped.
	Close func() error
}

// How long the start-up and shutdown work may take or look back.
const (
	// ratingRecoveryWindow is how far back a start looks for rated games
	// whose ratings a crash may have kept from being applied.
	ratingRecoveryWindow = 24 * time.Hour
	// sweepInterval is how often expired records are deleted.
	sweepInterval = time.Hour
	// aiTurnsGrace is how long shutdown waits for AI turns in progress,
	// effectsGrace for the retries of failed effects.
	aiTurnsGrace = 10 * time.Second
	effectsGrace = 5 * time.Second
	// senderGrace is how long shutdown waits for notifications being sent
	// (the local webhook's posts and their retries).
	senderGrace = 5 * time.Second
)

// App is a wired process: the service, its HTTP handler and the adapters
// whose life the app owns.
type App struct {
	Service   *service.Service
	Handler   http.Handler
	Scheduler service.Scheduler
	AITrigger service.AITrigger
	// Sender delivers device notifications (nil: inbox only); the app
	// stops it after the service (the webhook's posts in flight).
	Sender notify.Sender
	// Stream is the local stream server (nil unless Config.Stream).
	Stream *api.Stream

	log          *slog.Logger
	housekeeping Housekeeping
	stopSweeper  func()
}

// New wires the service and the edge from cfg. Nothing runs yet: Start
// does the start-up work.
func New(cfg Config) (*App, error) {
	if cfg.Store == nil {
		return nil, errors.New("app: a store is required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	log := cfg.Logger
	// The adapters below may call back into the service, which exists
	// before they deliver anything: a task reaches them only through the
	// service.
	var svc *service.Service
	a := &App{Scheduler: cfg.Scheduler, AITrigger: cfg.AITrigger, log: log, housekeeping: cfg.Housekeeping}
	if cfg.NewScheduler != nil {
		sched, err := cfg.NewScheduler(func(ctx context.Context, t service.TimeoutTask) error { return svc.HandleTimeout(ctx, t) })
		if err != nil {
			return nil, fmt.Errorf("app: scheduler: %w", err)
		}
		a.Scheduler = sched
	}
	if cfg.NewAITrigger != nil {
		trigger, err := cfg.NewAITrigger(func(ctx context.Context, t service.AITask) error { return svc.PlayAITurn(ctx, t) })
		if err != nil {
			return nil, fmt.Errorf("app: AI trigger: %w", err)
		}
		a.AITrigger = trigger
	}
	sc := cfg.Config
	sc.Scheduler, sc.AITrigger = a.Scheduler, a.AITrigger
	// Notifications are worded by the edge's catalogue.
	if sc.RenderNotification == nil {
		sc.RenderNotification = api.NotificationMessage
	}
	a.Sender = sc.Sender
	if sc.Followers == nil && cfg.Stream && sc.Notifications != nil {
		// The local stream is made after the service (it reads games
		// through it); it answers for the followers once it exists.
		sc.Followers = service.AccountFollowersFunc(func(ctx context.Context, playerID string) (bool, error) {
			if a.Stream == nil {
				return false, nil
			}
			return a.Stream.FollowsAccount(ctx, playerID)
		})
	}
	var err error
	if svc, err = service.New(sc); err != nil {
		return nil, fmt.Errorf("app: %w", err)
	}
	a.Service = svc
	a.Handler = api.NewHandler(api.Deps{Games: svc, AIKeys: cfg.AIKeys, Logger: log})
	if cfg.Stream {
		opts := cfg.StreamOptions
		if opts.Logger == nil {
			opts.Logger = log
		}
		a.Stream = api.NewStream(svc, opts)
		// A revoked session's (or a deleted player's) connections close.
		svc.OnSessionsEnded(a.Stream.CloseSessions)
		mux := http.NewServeMux()
		mux.Handle("GET /v1/stream", a.Stream)
		mux.Handle("/", a.Handler)
		a.Handler = mux
	}
	// One JSON access line (request id, route, game, status, duration) and
	// the request metrics for every request; CORS outermost, so preflights
	// are answered before anything else.
	a.Handler = obs.Middleware(log, a.Handler, obs.WithMetrics(cfg.Metrics))
	if cfg.AllowedOrigins != nil {
		a.Handler = api.WithCORS(a.Handler, cfg.AllowedOrigins)
	}
	return a, nil
}

// restorer is a scheduler that keeps its timers in memory and re-arms them
// from a list (localsched).
type restorer interface {
	Restore(ctx context.Context, list func(context.Context) ([]service.TimeoutTask, error)) (int, error)
}

// Start does the start-up work, in order: the timers of live games are
// re-armed (when the store lists them and the scheduler keeps its timers
// in memory), the ratings of rated games a crash cut short are applied
// (once: the players record the games they include), and the store's
// sweeper starts. A store that cannot be listed is a failed start, not a
// silent one.
func (a *App) Start(ctx context.Context) error {
	hk := a.housekeeping
	if r, ok := a.Scheduler.(restorer); ok && hk.PendingTimeouts != nil {
		n, err := r.Restore(ctx, hk.PendingTimeouts)
		if err != nil {
			return fmt.Errorf("app: re-arm deadlines: %w", err)
		}
		a.log.Info("deadlines re-armed", "games", n)
	}
	if hk.FinishedSince != nil {
		recs, err := hk.FinishedSince(ctx, time.Now().Add(-ratingRecoveryWindow))
		if err != nil {
			return fmt.Errorf("app: list recently finished games: %w", err)
		}
		n, err := a.Service.RecoverRatings(ctx, recs)
		if err != nil {
			return fmt.Errorf("app: recover ratings: %w", err)
		}
		if n > 0 {
			a.log.Warn("ratings of finished games applied after a restart", "games", n)
		}
	}
	if hk.StartSweeper != nil && a.stopSweeper == nil {
		a.stopSweeper = hk.StartSweeper(sweepInterval, a.log)
	}
	return nil
}

// Shutdown stops the process in order: stream clients are let go (they
// reconnect with afterVersion after a restart) and long polls answer now;
// then stopServing (the HTTP server's Shutdown: requests in flight finish;
// nil when nothing serves); then AI turns in progress finish, failed
// effects stop being retried, the timers stop, the sweeper stops and the
// store is closed last. Every acknowledged write was committed before its
// answer, so nothing acknowledged is lost whatever the order is cut short
// by. The errors of the steps are joined; every step runs.
func (a *App) Shutdown(ctx context.Context, stopServing func(context.Context) error) error {
	var errs []error
	if a.Stream != nil {
		// Hijacked connections, which an HTTP server's Shutdown does not
		// close.
		a.Stream.Close()
	}
	a.Service.StopWaiting()
	if stopServing != nil {
		if err := stopServing(ctx); err != nil {
			errs = append(errs, fmt.Errorf("app: stop serving: %w", err))
		}
	}
	if err := closeAdapter(a.AITrigger, aiTurnsGrace); err != nil {
		errs = append(errs, fmt.Errorf("app: AI trigger: %w", err))
	}
	a.Service.Close(effectsGrace)
	if err := closeAdapter(a.Scheduler, 0); err != nil {
		errs = append(errs, fmt.Errorf("app: scheduler: %w", err))
	}
	if err := closeAdapter(a.Sender, senderGrace); err != nil {
		errs = append(errs, fmt.Errorf("app: notification sender: %w", err))
	}
	if a.stopSweeper != nil {
		a.stopSweeper()
		a.stopSweeper = nil
	}
	if a.housekeeping.Close != nil {
		if err := a.housekeeping.Close(); err != nil {
			errs = append(errs, fmt.Errorf("app: close store: %w", err))
		}
	}
	return errors.Join(errs...)
}

// closeAdapter stops an adapter with background work, in whichever of the
// usual forms it offers (the in-process AI trigger waits up to grace for
// turns in progress; the local scheduler stops its timers). Adapters with
// nothing running (EventBridge, Lambda invoke) have no Close.
func closeAdapter(x any, grace time.Duration) error {
	switch c := x.(type) {
	case interface{ Close(time.Duration) }:
		c.Close(grace)
	case interface{ Close(time.Duration) error }:
		return c.Close(grace)
	case interface{ Close() error }:
		return c.Close()
	case interface{ Close() }:
		c.Close()
	}
	return nil
}
