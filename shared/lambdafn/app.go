package lambdafn

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"chessapi/shared/aiplayer"
	"chessapi/shared/aitrigger/lambdainvoke"
	"chessapi/shared/api"
	"chessapi/shared/apikey"
	"chessapi/shared/app"
	"chessapi/shared/obs"
	"chessapi/shared/push"
	"chessapi/shared/push/apigwpost"
	"chessapi/shared/schedule/eventbridge"
	"chessapi/shared/schedule/sqsdelay"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// PollInterval is how often a long poll (GET ?afterVersion=) re-reads the
// table: the write it waits for is usually made by another Lambda instance,
// which cannot notify this one.
const PollInterval = 400 * time.Millisecond

// Deps are the ports a function runs on: the AWS adapters in Lambda
// (awsAdapters, from the wiring table), an embedded store and recording
// fakes in tests. The service's own ports and tuning are service.Config's
// (Store, Scheduler, AITrigger, Players, Lister, Metrics, Effects, Now,
// Random, Logger, ...); on AWS a commit's effects (timer, AI trigger) are
// the fan-out's, fed by the table's change stream (service.EffectsByStream),
// so they happen even when the writer dies right after its write; tests
// without a stream leave them inline.
type Deps struct {
	service.Config
	// APIKeys and KeyCounter hold POST /v1/ai/move's API keys and count
	// their rate and quota (the data table); ai only. Without them, keys
	// required, only the bootstrap key (with a counter) can be accepted.
	APIKeys    apikey.Store
	KeyCounter apikey.Counter
	// Connections keeps the stream's connections and subscriptions (the
	// data table); stream and fanout, and move with STREAM_ENDPOINT.
	Connections push.Connections
	// NewPoster returns the sender to the connections of a WebSocket API
	// stage (its https URL); as Connections.
	NewPoster func(endpoint string) (push.Poster, error)
	// DeadLetters is where a stream consumer writes the records it gives
	// up on (fanout and effects only).
	DeadLetters DeadLetterQueue
	// SessionConnections finds the stream's connections made with a
	// session's token, for when the session ends (the data table's
	// tokenconn# entries); move, whose routes revoke sessions and delete
	// players. With Connections, NewPoster and
	// STREAM_ENDPOINT those connections are ended through the transport
	// (records, presence, the socket closed); without, their records are
	// dropped.
	SessionConnections SessionConnections
}

// SessionConnections is what the move function reads and drops of the
// stream's connections of a token (dynamostore.Data).
type SessionConnections interface {
	TokenConnections(ctx context.Context, tokenHash string) ([]string, error)
	DropTokenConnections(ctx context.Context, tokenHash string) (int, error)
}

// App is one function, wired: the service, and for the HTTP functions the
// API handler behind the API Gateway adapter. Handler returns what the
// main passes to lambda.Start.
type App struct {
	fn      Function
	spec    spec
	log     *slog.Logger
	metrics *obs.Metrics
	app     *app.App
	service *service.Service
	// httpProxy is nil in the functions that serve no HTTP (timeout,
	// stream, fanout).
	httpProxy *httpadapter.HandlerAdapterV2

	// The stream (stream and fanout functions).
	connections    push.Connections
	newPoster      func(endpoint string) (push.Poster, error)
	streamEndpoint string // STREAM_ENDPOINT; "" takes it from the events
	streams        streamCache

	// originSecret is ORIGIN_VERIFY_SECRET: requests must carry it
	// (origin.go); "" checks nothing.
	originSecret string

	// The stream consumers (fanout and effects): fanout.go.
	deadLetters  DeadLetterQueue
	retryWindow  time.Duration
	functionName string
	doneRecords  recordSet
	// sessionConns: the HTTP functions' connections of ended sessions.
	sessionConns SessionConnections
}

// NewApp wires fn on deps through the composition root (shared/app), adding
// what the function's entry in the wiring table names: the engine and the
// API keys (ai), the HTTP API behind the API Gateway adapter (move, ai);
// stream and fanout must be given the stream's connections and poster.
func NewApp(cfg Config, deps Deps) (*App, error) {
	sp, ok := functions[cfg.Function]
	if !ok {
		return nil, fmt.Errorf("lambdafn: unknown function %q", cfg.Function)
	}
	if deps.Store == nil {
		return nil, fmt.Errorf("lambdafn: %s function: no store", cfg.Function)
	}
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	ac := app.Config{Config: deps.Config}
	ac.PollInterval = PollInterval
	if sp.adapters.has(usesStream) && (deps.Connections == nil || deps.NewPoster == nil) {
		return nil, fmt.Errorf("lambdafn: %s function: no stream connections or poster", cfg.Function)
	}
	if sp.adapters.has(usesDeadLetters) && deps.DeadLetters == nil {
		return nil, fmt.Errorf("lambdafn: %s function: no dead-letter queue", cfg.Function)
	}
	if sp.adapters.has(usesEngine) {
		// A Lambda instance serves one request at a time: one engine.
		ac.Engine = aiplayer.NewPool(1, HashMB(cfg.MemoryMB))
	}
	if sp.adapters.has(usesAPIKeys) && !cfg.AIKeysOff {
		checker, err := apikey.NewChecker(apikey.Options{
			Store: deps.APIKeys, Counter: deps.KeyCounter, Bootstrap: cfg.AIAPIKey, Now: deps.Now,
		})
		if err != nil {
			return nil, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
		}
		ac.AIKeys = checker
	}
	wired, err := app.New(ac)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
	}
	a := &App{fn: cfg.Function, spec: sp, log: deps.Logger, metrics: deps.Metrics, app: wired, service: wired.Service,
		connections: deps.Connections, newPoster: deps.NewPoster, streamEndpoint: cfg.StreamEndpoint,
		deadLetters: deps.DeadLetters, retryWindow: cmp.Or(cfg.StreamRetryWindow, DefaultStreamRetryWindow), functionName: cfg.FunctionName,
		originSecret: cfg.OriginVerifySecret, sessionConns: deps.SessionConnections}
	if deps.SessionConnections != nil {
		wired.Service.OnSessionsEnded(a.endSessionConnections)
	}
	if sp.handler.servesHTTP() {
		a.httpProxy = httpadapter.NewV2(wired.Handler)
	}
	return a, nil
}

