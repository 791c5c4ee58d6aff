// Package lambdafn is the Lambda side of the functions (move, timeout, ai,
// stream, fanout, effects): the one table of what each needs (functions.go), their
// configuration from the environment (SPEC §10), the AWS adapters they are
// wired to, and the event handlers their thin mains hand to aws-lambda-go.
// The handlers take the functions' exact input types
// (events.APIGatewayV2HTTPRequest, service.TimeoutTask, service.AITask,
// events.APIGatewayWebsocketProxyRequest, events.DynamoDBEvent), so tests
// can drive them in-process with the files in events/ and the same code runs
// under the Lambda runtime.
package lambdafn

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"chessapi/shared/schedule/eventbridge"
)

// Config is one function's configuration.
type Config struct {
	Function   Function
	GamesTable string
	Schedule   eventbridge.Config
	// DeadlineQueueURL is the SQS delay queue that carries the timers due
	// within 15 minutes (DEADLINE_QUEUE_URL; effects): shared/schedule/sqsdelay.
	DeadlineQueueURL string
	// AIFunctionName is the function invoked asynchronously for AI-seat
	// moves (timeout and fanout).
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
	// slots, API keys, stream connections.
	DataTable string
	// StreamEndpoint is where the fan-out posts (fanout; optional for
	// stream).
	StreamEndpoint string
	// StreamDeadLetterURL is the SQS queue a stream consumer writes the
	// records it gives up on to, whole (fanout, effects).
	StreamDeadLetterURL string
	// StreamRetryWindow is how long a stream consumer leaves a failing
	// record on its shard to be delivered again before it gives up on it
	// (fanout, effects).
	StreamRetryWindow time.Duration
	// FunctionName is the function's own name, as Lambda sets it.
	FunctionName string
	// OriginVerifySecret is what every request must carry in
	// OriginVerifyHeader (move, ai, stream; the edge, origin.go); "" for
	// none.
	OriginVerifySecret string
	// Push are the SNS platform applications of device notifications
	// (notify.go); a platform without one is refused.
	Push PushApplications
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
// mains): the variables its entry in the wiring table lists. Every missing
// required variable is named at once, so one failed start tells the whole
// story; then the first malformed one is.
func LoadConfig(fn Function, getenv func(string) string) (Config, error) {
	sp, ok := functions[fn]
	if !ok {
		return Config{}, fmt.Errorf("lambdafn: unknown function %q", fn)
	}
	var missing []string
	for _, n := range sp.env {
		if n.required && strings.TrimSpace(getenv(n.v.name)) == "" {
			missing = append(missing, n.v.name)
		}
	}
	if len(missing) > 0 {
		return Config{}, &ConfigError{Function: fn, Missing: missing}
	}
	cfg := Config{Function: fn}
	for _, n := range sp.env {
		if err := n.v.read(&cfg, getenv(n.v.name)); err != nil {
			return Config{}, &ConfigError{Function: fn, Var: n.v.name, Problem: err.Error()}
		}
	}
	if err := cfg.checkAcross(); err != nil {
		return Config{}, err
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
