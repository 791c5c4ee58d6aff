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

	var svc *service.Service
	trigger := inprocess.New(nil, log)
	sched, err := localsched.New(func(ctx context.Context, task service.TimeoutTask) {
		if err := svc.HandleTimeout(ctx, task); err != nil {
			log.Error("timeout handler", "game", task.GameID, "version", task.Version, "err", err)
		}
	})
	if err != nil {
		return err
	}
	pool := aiplayer.NewPool(cfg.engines, cfg.hashMB)
	svc, err = service.New(service.Config{
		Store:     store,
		Scheduler: sched,
		AITrigger: trigger,
		AIMover:   pool,
		Logger:    log,
		Now:       cfg.now,
	})
	if err != nil {
		return err
	}
	trigger.SetRunner(svc.PlayAITurn)

	// Re-arm the deadlines of live games (timers live in memory only).
	if pending != nil {
		tasks, err := pending(ctx)
		if err != nil {
			return fmt.Errorf("re-arm deadlines: %w", err)
		}
		for _, t := range tasks {
			_ = sched.ScheduleTimeout(ctx, t)
		}
		log.Info("deadlines re-armed", "games", len(tasks))
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: api.NewHandler(api.Deps{Games: svc, Searcher: pool, AIAPIKey: cfg.aiAPIKey, Logger: log}),
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
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	trigger.Close(10 * time.Second)
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
	stopSweep := sweepExpired(store, log)
	closeStore := func() {
		stopSweep()
		if err := store.Close(); err != nil {
			log.Error("close store", "err", err)
		}
	}
	return store, closeStore, store.PendingTimeouts, nil
}

// sweepExpired deletes finished games past their expiry every hour, the
// embedded store's stand-in for DynamoDB TTL.
func sweepExpired(store *boltstore.Store, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ticker := time.NewTicker(time.Hour)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				if n, err := store.DeleteExpired(ctx, time.Now()); err != nil {
					log.Warn("expire finished games", "err", err)
				} else if n > 0 {
					log.Info("expired finished games", "deleted", n)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

// staticLocalCredentials are dummy credentials for local DynamoDB emulators.
type staticLocalCredentials struct{}

func (staticLocalCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "cmd/local"}, nil
}
