package apispec

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The validators must refuse what openapi.yaml does not allow; otherwise
// every test that relies on them passes for nothing.

func exchange(method, target, body string, status int, header http.Header, answer string) Exchange {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if header == nil {
		header = http.Header{}
	}
	if header.Get("Content-Type") == "" && answer != "" {
		header.Set("Content-Type", "application/json; charset=utf-8")
	}
	if header.Get("Content-Language") == "" {
		header.Set("Content-Language", "ko")
	}
	return Exchange{Request: req, Body: []byte(body), Status: status, Header: header, Answer: []byte(answer)}
}

func TestValidateResponse(t *testing.T) {
	s := MustLoad(t)
	const health = `{"status":"ok","time":"2026-11-29T12:00:00Z"}`
	const notFound = `{"error":{"code":"game_not_found","message":"대국을 찾을 수 없어요"}}`
	tests := []struct {
		name string
		ex   Exchange
		ok   bool
	}{
		{"health", exchange("GET", "/v1/health", "", 200, nil, health), true},
		{"extra member", exchange("GET", "/v1/health", "", 200, nil, `{"status":"ok","time":"2026-11-29T12:00:00Z","x":1}`), false},
		{"missing member", exchange("GET", "/v1/health", "", 200, nil, `{"status":"ok"}`), false},
		{"undocumented status", exchange("GET", "/v1/health", "", 418, nil, health), false},
		{"wrong media type", exchange("GET", "/v1/health", "", 200, http.Header{"Content-Type": {"text/plain"}}, "ok"), false},
		{"no Content-Language", exchange("GET", "/v1/health", "", 200, http.Header{"Content-Language": {"fr"}}, health), false},
		{"documented error", exchange("GET", "/v1/games/abcdefgh1234", "", 404, nil, notFound), true},
		{"code of another status", exchange("GET", "/v1/games/abcdefgh1234", "", 404, nil, `{"error":{"code":"forbidden","message":"x"}}`), false},
		{"unknown error member", exchange("GET", "/v1/games/abcdefgh1234", "", 404, nil, `{"error":{"code":"game_not_found","message":"x","hint":"y"}}`), false},
		{"extra top-level member", exchange("GET", "/v1/games/abcdefgh1234", "", 404, nil, `{"error":{"code":"game_not_found","message":"x"},"game":null}`), false},
		{"unknown route", exchange("GET", "/v1/nope", "", 404, nil, `{"error":{"code":"not_found","message":"없는 주소예요"}}`), true},
		{"unknown route, wrong code", exchange("GET", "/v1/nope", "", 404, nil, notFound), false},
		{"unknown route, wrong status", exchange("GET", "/v1/nope", "", 400, nil, `{"error":{"code":"not_found","message":"x"}}`), false},
		{"method not allowed", exchange("DELETE", "/v1/positions", "", 405, http.Header{"Allow": {"POST"}}, `{"error":{"code":"method_not_allowed","message":"x"}}`), true},
		{"method not allowed on a templated path", exchange("DELETE", "/v1/games/abcdefgh1234", "", 405, http.Header{"Allow": {"GET"}}, `{"error":{"code":"method_not_allowed","message":"x"}}`), true},
		{"method not allowed without Allow", exchange("DELETE", "/v1/positions", "", 405, nil, `{"error":{"code":"method_not_allowed","message":"x"}}`), false},
		{"created without Location", exchange("POST", "/v1/games", "", 201, nil, `{}`), false},
		{"no_legal_moves without status", exchange("POST", "/v1/ai/move", "{}", 422, nil, `{"error":{"code":"no_legal_moves","message":"x"}}`), false},
		{"no_legal_moves with status", exchange("POST", "/v1/ai/move", "{}", 422, nil, `{"error":{"code":"no_legal_moves","message":"x"},"status":"stalemate"}`), true},
		{"illegal_move with status", exchange("POST", "/v1/ai/move", "{}", 422, nil, `{"error":{"code":"illegal_move","message":"x","field":"moves.0"},"status":"stalemate"}`), false},
		{"gateway throttle", exchange("GET", "/v1/health", "", 429, http.Header{"Content-Type": {"application/json"}}, `{"message":"Too Many Requests"}`), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.ValidateResponse(tt.ex)
			if (err == nil) != tt.ok {
				t.Errorf("ValidateResponse = %v; want ok %v", err, tt.ok)
			}
		})
	}
}

func TestValidateRequest(t *testing.T) {
	s := MustLoad(t)
	tests := []struct {
		method, target, body string
		ok                   bool
	}{
		{"POST", "/v1/games/abcdefgh1234/actions", `{"type":"move","payload":{"uci":"e2e4"},"requestId":"m1"}`, true},
		{"POST", "/v1/games/abcdefgh1234/actions", `{"type":"move","payload":{"from":"e2","to":"e4","promotion":"q"}}`, true},
		{"POST", "/v1/games/abcdefgh1234/actions", `{"type":"move","payload":{"uci":"e2e4","san":"e4"}}`, false},
		{"POST", "/v1/games/abcdefgh1234/actions", `{"type":"move"}`, false},
		{"POST", "/v1/games/abcdefgh1234/actions", `{"type":"resign","payload":{"accept":true}}`, false},
		{"POST", "/v1/games/abcdefgh1234/actions", `{"type":"resign","why":"bored"}`, false},
		{"POST", "/v1/games/abcdefgh1234/actions", `{"type":"castle","payload":{"side":"king"},"expectedVersion":3}`, true},
		{"POST", "/v1/games/abcdefgh1234/actions", `{"type":"timeout"}`, false},
		{"POST", "/v1/ai/move", `{"depth":64,"multiPv":5}`, true},
		{"POST", "/v1/ai/move", `{"depth":65}`, false},
		{"POST", "/v1/ai/move", `{"level":"easy","movetimeMs":100}`, false},
		{"POST", "/v1/games", `{"opponent":{"type":"ai"}}`, false},
		{"POST", "/v1/games", `{"opponent":{"type":"human","level":"easy"}}`, false},
		{"POST", "/v1/games", `{"options":{"timeControl":"91+0"}}`, false},
		{"POST", "/v1/games", `{"options":{"timeControl":"90+60","undo":"unlimited"}}`, true},
		{"GET", "/v1/games/abcdefgh1234/events", ``, false}, // afterVersion is required
		{"GET", "/v1/games/abcdefgh1234/events?afterVersion=2", ``, true},
		{"GET", "/v1/games/bad!id", ``, false},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target+" "+tt.body, func(t *testing.T) {
			err := s.ValidateRequest(exchange(tt.method, tt.target, tt.body, 0, nil, ""))
			if (err == nil) != tt.ok {
				t.Errorf("ValidateRequest = %v; want ok %v", err, tt.ok)
			}
		})
	}
}
