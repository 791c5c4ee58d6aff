package lambdafn

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"chessapi/shared/aitrigger/lambdainvoke"
	"chessapi/shared/schedule/eventbridge"
	"chessapi/shared/schedule/sqsdelay"
)

// The wiring table: what each function needs, declared once. LoadConfig
// reads the environment it lists (and requires the required part),
// awsAdapters builds the adapters it names, NewApp adds what it names to
// the app and App.Handler returns the handler it names. template.yaml's
// Environment blocks are checked against it (functions_test.go): every
// variable a function requires is set there, and nothing is set there
// that the function does not read.

// Function names one of the Lambda functions.
type Function string

// The functions of template.yaml (view and poll run move's code, ai-seat ai's).
const (
	Move    Function = "move"    // the game HTTP API
	Timeout Function = "timeout" // target of the deadline schedules
	AI      Function = "ai"      // POST /v1/ai/move and async AI-seat moves
	Stream  Function = "stream"  // the WebSocket API's routes ($connect, $disconnect, messages)
	Fanout  Function = "fanout"  // the games table's change stream: each version pushed to its subscribers
	Effects Function = "effects" // the games table's change stream: each version's after-write effects
)

// spec is one function's declaration.
type spec struct {
	handler  handler
	adapters adapters
	env      []need
}

var functions = map[Function]spec{
	// The game API. It never searches (POST /v1/ai/move is routed to the
	// ai function and would answer 503 here), and its commits' timers and
	// AI turns are the fan-out's.
	// STREAM_ENDPOINT, the WebSocket API's, lets it close the stream
	// connections of a session it ends (revoked, or its player deleted);
	// the push applications, for devices' endpoints.
	Move: {handleHTTP, usesData | usesSessionEnd | usesNotify,
		append([]need{{envGamesTable, required}, {envDataTable, required}, {envStreamEndpoint, optional}, {envOriginVerify, optional}, {envLogLevel, optional}}, pushEnv...)},
	// The deadline schedules' target: it ends games, re-arms a game's
	// timer by writing its armed instant (the effects consumer makes the
	// schedule from the stream: this function never calls the scheduler)
	// and restarts an overdue AI seat itself; a flag fall in a rated game
	// reads both ratings. Its timers also wake a turn's timeRunningOut
	// reminders (SPEC §16.3), sent through SNS.
	Timeout: {handleTimeout, usesData | usesAITrigger | usesNotify,
		append([]need{{envGamesTable, required}, {envDataTable, required},
			{envAIFunction, required}, {envLogLevel, optional}}, pushEnv...)},
	// POST /v1/ai/move and the AI seats' turns, one engine sized from the
	// function's memory. The keys live in the data table; DATA_TABLE is
	// optional because the AI seats' function runs the same code and serves
	// no HTTP: without it, keys required, the endpoint refuses every key.
	AI: {handleAI, usesData | usesEngine | usesAPIKeys,
		[]need{{envGamesTable, required}, {envDataTable, optional},
			{envAIAPIKeys, optional}, {envAIAPIKey, optional}, {envMemoryMB, optional}, {envOriginVerify, optional}, {envLogLevel, optional}}},
	// The WebSocket API's routes: connections and subscriptions in the
	// data table, views and presence through the service; answers go to
	// the stage the event came from unless STREAM_ENDPOINT says otherwise.
	Stream: {handleWebSocket, usesData | usesStream,
		[]need{{envGamesTable, required}, {envDataTable, required}, {envStreamEndpoint, optional}, {envOriginVerify, optional}, {envLogLevel, optional}}},
	// The games table's change stream, first consumer: each committed
	// version is pushed to its subscribers (fanout.go).
	Fanout: {handleStreamRecords, usesData | usesStream | usesDeadLetters,
		[]need{{envGamesTable, required}, {envDataTable, required}, {envStreamEndpoint, required},
			{envStreamDLQ, required}, {envStreamRetry, optional}, {envFunctionName, optional}, {envLogLevel, optional}}},
	// The games table's change stream, second consumer: each version's
	// after-write effects (the timer's armed instant backed, the AI turn
	// started, a rated result applied, the notifications: the inbox and
	// SNS), never held by a push (fanout.go).
	Effects: {handleStreamRecords, usesData | usesScheduler | usesAITrigger | usesDeadLetters | usesNotify,
		append([]need{{envGamesTable, required}, {envDataTable, required},
			{envScheduleGroup, required}, {envSchedulerRole, required}, {envTimeoutTarget, required}, {envScheduleDLQ, optional},
			{envDeadlineQueue, required}, {envAIFunction, required}, {envStreamDLQ, required}, {envStreamRetry, optional}, {envFunctionName, optional}, {envLogLevel, optional}}, pushEnv...)},
}

// handler is the event a function's handler takes.
type handler uint8

const (
	handleHTTP          handler = iota // API Gateway HTTP API requests: App.HandleHTTP
	handleTimeout                      // the schedules' service.TimeoutTask or the deadline queue's SQS batches: App.HandleDeadline
	handleAI                           // HTTP requests or service.AITask: App.HandleAI
	handleWebSocket                    // the WebSocket API's routes: App.HandleWebSocket
	handleStreamRecords                // DynamoDB Stream batches: App.HandleStreamRecords (the function is the consumer's role)
)

