// Package api is the transport edge of the service: one net/http handler
// (Go 1.22 ServeMux patterns) that runs unchanged under the Lambda adapter,
// under httptest and in the local server. It owns everything about the
// wire and nothing about chess: bearer parsing (bearer.go), the one strict
// JSON decoder (jsonin.go, requests.go), the one table from error to status,
// code and message (errors.go) and every human text, in Korean and English
// (texts.go). Handlers decode, call the application service through the
// Games interface and encode its typed answers.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/obs"
	"chessapi/shared/service"
)

// Games is what the edge needs of the application service
// (*service.Service); handler tests use fakes.
type Games interface {
	Create(ctx context.Context, in service.CreateInput) (service.Seated, error)
	Join(ctx context.Context, gameID string, in service.JoinInput) (service.Seated, error)
	Get(ctx context.Context, gameID string, c service.Caller, afterVersion *int64, maxWait time.Duration) (*game.View, error)
	Act(ctx context.Context, gameID string, c service.Caller, in service.ActionInput) (service.Outcome, error)
	PGN(ctx context.Context, gameID string, c service.Caller) (string, error)
	SetPresence(ctx context.Context, gameID string, c service.Caller, connected bool) (*game.View, error)
	Changes(ctx context.Context, gameID string, c service.Caller, after int64) (service.ChangeLog, error)
	Position(in service.PositionInput) (service.PositionAnswer, error)
	BestMove(ctx context.Context, in service.BestMoveInput) (service.BestMove, error)

	CreatePlayer(ctx context.Context, in service.NewPlayerInput) (service.NewPlayer, error)
	Me(ctx context.Context, c service.Caller) (service.Profile, error)
	Rename(ctx context.Context, c service.Caller, name string) (service.Profile, error)
	DeleteMe(ctx context.Context, c service.Caller) error
	MyGames(ctx context.Context, c service.Caller, finished bool, limit int, cursor string) (service.GamePage, error)
	NewLinkCode(ctx context.Context, c service.Caller) (service.LinkCode, error)
	Link(ctx context.Context, code, client string) (service.NewPlayer, error)
	Sessions(ctx context.Context, c service.Caller) ([]service.SessionInfo, error)
	RevokeSession(ctx context.Context, c service.Caller, sessionID string) error
	LabelCurrentSession(ctx context.Context, c service.Caller, label string) (service.SessionInfo, error)
	NewRecoveryCode(ctx context.Context, c service.Caller) (string, error)
	Recover(ctx context.Context, playerID, code string) (service.NewPlayer, error)
	PublicProfileOf(ctx context.Context, playerID string) (service.PublicProfile, error)
	Block(ctx context.Context, c service.Caller, playerID string) error
	Unblock(ctx context.Context, c service.Caller, playerID string) error
	Blocks(ctx context.Context, c service.Caller) ([]service.BlockInfo, error)
	Lobby(ctx context.Context, room game.Room, limit int, cursor string, filter service.LobbyFilter) (service.LobbyPage, error)
	QuickPair(ctx context.Context, in service.QuickInput) (service.QuickResult, error)
	Notifying
}

var _ Games = (*service.Service)(nil)

// Deps are what the handler serves with.
type Deps struct {
	Games Games
	// AIKeys, when set, authenticates and limits POST /v1/ai/move's
	// x-api-key (apikeys.go); nil leaves the endpoint open.
	AIKeys AIKeyChecker
	Logger *slog.Logger
	// LongPollMax bounds the long poll's waits (GET .../poll?afterVersion=,
	// default 20 s).
	LongPollMax time.Duration
}

type handler struct {
	deps Deps
	mux  *http.ServeMux
	log  *slog.Logger
}

// Route is one method and path pattern served by the handler.
type Route struct{ Method, Path string }

// Routes lists every route the handler serves, in the order registered; the
// OpenAPI and SAM template tests compare against it.
func Routes() []Route {
	var out []Route
	for _, r := range (&handler{}).routes() {
		out = append(out, r.route)
	}
	return out
}

// request is one request as a route handler sees it: the HTTP request and
// the language of its human texts.
type request struct {
	*http.Request
	lang Lang
}

