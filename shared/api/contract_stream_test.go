package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"chessapi/internal/apispec"
)

// TestContractStreamMessages runs the local stream on the test service and
// validates every message either way against openapi.yaml's
// StreamClientMessage and StreamServerMessage: subscribed, change, catch-up
// and reset, pong, and errors.
func TestContractStreamMessages(t *testing.T) {
	a := newTestAPI(t)
	spec := apispec.MustLoad(t)
	white, black := a.createHumanGame(nil)
	stream := NewStream(a.svc, StreamOptions{})
	srv := httptest.NewServer(stream)
	t.Cleanup(func() { srv.Close(); stream.Close() })

	// One deadline for the whole conversation, which includes 70 HTTP
	// requests each checked against openapi.yaml: generous, as the
	// machine may be busy.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	ws, _, err := websocket.Dial(ctx, url+"?lang=en", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + white.token}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()

	send := func(msg string) {
		t.Helper()
		if strings.HasPrefix(msg, `{"action"`) && !strings.Contains(msg, "bad") {
			if err := spec.ValidateSchema("StreamClientMessage", []byte(msg)); err != nil {
				t.Errorf("the test's own message breaks openapi.yaml: %v", err)
			}
		}
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// read returns the next message of type wantType (and, when match is
	// set, that it accepts), validating every message on the way: presence
	// changes made by the stream itself may come in between.
	read := func(wantType string, match ...func(map[string]any) bool) map[string]any {
		t.Helper()
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("reading a %s message: %v", wantType, err)
			}
			if err := spec.ValidateSchema("StreamServerMessage", data); err != nil {
				t.Errorf("a stream message breaks openapi.yaml: %v", err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			if m["type"] == wantType && (len(match) == 0 || match[0](m)) {
				return m
			}
		}
	}
	moved := func(uci string) func(map[string]any) bool {
		return func(m map[string]any) bool {
			evs, _ := m["events"].([]any)
			return len(evs) > 0 && evs[0].(map[string]any)["uci"] == uci
		}
	}

	send(`{"action":"subscribe","gameId":"` + white.gameID + `"}`)
	read("subscribed")
	a.move(white, "e2e4").expect(t, 200)
	read("change", moved("e2e4"))
	a.move(black, "e7e5").expect(t, 200)
	read("change", moved("e7e5"))
	send(`{"action":"ping"}`)
	read("pong")
	send(`{"action":"subscribe","gameId":"` + white.gameID + `","afterVersion":2}`)
	m := read("subscribed")
	var missed []string
	for _, c := range m["missed"].([]any) {
		for _, e := range c.(map[string]any)["events"].([]any) {
			missed = append(missed, fmt.Sprint(e.(map[string]any)["uci"]))
		}
	}
	if !slices.Contains(missed, "e2e4") || !slices.Contains(missed, "e7e5") {
		t.Errorf("subscribed after version 2 missed %v; want the events of both moves", m["missed"])
	}
	send(`{"action":"sync","gameId":"` + white.gameID + `"}`)
	if m := read("subscribed"); len(m["missed"].([]any)) != 0 || m["game"] == nil {
		t.Errorf("sync: %v; want the view and no missed events", m)
	}
	send(`{"action":"subscribe","player":"me"}`)
	if m := read("error"); m["code"] != "player_required" {
		t.Errorf("account-wide subscribe with a seat token: %v; want player_required", m)
	}
	send(`{"action":"subscribe","gameId":"nosuchgameatall"}`)
	if m := read("error"); m["code"] != "game_not_found" || m["gameId"] != "nosuchgameatall" {
		t.Errorf("unknown game: %v", m)
	}
	send(`{"action":"bad"}`)
	if m := read("error"); m["code"] != "invalid_field" || m["field"] != "action" || hasHangul(m["message"].(string)) {
		t.Errorf("bad action (English asked): %v", m)
	}
	send(`{"action":"unsubscribe","gameId":"` + white.gameID + `"}`)

	// Past the change log: a reset.
	for i := range 70 {
		a.do("POST", "/v1/games/"+white.gameID+"/presence", black.token, map[string]any{"connected": i%2 == 1}).expect(t, 200)
	}
	send(`{"action":"subscribe","gameId":"` + white.gameID + `","afterVersion":1}`)
	if m := read("subscribed"); m["reset"] != true || m["missed"] != nil {
		t.Errorf("subscribed after a version older than the log: %v; want reset", m)
	}
}
