// Command local serves the whole chess API on one machine: every route of
// API v1 behind one listener, the embedded file store (or DynamoDB when an
// endpoint is given), the in-process deadline scheduler and AI turns on
// goroutines. No Docker, no cloud account.
//
//	go run ./cmd/local [-addr 127.0.0.1:3000] [-data data/chess.db]
//	go run ./cmd/local -dynamodb-endpoint http://127.0.0.1:8000 -table games
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"

	"chessapi/shared/obs"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:3000", "listen address")
	flag.StringVar(&cfg.dataPath, "data", "data/chess.db", "embedded database file (its directory is created)")
	flag.StringVar(&cfg.dynamoEndpoint, "dynamodb-endpoint", "", "use DynamoDB at this endpoint instead of the embedded store")
	flag.StringVar(&cfg.table, "table", "games", "DynamoDB table (with -dynamodb-endpoint; created if missing)")
	flag.StringVar(&cfg.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	flag.IntVar(&cfg.engines, "engines", max(1, runtime.GOMAXPROCS(0)/2), "AI engines searching at once")
	flag.IntVar(&cfg.hashMB, "hash", 64, "transposition table MiB per engine")
	flag.StringVar(&cfg.aiAPIKey, "ai-api-key", os.Getenv("AI_API_KEY"), "accept this x-api-key on POST /v1/ai/move (a bootstrap key with the default limits; requires keys)")
	flag.BoolVar(&cfg.requireAPIKeys, "require-api-keys", false, "require an API key made with cmd/apikeys on POST /v1/ai/move (default: open unless -ai-api-key)")
	flag.StringVar(&cfg.notifyWebhook, "notify-webhook", os.Getenv("NOTIFY_WEBHOOK_URL"), "POST every device notification to this URL as {device, notification} (docs/notifications.md); default: the inbox only")
	origins := flag.String("allowed-origins", "*", "comma-separated browser origins allowed by CORS (as the stack's AllowedOrigins); \"\" turns CORS off")
	flag.Parse()
	if *origins != "" {
		cfg.allowedOrigins = strings.Split(*origins, ",")
	}

	logger, err := newLogger(cfg.logLevel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "local:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, logger, nil); err != nil {
		logger.Error("server stopped", "err", err)
		os.Exit(1)
	}
}

func newLogger(level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("-log-level %q: %w", level, err)
	}
	// JSON lines with the request's ids, route and game on every line of a
	// request, tokens redacted (shared/obs), as on Lambda.
	return obs.NewLogger(os.Stderr, l, "service", "local"), nil
}
