package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// callJSON makes a request of the emulated stack and returns its JSON
// answer (nothing for a 204).
func (c client) callJSON(method, path, token string, body any, want int) map[string]any {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		c.t.Fatalf("%s %s: %d %s; want %d", method, path, res.StatusCode, data, want)
	}
	out := map[string]any{}
	if len(data) > 0 {
		json.Unmarshal(data, &out)
	}
	return out
}

// TestEmustackSessionEnd: on the emulated stack, with real WebSocket
// clients, a session revoked while its socket follows the player's game
// has that socket closed by the server (the move function's DELETE
// @connections, under the template's grants), its seat marked
// disconnected; the other session's socket stays open.
func TestEmustackSessionEnd(t *testing.T) {
	st := startTestStack(t)
	c := client{t: t, base: st.URL}
	phone := c.callJSON("POST", "/v1/players", "", map[string]any{"name": "Alice"}, 201)["token"].(string)
	code := c.callJSON("POST", "/v1/players/me/link-codes", phone, map[string]any{}, 201)["code"]
	linked := c.callJSON("POST", "/v1/players/link", "", map[string]any{"code": code}, 200)
	tablet, tabletSession := linked["token"].(string), linked["sessionId"].(string)
	gameID := c.callJSON("POST", "/v1/games", phone, map[string]any{"options": map[string]any{"colorAssignment": "hostWhite"}}, 201)["gameId"].(string)
	c.callJSON("POST", "/v1/games/"+gameID+"/join", "", map[string]any{"player": map[string]any{"name": "Bob"}}, 200)

	ctx := context.Background()
	wsURL := "ws" + strings.TrimPrefix(st.URL, "http") + "/v1/stream"
	dial := func(token string) *websocket.Conn {
		t.Helper()
		ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		ws.SetReadLimit(1 << 20)
		return ws
	}
	send := func(ws *websocket.Conn, msg string) {
		t.Helper()
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	tabletWS, phoneWS := dial(tablet), dial(phone)
	send(tabletWS, `{"action":"subscribe","gameId":"`+gameID+`"}`)
	for m := readWS(t, tabletWS); m.Type != "subscribed"; m = readWS(t, tabletWS) {
	}
	presence := func() map[string]any {
		t.Helper()
		g := c.callJSON("GET", "/v1/games/"+gameID, "", nil, 200)["game"].(map[string]any)
		return g["players"].(map[string]any)["white"].(map[string]any)["presence"].(map[string]any)
	}
	if p := presence(); p["connected"] != true {
		t.Fatalf("white followed from the tablet: %v; want connected", p)
	}

	c.callJSON("DELETE", "/v1/players/me/sessions/"+tabletSession, phone, nil, 204)
	readCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		if _, _, err := tabletWS.Read(readCtx); err != nil {
			if readCtx.Err() != nil {
				t.Fatalf("the revoked session's socket was not closed within 20 s")
			}
			break // closed by the server
		}
	}
	if p := presence(); p["connected"] != false || p["since"] == nil {
		t.Errorf("white after its only stream's session was revoked: %v; want disconnected, its grace running", p)
	}
	send(phoneWS, `{"action":"ping"}`)
	if m := readWS(t, phoneWS); m.Type != "pong" {
		t.Errorf("the other session's socket after the revocation: %+v; want pong", m)
	}
	counts := c.counts()
	if n := counts.AWSCalls["execute-api:DeleteConnection"]; n != 1 {
		t.Errorf("@connections DELETE calls: %d; want 1 (the revoked session's socket)", n)
	}
}
