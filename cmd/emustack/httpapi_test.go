package main

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"chessapi/deploy"
)

func TestRouteTableMatchesTemplateRoutes(t *testing.T) {
	routes := newRouteTable(repoSpec(t))
	for _, c := range []struct {
		method, path, pattern, function string
		params                          map[string]string
	}{
		{"GET", "/v1/games/abc", "GET /v1/games/{id}", "ViewFunction", map[string]string{"id": "abc"}},
		{"GET", "/v1/games/abc/events", "GET /v1/games/{id}/events", "ViewFunction", map[string]string{"id": "abc"}},
		{"GET", "/v1/games/abc/poll", "GET /v1/games/{id}/poll", "PollFunction", map[string]string{"id": "abc"}},
		{"POST", "/v1/games/abc/actions", "POST /v1/games/{id}/actions", "MoveFunction", map[string]string{"id": "abc"}},
		{"POST", "/v1/games", "POST /v1/games", "MoveFunction", nil},
		{"POST", "/v1/ai/move", "POST /v1/ai/move", "AiFunction", nil},
		{"GET", "/v1/players/me/games", "GET /v1/players/me/games", "MoveFunction", nil},
		{"PATCH", "/v1/players/me", "PATCH /v1/players/me", "MoveFunction", nil},
	} {
		rt, params, ok := routes.match(c.method, c.path)
		if !ok || rt.Pattern() != c.pattern || rt.Function != c.function || !equalMaps(params, c.params) {
			t.Errorf("%s %s → %q %s %v, %v; want %q %s %v", c.method, c.path, rt.Pattern(), rt.Function, params, ok, c.pattern, c.function, c.params)
		}
	}
	for _, c := range [][2]string{
		{"POST", "/v1/games/abc"},        // the path exists, the method not: 404 (no 405)
		{"DELETE", "/v1/games"},          //
		{"GET", "/v1/games//events"},     // an empty segment is no {id}
		{"GET", "/v1/games/a/b/events"},  // {id} is one segment
		{"GET", "/v1/nothing"},           //
		{"GET", "/v2/games/abc"},         //
		{"POST", "/v1/games/abc/join/x"}, //
	} {
		if rt, _, ok := routes.match(c[0], c[1]); ok {
			t.Errorf("%s %s matched %s; want no route", c[0], c[1], rt.Pattern())
		}
	}
}