// servesHTTP reports whether the handler answers HTTP API requests.
func (h handler) servesHTTP() bool { return h == handleHTTP || h == handleAI }

// adapters are the ports a function runs on besides the games table.
type adapters uint16

const (
	usesData        adapters = 1 << iota // the data table (when DATA_TABLE is set): players, game lists
	usesScheduler                        // the games' timers: the deadline queue (SQS) and EventBridge Scheduler
	usesAITrigger                        // asynchronous invocation of the AI seats' function
	usesEngine                           // one search engine
	usesAPIKeys                          // POST /v1/ai/move's keys and their counters (data table)
	usesStream                           // the stream's connections (data table) and the @connections poster
	usesDeadLetters                      // the SQS queue a stream consumer writes the records it gives up on to
	usesNotify                           // devices and inboxes (data table) and the SNS sender (notify.go)
	// usesSessionEnd: the stream's connections of the sessions it ends
	// (data table), closed through the @connections poster when
	// STREAM_ENDPOINT is set.
	usesSessionEnd
)

func (a adapters) has(b adapters) bool { return a&b == b }

// need is one variable a function reads.
type need struct {
	v        *envVar
	required bool
}

const (
	required = true
	optional = false
)

// envVar is one environment variable and how it is read into Config.
type envVar struct {
	name string
	// read stores value (as set; "" when unset) in cfg, or says what is
	// wrong with it.
	read func(cfg *Config, value string) error
}

// Environment variables (SPEC §10). The scheduler's names come from its
// adapter, AI_FUNCTION_NAME from the trigger's.
const (
	EnvGamesTable     = "GAMES_TABLE"
	EnvAIFunctionName = lambdainvoke.EnvFunctionName
	EnvLogLevel       = "LOG_LEVEL"
	// EnvAIAPIKeys says whether POST /v1/ai/move requires an API key (ai
	// only): "required" (also when unset) or "off", the explicit opt-out
	// that leaves the endpoint open to anyone (docs/api-keys.md).
	EnvAIAPIKeys = "AI_API_KEYS"
	// EnvAIAPIKey is an optional bootstrap key (ai only): one more key
	// accepted as its exact text, with apikey.DefaultLimits. It is a
	// plaintext secret in the function's configuration, so the template
	// never sets it; it is for sam local invoke, the sample events and
	// tests. Keys made with cmd/apikeys live hashed in the data table.
	EnvAIAPIKey = "AI_API_KEY"
	// EnvMemoryMB is set by Lambda itself to the function's memory size; the
	// AI function sizes its transposition table from it.
	EnvMemoryMB = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"
	// EnvDataTable names the data table (players, stream connections).
	EnvDataTable = "DATA_TABLE"
	// EnvStreamEndpoint is the WebSocket API stage's connections URL
	// (https://{api}.execute-api.{region}.amazonaws.com/{stage}), where
	// the fan-out posts. The stream function takes it from its events
	// unless this is set.
	EnvStreamEndpoint = "STREAM_ENDPOINT"
	// EnvStreamDLQ is the URL of the SQS queue the stream consumers write
	// a record to, whole, when they give up on it (fanout, effects).
	EnvStreamDLQ = "STREAM_DLQ_URL"
	// EnvStreamRetry is how many seconds a stream consumer keeps retrying
	// a failing record on its shard (the event source mapping delivers it
	// again) before it writes it to the queue instead; default
	// DefaultStreamRetryWindow.
	EnvStreamRetry = "STREAM_RETRY_SECONDS"
	// EnvFunctionName is set by Lambda itself to the function's name; a
	// dead-lettered record names the function to replay it through.
	EnvFunctionName = "AWS_LAMBDA_FUNCTION_NAME"
)

