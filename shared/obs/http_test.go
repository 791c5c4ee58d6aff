package obs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// testMux is a ServeMux shaped like the API's: patterns with a method and
// an {id} wildcard, a catch-all, and a Content-Language on answers.
func testMux(t *testing.T) *http.ServeMux {
	mux := http.NewServeMux()
	answer := func(status int, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Language", "ko")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}
	}
	mux.HandleFunc("GET /v1/health", answer(200, `{"ok":true}`))
	mux.HandleFunc("GET /v1/games/{id}", answer(200, `{"gameId":"x"}`))
	mux.HandleFunc("POST /v1/games", func(w http.ResponseWriter, r *http.Request) {
		SetGameID(r.Context(), "newGame123")
		Logger(r.Context()).Info("game created")
		answer(201, `{"gameId":"newGame123"}`)(w, r)
	})
	mux.HandleFunc("POST /v1/games/{id}/actions", answer(409, `{"error":{}}`))
	mux.HandleFunc("POST /v1/ai/move", answer(429, `{"error":{}}`))
	mux.HandleFunc("GET /v1/fail", answer(503, `{"error":{}}`))
	mux.HandleFunc("GET /v1/silent", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /v1/panic", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	mux.HandleFunc("/", answer(404, `{"error":{}}`))
	return mux
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestMiddlewareLine(t *testing.T) {
	tests := []struct {
		name   string
		method string
		target string
		header map[string]string
		want   map[string]any // decoded JSON values, compared with fmt.Sprint
		absent []string
	}{
		{
			name: "health", method: "GET", target: "/v1/health",
			want:   map[string]any{"level": "INFO", "msg": "request", "method": "GET", "route": "GET /v1/health", "status": 200, "bytes": 11, "language": "ko"},
			absent: []string{KeyGameID, KeyLambdaRequestID, "hijacked", "panic"},
		},
		{
			name: "game id from the path", method: "GET", target: "/v1/games/AbCdEfGhIjKlMnOpQrStUv",
			want: map[string]any{"route": "GET /v1/games/{id}", "gameId": "AbCdEfGhIjKlMnOpQrStUv", "status": 200},
		},
		{
			name: "game id set by the handler", method: "POST", target: "/v1/games",
			want: map[string]any{"route": "POST /v1/games", "gameId": "newGame123", "status": 201},
		},
		{
			name: "4xx is info", method: "POST", target: "/v1/games/g1/actions",
			want: map[string]any{"level": "INFO", "status": 409, "gameId": "g1", "route": "POST /v1/games/{id}/actions"},
		},
		{
			name: "5xx is warn", method: "GET", target: "/v1/fail",
			want: map[string]any{"level": "WARN", "status": 503},
		},
		{
			name: "nothing written is 200", method: "GET", target: "/v1/silent",
			want:   map[string]any{"status": 200, "bytes": 0},
			absent: []string{"language"},
		},
		{
			name: "unknown route: the catch-all pattern, never the raw path", method: "GET", target: "/nowhere/secret-path?q=1",
			want: map[string]any{"status": 404, "route": "/"},
		},
		{
			name: "request id from API Gateway's header", method: "GET", target: "/v1/health",
			header: map[string]string{"X-Amzn-Request-Id": "JKJaXmPLvHcESHA="},
			want:   map[string]any{"requestId": "JKJaXmPLvHcESHA="},
		},
		{
			name: "request id from a proxy's header", method: "GET", target: "/v1/health",
			header: map[string]string{"X-Request-Id": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"},
			want:   map[string]any{"requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf syncBuffer
			h := Middleware(NewLogger(&buf, slog.LevelInfo), testMux(t))
			r := httptest.NewRequest(tt.method, tt.target, nil)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			serve(h, r)
			lines := buf.lines()
			access := decodeLine(t, lines[len(lines)-1])
			for k, v := range tt.want {
				if fmt.Sprint(access[k]) != fmt.Sprint(v) {
					t.Errorf("%s = %v, want %v\n%s", k, access[k], v, lines[len(lines)-1])
				}
			}
			for _, k := range tt.absent {
				if _, ok := access[k]; ok {
					t.Errorf("%s present: %s", k, lines[len(lines)-1])
				}
			}
			if id, _ := access[KeyRequestID].(string); id == "" {
				t.Errorf("no request id: %v", access)
			}
			if d, err := fmt.Sscan(fmt.Sprint(access["durationMs"]), new(float64)); d != 1 || err != nil {
				t.Errorf("durationMs %v", access["durationMs"])
			}
			if strings.Contains(buf.String(), "secret-path") {
				t.Errorf("raw path logged: %s", buf.String())
			}
		})
	}
}

// TestMiddlewareRequestID: the context's id wins over headers; implausible
// header values are not taken; generated ids are unique.
func TestMiddlewareRequestID(t *testing.T) {
	tests := []struct {
		name   string
		ctx    *RequestInfo
		header string
		want   string // "" : a generated one
	}{
		{"context wins", &RequestInfo{RequestID: "from-event", LambdaRequestID: "lam-1"}, "from-header", "from-event"},
		{"context without id takes the header", &RequestInfo{LambdaRequestID: "lam-1"}, "from-header", "from-header"},
		{"header", nil, "from-header", "from-header"},
		{"header with a space", nil, "a b", ""},
		{"header with a quote", nil, `a"b`, ""},
		{"header too long", nil, strings.Repeat("a", 129), ""},
		{"no header", nil, "", ""},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf syncBuffer
			h := Middleware(NewLogger(&buf, slog.LevelInfo), testMux(t))
			r := httptest.NewRequest("GET", "/v1/health", nil)
			if tt.ctx != nil {
				r = r.WithContext(WithRequest(r.Context(), *tt.ctx))
			}
			if tt.header != "" {
				r.Header.Set("X-Amzn-Request-Id", tt.header)
			}
			serve(h, r)
			line := decodeLine(t, buf.lines()[0])
			got, _ := line[KeyRequestID].(string)
			switch {
			case tt.want != "" && got != tt.want:
				t.Errorf("requestId %q, want %q", got, tt.want)
			case tt.want == "" && (len(got) != 32 || seen[got]):
				t.Errorf("generated requestId %q (want 32 new hex digits)", got)
			}
			seen[got] = true
			if tt.ctx != nil && line[KeyLambdaRequestID] != tt.ctx.LambdaRequestID {
				t.Errorf("lambdaRequestId %v", line[KeyLambdaRequestID])
			}
		})
	}
}

// TestMiddlewareSharesTheCallersRecord: when the Lambda adapter made the
// request's record (WithRequest), the handler's SetGameID lands in it, and
// lines logged inside carry the ids.
func TestMiddlewareSharesTheCallersRecord(t *testing.T) {
	var buf syncBuffer
	log := NewLogger(&buf, slog.LevelInfo)
	ctx := WithRequest(context.Background(), RequestInfo{RequestID: "gw-1", LambdaRequestID: "lam-1", Route: "POST /v1/games"})
	r := httptest.NewRequest("POST", "/v1/games", nil).WithContext(ctx)
	serve(Middleware(log, testMux(t)), r)
	info, _ := Request(ctx)
	if info.GameID != "newGame123" {
		t.Errorf("caller's record %+v", info)
	}
	lines := buf.lines()
	if len(lines) != 2 {
		t.Fatalf("lines %v", lines)
	}
	inner := decodeLine(t, lines[0])
	if inner["msg"] != "game created" || inner[KeyRequestID] != "gw-1" || inner[KeyLambdaRequestID] != "lam-1" || inner[KeyGameID] != "newGame123" {
		t.Errorf("line logged while serving: %s", lines[0])
	}
}

func TestMiddlewareMetrics(t *testing.T) {
	rec := NewRecorder()
	h := Middleware(nil, testMux(t), WithMetrics(rec.Metrics()))
	for _, target := range []string{"GET /v1/health", "GET /v1/health", "POST /v1/games/g/actions", "POST /v1/ai/move", "GET /v1/fail", "GET /nowhere"} {
		method, path, _ := strings.Cut(target, " ")
		serve(h, httptest.NewRequest(method, path, nil))
	}
	want := map[string]float64{MetricRequests: 6, MetricRequests4xx: 3, MetricRequests5xx: 1, MetricRateLimited: 1}
	for name, n := range want {
		if got := rec.Count(name); got != n {
			t.Errorf("%s = %v, want %v", name, got, n)
		}
	}
	if n := len(rec.Samples(MetricRequestMs)); n != 6 {
		t.Errorf("%d RequestMs samples", n)
	}
	if n := len(rec.Samples(MetricPanics)); n != 0 {
		t.Errorf("%d Panics samples without a panic", n)
	}
	for name := range rec.Counts() {
		if _, ok := Lookup(name); !ok {
			t.Errorf("Middleware emits unregistered metric %q", name)
		}
	}
}

// TestMiddlewareEMFLine: the per-request metrics as written for CloudWatch.
func TestMiddlewareEMFLine(t *testing.T) {
	var logs, emf syncBuffer
	m := NewMetrics(&emf, Namespace, map[string]string{DimFunctionName: "chessapi-move"})
	h := Middleware(NewLogger(&logs, slog.LevelInfo), testMux(t), WithMetrics(m))
	serve(h, httptest.NewRequest("GET", "/v1/fail", nil))
	lines := emf.lines()
	if len(lines) != 1 {
		t.Fatalf("EMF lines %v", lines)
	}
	doc := checkEMF(t, lines[0])
	want := map[string]float64{MetricRequests: 1, MetricRequests4xx: 0, MetricRequests5xx: 1, MetricRateLimited: 0}
	for name, v := range want {
		if doc.MetricVals[name] != v || doc.Metrics[name] != "Count" {
			t.Errorf("%s = %v %s, want %v Count", name, doc.MetricVals[name], doc.Metrics[name], v)
		}
	}
	if doc.Metrics[MetricRequestMs] != "Milliseconds" || doc.Namespace != "ChessAPI" || fmt.Sprint(doc.DimSets) != "[[FunctionName]]" {
		t.Errorf("document %s", lines[0])
	}
}

func TestMiddlewarePanic(t *testing.T) {
	var buf syncBuffer
	rec := NewRecorder()
	h := Middleware(NewLogger(&buf, slog.LevelInfo), testMux(t), WithMetrics(rec.Metrics()))
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want the handler's panic to go on", v)
			}
		}()
		serve(h, httptest.NewRequest("GET", "/v1/panic", nil))
	}()
	line := decodeLine(t, buf.lines()[0])
	if line["panic"] != true || line["level"] != "WARN" || fmt.Sprint(line["status"]) != "500" || line["route"] != "GET /v1/panic" {
		t.Errorf("line %v", line)
	}
	if rec.Count(MetricPanics) != 1 || rec.Count(MetricRequests5xx) != 1 {
		t.Errorf("metrics %v", rec.Counts())
	}
}

