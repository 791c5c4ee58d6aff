package lambdafn

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"chessapi/shared/aiplayer"
	"chessapi/shared/aitrigger/lambdainvoke"
	"chessapi/shared/apikey"
	"chessapi/shared/app"
	"chessapi/shared/obs"
	"chessapi/shared/push"
	"chessapi/shared/push/apigwpost"
	"chessapi/shared/schedule/eventbridge"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// PollInterval is how often a long poll (GET ?afterVersion=) re-reads the
// table: the write it waits for is usually made by another Lambda instance,
// which cannot notify this one.
const PollInterval = 400 * time.Millisecond

// Deps are the ports a function runs on: the AWS adapters in Lambda
// (FromEnv), an embedded store and recording fakes in tests.
type Deps struct {
	Store     service.Store
	Scheduler service.Scheduler
	// AITrigger starts AI-seat turns; nil in the ai function, whose own
	// moves never hand the turn to an AI.
	AITrigger service.AITrigger
	Logger    *slog.Logger
	// Now is the service's clock; nil for time.Now (tests fix it).
	Now func() time.Time
	// Random is the source of ids and tokens; nil for crypto/rand.
	Random io.Reader
	// Players and Lister serve players, ratings, game lists and the lobby
	// (the data table and the games table's indexes); nil without them.
	Players service.Players
	Lister  service.GameLister
	// APIKeys and KeyCounter hold POST /v1/ai/move's API keys and count
	// their rate and quota (the data table); ai only. Without them, keys
	// required, only the bootstrap key (with a counter) can be accepted.
	APIKeys    apikey.Store
	KeyCounter apikey.Counter
	// Connections keeps the stream's connections and subscriptions (the
	// data table); stream and fanout only.
	Connections push.Connections
	// NewPoster returns the sender to the connections of a WebSocket API
	// stage (its https URL); stream and fanout only.
	NewPoster func(endpoint string) (push.Poster, error)
	// Metrics receives the functions' metrics (nil: none).
	Metrics *obs.Metrics
	// Effects says who runs a commit's effects (timer, AI trigger): on AWS
	// the fan-out function, fed by the table's change stream
	// (service.EffectsByStream), so they happen even when the writer dies
	// right after its write; the writer itself in tests without a stream.
	Effects service.EffectsMode
}

// App is one function, wired: the service, and for the HTTP functions the
// API handler behind the API Gateway adapter. Its Handle* methods are what
// the mains pass to lambda.Start.
type App struct {
	fn      Function
	log     *slog.Logger
	metrics *obs.Metrics
	service *service.Service
	// httpProxy is nil in the functions that serve no HTTP (timeout,
	// stream, fanout).
	httpProxy *httpadapter.HandlerAdapterV2

	// The stream (stream and fanout functions).
	connections    push.Connections
	newPoster      func(endpoint string) (push.Poster, error)
	streamEndpoint string // STREAM_ENDPOINT; "" takes it from the events
	hubs           hubCache
}

// NewApp wires fn on deps through the composition root (shared/app):
//   - move: the game API (store, scheduler, async AI trigger); it never
//     searches itself, so it gets no engine (POST /v1/ai/move is routed to
//     the ai function and would answer 503 here).
//   - timeout: the service only (HandleTimeout ends games and restarts
//     an overdue AI seat).
//   - ai: the same HTTP API with one engine (a Lambda instance serves one
//     request at a time) for the third-party endpoint and AI seats, its
//     table sized from the function's memory.
//   - stream: the WebSocket API's routes (connections and subscriptions in
//     the data table, views and presence through the service).
//   - fanout: the games table's change stream: each committed version is
//     pushed to its subscribers and its effects run (Service.Committed).
func NewApp(cfg Config, deps Deps) (*App, error) {
	if deps.Store == nil {
		return nil, fmt.Errorf("lambdafn: %s function: no store", cfg.Function)
	}
	log := deps.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ac := app.Config{
		Store:        deps.Store,
		PollInterval: PollInterval,
		Logger:       log,
		Now:          deps.Now,
		Random:       deps.Random,
		Effects:      deps.Effects,
		Players:      deps.Players,
		Lister:       deps.Lister,
		Metrics:      deps.Metrics,
	}
	if deps.Scheduler != nil {
		ac.NewScheduler = func(app.TimeoutHandler) (service.Scheduler, error) { return deps.Scheduler, nil }
	}
	if deps.AITrigger != nil {
		ac.NewAITrigger = func(app.AIRunner) (service.AITrigger, error) { return deps.AITrigger, nil }
	}
	switch cfg.Function {
	case Move, Timeout:
	case Stream, Fanout:
		if deps.Connections == nil || deps.NewPoster == nil {
			return nil, fmt.Errorf("lambdafn: %s function: no stream connections or poster", cfg.Function)
		}
	case AI:
		ac.Engine = aiplayer.NewPool(1, HashMB(cfg.MemoryMB))
		if !cfg.AIKeysOff {
			checker, err := apikey.NewChecker(apikey.Options{
				Store: deps.APIKeys, Counter: deps.KeyCounter, Bootstrap: cfg.AIAPIKey, Now: deps.Now,
			})
			if err != nil {
				return nil, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
			}
			ac.AIKeys = checker
		}
	default:
		return nil, fmt.Errorf("lambdafn: unknown function %q", cfg.Function)
	}
	wired, err := app.New(ac)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
	}
	a := &App{fn: cfg.Function, log: log, metrics: deps.Metrics, service: wired.Service,
		connections: deps.Connections, newPoster: deps.NewPoster, streamEndpoint: cfg.StreamEndpoint}
	if cfg.Function == Move || cfg.Function == AI {
		a.httpProxy = httpadapter.NewV2(wired.Handler)
	}
	return a, nil
}

