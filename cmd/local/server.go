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
	"chessapi/shared/notify"
	"chessapi/shared/notify/webhook"
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
	// notifyWebhook receives device notifications (NOTIFY_WEBHOOK_URL,
	// -notify-webhook); "" keeps them in the inboxes only.
	notifyWebhook string
	// now replaces the service clock (tests only; nil is time.Now).
	now func() time.Time
	// stream tunes the stream server (tests only).
	stream api.StreamOptions
}

// run serves until ctx is cancelled, then shuts down gracefully: stop
// accepting, finish in-flight requests and AI turns, stop the timers, close
// the store (app.App.Shutdown has the order). Every acknowledged write was
// committed (fsync) before its answer was sent, so nothing acknowledged is
// lost even on SIGKILL. ready, when set, receives the listening address.
func run(ctx context.Context, cfg config, log *slog.Logger, ready chan<- string) error {
	ac, release, err := adapters(ctx, cfg, log)
	if err != nil {
		return err
	}
	wired, err := app.New(ac)
	if err != nil {
		release()
		return err
	}
	if err := wired.Start(ctx); err != nil {
		stop(wired, log, nil)
		return err
	}
	return serve(ctx, cfg, wired, log, ready)
}

// adapters opens what the local server runs on, from its flags: the
// embedded store (or DynamoDB), API keys, the engines, the in-process
// scheduler and AI runner, the stream. release closes what was opened, for
// a start that ends before the app owns it.
func adapters(ctx context.Context, cfg config, log *slog.Logger) (app.Config, func(), error) {
	store, err := openStore(ctx, cfg, log)
	if err != nil {
		return app.Config{}, nil, err
	}
	release := func() {
		if store.housekeeping.Close != nil {
			if err := store.housekeeping.Close(); err != nil {
				log.Error("close store", "err", err)
			}
		}
	}
	aiKeys, err := newAIKeyChecker(cfg, store, log)
	if err != nil {
		release()
		return app.Config{}, nil, err
	}
	sender, err := newNotificationSender(cfg, log)
	if err != nil {
		release()
		return app.Config{}, nil, err
	}
	return app.Config{
		Config: service.Config{
			Store: withCrashHook(store.games),
			// Players, the game index, counters and pairing slots (SPEC
			// §12) live in the embedded store itself, or in DynamoDB's
			// data table beside the games table.
			Players: store.players,
			Lister:  store.lister,
			// Devices and inboxes (SPEC §16.3) beside the players; device
			// notifications go to the webhook, if one is given.
			Notifications: store.notifications,
			Sender:        sender,
			// AI seats get engines of their own, so public /v1/ai/move
			// requests cannot starve them.
			Engine:  aiplayer.New(aiplayer.Options{SeatEngines: cfg.engines, PublicEngines: cfg.engines, HashMB: cfg.hashMB}),
			Effects: service.EffectsInline,
			Logger:  log,
			Now:     cfg.now,
		},
		NewScheduler: func(handle app.TimeoutHandler) (service.Scheduler, error) {
			return localsched.New(handle, localsched.Options{Logger: log})
		},
		NewAITrigger: func(run app.AIRunner) (service.AITrigger, error) {
			return inprocess.New(run, inprocess.Options{Workers: cfg.engines, Logger: log}), nil
		},
		AIKeys:         aiKeys,
		AllowedOrigins: cfg.allowedOrigins,
		Stream:         true,
		StreamOptions:  cfg.stream,
		Housekeeping:   store.housekeeping,
	}, release, nil
}

// serve answers on cfg.addr — the API, the stream and the reference web
// client on one listener — until ctx is cancelled, then stops the app.
func serve(ctx context.Context, cfg config, wired *app.App, log *slog.Logger, ready chan<- string) error {
	// The reference web client shares the listener: GET / and its assets;
	// every other path is the API's.
	web, err := newWebClient()
	if err != nil {
		stop(wired, log, nil)
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		stop(wired, log, nil)
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
		stop(wired, log, nil)
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down")
	stop(wired, log, srv.Shutdown)
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	log.Info("stopped")
	return nil
}

// stop shuts the app down within the time a supervisor gives a stopping
// process; what did not stop cleanly is logged (the writes are durable
// already).
func stop(wired *app.App, log *slog.Logger, stopServing func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	if err := wired.Shutdown(ctx, stopServing); err != nil {
		log.Warn("shutdown", "err", err)
	}
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
	// notifications keeps devices and inboxes.
	notifications service.NotificationStore
	// housekeeping is the embedded store's start-up and background work
	// (none for DynamoDB).
	housekeeping app.Housekeeping
}

// openStore opens the embedded store, or DynamoDB when an endpoint is set.
func openStore(ctx context.Context, cfg config, log *slog.Logger) (*stores, error) {
	if cfg.dynamoEndpoint != "" {
		awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return nil, fmt.Errorf("aws config: %w", err)
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
			return nil, fmt.Errorf("table %s at %s: %w", cfg.table, cfg.dynamoEndpoint, err)
		}
		store, err := dynamostore.New(client, cfg.table)
		if err != nil {
			return nil, err
		}
		dataTable := cfg.table + "-data"
		if err := dynamostore.CreateDataTable(ctx, client, dataTable); err != nil {
			return nil, fmt.Errorf("table %s at %s: %w", dataTable, cfg.dynamoEndpoint, err)
		}
		data, err := dynamostore.NewData(client, dataTable)
		if err != nil {
			return nil, err
		}
		log.Warn("deadlines of games started before a restart are enforced lazily only (DynamoDB cannot be listed cheaply)")
		return &stores{games: store, players: data, lister: store, apiKeys: data, notifications: data}, nil
	}
	if err := os.MkdirAll(filepath.Dir(cfg.dataPath), 0o755); err != nil {
		return nil, fmt.Errorf("-data %s: %w", cfg.dataPath, err)
	}
	store, err := boltstore.Open(cfg.dataPath)
	if err != nil {
		return nil, fmt.Errorf("-data %s: %w", cfg.dataPath, err)
	}
	return &stores{games: store, players: store, lister: store, apiKeys: store, notifications: store, housekeeping: app.Housekeeping{
		PendingTimeouts: store.PendingTimeouts,
		FinishedSince:   store.FinishedSince,
		StartSweeper:    store.StartSweeper,
		Close:           store.Close,
	}}, nil
}

// staticLocalCredentials are dummy credentials for local DynamoDB emulators.
type staticLocalCredentials struct{}

func (staticLocalCredentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "local", SecretAccessKey: "local", Source: "cmd/local"}, nil
}

// newNotificationSender is the local notify.Sender: the webhook of
// -notify-webhook (NOTIFY_WEBHOOK_URL), or none (the inbox only).
func newNotificationSender(cfg config, log *slog.Logger) (notify.Sender, error) {
	if cfg.notifyWebhook == "" {
		return nil, nil
	}
	s, err := webhook.New(cfg.notifyWebhook, webhook.Options{Logger: log})
	if err != nil {
		return nil, fmt.Errorf("-notify-webhook: %w", err)
	}
	log.Info("device notifications are posted to a webhook", "url", cfg.notifyWebhook)
	return s, nil
}