type routeEntry struct {
	route Route
	serve func(http.ResponseWriter, *request) error
}

func (h *handler) routes() []routeEntry {
	return []routeEntry{
		{Route{"GET", "/v1/health"}, h.handleHealth},
		{Route{"POST", "/v1/positions"}, h.handlePositions},
		{Route{"POST", "/v1/ai/move"}, h.handleAIMove},
		{Route{"POST", "/v1/games"}, h.handleCreate},
		{Route{"POST", "/v1/games/{id}/join"}, h.handleJoin},
		{Route{"GET", "/v1/games/{id}"}, h.handleView},
		{Route{"GET", "/v1/games/{id}/events"}, h.handleEvents},
		{Route{"GET", "/v1/games/{id}/poll"}, h.handlePoll},
		{Route{"POST", "/v1/games/{id}/actions"}, h.handleAction},
		{Route{"GET", "/v1/games/{id}/pgn"}, h.handlePGN},
		{Route{"POST", "/v1/games/{id}/presence"}, h.handlePresence},
		{Route{"POST", "/v1/players"}, h.handleCreatePlayer},
		{Route{"GET", "/v1/players/me"}, h.handleMe},
		{Route{"PATCH", "/v1/players/me"}, h.handleRename},
		{Route{"DELETE", "/v1/players/me"}, h.handleDeleteMe},
		{Route{"GET", "/v1/players/me/games"}, h.handleMyGames},
		{Route{"POST", "/v1/players/me/link-codes"}, h.handleNewLinkCode},
		{Route{"POST", "/v1/players/link"}, h.handleLink},
		{Route{"GET", "/v1/players/me/sessions"}, h.handleSessions},
		{Route{"PATCH", "/v1/players/me/sessions/current"}, h.handleLabelSession},
		{Route{"DELETE", "/v1/players/me/sessions/{id}"}, h.handleRevokeSession},
		{Route{"POST", "/v1/players/me/recovery-code"}, h.handleNewRecoveryCode},
		{Route{"POST", "/v1/players/recover"}, h.handleRecover},
		{Route{"GET", "/v1/players/me/blocks"}, h.handleBlocks},
		{Route{"POST", "/v1/players/me/blocks/{id}"}, h.handleBlock},
		{Route{"DELETE", "/v1/players/me/blocks/{id}"}, h.handleUnblock},
		{Route{"GET", "/v1/players/{id}"}, h.handlePublicProfile},
		{Route{"GET", "/v1/lobby"}, h.handleLobby},
		{Route{"POST", "/v1/lobby/quick"}, h.handleQuick},
		{Route{"POST", "/v1/players/me/devices"}, h.handleRegisterDevice},
		{Route{"GET", "/v1/players/me/devices"}, h.handleDevices},
		{Route{"DELETE", "/v1/players/me/devices/{id}"}, h.handleDeleteDevice},
		{Route{"GET", "/v1/players/me/notifications"}, h.handleNotifications},
		{Route{"POST", "/v1/players/me/notifications/read"}, h.handleMarkRead},
	}
}

