package lambdafn

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

func httpEvent(method, rawPath, stage string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: method + " " + rawPath,
		RawPath:  rawPath,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			DomainName: "a1b2c3d4e5.execute-api.eu-central-1.amazonaws.com",
			Stage:      stage,
			HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: rawPath},
		},
	}
}

func TestStripStage(t *testing.T) {
	tests := []struct {
		stage, path, want string
	}{
		{"$default", "/v1/health", "/v1/health"},
		{"", "/v1/health", "/v1/health"},
		{"prod", "/prod/v1/health", "/v1/health"},
		{"prod", "/prod", "/"},
		{"prod", "/prod/", "/"},
		{"prod", "/production/v1/health", "/production/v1/health"}, // not the stage's segment
		{"prod", "/v1/health", "/v1/health"},                       // custom domain mapping: no prefix
		{"v1", "/v1/v1/games", "/v1/games"},                        // only the first segment
	}
	for _, tt := range tests {
		got := StripStage(httpEvent("GET", tt.path, tt.stage))
		if got.RawPath != tt.want || got.RequestContext.HTTP.Path != tt.want {
			t.Errorf("StripStage(stage %q, path %q) = rawPath %q, http.path %q; want %q",
				tt.stage, tt.path, got.RawPath, got.RequestContext.HTTP.Path, tt.want)
		}
	}
}

// testApp is an App whose HTTP side is h instead of the API handler.
func testApp(h http.Handler) *App {
	return &App{fn: Move, log: slog.New(slog.DiscardHandler), httpProxy: httpadapter.NewV2(h)}
}

type errorJSON struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// TestHandleHTTPAlwaysAnswersHTTP checks that whatever goes wrong in the
// adapter, the function answers with the API's JSON error and no Lambda
// error (which API Gateway would turn into a bare 500).
func TestHandleHTTPAlwaysAnswersHTTP(t *testing.T) {
	echoPath := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(r.URL.Path + "?" + r.URL.RawQuery))
	})
	silent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	panics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	waitsForDeadline := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })

	withBody := func(ev events.APIGatewayV2HTTPRequest, body string, b64 bool) events.APIGatewayV2HTTPRequest {
		ev.Body, ev.IsBase64Encoded = body, b64
		return ev
	}
	withQuery := func(ev events.APIGatewayV2HTTPRequest, q string) events.APIGatewayV2HTTPRequest {
		ev.RawQueryString = q
		return ev
	}
	tests := []struct {
		name     string
		handler  http.Handler
		ev       events.APIGatewayV2HTTPRequest
		timeout  time.Duration
		status   int
		wantBody string // for a non-error answer
		wantCode string // for a JSON error
	}{
		{"named stage stripped before routing", echoPath, withQuery(httpEvent("GET", "/prod/v1/games/x", "prod"), "afterVersion=3"), 0,
			http.StatusTeapot, "/v1/games/x?afterVersion=3", ""},
		{"base64 body decoded", echoPath, withBody(httpEvent("POST", "/v1/positions", "$default"), "e30=", true), 0,
			http.StatusTeapot, "/v1/positions?", ""},
		{"bad base64 body", echoPath, withBody(httpEvent("POST", "/v1/positions", "$default"), "not base64!", true), 0,
			http.StatusBadRequest, "", "invalid_body"},
		{"bad percent-encoding in path", echoPath, httpEvent("GET", "/v1/games/%zz", "$default"), 0,
			http.StatusBadRequest, "", "invalid_path"},
		{"handler wrote nothing", silent, httpEvent("GET", "/v1/health", "$default"), 0,
			http.StatusInternalServerError, "", "internal"},
		{"panic outside the API's own recovery", panics, httpEvent("GET", "/v1/health", "$default"), 0,
			http.StatusInternalServerError, "", "internal"},
		{"function deadline reached", waitsForDeadline, httpEvent("GET", "/v1/games/x", "$default"), 10 * time.Millisecond,
			http.StatusServiceUnavailable, "", "unavailable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			resp, err := testApp(tt.handler).HandleHTTP(ctx, tt.ev)
			if err != nil {
				t.Fatalf("HandleHTTP(%s) error = %v; want an HTTP answer", tt.ev.RawPath, err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("HandleHTTP(%s) status = %d (body %s); want %d", tt.ev.RawPath, resp.StatusCode, resp.Body, tt.status)
			}
			if tt.wantCode == "" {
				if resp.Body != tt.wantBody {
					t.Errorf("HandleHTTP(%s) body = %q; want %q", tt.ev.RawPath, resp.Body, tt.wantBody)
				}
				return
			}
			var body errorJSON
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || body.Error.Code != tt.wantCode || body.Error.Message == "" {
				t.Errorf("HandleHTTP(%s) body = %s (%v); want a JSON error with code %q", tt.ev.RawPath, resp.Body, err, tt.wantCode)
			}
			if ct := resp.Headers["Content-Type"]; ct != "application/json; charset=utf-8" {
				t.Errorf("HandleHTTP(%s) Content-Type = %q; want JSON", tt.ev.RawPath, ct)
			}
			checkContract(t, tt.ev, resp) // the adapter's own answers follow openapi.yaml too
		})
	}
}

func TestHandleHTTPInTimeoutFunction(t *testing.T) {
	app := &App{fn: Timeout, log: slog.New(slog.DiscardHandler)}
	resp, err := app.HandleHTTP(context.Background(), httpEvent("GET", "/v1/health", "$default"))
	if err != nil || resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("timeout function HandleHTTP = %d, %v; want a JSON 500", resp.StatusCode, err)
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		raw  string
		want eventKind
	}{
		{`{"version":"2.0","routeKey":"POST /v1/ai/move","requestContext":{}}`, kindHTTP},
		{`{"requestContext":{"http":{}}}`, kindHTTP},
		{`{"gameId":"Qm7vR2xKp9LwT4nZ8cHbYd","version":2}`, kindAITask},
		{`{"gameId":"x","version":3,"deadline":"2026-11-29T14:15:05Z"}`, kindAITask}, // decoded strictly later
		{`{"version":2}`, kindUnknown},
		{`[1,2]`, kindUnknown},
		{`"gameId"`, kindUnknown},
		{`null`, kindUnknown},
		{``, kindUnknown},
	}
	for _, tt := range tests {
		if got := kindOf([]byte(tt.raw)); got != tt.want {
			t.Errorf("kindOf(%s) = %v; want %v", tt.raw, got, tt.want)
		}
	}
}
