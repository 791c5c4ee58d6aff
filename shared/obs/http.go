package obs

import (
	"bufio"
	"context"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// MiddlewareOption configures Middleware.
type MiddlewareOption func(*middleware)

// WithMetrics makes Middleware publish, for every request, one EMF line
// with Requests (1), Requests4xx, Requests5xx and RateLimited (1 or 0),
// RequestMs, and Panics (1, only when the handler panicked).
func WithMetrics(m *Metrics) MiddlewareOption {
	return func(mw *middleware) { mw.metrics = m }
}

// Middleware logs one JSON line per request, after it was served, and
// gives the request a logging context (see WithRequest and Logger).
//
// The line is at level info (warn for a 5xx answer or a panic), message
// "request", with: method, route (the ServeMux pattern that served it),
// status, bytes (of the body written), durationMs, requestId,
// lambdaRequestId, gameId and language (the response's Content-Language)
// when known, hijacked (a connection taken over, e.g. a WebSocket upgrade:
// its duration is the connection's) and panic when they happened.
// Headers, the query string, the raw path and bodies are never logged:
// they carry seat tokens and API keys.
//
// The request id is, in order: the one already in the request's context
// (WithRequest: in Lambda, API Gateway's requestContext.requestId), the
// X-Amzn-Request-Id or X-Request-Id header when it is a plausible id, or a
// new random one. The game id is the one the handler set (SetGameID), else
// the route's {id} wildcard when it has the form of a game id.
//
// The route is read from r.Pattern after serving: the ServeMux sets it on
// the request it was given, so next must pass the request on unchanged
// (no WithContext in between) or call SetRoute itself.
//
// The ResponseWriter passed on records the status and size; it still
// implements http.Flusher and http.Hijacker (passing through to w, or
// failing as w would) and Unwrap, for http.ResponseController.
func Middleware(log *slog.Logger, next http.Handler, opts ...MiddlewareOption) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	mw := &middleware{log: log, next: next}
	for _, o := range opts {
		o(mw)
	}
	return mw
}

type middleware struct {
	log     *slog.Logger
	next    http.Handler
	metrics *Metrics
}

// served is everything one request needs, allocated at once.
type served struct {
	rw    responseWriter
	state reqState
	ctx   requestContext
}

// requestContext carries the request's state and logger in one context
// value lookup chain link (instead of two context.WithValue).
type requestContext struct {
	context.Context
	state *reqState
	log   *slog.Logger
}

func (c *requestContext) Value(key any) any {
	switch key {
	case stateKey:
		return c.state
	case loggerKey:
		return c.log
	}
	return c.Context.Value(key)
}

func (mw *middleware) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sv := &served{rw: responseWriter{ResponseWriter: w}}
	ctx := r.Context()
	st := stateFrom(ctx)
	if st == nil {
		st = &sv.state
		st.info.RequestID = requestIDFrom(r.Header)
	} else {
		// The caller (the Lambda adapter) made the request's state; keep
		// it, so its SetGameID and ours are one.
		st.mu.Lock()
		if st.info.RequestID == "" {
			st.info.RequestID = requestIDFrom(r.Header)
		}
		st.mu.Unlock()
	}
	if st == &sv.state || ctx.Value(loggerKey) == nil {
		sv.ctx = requestContext{Context: ctx, state: st, log: mw.log}
		r = r.WithContext(&sv.ctx)
	}
	done := false
	defer func() {
		if !done { // next panicked (or called runtime.Goexit); the panic goes on
			mw.finish(r, &sv.rw, st, start, true)
		}
	}()
	mw.next.ServeHTTP(&sv.rw, r)
	done = true
	mw.finish(r, &sv.rw, st, start, false)
}