func TestRouteTablePrefersLiterals(t *testing.T) {
	routes := newRouteTable(&stackSpec{Routes: []deploy.Route{
		{Method: "GET", Path: "/v1/players/{id}", Function: "ByID"},
		{Method: "GET", Path: "/v1/players/me", Function: "Me"},
	}})
	if rt, params, _ := routes.match("GET", "/v1/players/me"); rt.Function != "Me" || params != nil {
		t.Errorf("/v1/players/me → %s %v; want the literal route", rt.Function, params)
	}
	if rt, params, _ := routes.match("GET", "/v1/players/p1"); rt.Function != "ByID" || params["id"] != "p1" {
		t.Errorf("/v1/players/p1 → %s %v; want {id}", rt.Function, params)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestHTTPEventIsPayload2(t *testing.T) {
	r := httptest.NewRequest("POST", "http://api.local/v1/games/g1/actions?x=1&x=2&lang=en", strings.NewReader(`{"type":"resign"}`))
	r.Header.Add("Authorization", "Bearer st_abc")
	r.Header.Add("X-Multi", "a")
	r.Header.Add("X-Multi", "b")
	r.Header.Add("Cookie", "a=1; b=2")
	r.RemoteAddr = "198.51.100.7:5555"
	rt := route{Route: deploy.Route{Method: "POST", Path: "/v1/games/{id}/actions"}}
	at := time.Date(2026, 11, 29, 14, 1, 3, 0, time.UTC)
	ev := httpEvent(r, rt, map[string]string{"id": "g1"}, []byte(`{"type":"resign"}`), "req-1", at)
	if ev.Version != "2.0" || ev.RouteKey != "POST /v1/games/{id}/actions" || ev.RequestContext.RouteKey != ev.RouteKey {
		t.Errorf("version %q route %q/%q", ev.Version, ev.RouteKey, ev.RequestContext.RouteKey)
	}
	if ev.RawPath != "/v1/games/g1/actions" || ev.RawQueryString != "x=1&x=2&lang=en" || ev.QueryStringParameters["x"] != "1,2" || ev.QueryStringParameters["lang"] != "en" {
		t.Errorf("path %q query %q %v", ev.RawPath, ev.RawQueryString, ev.QueryStringParameters)
	}
	if ev.Headers["authorization"] != "Bearer st_abc" || ev.Headers["x-multi"] != "a,b" || ev.Headers["content-length"] != "17" || ev.Headers["x-forwarded-for"] != "198.51.100.7" {
		t.Errorf("headers %v", ev.Headers)
	}
	if _, ok := ev.Headers["cookie"]; ok || len(ev.Cookies) != 2 || ev.Cookies[1] != "b=2" {
		t.Errorf("cookies %v (headers %v); want them apart", ev.Cookies, ev.Headers)
	}
	if ev.PathParameters["id"] != "g1" || ev.Body != `{"type":"resign"}` || ev.IsBase64Encoded {
		t.Errorf("params %v body %q base64 %v", ev.PathParameters, ev.Body, ev.IsBase64Encoded)
	}
	hc := ev.RequestContext.HTTP
	if hc.Method != "POST" || hc.Path != "/v1/games/g1/actions" || hc.SourceIP != "198.51.100.7" || ev.RequestContext.RequestID != "req-1" ||
		ev.RequestContext.TimeEpoch != at.UnixMilli() || ev.RequestContext.Time != "29/Nov/2026:14:01:03 +0000" || ev.RequestContext.Stage != "$default" {
		t.Errorf("request context %+v", ev.RequestContext)
	}

	binary := []byte{0xff, 0xfe, 0x00}
	ev = httpEvent(httptest.NewRequest("POST", "/v1/positions", nil), rt, nil, binary, "req-2", at)
	if got, err := base64.StdEncoding.DecodeString(ev.Body); !ev.IsBase64Encoded || err != nil || string(got) != string(binary) {
		t.Errorf("binary body: %q base64 %v", ev.Body, ev.IsBase64Encoded)
	}
}

func TestHTTPResponse(t *testing.T) {
	status, header, body, err := httpResponse([]byte(`{"statusCode":201,"headers":{"Content-Type":"application/json","Location":"/v1/games/g"},` +
		`"multiValueHeaders":{"Vary":["Accept-Language","Origin"]},"cookies":["a=1"],"body":"{\"ok\":true}"}`))
	if err != nil || status != 201 || header.Get("Location") != "/v1/games/g" || len(header.Values("Vary")) != 2 ||
		header.Get("Set-Cookie") != "a=1" || string(body) != `{"ok":true}` {
		t.Errorf("got %d %v %q %v", status, header, body, err)
	}
	status, _, body, err = httpResponse([]byte(`{"statusCode":200,"body":"aGk=","isBase64Encoded":true}`))
	if err != nil || status != 200 || string(body) != "hi" {
		t.Errorf("base64: %d %q %v", status, body, err)
	}
	// Data without a statusCode: API Gateway's inferred 200 JSON.
	status, header, body, err = httpResponse([]byte(`{"gameId":"g"}`))
	if err != nil || status != 200 || header.Get("Content-Type") != "application/json" || string(body) != `{"gameId":"g"}` {
		t.Errorf("inferred: %d %v %q %v", status, header, body, err)
	}
	for _, bad := range []string{``, `not json`, `{"statusCode":"x"}`, `{"statusCode":99}`, `{"statusCode":200,"body":"!","isBase64Encoded":true}`} {
		if _, _, _, err := httpResponse([]byte(bad)); err == nil {
			t.Errorf("httpResponse(%q): no error", bad)
		}
	}
}

func FuzzHTTPResponse(f *testing.F) {
	for _, s := range []string{`{"statusCode":200,"body":"x"}`, `{"statusCode":404,"headers":{"a":"b"},"multiValueHeaders":{"a":["c"]}}`,
		`{"x":1}`, `[1]`, `null`, `"s"`, `{"statusCode":200,"body":"aGk=","isBase64Encoded":true}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		status, header, _, err := httpResponse(payload)
		if err != nil {
			return
		}
		if status < 100 || status > 599 || header == nil {
			t.Fatalf("httpResponse(%q) = %d, %v with no error", payload, status, header)
		}
		if !json.Valid(payload) {
			t.Fatalf("httpResponse accepted invalid JSON %q", payload)
		}
	})
}

func TestRouteKeySelection(t *testing.T) {
	a := &wsAPI{routes: map[string]*pool{"$connect": nil, "$disconnect": nil, "$default": nil, "subscribe": nil, "ping": nil}}
	for body, want := range map[string]string{
		`{"action":"subscribe","gameId":"g"}`: "subscribe",
		`{"action":"ping"}`:                   "ping",
		`{"action":"nothing"}`:                "$default",
		`{"action":"$connect"}`:               "$default",
		`{"action":7}`:                        "$default",
		`{"gameId":"g"}`:                      "$default",
		`not json`:                            "$default",
		`["subscribe"]`:                       "$default",
		``:                                    "$default",
	} {
		if got := a.routeKey([]byte(body)); got != want {
			t.Errorf("routeKey(%q) = %q; want %q", body, got, want)
		}
	}
}

func FuzzRouteKey(f *testing.F) {
	a := &wsAPI{routes: map[string]*pool{"$connect": nil, "$disconnect": nil, "$default": nil, "subscribe": nil, "unsubscribe": nil, "ping": nil}}
	for _, s := range []string{`{"action":"subscribe"}`, `{"action":"$default"}`, `{}`, `x`, `{"action":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		key := a.routeKey(body)
		if _, ok := a.routes[key]; !ok {
			t.Fatalf("routeKey(%q) = %q, not a route", body, key)
		}
		if key == "$connect" || key == "$disconnect" {
			t.Fatalf("routeKey(%q) = %q: a message selected a connection route", body, key)
		}
	})
}

func TestGatewayErrors(t *testing.T) {
	h := &httpAPI{routes: newRouteTable(repoSpec(t)), counts: newCounters(func() map[string]int { return nil })}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/nothing", nil))
	if w.Code != http.StatusNotFound || strings.TrimSpace(w.Body.String()) != `{"message":"Not Found"}` {
		t.Errorf("no route: %d %s; want API Gateway's 404", w.Code, w.Body)
	}
	if c := h.counts.take(false); c.Platform["apigw-http:Requests"] != 1 || c.Platform["apigw-http:NoRoute"] != 1 {
		t.Errorf("counts %v", c.Platform)
	}
}

func TestBilledWSMessages(t *testing.T) {
	for n, want := range map[int]int{0: 1, 1: 1, 32 << 10: 1, 32<<10 + 1: 2, 128 << 10: 4} {
		if got := billedWSMessages(n); got != want {
			t.Errorf("billedWSMessages(%d) = %d; want %d", n, got, want)
		}
	}
}
