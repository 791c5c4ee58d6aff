package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Accounts end to end (SPEC §16.2) on the real local server, over HTTP and
// the WebSocket stream.

// send makes a request and returns the status and the raw body (a 204 has
// none).
func (c client) send(method, path, token string, body any) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, data
}

// registered creates a player and returns its id and token.
func (c client) registered(name string) (id, token string) {
	c.t.Helper()
	status, p := c.call("POST", "/v1/players", "", map[string]any{"name": name})
	if status != http.StatusCreated {
		c.t.Fatalf("create player %s: %d %v", name, status, p)
	}
	return p["playerId"].(string), p["token"].(string)
}

// watchStream dials the stream with token and subscribes to gameID.
func (c client) watchStream(token, gameID string) *streamClient {
	c.t.Helper()
	sc := c.stream(token)
	sc.subscribe(gameID)
	return sc
}

// closedWith waits for the server to close the stream and returns the
// close status and reason (the messages before the close are skipped).
func (s *streamClient) closedWith() (websocket.StatusCode, string) {
	s.t.Helper()
	select {
	case err := <-s.ended:
		var ce websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Reason
		}
		return websocket.CloseStatus(err), err.Error()
	case <-time.After(5 * time.Second):
		s.t.Fatal("the stream was not closed within 5 s")
	}
	return 0, ""
}

// TestSessionRevokedWhileStreaming: a second device's session is revoked
// from the first while its stream is open: that stream is closed at once
// (policy violation, "session ended"), the token is 401 on HTTP and on a
// new stream, and the first device's stream goes on.
func TestSessionRevokedWhileStreaming(t *testing.T) {
	c := startLocal(t)
	_, phone := c.registered("Alice")
	status, code := c.call("POST", "/v1/players/me/link-codes", phone, nil)
	if status != http.StatusCreated {
		t.Fatalf("link code: %d %v", status, code)
	}
	status, linked := c.call("POST", "/v1/players/link", "", map[string]any{"code": code["code"]})
	if status != http.StatusOK {
		t.Fatalf("link: %d %v", status, linked)
	}
	tablet := linked["token"].(string)
	status, created := c.call("POST", "/v1/games", phone, nil)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, created)
	}
	gameID := created["gameId"].(string)

	tabletStream, phoneStream := c.watchStream(tablet, gameID), c.watchStream(phone, gameID)

	status, list := c.call("GET", "/v1/players/me/sessions", phone, nil)
	sessions, _ := list["sessions"].([]any)
	if status != http.StatusOK || len(sessions) != 2 {
		t.Fatalf("sessions: %d %v", status, list)
	}
	var tabletSession string
	for _, s := range sessions {
		if m := s.(map[string]any); m["current"] == false {
			tabletSession = m["sessionId"].(string)
		}
	}
	if status, body := c.send("DELETE", "/v1/players/me/sessions/"+tabletSession, phone, nil); status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", status, body)
	}
	if code, reason := tabletStream.closedWith(); code != websocket.StatusPolicyViolation || reason != "session ended" {
		t.Errorf("the revoked session's stream closed with %v %q; want policy violation, session ended", code, reason)
	}
	if status, body := c.send("GET", "/v1/players/me", tablet, nil); status != http.StatusUnauthorized || !strings.Contains(string(body), `"invalid_token"`) {
		t.Errorf("the revoked token on HTTP: %d %s; want 401 invalid_token", status, body)
	}
	again := c.stream(tablet)
	again.send(map[string]any{"action": "subscribe", "gameId": gameID})
	if m := again.expect("error"); m["code"] != "invalid_token" {
		t.Errorf("the revoked token on the stream: %v; want an invalid_token error", m)
	}
	// The phone's stream is untouched: it still gets the game's changes.
	_, bob := c.registered("Bob")
	if status, joined := c.call("POST", "/v1/games/"+gameID+"/join", bob, nil); status != http.StatusOK {
		t.Fatalf("join: %d %v", status, joined)
	}
	if m := phoneStream.expect("change"); !strings.Contains(strings.Join(eventTypes(m), ","), "playerJoined") {
		t.Errorf("the phone's stream after the revocation: %v; want the join", m)
	}
}