var (
	envGamesTable = &envVar{EnvGamesTable, func(c *Config, v string) error {
		c.GamesTable = strings.TrimSpace(v)
		return nil
	}}
	envDataTable = &envVar{EnvDataTable, func(c *Config, v string) error {
		c.DataTable = strings.TrimSpace(v)
		return nil
	}}
	envScheduleGroup = &envVar{eventbridge.EnvGroup, func(c *Config, v string) error {
		c.Schedule.Group = strings.TrimSpace(v)
		return nil
	}}
	// The ARNs are checked here as well as by the scheduler adapter, so
	// that the mistake is reported before any AWS client is made.
	envSchedulerRole = &envVar{eventbridge.EnvRoleARN, func(c *Config, v string) error { return readARN(&c.Schedule.RoleARN, v) }}
	envTimeoutTarget = &envVar{eventbridge.EnvTargetARN, func(c *Config, v string) error { return readARN(&c.Schedule.TargetARN, v) }}
	// Where EventBridge Scheduler puts a deadline it could not deliver
	// after its retries.
	envScheduleDLQ = &envVar{eventbridge.EnvDLQARN, func(c *Config, v string) error { return readARN(&c.Schedule.DeadLetterARN, v) }}
	// The deadline queue: timers due within SQS's 15-minute delay.
	envDeadlineQueue = &envVar{sqsdelay.EnvQueueURL, func(c *Config, v string) error {
		c.DeadlineQueueURL = strings.TrimSpace(v)
		if c.DeadlineQueueURL != "" && !strings.HasPrefix(c.DeadlineQueueURL, "https://") && !strings.HasPrefix(c.DeadlineQueueURL, "http://") {
			return fmt.Errorf("= %q is not a queue URL", c.DeadlineQueueURL)
		}
		return nil
	}}
	envAIFunction = &envVar{EnvAIFunctionName, func(c *Config, v string) error {
		c.AIFunctionName = strings.TrimSpace(v)
		return nil
	}}
	envStreamEndpoint = &envVar{EnvStreamEndpoint, func(c *Config, v string) error {
		c.StreamEndpoint = strings.TrimSpace(v)
		if c.StreamEndpoint != "" && !strings.HasPrefix(c.StreamEndpoint, "https://") && !strings.HasPrefix(c.StreamEndpoint, "http://") {
			return fmt.Errorf("= %q is not a URL", c.StreamEndpoint)
		}
		return nil
	}}
	envAIAPIKeys = &envVar{EnvAIAPIKeys, func(c *Config, v string) error {
		switch mode := strings.TrimSpace(v); mode {
		case "", "required":
		case "off":
			c.AIKeysOff = true
		default:
			return fmt.Errorf("= %q is not one of required, off", mode)
		}
		return nil
	}}
	// The key is compared byte for byte; surrounding blanks would be a key
	// nobody can send, so they are a configuration mistake.
	envAIAPIKey = &envVar{EnvAIAPIKey, func(c *Config, v string) error {
		if v != strings.TrimSpace(v) {
			return fmt.Errorf("has leading or trailing blanks")
		}
		c.AIAPIKey = v
		return nil
	}}
	envMemoryMB = &envVar{EnvMemoryMB, func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		mb, err := strconv.Atoi(v)
		if err != nil || mb <= 0 {
			return fmt.Errorf("= %q is not a positive whole number of MB", v)
		}
		c.MemoryMB = mb
		return nil
	}}
	envStreamDLQ = &envVar{EnvStreamDLQ, func(c *Config, v string) error {
		c.StreamDeadLetterURL = strings.TrimSpace(v)
		if c.StreamDeadLetterURL != "" && !strings.HasPrefix(c.StreamDeadLetterURL, "https://") && !strings.HasPrefix(c.StreamDeadLetterURL, "http://") {
			return fmt.Errorf("= %q is not a queue URL", c.StreamDeadLetterURL)
		}
		return nil
	}}
	envStreamRetry = &envVar{EnvStreamRetry, func(c *Config, v string) error {
		c.StreamRetryWindow = DefaultStreamRetryWindow
		if v = strings.TrimSpace(v); v == "" {
			return nil
		}
		sec, err := strconv.Atoi(v)
		if err != nil || sec < 1 || sec > maxStreamRetrySeconds {
			return fmt.Errorf("= %q is not a whole number of seconds from 1 to %d", v, maxStreamRetrySeconds)
		}
		c.StreamRetryWindow = time.Duration(sec) * time.Second
		return nil
	}}
	// The edge's secret is compared byte for byte; blanks around it, or
	// one too short to resist guessing, are a configuration mistake.
	envOriginVerify = &envVar{EnvOriginVerifySecret, func(c *Config, v string) error {
		switch {
		case v == "":
		case v != strings.TrimSpace(v):
			return fmt.Errorf("has leading or trailing blanks")
		case len(v) < 32:
			return fmt.Errorf("is %d characters; want at least 32", len(v))
		}
		c.OriginVerifySecret = v
		return nil
	}}
	envFunctionName = &envVar{EnvFunctionName, func(c *Config, v string) error {
		c.FunctionName = strings.TrimSpace(v)
		return nil
	}}
	envLogLevel = &envVar{EnvLogLevel, func(c *Config, v string) error {
		level, err := ParseLogLevel(v)
		c.LogLevel = level
		return err
	}}
)

// readARN stores an optional ARN (a required one is checked as missing
// first).
func readARN(dst *string, v string) error {
	*dst = strings.TrimSpace(v)
	if *dst != "" && !strings.HasPrefix(*dst, "arn:") {
		return fmt.Errorf("= %q is not an ARN", *dst)
	}
	return nil
}

// checkAcross reports a mistake that only the variables together show.
func (c Config) checkAcross() *ConfigError {
	bad := func(name, problem string) *ConfigError {
		return &ConfigError{Function: c.Function, Var: name, Problem: problem}
	}
	switch {
	case c.AIAPIKey != "" && c.AIKeysOff:
		return bad(EnvAIAPIKey, "is set, but AI_API_KEYS=off turns keys off")
	case c.AIAPIKey != "" && c.DataTable == "":
		// Each instance would count the key on its own: its limits would
		// grow with the instances.
		return bad(EnvAIAPIKey, "needs DATA_TABLE, where its rate and daily quota are counted")
	}
	return nil
}
