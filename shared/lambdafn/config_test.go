package lambdafn

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"chessapi/shared/schedule/eventbridge"
)

// fullEnv is every variable any function reads, as the template sets them.
var fullEnv = map[string]string{
	"GAMES_TABLE":          "chessapi-games",
	"SCHEDULE_GROUP":       "chessapi-deadlines",
	"SCHEDULER_ROLE_ARN":   "arn:aws:iam::123456789012:role/chessapi-scheduler",
	"TIMEOUT_FUNCTION_ARN": "arn:aws:lambda:eu-central-1:123456789012:function:chessapi-timeout",
	"AI_FUNCTION_NAME":     "chessapi-ai",
	"AI_API_KEY":           "partner-key",
	"LOG_LEVEL":            "DEBUG",
	"STREAM_DLQ_URL":       "https://sqs.eu-central-1.amazonaws.com/123456789012/chessapi-fanout-dlq",
	"DEADLINE_QUEUE_URL":   "https://sqs.eu-central-1.amazonaws.com/123456789012/chessapi-deadlines",
}

// dataTable adds the data table, which move and timeout need (the ai
// function's own reading of it is tested without).
func dataTable(changes map[string]string) map[string]string {
	out := map[string]string{"DATA_TABLE": "chessapi-data"}
	for k, v := range changes {
		out[k] = v
	}
	return out
}