// finish writes the request's log line and metrics.
func (mw *middleware) finish(r *http.Request, rw *responseWriter, st *reqState, start time.Time, panicked bool) {
	elapsed := time.Since(start)
	status := rw.status
	if !rw.wroteHeader {
		status = http.StatusOK
		if panicked {
			status = http.StatusInternalServerError
		}
	}
	st.mu.Lock()
	if r.Pattern != "" {
		st.info.Route = r.Pattern
	}
	info := st.info
	panicked = panicked || st.panicked
	st.mu.Unlock()
	if info.GameID == "" {
		if id := r.PathValue("id"); plausibleGameID(id) {
			info.GameID = id
		}
	}
	ms := float64(elapsed.Microseconds()) / 1000

	level := slog.LevelInfo
	if status >= 500 || panicked {
		level = slog.LevelWarn
	}
	ctx := context.Background() // the fields are explicit; no context handler adds them again
	if mw.log.Enabled(ctx, level) {
		attrs := [13]slog.Attr{
			slog.String("method", r.Method),
			slog.String(KeyRoute, info.Route),
			slog.Int("status", status),
			slog.Int64("bytes", rw.bytes),
			slog.Float64("durationMs", ms),
			slog.String(KeyRequestID, info.RequestID),
		}
		n := 6
		add := func(a slog.Attr) { attrs[n] = a; n++ }
		if info.LambdaRequestID != "" {
			add(slog.String(KeyLambdaRequestID, info.LambdaRequestID))
		}
		if info.GameID != "" {
			add(slog.String(KeyGameID, info.GameID))
		}
		if !rw.hijacked {
			if lang := rw.Header().Get("Content-Language"); lang != "" {
				add(slog.String("language", lang))
			}
		}
		if rw.hijacked {
			add(slog.Bool("hijacked", true))
		}
		if panicked {
			add(slog.Bool("panic", true))
		}
		mw.log.LogAttrs(ctx, level, "request", attrs[:n]...)
	}
	mw.metrics.request(status, ms, panicked)
}

// Request publishes the metrics of one answered HTTP request, as
// Middleware does: for answers made outside it (the Lambda adapter's own
// 400/500/503 when the request never reached the handler).
func (m *Metrics) Request(status int, elapsed time.Duration) {
	m.request(status, float64(elapsed.Microseconds())/1000, false)
}

func (m *Metrics) request(status int, ms float64, panicked bool) {
	if m == nil {
		return
	}
	points := [6]Point{
		{MetricRequests, 1, UnitCount},
		{MetricRequests4xx, b2f(status >= 400 && status < 500), UnitCount},
		{MetricRequests5xx, b2f(status >= 500), UnitCount},
		{MetricRateLimited, b2f(status == http.StatusTooManyRequests), UnitCount},
		{MetricRequestMs, ms, UnitMilliseconds},
		{MetricPanics, 1, UnitCount},
	}
	n := 5
	if panicked {
		n = 6
	}
	m.Emit(nil, points[:n]...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// requestIDFrom returns the request id a trusted front sent (API Gateway,
// a proxy), or a new one.
func requestIDFrom(h http.Header) string {
	for _, name := range [...]string{"X-Amzn-Request-Id", "X-Request-Id"} {
		if v := h.Get(name); plausibleRequestID(v) {
			return v
		}
	}
	return newRequestID()
}

// plausibleRequestID accepts 1 to 128 characters of [A-Za-z0-9._:=+/-]:
// a header is client input, and a log field must not be anything else.
func plausibleRequestID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isB64URL(c) && c != '.' && c != ':' && c != '=' && c != '+' && c != '/' {
			return false
		}
	}
	return true
}

// plausibleGameID accepts what an issued game id looks like (22 base64url
// characters) with some slack: 1 to 32 base64url characters, which a seat
// token (46) is not.
func plausibleGameID(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isB64URL(s[i]) {
			return false
		}
	}
	return true
}

// newRequestID returns 32 random hex digits.
func newRequestID() string {
	var b [32]byte
	for i, x := range [2]uint64{rand.Uint64(), rand.Uint64()} {
		for j := range 16 {
			b[i*16+j] = hexDigits[(x>>(60-4*j))&0xf]
		}
	}
	return string(b[:])
}

// responseWriter records the status and body size of a response.
type responseWriter struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
	hijacked    bool
}

func (w *responseWriter) WriteHeader(code int) {
	if !w.wroteHeader && !w.hijacked && (code < 100 || code > 199 || code == http.StatusSwitchingProtocols) {
		// 1xx other than 101 are informational; the final status follows.
		w.status = code
		w.wroteHeader = true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.status = http.StatusOK
		w.wroteHeader = true
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Flush sends what was written so far (http.Flusher); a writer that
// cannot flush makes it a no-op.
func (w *responseWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush reporting failure (used by http.ResponseController).
func (w *responseWriter) FlushError() error {
	if !w.wroteHeader {
		w.status = http.StatusOK
		w.wroteHeader = true
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack lets the handler take over the connection (http.Hijacker); it
// fails with http.ErrNotSupported when w cannot be hijacked.
func (w *responseWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, buf, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil {
		w.hijacked = true
		if !w.wroteHeader {
			// The handler answers on the connection itself (a WebSocket
			// upgrade: 101).
			w.status = http.StatusSwitchingProtocols
			w.wroteHeader = true
		}
	}
	return conn, buf, err
}

// Unwrap returns the wrapped ResponseWriter (http.ResponseController).
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
