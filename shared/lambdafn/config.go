// Package lambdafn is the Lambda side of the three functions (move, timeout,
// ai): their configuration from the environment (SPEC §10), the AWS adapters
// they are wired to, and the event handlers their thin mains hand to
// aws-lambda-go. The handlers take the functions' exact input types
// (events.APIGatewayV2HTTPRequest, service.TimeoutTask, service.AITask), so
// tests can drive them in-process with the files in events/ and the same code
// runs under the Lambda runtime.
package lambdafn

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"chessapi/shared/aitrigger/lambdainvoke"
	"chessapi/shared/schedule/eventbridge"
)

// Function names one of the three Lambda functions.
type Function string

// The functions of template.yaml.
const (
	Move    Function = "move"    // the game HTTP API
	Timeout Function = "timeout" // target of the deadline schedules
	AI      Function = "ai"      // POST /v1/ai/move and async AI-seat moves
	Stream  Function = "stream"  // the WebSocket API's routes ($connect, $disconnect, messages)
	Fanout  Function = "fanout"  // the games table's change stream: push and commit effects
)

// Environment variables (SPEC §10). The scheduler's come from its adapter,
// AI_FUNCTION_NAME from the trigger's.
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
)

// required lists, per function, the variables that must be set. AI_API_KEYS,
// AI_API_KEY and LOG_LEVEL are optional everywhere.
var required = map[Function][]string{
	Move:    {EnvGamesTable, EnvDataTable, eventbridge.EnvGroup, eventbridge.EnvRoleARN, eventbridge.EnvTargetARN, EnvAIFunctionName},
	Timeout: {EnvGamesTable, EnvDataTable, eventbridge.EnvGroup, eventbridge.EnvRoleARN, eventbridge.EnvTargetARN, EnvAIFunctionName},
	AI:      {EnvGamesTable, eventbridge.EnvGroup, eventbridge.EnvRoleARN, eventbridge.EnvTargetARN},
	Stream:  {EnvGamesTable, EnvDataTable},
	Fanout:  {EnvGamesTable, EnvDataTable, EnvStreamEndpoint, eventbridge.EnvGroup, eventbridge.EnvRoleARN, eventbridge.EnvTargetARN, EnvAIFunctionName},
}

// Config is one function's configuration.
type Config struct {
	Function   Function
	GamesTable string
	Schedule   eventbridge.Config
	// AIFunctionName is the function invoked asynchronously for AI-seat
	// moves (move and timeout only).
	AIFunctionName string
	// AIKeysOff turns the API keys of POST /v1/ai/move off (AI_API_KEYS=off;
	// ai only): the zero value requires them.
	AIKeysOff bool
	// AIAPIKey is the bootstrap key (AI_API_KEY; ai only), "" for none.
	AIAPIKey string
	LogLevel slog.Level
	// MemoryMB is the function's memory size as Lambda reports it; 0 when
	// unknown.
	MemoryMB int
	// DataTable is the data table: players, link codes, counters, pairing
	// slots, stream connections (every function but ai, which reads keys).
	DataTable string
	// StreamEndpoint is where the fan-out posts (fanout; optional for
	// stream).
	StreamEndpoint string
}

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("configuration")

// ConfigError reports configuration a function cannot start with: the
// variables that are missing, or one that has a bad value.
type ConfigError struct {
	Function Function
	Missing  []string // required variables that are not set
	Var      string   // a variable with a bad value
	Problem  string   // what is wrong with Var
}

func (e *ConfigError) Error() string {
	if len(e.Missing) > 0 {
		return fmt.Sprintf("lambdafn: %s function: required environment variables not set: %s",
			e.Function, strings.Join(e.Missing, ", "))
	}
	return fmt.Sprintf("lambdafn: %s function: %s %s", e.Function, e.Var, e.Problem)
}

// Unwrap lets errors.Is(err, ErrConfig) match.
func (e *ConfigError) Unwrap() error { return ErrConfig }