// NewHandler returns the HTTP handler of API v1.
func NewHandler(deps Deps) http.Handler {
	if deps.Logger == nil {
		deps.Logger = slog.New(slog.DiscardHandler)
	}
	if deps.LongPollMax <= 0 {
		deps.LongPollMax = 20 * time.Second
	}
	h := &handler{deps: deps, mux: http.NewServeMux(), log: deps.Logger}
	// One mux pattern per path, without a method, and the method chosen
	// here: patterns with methods next to method-less ones for the 405s
	// would overlap ("GET /v1/players/{id}" and "/v1/players/me": neither
	// is more specific), which the mux refuses.
	byPath := map[string][]routeEntry{}
	var paths []string
	for _, e := range h.routes() {
		if byPath[e.route.Path] == nil {
			paths = append(paths, e.route.Path)
		}
		byPath[e.route.Path] = append(byPath[e.route.Path], e)
	}
	for _, path := range paths {
		entries := byPath[path]
		methods := make([]string, len(entries))
		for i, e := range entries {
			methods[i] = e.route.Method
		}
		allow := strings.Join(methods, ", ")
		h.mux.Handle(path, h.dispatch(entries, allow))
	}
	h.mux.HandleFunc("/", h.wrap("", func(w http.ResponseWriter, r *request) error {
		return errNotFoundRoute
	}))
	return withGzip(h)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// dispatch serves one path: the route of the request's method (a HEAD
// as its GET, as the mux's method patterns did), or 405 with Allow and
// the JSON error body.
func (h *handler) dispatch(entries []routeEntry, allow string) http.HandlerFunc {
	notAllowed := h.wrap("", func(w http.ResponseWriter, r *request) error {
		w.Header().Set("Allow", allow)
		return errMethodNotAllowed
	})
	type served struct {
		pattern string
		serve   http.HandlerFunc
	}
	serve := make(map[string]served, len(entries))
	for _, e := range entries {
		pattern := e.route.Method + " " + e.route.Path
		serve[e.route.Method] = served{pattern, h.wrap(pattern, e.serve)}
	}
	if get, ok := serve["GET"]; ok {
		if _, ok := serve["HEAD"]; !ok {
			serve["HEAD"] = get
		}
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if f, ok := serve[r.Method]; ok {
			// The pattern with its method, as the mux's method patterns
			// set it: the access log (obs.Middleware) reads it from the
			// request after serving.
			r.Pattern = f.pattern
			f.serve(w, r)
			return
		}
		notAllowed(w, r)
	}
}

// wrap runs a route handler with the request's language, recovers panics
// and turns returned errors into responses. route names it in the access
// log ("" for the mux's own pattern).
func (h *handler) wrap(route string, serve func(http.ResponseWriter, *request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The access log line (obs.Middleware around the handler) names the
		// route; the handler that knows it is this one.
		name := route
		if name == "" {
			name = r.Pattern
		}
		obs.SetRoute(r.Context(), name)
		req := &request{Request: r, lang: NegotiateLang(r.Header.Get("Accept-Language"))}
		w.Header().Set("Content-Language", req.lang.String())
		w.Header().Add("Vary", "Accept-Language")
		defer func() {
			if v := recover(); v != nil {
				obs.NotePanic(r.Context())
				h.log.ErrorContext(r.Context(), "panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				writeError(w, describe(errInternal, req.lang))
			}
		}()
		if err := serve(w, req); err != nil {
			h.respondError(w, req, err)
		}
	}
}

// respondError writes the response of err. Failures (5xx) are logged with
// their text, which never reaches the client.
func (h *handler) respondError(w http.ResponseWriter, r *request, err error) {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return // the client went away; nobody reads the answer
	}
	d := describe(err, r.lang)
	switch {
	case d.Status >= 500 && d.Code == "internal":
		h.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case d.Status >= 500:
		h.log.Warn("request not served", "method", r.Method, "path", r.URL.Path, "code", d.Code, "err", err)
	}
	writeError(w, d)
}

func writeError(w http.ResponseWriter, d described) {
	if d.RetryAfter > 0 { // whole seconds, rounded up: 0 would invite a retry into the same window
		w.Header().Set("Retry-After", strconv.FormatInt(int64((d.RetryAfter+time.Second-1)/time.Second), 10))
	}
	writeJSON(w, d.Status, d.body())
}

// writeJSON writes v as the JSON response body with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"error":{"code":"internal","message":"` + Korean.message("internal") + `"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// maxBodyBytes is the largest request body accepted (SPEC §5: larger → 413).
const maxBodyBytes = 64 << 10

// readBody reads the request body up to maxBodyBytes.
func readBody(w http.ResponseWriter, r *request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, errBodyTooLarge
		}
		return nil, errBadBody
	}
	return body, nil
}

func (h *handler) handleHealth(w http.ResponseWriter, r *request) error {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "time": time.Now().UTC().Format(time.RFC3339)})
	return nil
}

// checkAPIKey enforces the AI endpoint's keys when a checker is
// configured (apikeys.go); release ends the request's hold on its key.
func (h *handler) checkAPIKey(r *request) (release func(), err error) { return h.checkAIKey(r) }