// Handler is the function's handler, as the wiring table names it, for
// lambda.Start.
func (a *App) Handler() any {
	switch a.spec.handler {
	case handleHTTP:
		return a.HandleHTTP
	case handleTimeout:
		return a.HandleDeadline
	case handleAI:
		return a.HandleAI
	case handleWebSocket:
		return a.HandleWebSocket
	default:
		return a.HandleStreamRecords
	}
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

// FromEnv is a main's whole start-up: configuration from getenv (the
// variables the wiring table lists), the AWS SDK configuration (which
// applies AWS_ENDPOINT_URL_DYNAMODB, _SCHEDULER, _LAMBDA and _SQS), the AWS
// adapters the table names, the App and its start-up work. Any error here
// means the function cannot serve.
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
	deps, err := awsAdapters(awsCfg, cfg)
	if err != nil {
		return nil, err
	}
	deps.Logger = log
	// CloudWatch metrics in embedded metric format (stdout: Lambda sends it
	// to the function's log group, where CloudWatch extracts them), one
	// series per function (the name includes the stack).
	deps.Metrics = obs.NewMetrics(os.Stdout, obs.Namespace, map[string]string{obs.DimFunctionName: getenv("AWS_LAMBDA_FUNCTION_NAME")})
	a, err := NewApp(cfg, deps)
	if err != nil {
		return nil, err
	}
	if err := a.app.Start(ctx); err != nil {
		return nil, fmt.Errorf("lambdafn: %s function: %w", fn, err)
	}
	log.Debug("started", "table", cfg.GamesTable, "scheduleGroup", cfg.Schedule.Group,
		"aiFunction", cfg.AIFunctionName, "memoryMB", cfg.MemoryMB)
	if a.spec.adapters.has(usesAPIKeys) {
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
	return a, nil
}

// awsAdapters builds the AWS adapters the function's entry in the wiring
// table names. On AWS a commit's effects (the game's timer, the AI turn)
// are the effects consumer's, which runs them from the games table's change
// stream; so only it gets the scheduler, and it and the timeout function
// (which restarts an overdue AI seat without a write) the AI trigger; the
// others hold no permission for them.
func awsAdapters(awsCfg aws.Config, cfg Config) (Deps, error) {
	sp := functions[cfg.Function]
	fail := func(err error) (Deps, error) {
		return Deps{}, fmt.Errorf("lambdafn: %s function: %w", cfg.Function, err)
	}
	var deps Deps
	deps.Effects = service.EffectsByStream
	store, err := dynamostore.NewFromConfig(awsCfg, cfg.GamesTable)
	if err != nil {
		return fail(err)
	}
	deps.Store = store
	if sp.adapters.has(usesScheduler) {
		// Timers due within 15 minutes go through the deadline queue, the
		// others to EventBridge Scheduler (shared/schedule/sqsdelay).
		far, err := eventbridge.NewFromConfig(awsCfg, cfg.Schedule)
		if err != nil {
			return fail(err)
		}
		if deps.Scheduler, err = sqsdelay.NewFromConfig(awsCfg, cfg.DeadlineQueueURL, far); err != nil {
			return fail(err)
		}
	}
	if sp.adapters.has(usesAITrigger) {
		if deps.AITrigger, err = lambdainvoke.NewFromConfig(awsCfg, cfg.AIFunctionName); err != nil {
			return fail(err)
		}
	}
	if sp.adapters.has(usesDeadLetters) {
		deps.DeadLetters = SQSQueue{Client: sqs.NewFromConfig(awsCfg), URL: cfg.StreamDeadLetterURL}
	}
	if !sp.adapters.has(usesData) || cfg.DataTable == "" {
		return deps, nil
	}
	data, err := dynamostore.NewData(dynamodb.NewFromConfig(awsCfg), cfg.DataTable)
	if err != nil {
		return fail(err)
	}
	deps.Players, deps.Lister = data, store
	if sp.adapters.has(usesAPIKeys) {
		deps.APIKeys, deps.KeyCounter = data, data
	}
	if sp.adapters.has(usesNotify) {
		deps.Notifications = data
		if deps.Sender, err = newPushSender(awsCfg, cfg); err != nil {
			return fail(err)
		}
		// A player following their account on the stream gets no device
		// notification: the data table's subscriptions tell.
		deps.Followers = api.AccountFollowers{Subscriptions: StreamConnections(data)}
	}
	// The function whose routes end sessions (move) ends the stream's
	// connections of an ended session: through the WebSocket API's
	// management endpoint when it is given it (STREAM_ENDPOINT).
	if sp.adapters.has(usesStream) || sp.adapters.has(usesSessionEnd) && cfg.StreamEndpoint != "" {
		deps.Connections = StreamConnections(data)
		deps.NewPoster = func(endpoint string) (push.Poster, error) { return apigwpost.New(awsCfg, endpoint) }
	}
	if sp.adapters.has(usesSessionEnd) {
		deps.SessionConnections = data
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