// LoadConfig reads fn's configuration through getenv (os.Getenv in the
// mains). Every missing required variable is named at once, so one failed
// start tells the whole story.
func LoadConfig(fn Function, getenv func(string) string) (Config, error) {
	need, ok := required[fn]
	if !ok {
		return Config{}, fmt.Errorf("lambdafn: unknown function %q", fn)
	}
	var missing []string
	for _, name := range need {
		if strings.TrimSpace(getenv(name)) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return Config{}, &ConfigError{Function: fn, Missing: missing}
	}
	cfg := Config{
		Function:   fn,
		GamesTable: strings.TrimSpace(getenv(EnvGamesTable)),
		Schedule: eventbridge.Config{
			Group:     strings.TrimSpace(getenv(eventbridge.EnvGroup)),
			RoleARN:   strings.TrimSpace(getenv(eventbridge.EnvRoleARN)),
			TargetARN: strings.TrimSpace(getenv(eventbridge.EnvTargetARN)),
			// Optional: where EventBridge Scheduler puts a deadline it
			// could not deliver after its retries.
			DeadLetterARN: strings.TrimSpace(getenv(eventbridge.EnvDLQARN)),
		},
	}
	// Checked here as well as by the scheduler adapter, so that the mistake
	// is reported before any AWS client is made.
	for _, v := range []struct{ name, value string }{
		{eventbridge.EnvRoleARN, cfg.Schedule.RoleARN}, {eventbridge.EnvTargetARN, cfg.Schedule.TargetARN},
		{eventbridge.EnvDLQARN, cfg.Schedule.DeadLetterARN},
	} {
		if v.value != "" && !strings.HasPrefix(v.value, "arn:") { // the DLQ is optional
			return Config{}, &ConfigError{Function: fn, Var: v.name, Problem: fmt.Sprintf("= %q is not an ARN", v.value)}
		}
	}
	switch fn {
	case Move, Timeout, Stream, Fanout:
		cfg.AIFunctionName = strings.TrimSpace(getenv(EnvAIFunctionName))
		cfg.DataTable = strings.TrimSpace(getenv(EnvDataTable))
		cfg.StreamEndpoint = strings.TrimSpace(getenv(EnvStreamEndpoint))
		if cfg.StreamEndpoint != "" && !strings.HasPrefix(cfg.StreamEndpoint, "https://") && !strings.HasPrefix(cfg.StreamEndpoint, "http://") {
			return Config{}, &ConfigError{Function: fn, Var: EnvStreamEndpoint, Problem: fmt.Sprintf("= %q is not a URL", cfg.StreamEndpoint)}
		}
	case AI:
		// The API keys are read from the data table and counted there;
		// DATA_TABLE is not required because the AI seats' function runs
		// the same code and serves no HTTP: without it, keys required, the
		// endpoint refuses every key (503), it never opens.
		cfg.DataTable = strings.TrimSpace(getenv(EnvDataTable))
		switch mode := strings.TrimSpace(getenv(EnvAIAPIKeys)); mode {
		case "", "required":
		case "off":
			cfg.AIKeysOff = true
		default:
			return Config{}, &ConfigError{Function: fn, Var: EnvAIAPIKeys, Problem: fmt.Sprintf("= %q is not one of required, off", mode)}
		}
		// The key is compared byte for byte; surrounding blanks would be a
		// key nobody can send, so they are a configuration mistake.
		cfg.AIAPIKey = getenv(EnvAIAPIKey)
		switch {
		case cfg.AIAPIKey != strings.TrimSpace(cfg.AIAPIKey):
			return Config{}, &ConfigError{Function: fn, Var: EnvAIAPIKey, Problem: "has leading or trailing blanks"}
		case cfg.AIAPIKey != "" && cfg.AIKeysOff:
			return Config{}, &ConfigError{Function: fn, Var: EnvAIAPIKey, Problem: "is set, but AI_API_KEYS=off turns keys off"}
		case cfg.AIAPIKey != "" && cfg.DataTable == "":
			// Each instance would count the key on its own: its limits
			// would grow with the instances.
			return Config{}, &ConfigError{Function: fn, Var: EnvAIAPIKey, Problem: "needs DATA_TABLE, where its rate and daily quota are counted"}
		}
	}
	level, err := ParseLogLevel(getenv(EnvLogLevel))
	if err != nil {
		return Config{}, &ConfigError{Function: fn, Var: EnvLogLevel, Problem: err.Error()}
	}
	cfg.LogLevel = level
	if v := getenv(EnvMemoryMB); v != "" {
		mb, err := strconv.Atoi(v)
		if err != nil || mb <= 0 {
			return Config{}, &ConfigError{Function: fn, Var: EnvMemoryMB, Problem: fmt.Sprintf("= %q is not a positive whole number of MB", v)}
		}
		cfg.MemoryMB = mb
	}
	return cfg, nil
}

// ParseLogLevel reads LOG_LEVEL: DEBUG, INFO, WARN or ERROR in any case,
// INFO when empty.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "INFO":
		return slog.LevelInfo, nil
	case "DEBUG":
		return slog.LevelDebug, nil
	case "WARN", "WARNING":
		return slog.LevelWarn, nil
	case "ERROR":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("= %q is not one of DEBUG, INFO, WARN, ERROR", s)
}

// Transposition table sizing for the AI function: a quarter of the
// function's memory, as a power of two (the table rounds down to one
// anyway), within these bounds. 1769 MB (the template's AI function) gives
// 256 MB; the rest is for the Go heap, the runtime and the search stacks.
const (
	minHashMB     = 16
	maxHashMB     = 1024
	defaultHashMB = 64 // when Lambda does not say (never on Lambda itself)
)

// HashMB is the transposition table size for a function with memoryMB of
// memory (0: unknown).
func HashMB(memoryMB int) int {
	if memoryMB <= 0 {
		return defaultHashMB
	}
	quarter := memoryMB / 4
	mb := minHashMB
	for mb*2 <= quarter && mb*2 <= maxHashMB {
		mb *= 2
	}
	return mb
}