// Service is the application service the handlers call.
func (a *App) Service() *service.Service { return a.service }

// NewLogger returns the functions' structured logger: JSON lines on w (Lambda
// sends stdout to CloudWatch) at level, each tagged with the function.
func NewLogger(w io.Writer, fn Function, level slog.Level) *slog.Logger {
	// shared/obs: every line of a request carries its ids, route and game,
	// and tokens are redacted.
	return obs.NewLogger(w, level, "function", string(fn))
}

// FromEnv is a main's whole start-up: configuration from getenv, the AWS SDK
// configuration (which applies AWS_ENDPOINT_URL_DYNAMODB, _SCHEDULER and
// _LAMBDA), the DynamoDB store, the EventBridge scheduler, the Lambda AI
// trigger and the App. Any error here means the function cannot serve.
func FromEnv(ctx context.Context, fn Function, getenv func(string) string) (*App, error) {
	cfg, err := LoadConfig(fn, getenv)
	if err != nil {
		return nil, err
	}
	log := NewLogger(os.Stdout, fn, cfg.LogLevel)
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: %s function: AWS configuration: %w", fn, err)
	}
	deps, err := awsDeps(awsCfg, cfg)
	if err != nil {
		return nil, err
	}
	deps.Logger = log
	// CloudWatch metrics in embedded metric format (stdout: Lambda sends it
	// to the function's log group, where CloudWatch extracts them), one
	// series per function (the name includes the stack).
	deps.Metrics = obs.NewMetrics(os.Stdout, obs.Namespace, map[string]string{obs.DimFunctionName: getenv("AWS_LAMBDA_FUNCTION_NAME")})
	app, err := NewApp(cfg, deps)
	if err != nil {
		return nil, err
	}
	log.Debug("started", "table", cfg.GamesTable, "scheduleGroup", cfg.Schedule.Group,
		"aiFunction", cfg.AIFunctionName, "memoryMB", cfg.MemoryMB)
	if fn == AI {
		switch {
		case cfg.AIKeysOff:
			log.Warn("POST /v1/ai/move is open to anyone: AI_API_KEYS=off")
		case cfg.DataTable == "" && cfg.AIAPIKey == "":
			// The AI seats' function (no HTTP route) starts so; the public
			// endpoint would refuse every key.
			log.Debug("POST /v1/ai/move: keys required and no DATA_TABLE: every request is refused")
		default:
			log.Debug("POST /v1/ai/move requires an API key", "dataTable", cfg.DataTable, "bootstrapKey", cfg.AIAPIKey != "")
		}
	}
	return app, nil
}

// awsDeps builds the AWS adapters fn needs. On AWS a commit's effects (the
// game's schedule, the AI turn) are the fan-out's, which runs them from the
// games table's change stream; so only the fan-out and the timeout
// function (which re-arms and re-triggers without a write) get the
// scheduler and the AI trigger, and the others hold no permission for them.
func awsDeps(awsCfg aws.Config, cfg Config) (Deps, error) {
	deps := Deps{Effects: service.EffectsByStream}
	store, err := dynamostore.NewFromConfig(awsCfg, cfg.GamesTable)
	if err != nil {
		return deps, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
	}
	deps.Store = store
	if cfg.Function == Timeout || cfg.Function == Fanout {
		sched, err := eventbridge.NewFromConfig(awsCfg, cfg.Schedule)
		if err != nil {
			return deps, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
		}
		deps.Scheduler = sched
		trigger, err := lambdainvoke.NewFromConfig(awsCfg, cfg.AIFunctionName)
		if err != nil {
			return deps, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
		}
		deps.AITrigger = trigger
	}
	if cfg.DataTable != "" {
		data, err := dynamostore.NewData(dynamodb.NewFromConfig(awsCfg), cfg.DataTable)
		if err != nil {
			return deps, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
		}
		deps.Connections, deps.Players, deps.Lister = data, data, store
		deps.APIKeys, deps.KeyCounter = data, data
		deps.NewPoster = func(endpoint string) (push.Poster, error) { return apigwpost.New(awsCfg, endpoint) }
	}
	return deps, nil
}

// StartupFailure is the one JSON log line a main writes when start-up
// fails, naming the function and the reason; the main then exits with
// status 1, so Lambda reports the init as failed (Runtime.ExitError) and
// the line is in the function's log.
func StartupFailure(fn Function, err error) {
	slog.New(slog.NewJSONHandler(os.Stderr, nil)).Error("start-up failed", "function", string(fn), "err", err.Error())
}
