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
	"chessapi/shared/apikey"
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
	// allowedOrigins is the CORS policy (nil: none).
	allowedOrigins []string
	// requireAPIKeys requires keys made with cmd/apikeys (in the embedded
	// store, or the data table beside -table) on POST /v1/ai/move.
	requireAPIKeys bool
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
	// Players, the game index, counters and pairing slots (SPEC §12) live
	// in the embedded store itself, or in DynamoDB's data table beside the
	// games table.
	players, lister := store.players, store.lister
	aiKeys, err := newAIKeyChecker(cfg, store, log)
	if err != nil {
		return err
	}
	store.games = withCrashHook(store.games)

	var sched *localsched.Scheduler
	var trigger *inprocess.Trigger
	// AI seats get engines of their own, so public /v1/ai/move requests
	// cannot starve them.
	pool := aiplayer.New(aiplayer.Options{SeatEngines: cfg.engines, PublicEngines: cfg.engines, HashMB: cfg.hashMB})
	wired, err := app.New(app.Config{
		Store:   store.games,
		Players: players,
		Lister:  lister,
		NewScheduler: func(handle app.TimeoutHandler) (service.Scheduler, error) {
			s, err := localsched.New(handle, localsched.Options{Logger: log})
			sched = s
			return s, err
		},
		NewAITrigger: func(run app.AIRunner) (service.AITrigger, error) {
			trigger = inprocess.New(run, inprocess.Options{Workers: cfg.engines, Logger: log})
			return trigger, nil
		},
		Engine:         pool,
		Effects:        service.EffectsInline,
		AllowedOrigins: cfg.allowedOrigins,
		Stream:         true,
		StreamOptions:  cfg.stream,
		AIKeys:         aiKeys,
		Logger:         log,
		Now:            cfg.now,
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
	// A rated game whose end was written but whose ratings a crash kept
	// from being applied gets them now (applied once: the players record
	// the games they include).
	if store.finishedSince != nil {
		recs, err := store.finishedSince(ctx, time.Now().Add(-ratingRecoveryWindow))
		if err != nil {
			return fmt.Errorf("list recently finished games: %w", err)
		}
		n, err := svc.RecoverRatings(ctx, recs)
		if err != nil {
			return fmt.Errorf("recover ratings: %w", err)
		}
		if n > 0 {
			log.Warn("ratings of finished games applied after a restart", "games", n)
		}
	}

	// The reference web client shares the listener: GET / and its assets;
	// every other path is the API's.
	web, err := newWebClient()
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler: withWebClient(wired.Handler, web),
		// Long polls answer within 20 s; AI requests within 10 s + margin.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       90 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "store", storeName(cfg), "client", "http://"+ln.Addr().String()+"/")
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
	// they reconnect with afterVersion after the restart. Long polls
	// answer now rather than keep the shutdown waiting up to 20 s.
	wired.Stream.Close()
	svc.StopWaiting()
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

// stores are the ports the local server runs on.
type stores struct {
	games   service.Store
	players service.Players
	// apiKeys holds POST /v1/ai/move's keys (cmd/apikeys writes them).
	apiKeys apikey.Store
	lister  service.GameLister
	// finishedSince lists recently finished games (embedded store only).
	finishedSince func(context.Context, time.Time) ([]service.GameRecord, error)
}

// ratingRecoveryWindow is how far back a start looks for rated games whose
// ratings a crash may have kept from being applied.
const ratingRecoveryWindow = 24 * time.Hour

// openStore opens the embedded store, or DynamoDB when an endpoint is set.
// pending lists the deadlines to re-arm (embedded store only).
func openStore(ctx context.Context, cfg config, log *slog.Logger) (*stores, func(), func(context.Context) ([]service.TimeoutTask, error), error) {
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
		dataTable := cfg.table + "-data"
		if err := dynamostore.CreateDataTable(ctx, client, dataTable); err != nil {
			return nil, nil, nil, fmt.Errorf("table %s at %s: %w", dataTable, cfg.dynamoEndpoint, err)
		}
		data, err := dynamostore.NewData(client, dataTable)
		if err != nil {
			return nil, nil, nil, err
		}
		log.Warn("deadlines of games started before a restart are enforced lazily only (DynamoDB cannot be listed cheaply)")
		return &stores{games: store, players: data, lister: store, apiKeys: data}, func() {}, nil, nil
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
	return &stores{games: store, players: store, lister: store, apiKeys: store, finishedSince: store.FinishedSince}, closeStore, store.PendingTimeouts, nil
}

// staticLocalCredentials are dummy credentials for local DynamoDB emulators.
type staticLocalCredentials struct{}

func (staticLocalCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "cmd/local"}, nil
}
