package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"chessapi/shared/aiplayer"
	"chessapi/shared/aitrigger/inprocess"
	"chessapi/shared/api"
	"chessapi/shared/app"
	"chessapi/shared/schedule/localsched"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
	"chessapi/shared/store/dynamostore"
)

type config struct {
	addr           string
	dataPath       string
	dynamoEndpoint string
	table          string
	logLevel       string
	engines        int
	hashMB         int
	aiAPIKey       string
	// now replaces the service clock (tests only; nil is time.Now).
	now func() time.Time
	// stream tunes the stream server (tests only).
	stream api.StreamOptions
}

// run serves until ctx is cancelled, then shuts down gracefully: stop
// accepting, finish in-flight requests and AI turns, stop the timers, close
// the store. Every acknowledged write was committed (fsync) before its
// answer was sent, so nothing acknowledged is lost even on SIGKILL.
// ready, when set, receives the listening address.
func run(ctx context.Context, cfg config, log *slog.Logger, ready chan<- string) error {
	store, closeStore, pending, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeStore()
	store = withCrashHook(store)

	var sched *localsched.Scheduler
	var trigger *inprocess.Trigger
	// AI seats get engines of their own, so public /v1/ai/move requests
	// cannot starve them.
	pool := aiplayer.New(aiplayer.Options{SeatEngines: cfg.engines, PublicEngines: cfg.engines, HashMB: cfg.hashMB})
	wired, err := app.New(app.Config{
		Store: store,
		NewScheduler: func(handle app.TimeoutHandler) (service.Scheduler, error) {
			s, err := localsched.New(handle, localsched.Options{Logger: log})
			sched = s
			return s, err
		},
		NewAITrigger: func(run app.AIRunner) (service.AITrigger, error) {
			trigger = inprocess.New(run, inprocess.Options{Workers: cfg.engines, Logger: log})
			return trigger, nil
		},
		Engine:        pool,
		Effects:       service.EffectsInline,
		Stream:        true,
		StreamOptions: cfg.stream,
		AIAPIKey:      cfg.aiAPIKey,
		Logger:        log,
		Now:           cfg.now,
	})
	if err != nil {
		return err
	}
	svc := wired.Service

	// Re-arm the timers of live games (they live in memory only); a store
	// that cannot be listed is a failed start, not a silent one.
	if pending != nil {
		n, err := sched.Restore(ctx, pending)
		if err != nil {
			return fmt.Errorf("re-arm deadlines: %w", err)
		}
		log.Info("deadlines re-armed", "games", n)
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: wired.Handler,
		// Long polls answer within 20 s; AI requests within 10 s + margin.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "store", storeName(cfg))
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case err := <-serveErr:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	// Stream clients are hijacked connections Shutdown does not close;
	// they reconnect with afterVersion after the restart.
	wired.Stream.Close()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	trigger.Close(10 * time.Second)
	svc.Close(5 * time.Second)
	if err := sched.Close(); err != nil {
		log.Warn("scheduler close", "err", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

func storeName(cfg config) string {
	if cfg.dynamoEndpoint != "" {
		return "dynamodb " + cfg.dynamoEndpoint + " table " + cfg.table
	}
	return "embedded " + cfg.dataPath
}

// openStore opens the embedded store, or DynamoDB when an endpoint is set.
// pending lists the deadlines to re-arm (embedded store only).
func openStore(ctx context.Context, cfg config, log *slog.Logger) (service.Store, func(), func(context.Context) ([]service.TimeoutTask, error), error) {
	if cfg.dynamoEndpoint != "" {
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("aws config: %w", err)
		}
		if awsCfg.Region == "" {
			awsCfg.Region = "us-east-1"
		}
		if os.Getenv("AWS_ACCESS_KEY_ID") == "" {
			// Local emulators accept any key; don't require a profile.
			awsCfg.Credentials = staticLocalCredentials{}
		}
		client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(cfg.dynamoEndpoint) })
		if err := dynamostore.CreateTable(ctx, client, cfg.table); err != nil {
			return nil, nil, nil, fmt.Errorf("table %s at %s: %w", cfg.table, cfg.dynamoEndpoint, err)
		}
		store, err := dynamostore.New(client, cfg.table)
		if err != nil {
			return nil, nil, nil, err
		}
		log.Warn("deadlines of games started before a restart are enforced lazily only (DynamoDB cannot be listed cheaply)")
		return store, func() {}, nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(cfg.dataPath), 0o755); err != nil {
		return nil, nil, nil, fmt.Errorf("-data %s: %w", cfg.dataPath, err)
	}
	store, err := boltstore.Open(cfg.dataPath)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("-data %s: %w", cfg.dataPath, err)
	}
	stopSweep := store.StartSweeper(time.Hour, log)
	closeStore := func() {
		stopSweep()
		if err := store.Close(); err != nil {
			log.Error("close store", "err", err)
		}
	}
	return store, closeStore, store.PendingTimeouts, nil
}

// staticLocalCredentials are dummy credentials for local DynamoDB emulators.
type staticLocalCredentials struct{}

func (staticLocalCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "cmd/local"}, nil
}