// envWith is fullEnv with changes; an empty value unsets the variable.
func envWith(changes map[string]string) func(string) string {
	env := map[string]string{}
	for k, v := range fullEnv {
		env[k] = v
	}
	for k, v := range changes {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
	return func(k string) string { return env[k] }
}

func TestLoadConfig(t *testing.T) {
	schedule := eventbridge.Config{
		Group:     "chessapi-deadlines",
		RoleARN:   "arn:aws:iam::123456789012:role/chessapi-scheduler",
		TargetARN: "arn:aws:lambda:eu-central-1:123456789012:function:chessapi-timeout",
	}
	tests := []struct {
		name    string
		fn      Function
		changes map[string]string
		want    Config
	}{
		// The move function reads its tables only: the scheduler's and the
		// AI function's variables are the effects consumer's and timeout's
		// business.
		{"move", Move, dataTable(nil), Config{Function: Move, GamesTable: "chessapi-games", DataTable: "chessapi-data", LogLevel: slog.LevelDebug}},
		// The timeout function re-arms by writing: no scheduler.
		{"timeout", Timeout, dataTable(map[string]string{"LOG_LEVEL": "warn"}), Config{Function: Timeout, GamesTable: "chessapi-games",
			AIFunctionName: "chessapi-ai", DataTable: "chessapi-data", LogLevel: slog.LevelWarn}},
		{"fanout pushes only", Fanout, dataTable(map[string]string{"STREAM_ENDPOINT": "https://abc.execute-api.eu-central-1.amazonaws.com/v1", "AWS_LAMBDA_FUNCTION_NAME": "chessapi-fanout"}),
			Config{Function: Fanout, GamesTable: "chessapi-games", DataTable: "chessapi-data",
				StreamEndpoint: "https://abc.execute-api.eu-central-1.amazonaws.com/v1", LogLevel: slog.LevelDebug,
				StreamDeadLetterURL: fullEnv["STREAM_DLQ_URL"], StreamRetryWindow: DefaultStreamRetryWindow, FunctionName: "chessapi-fanout"}},
		{"effects", Effects, dataTable(map[string]string{"STREAM_RETRY_SECONDS": "90"}),
			Config{Function: Effects, GamesTable: "chessapi-games", Schedule: schedule, DeadlineQueueURL: fullEnv["DEADLINE_QUEUE_URL"], AIFunctionName: "chessapi-ai", DataTable: "chessapi-data",
				LogLevel: slog.LevelDebug, StreamDeadLetterURL: fullEnv["STREAM_DLQ_URL"], StreamRetryWindow: 90 * time.Second}},
		{"stream", Stream, dataTable(nil), Config{Function: Stream, GamesTable: "chessapi-games", DataTable: "chessapi-data", LogLevel: slog.LevelDebug}},
		{"ai reads the keys' table and the bootstrap key, not the AI function", AI, map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1769", "DATA_TABLE": "chessapi-data"},
			Config{Function: AI, GamesTable: "chessapi-games", AIAPIKey: "partner-key",
				DataTable: "chessapi-data", LogLevel: slog.LevelDebug, MemoryMB: 1769}},
		{"ai keys required, spelled out", AI, map[string]string{"AI_API_KEYS": "required", "AI_API_KEY": "", "DATA_TABLE": "chessapi-data"},
			Config{Function: AI, GamesTable: "chessapi-games", DataTable: "chessapi-data", LogLevel: slog.LevelDebug}},
		{"ai keys off", AI, map[string]string{"AI_API_KEYS": "off", "AI_API_KEY": ""},
			Config{Function: AI, GamesTable: "chessapi-games", AIKeysOff: true, LogLevel: slog.LevelDebug}},
		{"ai without key or AI function, LOG_LEVEL unset", AI, map[string]string{"AI_API_KEY": "", "AI_FUNCTION_NAME": "", "LOG_LEVEL": ""},
			Config{Function: AI, GamesTable: "chessapi-games", LogLevel: slog.LevelInfo}},
		// The AI seats' function: GAMES_TABLE and LOG_LEVEL, as the
		// template gives it.
		{"ai without the scheduler", AI, map[string]string{"AI_API_KEY": "", "SCHEDULE_GROUP": "", "SCHEDULER_ROLE_ARN": "", "TIMEOUT_FUNCTION_ARN": ""},
			Config{Function: AI, GamesTable: "chessapi-games", LogLevel: slog.LevelDebug}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadConfig(tt.fn, envWith(tt.changes))
			if err != nil {
				t.Fatalf("LoadConfig(%s) error: %v", tt.fn, err)
			}
			if got != tt.want {
				t.Errorf("LoadConfig(%s) = %+v; want %+v", tt.fn, got, tt.want)
			}
		})
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name        string
		fn          Function
		changes     map[string]string
		wantMissing []string
		wantVar     string
	}{
		{"move without table", Move, dataTable(map[string]string{"GAMES_TABLE": ""}), []string{"GAMES_TABLE"}, ""},
		{"move without data table", Move, nil, []string{"DATA_TABLE"}, ""},
		{"blank counts as missing", Timeout, dataTable(map[string]string{"GAMES_TABLE": "  "}), []string{"GAMES_TABLE"}, ""},
		{"all missing named at once", Effects, map[string]string{"GAMES_TABLE": "", "SCHEDULE_GROUP": "", "AI_FUNCTION_NAME": "", "STREAM_DLQ_URL": ""},
			[]string{"GAMES_TABLE", "DATA_TABLE", "SCHEDULE_GROUP", "AI_FUNCTION_NAME", "STREAM_DLQ_URL"}, ""},
		{"timeout needs the AI function", Timeout, dataTable(map[string]string{"AI_FUNCTION_NAME": ""}), []string{"AI_FUNCTION_NAME"}, ""},
		{"effects needs the scheduler", Effects, dataTable(map[string]string{"SCHEDULER_ROLE_ARN": "", "TIMEOUT_FUNCTION_ARN": ""}),
			[]string{"SCHEDULER_ROLE_ARN", "TIMEOUT_FUNCTION_ARN"}, ""},
		{"fanout needs the endpoint", Fanout, dataTable(nil), []string{"STREAM_ENDPOINT"}, ""},
		{"fanout needs the dead-letter queue", Fanout, dataTable(map[string]string{"STREAM_ENDPOINT": "https://x.example/v1", "STREAM_DLQ_URL": ""}), []string{"STREAM_DLQ_URL"}, ""},
		{"dead-letter queue is not a URL", Effects, dataTable(map[string]string{"STREAM_DLQ_URL": "chessapi-fanout-dlq"}), nil, "STREAM_DLQ_URL"},
		{"retry window is not seconds", Fanout, dataTable(map[string]string{"STREAM_ENDPOINT": "https://x.example/v1", "STREAM_RETRY_SECONDS": "5m"}), nil, "STREAM_RETRY_SECONDS"},
		{"retry window over the mapping's maximum age", Effects, dataTable(map[string]string{"STREAM_RETRY_SECONDS": "3600"}), nil, "STREAM_RETRY_SECONDS"},
		{"stream needs the data table", Stream, nil, []string{"DATA_TABLE"}, ""},
		{"bad log level", Move, dataTable(map[string]string{"LOG_LEVEL": "loud"}), nil, "LOG_LEVEL"},
		{"bad memory size", AI, map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots", "DATA_TABLE": "chessapi-data"}, nil, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"},
		{"key with blanks", AI, map[string]string{"AI_API_KEY": "key ", "DATA_TABLE": "chessapi-data"}, nil, "AI_API_KEY"},
		{"bootstrap key without the table to count it", AI, nil, nil, "AI_API_KEY"},
		{"bootstrap key with keys off", AI, map[string]string{"AI_API_KEYS": "off", "DATA_TABLE": "chessapi-data"}, nil, "AI_API_KEY"},
		{"keys neither required nor off", AI, map[string]string{"AI_API_KEYS": "optional"}, nil, "AI_API_KEYS"},
		{"role is not an ARN", Effects, dataTable(map[string]string{"SCHEDULER_ROLE_ARN": "chessapi-scheduler"}), nil, "SCHEDULER_ROLE_ARN"},
		{"target is not an ARN", Effects, dataTable(map[string]string{"TIMEOUT_FUNCTION_ARN": "chessapi-timeout"}), nil, "TIMEOUT_FUNCTION_ARN"},
		{"dead-letter queue is not an ARN", Effects, dataTable(map[string]string{"SCHEDULE_DLQ_ARN": "chessapi-dlq"}), nil, "SCHEDULE_DLQ_ARN"},
		{"endpoint is not a URL", Stream, dataTable(map[string]string{"STREAM_ENDPOINT": "execute-api/v1"}), nil, "STREAM_ENDPOINT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadConfig(tt.fn, envWith(tt.changes))
			var ce *ConfigError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) {
				t.Fatalf("LoadConfig(%s) = %+v, %v; want a *ConfigError", tt.fn, got, err)
			}
			if !slices.Equal(ce.Missing, tt.wantMissing) || ce.Var != tt.wantVar {
				t.Errorf("LoadConfig(%s) error = %+v; want missing %v, var %q", tt.fn, ce, tt.wantMissing, tt.wantVar)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.Contains(msg, string(tt.fn)) {
				t.Errorf("error %q: want one line naming the %s function", msg, tt.fn)
			}
			for _, name := range append(tt.wantMissing, tt.wantVar) {
				if !strings.Contains(msg, name) {
					t.Errorf("error %q does not name %s", msg, name)
				}
			}
		})
	}
	if _, err := LoadConfig("billing", envWith(nil)); err == nil {
		t.Error(`LoadConfig("billing") = nil error; want one for an unknown function`)
	}
}