// TestAccountDeletionEndToEnd: a player deletes their account with a
// stream open: the stream closes, the token is 401 on HTTP and on the
// stream, a retried DELETE is 204, the opponent's game ended as the rules
// say, and the name is nowhere: views, lists, the lobby, PGNs, the
// profile.
func TestAccountDeletionEndToEnd(t *testing.T) {
	c := startLocal(t)
	aliceID, alice := c.registered("Alice Liddell")
	_, bob := c.registered("Bob")

	// A game in play (both have moved), one waiting in the lobby.
	status, created := c.call("POST", "/v1/games", alice, map[string]any{"options": map[string]any{"colorAssignment": "hostWhite"}})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, created)
	}
	playing := created["gameId"].(string)
	if status, joined := c.call("POST", "/v1/games/"+playing+"/join", bob, nil); status != http.StatusOK {
		t.Fatalf("join: %d %v", status, joined)
	}
	for i, m := range []string{"e2e4", "e7e5"} {
		who := []string{alice, bob}[i]
		if status, out := c.call("POST", "/v1/games/"+playing+"/actions", who, moveBody(m)); status != http.StatusOK {
			t.Fatalf("%s: %d %v", m, status, out)
		}
	}
	status, lobbyGame := c.call("POST", "/v1/games", alice, nil)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, lobbyGame)
	}
	waiting := lobbyGame["gameId"].(string)

	aliceStream := c.watchStream(alice, playing)
	bobStream := c.stream(bob)
	bobStream.subscribe(playing)

	if status, body := c.send("DELETE", "/v1/players/me", alice, nil); status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", status, body)
	}
	if code, reason := aliceStream.closedWith(); code != websocket.StatusPolicyViolation || reason != "session ended" {
		t.Errorf("her stream closed with %v %q; want policy violation, session ended", code, reason)
	}
	if status, body := c.send("DELETE", "/v1/players/me", alice, nil); status != http.StatusNoContent {
		t.Errorf("the DELETE retried: %d %s; want 204", status, body)
	}
	if status, body := c.send("GET", "/v1/players/me", alice, nil); status != http.StatusUnauthorized || !strings.Contains(string(body), `"invalid_token"`) {
		t.Errorf("her token on HTTP: %d %s; want 401 invalid_token", status, body)
	}
	again := c.stream(alice)
	again.send(map[string]any{"action": "subscribe", "gameId": playing})
	if m := again.expect("error"); m["code"] != "invalid_token" {
		t.Errorf("her token on the stream: %v; want invalid_token", m)
	}
	if status, body := c.send("GET", "/v1/players/"+aliceID, "", nil); status != http.StatusNotFound || !strings.Contains(string(body), `"player_not_found"`) {
		t.Errorf("her profile: %d %s; want 404 player_not_found", status, body)
	}

	// Bob saw his game end: she resigned by leaving.
	var ended map[string]any
	for ended == nil {
		if m := bobStream.expect("change"); containsString(eventTypes(m), "gameEnded") {
			ended = m
		}
	}
	status, view := c.call("GET", "/v1/games/"+playing, bob, nil)
	result, _ := gameOf(view)["result"].(map[string]any)
	if status != http.StatusOK || result["reason"] != "resign" || result["winner"] != "black" {
		t.Errorf("Bob's game: %d %v; want black (Bob) the winner by resignation", status, result)
	}
	status, cancelled := c.call("GET", "/v1/games/"+waiting, "", nil)
	if r, _ := gameOf(cancelled)["result"].(map[string]any); status != http.StatusOK || r["reason"] != "cancelled" {
		t.Errorf("her waiting game: %d %v; want cancelled", status, r)
	}

	// Her name is nowhere; the deleted player's label stands in, in the
	// reader's language.
	for _, path := range []string{"/v1/games/" + playing, "/v1/games/" + waiting, "/v1/games/" + playing + "/pgn", "/v1/games/" + waiting + "/pgn",
		"/v1/players/me/games?status=finished", "/v1/lobby?room=free"} {
		status, body := c.send("GET", path, bob, nil)
		if status != http.StatusOK && status != http.StatusForbidden {
			t.Errorf("GET %s: %d %s", path, status, body)
		}
		if strings.Contains(string(body), "Alice") {
			t.Errorf("GET %s still names her: %s", path, body)
		}
	}
	if _, body := c.send("GET", "/v1/games/"+playing, bob, nil); !strings.Contains(string(body), "탈퇴한 사용자") {
		t.Errorf("Bob's view does not show the deleted player's label: %s", body)
	}
	if _, body := c.send("GET", "/v1/games/"+playing+"/pgn", bob, nil); !strings.Contains(string(body), `[White "Deleted player"]`) {
		t.Errorf("the PGN does not name the deleted player neutrally: %s", body)
	}
}

func containsString(list []string, want string) bool {
	for _, s := range list {
		if s == want {
			return true
		}
	}
	return false
}

func moveBody(uci string) map[string]any {
	return map[string]any{"type": "move", "payload": map[string]any{"uci": uci}}
}
