package obs

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// benchWriter is a minimal ResponseWriter that keeps nothing, so the
// benchmark measures the middleware, not a recorder.
type benchWriter struct{ h http.Header }

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *benchWriter) WriteHeader(int)             {}

// BenchmarkMiddleware measures the cost per request of the middleware
// around a ServeMux route shaped like the API's (GET /v1/games/{id}
// answering a small JSON body): "bare" is the mux alone; the others add
// the middleware with its log line (JSON, to io.Discard) and with the EMF
// line too. The overhead is the difference from "bare".
//
//	go test ./shared/obs -run '^$' -bench Middleware -benchmem -count 3
func BenchmarkMiddleware(b *testing.B) {
	mux := http.NewServeMux()
	body := []byte(`{"gameId":"AbCdEfGhIjKlMnOpQrStUv","version":7}`)
	mux.HandleFunc("GET /v1/games/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Language", "ko")
		w.WriteHeader(200)
		_, _ = w.Write(body)
	})
	log := NewLogger(io.Discard, slog.LevelInfo, "function", "move")
	metrics := NewMetrics(io.Discard, Namespace, map[string]string{DimFunctionName: "chessapi-move"})
	cases := []struct {
		name string
		h    http.Handler
	}{
		{"bare", mux},
		{"log", Middleware(log, mux)},
		{"log+emf", Middleware(log, mux, WithMetrics(metrics))},
		{"log-disabled+emf", Middleware(NewLogger(io.Discard, slog.LevelWarn), mux, WithMetrics(metrics))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "/v1/games/AbCdEfGhIjKlMnOpQrStUv", nil)
			r.Header.Set("Authorization", "Bearer st_0123456789012345678901234567890123456789abc")
			r.Header.Set("Accept-Language", "ko")
			w := &benchWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				c.h.ServeHTTP(w, r)
			}
		})
	}
}

// BenchmarkMetricsCount is the cost of one EMF line (one Count).
func BenchmarkMetricsCount(b *testing.B) {
	m := NewMetrics(io.Discard, Namespace, map[string]string{DimFunctionName: "chessapi-move"})
	b.ReportAllocs()
	for b.Loop() {
		m.Count(MetricMoves, 1)
	}
}

// BenchmarkLogWithRequest is the cost of one line logged with a request
// context (the four request fields added by the context handler).
func BenchmarkLogWithRequest(b *testing.B) {
	log := NewLogger(io.Discard, slog.LevelInfo, "function", "move")
	ctx := WithRequest(b.Context(), RequestInfo{RequestID: "JKJaXmPLvHcESHA=", LambdaRequestID: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef", Route: "POST /v1/games/{id}/actions", GameID: "AbCdEfGhIjKlMnOpQrStUv"})
	b.ReportAllocs()
	for b.Loop() {
		log.InfoContext(ctx, "move committed", "version", 8)
	}
}
