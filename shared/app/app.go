// Package app is the composition root: the one place where the application
// service is built from its adapters, with the HTTP edge in front of it,
// for the Lambda functions (shared/lambdafn) and the local server
// (cmd/local) alike. Everything is wired in one call; adapters that call
// back into the service (the in-process scheduler and AI runner) get the
// service's handlers at construction.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"chessapi/shared/api"
	"chessapi/shared/obs"
	"chessapi/shared/service"
)

// TimeoutHandler and AIRunner are the service's entry points for the work
// its own adapters deliver: a due timer, an AI turn.
type (
	TimeoutHandler = func(ctx context.Context, task service.TimeoutTask) error
	AIRunner       = func(ctx context.Context, task service.AITask) error
)

// Config is everything a process runs the service on.
type Config struct {
	Store service.Store
	// NewScheduler builds the timer adapter; it receives the service's
	// timeout handler, which in-process schedulers call (EventBridge
	// invokes the timeout function instead and ignores it). Nil: no
	// scheduled enforcement.
	NewScheduler func(handle TimeoutHandler) (service.Scheduler, error)
	// NewAITrigger builds the AI trigger; it receives the service's AI
	// turn, which in-process runners call. Nil: AI seats do not move by
	// themselves.
	NewAITrigger func(run AIRunner) (service.AITrigger, error)
	// Engine serves AI seats and the analysis routes; nil in processes
	// that never search.
	Engine service.Engine
	// Players keeps players, link codes, counters and pairing slots, and
	// Lister answers game lists and the lobby (SPEC §12); nil disables
	// those routes (503) and rated rooms.
	Players service.Players
	Lister  service.GameLister
	// Effects says who runs the effects of a commit (Lambda: the stream).
	Effects service.EffectsMode
	// PollInterval is how often long polls re-read the store (Lambda: the
	// writes come from other instances).
	PollInterval time.Duration
	// AIKeys, when set, authenticates and limits the API keys of POST
	// /v1/ai/move (an *apikey.Checker); nil leaves the endpoint open.
	AIKeys api.AIKeyChecker
	// AllowedOrigins, when not nil, answers browsers with the CORS policy
	// of the HTTP API (api.WithCORS): the local server, where no API
	// Gateway does it; "*" allows any origin.
	AllowedOrigins []string
	// Metrics receives the request metrics (EMF on Lambda); nil for none.
	Metrics *obs.Metrics
	// Stream serves the WebSocket stream at /v1/stream on the handler,
	// fed by this process's commits (the local server; on AWS the stream
	// is an API Gateway WebSocket API fed by the table's change stream).
	Stream bool
	// StreamOptions tune the local stream.
	StreamOptions api.StreamOptions
	Logger        *slog.Logger
	Now           func() time.Time
	Random        io.Reader
	// Service tunes the service beyond the above (tests: retry bounds,
	// watchdog); its port fields are ignored.
	Service service.Config
}

// App is a wired process: the service and its HTTP handler.
type App struct {
	Service   *service.Service
	Handler   http.Handler
	Scheduler service.Scheduler
	AITrigger service.AITrigger
	// Stream is the local stream server (nil unless Config.Stream).
	Stream *api.Stream
}

// New wires the service and the edge from cfg.
func New(cfg Config) (*App, error) {
	if cfg.Store == nil {
		return nil, errors.New("app: a store is required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The adapters below may call back into the service, which exists
	// before they deliver anything: a task reaches them only through the
	// service.
	var svc *service.Service
	a := &App{}
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
	sc := cfg.Service
	sc.Store, sc.Scheduler, sc.AITrigger, sc.Engine = cfg.Store, a.Scheduler, a.AITrigger, cfg.Engine
	sc.Players, sc.Lister, sc.Metrics = cfg.Players, cfg.Lister, cfg.Metrics
	sc.Effects, sc.PollInterval, sc.Logger, sc.Now, sc.Random = cfg.Effects, cfg.PollInterval, log, cfg.Now, cfg.Random
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
