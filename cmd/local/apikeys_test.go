package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/shared/apikey"
	"chessapi/shared/store/boltstore"
)

// lockedBuffer collects the server's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startKeyedLocal runs the server with cfg until the test ends; it returns the
// base URL and the log.
func startKeyedLocal(t *testing.T, cfg config) (string, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, cfg, slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), ready)
	}()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server: %v", err)
			}
		})
		return "http://" + addr, logs
	case err := <-done:
		cancel()
		t.Fatalf("server did not start: %v\n%s", err, logs)
	}
	return "", nil
}

// aiMove posts a depth-1 search with the key ("" for none).
func aiMove(t *testing.T, base, key string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/v1/ai/move", strings.NewReader(`{"depth":1}`))
	if key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	return res, body
}

func errorCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// TestLocalAIMoveOpenWithoutKeys: without key flags the endpoint is open,
// and the start-up log says so.
func TestLocalAIMoveOpenWithoutKeys(t *testing.T) {
	base, logs := startKeyedLocal(t, config{addr: "127.0.0.1:0", dataPath: filepath.Join(t.TempDir(), "chess.db"), engines: 1, hashMB: 1})
	if res, body := aiMove(t, base, ""); res.StatusCode != http.StatusOK {
		t.Fatalf("no key, no key flags: %d %v; want 200", res.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "POST /v1/ai/move is open") {
		t.Errorf("the start-up log does not say the endpoint is open:\n%s", logs)
	}
}

// TestLocalAIMoveRequiresStoredKeys: a key made in the embedded store while
// the server was stopped (as cmd/apikeys does) is required, accepted and
// held to its rate; its secret never reaches the log.
func TestLocalAIMoveRequiresStoredKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chess.db")
	noon := time.Date(2026, 11, 29, 12, 0, 0, 500_000_000, time.UTC)
	store, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	k, rec, err := apikey.NewRecord(rand.Reader, "local partner", apikey.Limits{PerSecond: 1, PerDay: 10}, noon)
	if err == nil {
		err = store.PutAPIKey(context.Background(), rec)
	}
	if cerr := store.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}
	base, logs := startKeyedLocal(t, config{addr: "127.0.0.1:0", dataPath: path, engines: 1, hashMB: 1, requireAPIKeys: true,
		now: func() time.Time { return noon }})
	if res, body := aiMove(t, base, ""); res.StatusCode != http.StatusUnauthorized || errorCode(body) != "invalid_api_key" {
		t.Errorf("no key: %d %v; want 401 invalid_api_key", res.StatusCode, body)
	}
	if res, body := aiMove(t, base, k.String()); res.StatusCode != http.StatusOK {
		t.Fatalf("the stored key: %d %v; want 200", res.StatusCode, body)
	}
	res, body := aiMove(t, base, k.String())
	if res.StatusCode != http.StatusTooManyRequests || errorCode(body) != "rate_limited" || res.Header.Get("Retry-After") != "1" {
		t.Errorf("second request in the second: %d %v Retry-After %q; want 429 rate_limited, 1", res.StatusCode, body, res.Header.Get("Retry-After"))
	}
	if !strings.Contains(logs.String(), "requires an API key") {
		t.Errorf("the start-up log does not say keys are required:\n%s", logs)
	}
	if strings.Contains(logs.String(), k.String()[len("ak_")+apikey.IDLen+1:]) {
		t.Errorf("the key's secret is in the log")
	}
}

// TestLocalBootstrapKey: -ai-api-key alone requires that key.
func TestLocalBootstrapKey(t *testing.T) {
	base, _ := startKeyedLocal(t, config{addr: "127.0.0.1:0", dataPath: filepath.Join(t.TempDir(), "chess.db"), engines: 1, hashMB: 1, aiAPIKey: "local-secret"})
	if res, body := aiMove(t, base, "other"); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("another key: %d %v; want 401", res.StatusCode, body)
	}
	if res, body := aiMove(t, base, "local-secret"); res.StatusCode != http.StatusOK {
		t.Errorf("the bootstrap key: %d %v; want 200", res.StatusCode, body)
	}
}
