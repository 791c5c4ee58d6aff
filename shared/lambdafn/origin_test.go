package lambdafn

import (
	"context"
	"maps"
	"strings"
	"testing"

	"chessapi/shared/service"
)

const testOriginSecret = "edge-secret-0123456789abcdefghijklmn"

// TestEdgeHeaderRequired: with ORIGIN_VERIFY_SECRET set, an HTTP request
// or a WebSocket $connect without the edge's header (or with another
// value) is refused 403 before anything else runs, in the request's
// language; with it, it is served. Without the secret nothing is checked.
func TestEdgeHeaderRequired(t *testing.T) {
	f := newFixture(t, "")
	evs := loadEvents(t)
	move, err := NewApp(Config{Function: Move, OriginVerifySecret: testOriginSecret}, Deps{Config: service.Config{Store: f.store, Now: f.clock.Now}})
	if err != nil {
		t.Fatal(err)
	}
	health := httpRequest(t, evs["move/health.json"])
	for _, tc := range []struct {
		name   string
		header string
		want   int
	}{
		{"no header", "", 403},
		{"another value", "edge-secret-0123456789abcdefghijklmX", 403},
		{"the edge's", testOriginSecret, 200},
	} {
		ev := health
		ev.Headers = maps.Clone(health.Headers)
		ev.Headers["accept-language"] = "en"
		if tc.header != "" {
			ev.Headers["X-Origin-Verify"] = tc.header // any case, as API Gateway passes it
		}
		resp, err := move.HandleHTTP(context.Background(), ev)
		if err != nil || resp.StatusCode != tc.want {
			t.Errorf("%s: %d %s, %v; want %d", tc.name, resp.StatusCode, resp.Body, err, tc.want)
		}
		if tc.want == 403 && (!strings.Contains(resp.Body, `"code":"forbidden"`) || resp.Headers["Content-Language"] != "en") {
			t.Errorf("%s: %s %v; want the forbidden error, in English", tc.name, resp.Body, resp.Headers)
		}
	}
	if resp, err := f.move.HandleHTTP(context.Background(), health); err != nil || resp.StatusCode != 200 {
		t.Errorf("without a secret: %d, %v; want 200 (nothing checked)", resp.StatusCode, err)
	}

	stream, err := NewApp(Config{Function: Stream, OriginVerifySecret: testOriginSecret},
		Deps{Config: service.Config{Store: f.store, Now: f.clock.Now}, Connections: noConnections{}, NewPoster: newRecordingPoster().poster})
	if err != nil {
		t.Fatal(err)
	}
	connect := *evs["stream/connect-white.json"].WebSocket
	resp, err := stream.HandleWebSocket(context.Background(), connect)
	if err != nil || resp.StatusCode != 403 || !strings.Contains(resp.Body, "forbidden") {
		t.Errorf("$connect around the edge: %d %s, %v; want 403 forbidden (the connection refused)", resp.StatusCode, resp.Body, err)
	}
}

func TestOriginVerifySecretConfig(t *testing.T) {
	for _, tc := range []struct {
		value string
		ok    bool
	}{{"", true}, {testOriginSecret, true}, {"short", false}, {" " + testOriginSecret, false}} {
		_, err := LoadConfig(Move, envWith(dataTable(map[string]string{"ORIGIN_VERIFY_SECRET": tc.value})))
		if (err == nil) != tc.ok {
			t.Errorf("ORIGIN_VERIFY_SECRET=%q: %v; want ok=%v", tc.value, err, tc.ok)
		}
	}
}