func TestParseLogLevel(t *testing.T) {
	tests := []struct {
		in      string
		want    slog.Level
		wantErr bool
	}{
		{"", slog.LevelInfo, false},
		{"INFO", slog.LevelInfo, false},
		{"debug", slog.LevelDebug, false},
		{" Warn ", slog.LevelWarn, false},
		{"WARNING", slog.LevelWarn, false},
		{"ERROR", slog.LevelError, false},
		{"TRACE", 0, true},
		{"INFO+2", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseLogLevel(tt.in)
		if (err != nil) != tt.wantErr || err == nil && got != tt.want {
			t.Errorf("ParseLogLevel(%q) = %v, %v; want %v (error: %v)", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestHashMB(t *testing.T) {
	tests := []struct{ memoryMB, want int }{
		{0, 64},  // unknown: the engine's default
		{32, 16}, // floor
		{128, 32},
		{512, 128},  // the move function's size
		{1769, 256}, // the template's AI function
		{3008, 512},
		{10240, 1024}, // Lambda's maximum: capped
	}
	for _, tt := range tests {
		if got := HashMB(tt.memoryMB); got != tt.want {
			t.Errorf("HashMB(%d) = %d; want %d", tt.memoryMB, got, tt.want)
		}
	}
}

// TestFromEnvFailsBeforeAWS: configuration mistakes stop the start-up with
// the ConfigError, before any AWS configuration or client is made.
func TestFromEnvFailsBeforeAWS(t *testing.T) {
	for _, fn := range []Function{Move, Timeout, AI, Stream, Fanout} {
		app, err := FromEnv(context.Background(), fn, envWith(dataTable(map[string]string{"GAMES_TABLE": "", "STREAM_ENDPOINT": "https://x.example/v1"})))
		var ce *ConfigError
		if app != nil || !errors.As(err, &ce) || !slices.Equal(ce.Missing, []string{"GAMES_TABLE"}) {
			t.Errorf("FromEnv(%s) without GAMES_TABLE = %v, %v; want the ConfigError naming it", fn, app, err)
		}
	}
}
