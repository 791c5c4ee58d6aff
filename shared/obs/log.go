package obs

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"chessapi/shared/credential"
)

// Log attribute keys that carry the request context; every line logged
// with a request's context has them (when known).
const (
	KeyRequestID       = "requestId"
	KeyLambdaRequestID = "lambdaRequestId"
	KeyRoute           = "route"
	KeyGameID          = "gameId"
)

// NewLogger returns the JSON logger of a process: one JSON object per line
// on w at level and above, with attrs on every line (e.g. "function",
// "move"). Lines logged with a context carrying a RequestInfo (the
// *Context methods, or a logger from Logger(ctx)) also carry its request
// id, Lambda request id, route and game id. Values of secret-named
// attributes (authorization, token, apiKey, x-api-key, password, secret,
// cookie, and the names credentials travel under) are replaced by
// "[REDACTED]", and every credential with a prefix (seat and player
// tokens, API keys) inside any text is masked (credential.Redact).
func NewLogger(w io.Writer, level slog.Level, attrs ...any) *slog.Logger {
	h := slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr})
	l := slog.New(NewContextHandler(h))
	if len(attrs) > 0 {
		l = l.With(attrs...)
	}
	return l
}

// RequestInfo identifies the request (or task) being served.
type RequestInfo struct {
	// RequestID is API Gateway's request id (requestContext.requestId, also
	// in its access log), else the X-Amzn-Request-Id / X-Request-Id header,
	// else one Middleware generates.
	RequestID string
	// LambdaRequestID is the invocation's id (lambdacontext's
	// AwsRequestID): the id in Lambda's own START/END/REPORT lines.
	LambdaRequestID string
	// Route is the ServeMux pattern served ("POST /v1/games/{id}/actions"),
	// or the kind of a non-HTTP task ("timeout", "ai-task").
	Route string
	// GameID is the game concerned, once known (SetGameID).
	GameID string
}

// reqState is the mutable RequestInfo of one request, shared by everything
// that holds its context.
type reqState struct {
	mu   sync.Mutex
	info RequestInfo
	// panicked: the handler recovered a panic of this request (its answer
	// was a 500); the request's metrics count it.
	panicked bool
}

// NotePanic records that serving the request in ctx panicked and the
// handler recovered (so Middleware, which sees a 500, counts a panic).
func NotePanic(ctx context.Context) {
	if st := stateFrom(ctx); st != nil {
		st.mu.Lock()
		st.panicked = true
		st.mu.Unlock()
	}
}

func (s *reqState) snapshot() RequestInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

type ctxKey int

const (
	stateKey ctxKey = iota
	loggerKey
)

// WithRequest returns a context carrying info for logging: lines logged
// with it (and with contexts derived from it) carry its ids, and
// SetGameID/SetRoute on any of them update the same record.
func WithRequest(ctx context.Context, info RequestInfo) context.Context {
	return context.WithValue(ctx, stateKey, &reqState{info: info})
}

func stateFrom(ctx context.Context) *reqState {
	if ctx == nil {
		return nil
	}
	s, _ := ctx.Value(stateKey).(*reqState)
	return s
}

// Request returns the RequestInfo of ctx as it is now.
func Request(ctx context.Context) (RequestInfo, bool) {
	if s := stateFrom(ctx); s != nil {
		return s.snapshot(), true
	}
	return RequestInfo{}, false
}

// SetGameID records the game the request is about, once the handler knows
// it (a create, after the id is made); later lines and the request's
// access line carry it. It does nothing on a context without a
// RequestInfo.
func SetGameID(ctx context.Context, id string) {
	if s := stateFrom(ctx); s != nil {
		s.mu.Lock()
		s.info.GameID = id
		s.mu.Unlock()
	}
}

// SetRoute records the route being served (Middleware takes it from the
// ServeMux after serving; lines logged while serving carry it only if the
// handler sets it).
func SetRoute(ctx context.Context, route string) {
	if s := stateFrom(ctx); s != nil {
		s.mu.Lock()
		s.info.Route = route
		s.mu.Unlock()
	}
}

// WithLogger returns a context carrying l, for Logger.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, loggerKey, l)
}

// Logger returns the logger for ctx: the one WithLogger (or Middleware)
// stored, else slog.Default(), bound to the request of ctx, so that even
// its methods without a context (Info, Error) log the request's ids.
func Logger(ctx context.Context) *slog.Logger {
	var l *slog.Logger
	if ctx != nil {
		l, _ = ctx.Value(loggerKey).(*slog.Logger)
	}
	if l == nil {
		l = slog.Default()
	}
	s := stateFrom(ctx)
	if s == nil {
		return l
	}
	return slog.New(bind(l.Handler(), s))
}

