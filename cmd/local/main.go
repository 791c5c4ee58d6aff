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
	"syscall"
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
	flag.StringVar(&cfg.aiAPIKey, "ai-api-key", os.Getenv("AI_API_KEY"), "require this x-api-key on POST /v1/ai/move")
	flag.Parse()

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
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l})), nil
}
