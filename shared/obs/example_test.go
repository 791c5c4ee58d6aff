package obs

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
)

// The per-request log line, as the middleware writes it (time and
// durationMs are left out here because they change from run to run).
func ExampleMiddleware() {
	log := slog.New(NewContextHandler(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "durationMs" {
				return slog.Attr{}
			}
			return a
		},
	}))).With("function", "move")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/games/{id}/actions", func(w http.ResponseWriter, r *http.Request) {
		Logger(r.Context()).Info("move committed", "version", 8)
		w.Header().Set("Content-Language", "en")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"version":8}`))
	})
	h := Middleware(log, mux)

	// In Lambda, the adapter puts API Gateway's and Lambda's request ids
	// in the context first.
	ctx := WithRequest(context.Background(), RequestInfo{RequestID: "JKJaXmPLvHcESHA=", LambdaRequestID: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"})
	r := httptest.NewRequest("POST", "/v1/games/AbCdEfGhIjKlMnOpQrStUv/actions", strings.NewReader(`{"type":"move","move":"e2e4"}`)).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer st_0123456789012345678901234567890123456789abc")
	h.ServeHTTP(httptest.NewRecorder(), r)
	// Output:
	// {"level":"INFO","msg":"move committed","function":"move","version":8,"requestId":"JKJaXmPLvHcESHA=","lambdaRequestId":"c6af9ac6-7b61-11e6-9a41-93e8deadbeef"}
	// {"level":"INFO","msg":"request","function":"move","method":"POST","route":"POST /v1/games/{id}/actions","status":200,"bytes":13,"requestId":"JKJaXmPLvHcESHA=","lambdaRequestId":"c6af9ac6-7b61-11e6-9a41-93e8deadbeef","gameId":"AbCdEfGhIjKlMnOpQrStUv","language":"en"}
}

// One EMF document per call (the clock is fixed here).
func ExampleMetrics() {
	m := NewMetrics(os.Stdout, Namespace, map[string]string{DimFunctionName: "chessapi-move"})
	m.now = fixedClock
	m.Count(MetricScheduleFailures, 1)
	// Output:
	// {"_aws":{"Timestamp":1767323045678,"CloudWatchMetrics":[{"Namespace":"ChessAPI","Dimensions":[["FunctionName"]],"Metrics":[{"Name":"ScheduleFailures","Unit":"Count"}]}]},"FunctionName":"chessapi-move","ScheduleFailures":1}
}

// A test of another package asserting what was measured.
func ExampleRecorder() {
	rec := NewRecorder()
	metrics := rec.Metrics() // pass this where a *Metrics is wanted
	metrics.Count(MetricScheduleFailures, 1)
	fmt.Println(rec.Count(MetricScheduleFailures), rec.Count(MetricMoves))
	// Output: 1 0
}