// ContextHandler adds the request fields of the record's context (or of
// the request it is bound to) to every record.
type ContextHandler struct {
	inner slog.Handler
	bound *reqState
}

// NewContextHandler wraps h so that records logged with a context carrying
// a RequestInfo get requestId, lambdaRequestId, route and gameId.
func NewContextHandler(h slog.Handler) *ContextHandler {
	if c, ok := h.(*ContextHandler); ok {
		return c
	}
	return &ContextHandler{inner: h}
}

func bind(h slog.Handler, s *reqState) slog.Handler {
	c := NewContextHandler(h)
	return &ContextHandler{inner: c.inner, bound: s}
}

// Enabled reports whether the wrapped handler handles level.
func (h *ContextHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle adds the request's fields and passes r on.
func (h *ContextHandler) Handle(ctx context.Context, r slog.Record) error {
	s := h.bound
	if s == nil {
		s = stateFrom(ctx)
	}
	if s != nil {
		addRequestAttrs(&r, s.snapshot())
	}
	return h.inner.Handle(ctx, r)
}

func addRequestAttrs(r *slog.Record, info RequestInfo) {
	for _, kv := range [...][2]string{
		{KeyRequestID, info.RequestID},
		{KeyLambdaRequestID, info.LambdaRequestID},
		{KeyRoute, info.Route},
		{KeyGameID, info.GameID},
	} {
		if kv[1] != "" {
			r.AddAttrs(slog.String(kv[0], kv[1]))
		}
	}
}

// WithAttrs returns the handler with attrs added.
func (h *ContextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &ContextHandler{inner: h.inner.WithAttrs(attrs), bound: h.bound}
}

// WithGroup returns the handler with a group opened (the request fields
// then land in that group).
func (h *ContextHandler) WithGroup(name string) slog.Handler {
	return &ContextHandler{inner: h.inner.WithGroup(name), bound: h.bound}
}

// redacted replaces secret values.
const redacted = "[REDACTED]"

// secretKeys are attribute keys whose values are never logged (compared
// without case, ignoring '-' and '_'): the generic ones, and every name a
// credential kind travels under (credential.LogNames: seatToken,
// playerToken, apiKey, x-api-key, linkCode, inviteCode, …).
var secretKeys = func() []string {
	keys := []string{"authorization", "proxyauthorization", "token", "password", "secret", "cookie", "setcookie"}
	for _, name := range credential.LogNames() {
		keys = append(keys, normalizeKey(name))
	}
	return keys
}()

// normalizeKey is a key as isSecretKey compares it.
func normalizeKey(key string) string {
	return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(key))
}

func isSecretKey(key string) bool {
	if len(key) < 5 || len(key) > 22 {
		return false
	}
	var buf [24]byte
	n := 0
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '-' || c == '_':
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	k := string(buf[:n]) // does not escape: compared only
	for _, s := range secretKeys {
		if k == s {
			return true
		}
	}
	return false
}

// redactAttr is the JSON handler's ReplaceAttr: secret-named attributes
// lose their value, and credentials inside any string or error text are
// masked (credential.Redact: seat tokens, player tokens, API keys).
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	if isSecretKey(a.Key) {
		return slog.String(a.Key, redacted)
	}
	switch a.Value.Kind() {
	case slog.KindString:
		if s := a.Value.String(); credential.MayContain(s) {
			if r := credential.Redact(s); r != s {
				return slog.String(a.Key, r)
			}
		}
	case slog.KindAny:
		switch v := a.Value.Any().(type) {
		case error:
			if v == nil {
				break
			}
			if s := v.Error(); credential.MayContain(s) {
				if r := credential.Redact(s); r != s {
					return slog.String(a.Key, r)
				}
			}
		case http.Header:
			return slog.Any(a.Key, http.Header(redactValues(v)))
		case url.Values:
			return slog.Any(a.Key, url.Values(redactValues(v)))
		case map[string][]string:
			return slog.Any(a.Key, redactValues(v))
		}
	}
	return a
}

// redactValues returns a copy of a header or query map with the values of
// secret-named keys replaced and credentials masked in the others.
func redactValues(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, vs := range m {
		c := make([]string, len(vs))
		for i, v := range vs {
			switch {
			case isSecretKey(k):
				c[i] = redacted
			case credential.MayContain(v):
				c[i] = credential.Redact(v)
			default:
				c[i] = v
			}
		}
		out[k] = c
	}
	return out
}

func isB64URL(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
