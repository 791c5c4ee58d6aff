// Package api is the HTTP edge of the service: one net/http handler (Go 1.22
// ServeMux patterns) that runs unchanged under the Lambda adapter, under
// httptest and in the local server. It decodes requests strictly, calls the
// application service or the rules/engine packages, and maps every error to
// a status code and a JSON error body in one place (respond).
package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
)

// Deps are what the handler serves with. Games may be nil in a process that
// serves only stateless routes, Searcher nil in one that serves no AI; their
// routes then answer 503.
type Deps struct {
	Games    *Games
	Searcher MoveSearcher
	// AIAPIKey, when set, is required as x-api-key on POST /v1/ai/move.
	AIAPIKey string
	Logger   *slog.Logger
	// LongPollMax bounds GET ?afterVersion= waits (default 20 s).
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

type routeEntry struct {
	route Route
	serve func(http.ResponseWriter, *http.Request) error
}

func (h *handler) routes() []routeEntry {
	return []routeEntry{
		{Route{"GET", "/v1/health"}, h.handleHealth},
		{Route{"POST", "/v1/positions"}, h.handlePositions},
		{Route{"POST", "/v1/ai/move"}, h.handleAIMove},
		{Route{"POST", "/v1/games"}, h.handleCreate},
		{Route{"POST", "/v1/games/{id}/join"}, h.handleJoin},
		{Route{"GET", "/v1/games/{id}"}, h.handleView},
		{Route{"POST", "/v1/games/{id}/actions"}, h.handleAction},
		{Route{"GET", "/v1/games/{id}/pgn"}, h.handlePGN},
		{Route{"POST", "/v1/games/{id}/presence"}, h.handlePresence},
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
	allowed := map[string][]string{} // path pattern -> methods
	for _, e := range h.routes() {
		h.mux.HandleFunc(e.route.Method+" "+e.route.Path, h.wrap(e.serve))
		allowed[e.route.Path] = append(allowed[e.route.Path], e.route.Method)
	}
	// Other methods on a known path: 405 with Allow and the JSON error body.
	for path, methods := range allowed {
		allow := strings.Join(methods, ", ")
		h.mux.HandleFunc(path, h.wrap(func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Allow", allow)
			return errMethodNotAllowed
		}))
	}
	h.mux.HandleFunc("/", h.wrap(func(w http.ResponseWriter, r *http.Request) error {
		return errNotFoundRoute
	}))
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// wrap runs a route handler, recovers panics and turns returned errors into
// responses.
func (h *handler) wrap(serve func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		defer func() {
			if v := recover(); v != nil {
				h.log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				writeAPIError(w, errInternal)
			}
		}()
		if err := serve(w, r); err != nil {
			h.respondError(w, r, err)
		}
		h.log.Debug("request", "method", r.Method, "path", r.URL.Path, "ms", time.Since(start).Milliseconds())
	}
}

// respondError maps any error to its status code and JSON body. Errors the
// handler does not know are 5xx and are logged; their text never reaches the
// client.
func (h *handler) respondError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		writeAPIError(w, ae)
		return
	}
	if ae := mapServiceError(err); ae != nil {
		writeAPIError(w, ae)
		return
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		if r.Context().Err() != nil {
			return // the client went away; nobody reads the answer
		}
		h.log.Warn("request timed out", "method", r.Method, "path", r.URL.Path, "err", err)
		writeAPIError(w, errUnavailable)
		return
	}
	h.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeAPIError(w, errInternal)
}

func (h *handler) handleHealth(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "time": time.Now().UTC().Format(time.RFC3339)})
	return nil
}
