package api

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"chessapi/internal/apispec"
	"chessapi/internal/fakeclock"
	"chessapi/shared/aiplayer"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// recordingTrigger records AI triggers; tests run the turns themselves.
type recordingTrigger struct {
	mu    sync.Mutex
	tasks []service.AITask
}

func (r *recordingTrigger) TriggerAI(_ context.Context, t service.AITask) error {
	r.mu.Lock()
	r.tasks = append(r.tasks, t)
	r.mu.Unlock()
	return nil
}

func (r *recordingTrigger) take() []service.AITask {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.tasks
	r.tasks = nil
	return out
}

type testAPI struct {
	t       *testing.T
	handler http.Handler
	svc     *service.Service
	clock   *fakeclock.Clock
	ai      *recordingTrigger
}

func newTestAPI(t *testing.T, mutate ...func(*Deps)) *testAPI {
	t.Helper()
	return newTestAPIWith(t, nil, mutate...)
}

// newTestAPIWith is newTestAPI with the service's configuration adjusted by
// configure before the service is made (a store wrapper, no engine, ...).
func newTestAPIWith(t *testing.T, configure func(*service.Config), mutate ...func(*Deps)) *testAPI {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	clock := fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	trigger := &recordingTrigger{}
	pool := aiplayer.NewPool(1, 1).WithoutPacing()
	cfg := service.Config{
		Store:         store,
		Players:       store,
		Lister:        store,
		Notifications: store,
		AITrigger:     trigger,
		Engine:        pool,
		Now:           clock.Now,
	}
	if configure != nil {
		configure(&cfg)
	}
	svc, err := service.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	deps := Deps{Games: svc, LongPollMax: 2 * time.Second}
	for _, m := range mutate {
		m(&deps)
	}
	return &testAPI{t: t, handler: NewHandler(deps), svc: svc, clock: clock, ai: trigger}
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   []byte
	json   map[string]any
}

func (a *testAPI) do(method, path, token string, body any) response {
	a.t.Helper()
	var header http.Header
	if token != "" {
		header = http.Header{"Authorization": {"Bearer " + token}}
	}
	return a.doHeaders(method, path, header, body)
}

// doHeaders sends a request with the given headers (Authorization,
// Accept-Language, X-Api-Key, ...) and decodes the answer. Every answer is
// validated against openapi.yaml (status, headers, body), and a request the
// API accepted (2xx) must be one openapi.yaml allows: a test that gets a
// response the contract does not describe fails.
func (a *testAPI) doHeaders(method, path string, header http.Header, body any) response {
	a.t.Helper()
	var data []byte
	switch b := body.(type) {
	case nil:
	case string:
		data = []byte(b)
	case []byte:
		data = b
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			a.t.Fatal(err)
		}
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(data))
	for k, vs := range header {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if len(data) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, req)
	res := response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
	if ct := rec.Header().Get("Content-Type"); len(res.body) > 0 && ct == "application/json; charset=utf-8" {
		if err := json.Unmarshal(res.body, &res.json); err != nil {
			a.t.Fatalf("%s %s: response is not JSON: %v\n%s", method, path, err, res.body)
		}
	}
	a.checkContract(req, data, res)
	return res
}

// checkContract validates an exchange against openapi.yaml.
func (a *testAPI) checkContract(req *http.Request, body []byte, res response) {
	a.t.Helper()
	spec := apispec.MustLoad(a.t)
	ex := apispec.Exchange{Request: req, Body: body, Status: res.status, Header: res.header, Answer: res.body}
	if err := spec.ValidateResponse(ex); err != nil {
		a.t.Errorf("the response breaks openapi.yaml: %v", err)
	}
	if res.status < 300 {
		if err := spec.ValidateRequest(ex); err != nil {
			a.t.Errorf("the API accepted (%d) a request openapi.yaml does not allow: %v", res.status, err)
		}
	}
}

// expect fails the test unless the status matches.
func (r response) expect(t *testing.T, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d; want %d\n%s", r.status, status, r.body)
	}
	return r
}

// errorCode returns error.code and error.field of an error response.
func (r response) errorCode() (code, field string) {
	e, _ := r.json["error"].(map[string]any)
	code, _ = e["code"].(string)
	field, _ = e["field"].(string)
	return code, field
}

func (r response) game() map[string]any {
	g, _ := r.json["game"].(map[string]any)
	return g
}

// seat is a player's handle on a game.
type seat struct {
	gameID, token, playerID string
}

// createHumanGame creates a game (host) and joins it (guest); it returns the
// seats by colour.
func (a *testAPI) createHumanGame(options map[string]any) (white, black seat) {
	a.t.Helper()
	body := map[string]any{"opponent": map[string]any{"type": "human"}, "player": map[string]any{"name": "호스트"}}
	if options != nil {
		body["options"] = options
	}
	created := a.do("POST", "/v1/games", "", body).expect(a.t, http.StatusCreated)
	host := seat{gameID: created.json["gameId"].(string), token: created.json["token"].(string), playerID: created.json["playerId"].(string)}
	joined := a.do("POST", "/v1/games/"+host.gameID+"/join", "", map[string]any{"player": map[string]any{"name": "손님"}}).expect(a.t, http.StatusOK)
	guest := seat{gameID: host.gameID, token: joined.json["token"].(string), playerID: joined.json["playerId"].(string)}
	if joined.game()["you"] == "white" {
		return guest, host
	}
	return host, guest
}

func (a *testAPI) move(s seat, uci string) response {
	a.t.Helper()
	return a.do("POST", "/v1/games/"+s.gameID+"/actions", s.token, map[string]any{"type": "move", "payload": map[string]any{"uci": uci}})
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