// TestMiddlewareLogsNoSecrets sends requests full of seat tokens, API keys,
// cookies and bodies, to handlers that answer with tokens, and fails if
// any of them reaches the log or the metrics.
func TestMiddlewareLogsNoSecrets(t *testing.T) {
	token := "st_" + strings.Repeat("Zq9-_", 8) + "k2P"
	token2 := "st_" + strings.Repeat("Yw8_-", 8) + "m3Q"
	apiKey := "partner-key-5f2c9e1a7b3d"
	secrets := []string{
		token, token2, apiKey,
		"Bearer", "sessioncookie-77", "body-marker-3141", "response-marker-2718", "query-marker-1618", "hunter2",
	}
	var logs, emf syncBuffer
	log := NewLogger(&logs, slog.LevelDebug, "function", "move")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/games", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		SetGameID(r.Context(), "AbCdEfGhIjKlMnOpQrStUv")
		// What a careless handler might log: redacted by the logger.
		Logger(r.Context()).Debug("creating", "authorization", r.Header.Get("Authorization"), "x-api-key", r.Header.Get("X-Api-Key"),
			"err", fmt.Errorf("seat %s rejected", token2), "token", token)
		w.Header().Set("Set-Cookie", "sessioncookie-77")
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"token":%q,"echo":%q,"note":"response-marker-2718"}`, token, body)
	})
	mux.HandleFunc("GET /v1/games/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(404)
	})
	mux.HandleFunc("POST /v1/ai/move", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(401)
	})
	h := Middleware(log, mux, WithMetrics(NewMetrics(&emf, Namespace, map[string]string{DimFunctionName: "f"})))

	requests := []*http.Request{
		httptest.NewRequest("POST", "/v1/games?token="+token+"&q=query-marker-1618", strings.NewReader(`{"password":"hunter2","note":"body-marker-3141","token":"`+token2+`"}`)),
		httptest.NewRequest("GET", "/v1/games/"+token, nil),                 // a token where the game id goes
		httptest.NewRequest("GET", "/v1/games/g1?access_token="+token, nil), // a token in the query
		httptest.NewRequest("POST", "/v1/ai/move", strings.NewReader(`{"fen":"startpos","apiKey":"`+apiKey+`"}`)),
	}
	for _, r := range requests {
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("X-Api-Key", apiKey)
		r.Header.Set("Cookie", "session=sessioncookie-77")
		r.Header.Set("X-Amzn-Request-Id", "Bearer "+token) // not a plausible id: not taken
		r.Header.Set("Accept-Language", "en")
		w := serve(h, r)
		if w.Code == 0 {
			t.Fatal("no answer")
		}
	}
	out := logs.String() + emf.String()
	if n := len(logs.lines()); n != len(requests)+1 {
		t.Fatalf("%d log lines, want %d:\n%s", n, len(requests)+1, logs.String())
	}
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("output contains secret %q:\n%s", s, out)
		}
	}
	// Even fragments: no 12-character piece of a token or key.
	for _, s := range []string{token[3:], token2[3:], apiKey} {
		for i := 0; i+12 <= len(s); i++ {
			if strings.Contains(out, s[i:i+12]) {
				t.Fatalf("output contains %q, a piece of a secret:\n%s", s[i:i+12], out)
			}
		}
	}
	if !strings.Contains(out, `"gameId":"AbCdEfGhIjKlMnOpQrStUv"`) {
		t.Errorf("the ordinary fields are missing:\n%s", out)
	}
}

func TestResponseWriterFlush(t *testing.T) {
	var buf syncBuffer
	h := Middleware(NewLogger(&buf, slog.LevelInfo), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := w.(http.Flusher)
		if !ok {
			t.Fatal("not an http.Flusher")
		}
		_, _ = io.WriteString(w, "part")
		f.Flush()
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("ResponseController.Flush: %v", err)
		}
	}))
	w := serve(h, httptest.NewRequest("GET", "/", nil))
	if !w.Flushed || w.Body.String() != "part" {
		t.Errorf("flushed %v body %q", w.Flushed, w.Body.String())
	}
	line := decodeLine(t, buf.lines()[0])
	if fmt.Sprint(line["status"]) != "200" || fmt.Sprint(line["bytes"]) != "4" {
		t.Errorf("line %v", line)
	}
}

// TestResponseWriterUnsupported: a writer that cannot hijack or flush
// says so through the wrapper.
func TestResponseWriterUnsupported(t *testing.T) {
	h := Middleware(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := w.(http.Hijacker); !ok {
			t.Error("the wrapper is not an http.Hijacker")
		}
		if _, _, err := w.(http.Hijacker).Hijack(); !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("Hijack on a recorder: %v", err)
		}
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Second)); !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("SetWriteDeadline on a recorder: %v", err)
		}
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("Flush on a recorder: %v", err)
		}
	}))
	serve(h, httptest.NewRequest("GET", "/", nil))

	// A writer with neither Flusher nor Hijacker nor Unwrap.
	h = Middleware(nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // a no-op, no panic
		if err := http.NewResponseController(w).Flush(); !errors.Is(err, http.ErrNotSupported) {
			t.Errorf("Flush on a plain writer: %v", err)
		}
	}))
	h.ServeHTTP(plainWriter{httptest.NewRecorder()}, httptest.NewRequest("GET", "/", nil))
}

type plainWriter struct{ rec *httptest.ResponseRecorder }

func (p plainWriter) Header() http.Header         { return p.rec.Header() }
func (p plainWriter) Write(b []byte) (int, error) { return p.rec.Write(b) }
func (p plainWriter) WriteHeader(code int)        { p.rec.WriteHeader(code) }

// TestHijackPassesThrough upgrades a connection through the middleware on
// a real server (as the local server's WebSocket endpoint will), both by
// the http.Hijacker assertion and by http.ResponseController, and talks
// over it; deadlines reach the connection through Unwrap.
func TestHijackPassesThrough(t *testing.T) {
	for _, how := range []string{"Hijacker", "ResponseController"} {
		t.Run(how, func(t *testing.T) {
			var buf syncBuffer
			done := make(chan struct{})
			h := Middleware(NewLogger(&buf, slog.LevelInfo), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(done)
				if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
					t.Errorf("SetReadDeadline through Unwrap: %v", err)
				}
				var conn net.Conn
				var brw *bufio.ReadWriter
				var err error
				if how == "Hijacker" {
					conn, brw, err = w.(http.Hijacker).Hijack()
				} else {
					conn, brw, err = http.NewResponseController(w).Hijack()
				}
				if err != nil {
					t.Errorf("Hijack: %v", err)
					return
				}
				defer conn.Close()
				_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
				_ = brw.Flush()
				line, err := brw.ReadString('\n')
				if err != nil {
					t.Errorf("read on the hijacked connection: %v", err)
					return
				}
				_, _ = conn.Write([]byte("echo:" + line))
			}))
			srv := httptest.NewServer(h)
			defer srv.Close()

			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
			fmt.Fprintf(conn, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\nAuthorization: Bearer st_secret\r\n\r\n")
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("status %d", resp.StatusCode)
			}
			fmt.Fprintf(conn, "hello\n")
			got, err := br.ReadString('\n')
			if err != nil || got != "echo:hello\n" {
				t.Fatalf("echo %q, %v", got, err)
			}
			<-done
			var lines []string
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if lines = buf.lines(); len(lines) > 0 {
					break
				}
			}
			if len(lines) != 1 {
				t.Fatalf("log lines %v", lines)
			}
			line := decodeLine(t, lines[0])
			if fmt.Sprint(line["status"]) != "101" || line["hijacked"] != true || line["level"] != "INFO" {
				t.Errorf("line %v", line)
			}
			if strings.Contains(lines[0], "secret") {
				t.Errorf("secret logged: %s", lines[0])
			}
		})
	}
}

// TestMiddlewareConcurrent serves many requests at once through one
// middleware (run with -race): one log line and one EMF line each, with
// distinct request ids.
func TestMiddlewareConcurrent(t *testing.T) {
	var logs, emf syncBuffer
	h := Middleware(NewLogger(&logs, slog.LevelInfo), testMux(t),
		WithMetrics(NewMetrics(&emf, Namespace, map[string]string{DimFunctionName: "f"})))
	const n = 400
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			target := []string{"/v1/health", "/v1/games/g1", "/v1/fail", "/x"}[i%4]
			serve(h, httptest.NewRequest("GET", target, nil))
		})
	}
	wg.Wait()
	ids := map[string]bool{}
	for _, l := range logs.lines() {
		ids[decodeLine(t, l)[KeyRequestID].(string)] = true
	}
	if len(ids) != n {
		t.Errorf("%d distinct request ids in %d lines, want %d", len(ids), len(logs.lines()), n)
	}
	var fails float64
	for _, l := range emf.lines() {
		fails += checkEMF(t, l).MetricVals[MetricRequests5xx]
	}
	if len(emf.lines()) != n || fails != n/4 {
		t.Errorf("%d EMF lines, %v failures", len(emf.lines()), fails)
	}
}

func TestPlausibleIDs(t *testing.T) {
	for s, want := range map[string]bool{
		"": false, "AbCdEfGhIjKlMnOpQrStUv": true, "g1": true, strings.Repeat("a", 32): true, strings.Repeat("a", 33): false,
		"st_" + strings.Repeat("a", 43): false, "a/b": false, "a b": false, "한": false,
	} {
		if got := plausibleGameID(s); got != want {
			t.Errorf("plausibleGameID(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{
		"": false, "JKJaXmPLvHcESHA=": true, "c6af9ac6-7b61-11e6-9a41-93e8deadbeef": true, "1-5759e988-bd862e3f": true,
		"a b": false, "a\nb": false, `a"`: false, strings.Repeat("a", 129): false,
	} {
		if got := plausibleRequestID(s); got != want {
			t.Errorf("plausibleRequestID(%q) = %v", s, got)
		}
	}
}
