package main

import (
	"log/slog"

	"chessapi/shared/api"
	"chessapi/shared/apikey"
)

// newAIKeyChecker is the local server's guard of POST /v1/ai/move:
//   - no -require-api-keys and no -ai-api-key: the endpoint is open (a
//     machine of one's own), and the start-up log says so;
//   - -require-api-keys: keys made with cmd/apikeys, from the embedded
//     store (create them while the server is stopped: the file has one
//     owner at a time) or the data table beside -table;
//   - -ai-api-key (or AI_API_KEY): one more key, accepted as its exact
//     text, with apikey.DefaultLimits.
//
// The limits are counted in the store's counters (the embedded store, or
// the data table), so they survive restarts and hold across servers
// sharing a table.
func newAIKeyChecker(cfg config, s *stores, log *slog.Logger) (api.AIKeyChecker, error) {
	if !cfg.requireAPIKeys && cfg.aiAPIKey == "" {
		log.Info("POST /v1/ai/move is open: no API key required (-require-api-keys requires the keys made with cmd/apikeys)")
		return nil, nil
	}
	opts := apikey.Options{Bootstrap: cfg.aiAPIKey, Now: cfg.now}
	if cfg.requireAPIKeys {
		opts.Store = s.apiKeys
	}
	if s.players != nil {
		opts.Counter = s.players
	} else {
		// One process: counting in memory is exact, only not durable.
		opts.Counter = apikey.NewMemoryCounter()
	}
	checker, err := apikey.NewChecker(opts)
	if err != nil {
		return nil, err
	}
	log.Info("POST /v1/ai/move requires an API key", "storedKeys", cfg.requireAPIKeys, "bootstrapKey", cfg.aiAPIKey != "")
	return checker, nil
}
