package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"chessapi/shared/push"
	"chessapi/shared/service"
)

// closingPoster is the gateway test's poster that also closes connections
// (the @connections DELETE), recording which.
type closingPoster struct {
	*postRecorder
	mu     sync.Mutex
	closed []string
}

func (p *closingPoster) Close(_ context.Context, connID string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = append(p.closed, connID)
	return nil
}

// TestSessionEndTakesItsSeatOff (SPEC §16.1, §16.2): a session revoked
// while its connection is the only stream of its player's seat closes
// that connection, and the seat goes off like any last connection's seat
// (connected false, its disconnect grace running) although the revoked
// token authenticates nobody any more — on the local transport (the
// socket closed at once) and through API Gateway (the records gone, the
// socket closed by the management API's DELETE).
func TestSessionEndTakesItsSeatOff(t *testing.T) {
	// setUp makes a player with two sessions (a phone and a linked
	// tablet) whose white seat's game is in play, and returns the game,
	// the phone's token, the tablet's token and session id.
	setUp := func(a *testAPI) (gameID, phone, tablet, tabletSession string) {
		phone = a.newPlayer("Alice")
		code := a.do("POST", "/v1/players/me/link-codes", phone, map[string]any{}).expect(t, http.StatusCreated).json["code"]
		linked := a.do("POST", "/v1/players/link", "", map[string]any{"code": code}).expect(t, http.StatusOK)
		tablet, tabletSession = linked.json["token"].(string), linked.json["sessionId"].(string)
		created := a.do("POST", "/v1/games", phone, map[string]any{"opponent": map[string]any{"type": "human"}, "options": map[string]any{"colorAssignment": "hostWhite"}}).expect(t, http.StatusCreated)
		gameID = created.json["gameId"].(string)
		a.do("POST", "/v1/games/"+gameID+"/join", "", map[string]any{"player": map[string]any{"name": "Bob"}}).expect(t, http.StatusOK)
		return gameID, phone, tablet, tabletSession
	}
	presence := func(a *testAPI, gameID string) map[string]any {
		players := a.do("GET", "/v1/games/"+gameID, "", nil).expect(t, http.StatusOK).game()["players"].(map[string]any)
		return players["white"].(map[string]any)["presence"].(map[string]any)
	}
	off := func(p map[string]any) bool { return p["connected"] == false && p["since"] != nil }

	t.Run("local", func(t *testing.T) {
		a := newTestAPI(t)
		stream := NewStream(a.svc, StreamOptions{})
		a.svc.OnSessionsEnded(stream.CloseSessions)
		srv := httptest.NewServer(stream)
		t.Cleanup(func() { srv.Close(); stream.Close() })
		gameID, phone, tablet, tabletSession := setUp(a)
		c := dialLocal(t, srv, tablet)
		c.send(`{"action":"subscribe","gameId":"` + gameID + `"}`)
		c.untilPong()
		if p := presence(a, gameID); p["connected"] != true {
			t.Fatalf("white streaming from the tablet: %v; want connected", p)
		}
		a.do("DELETE", "/v1/players/me/sessions/"+tabletSession, phone, nil).expect(t, http.StatusNoContent)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		for {
			if _, _, err := c.ws.Read(ctx); err != nil {
				if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
					t.Errorf("the tablet's stream ended with %v; want a policy violation close", err)
				}
				break
			}
		}
		// The presence rule runs off the connection's goroutine.
		deadline := time.Now().Add(10 * time.Second)
		for p := presence(a, gameID); !off(p); p = presence(a, gameID) {
			if time.Now().After(deadline) {
				t.Fatalf("white after its only stream's session was revoked: %v; want off, its grace running", p)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})

	t.Run("gateway", func(t *testing.T) {
		a := newTestAPI(t)
		conns := &memoryConnections{conns: map[string]push.Connection{}, subs: map[string]map[string]push.Subscription{}}
		post := &closingPoster{postRecorder: &postRecorder{got: map[string][]map[string]any{}}}
		gs := NewGatewayStream(a.svc, conns, post, nil)
		// What the HTTP functions do on AWS (lambdafn): the connections
		// made with an ended session's token are ended.
		a.svc.OnSessionsEnded(func(ctx context.Context, ended []service.Session) error {
			for _, sess := range ended {
				conns.mu.Lock()
				var ids []string
				for id, c := range conns.conns {
					if c.TokenHash == sess.TokenHash {
						ids = append(ids, id)
					}
				}
				conns.mu.Unlock()
				for _, id := range ids {
					if err := gs.EndConnection(ctx, id); err != nil {
						return err
					}
				}
			}
			return nil
		})
		gameID, phone, tablet, tabletSession := setUp(a)
		if err := gs.Connect(t.Context(), GatewayConnect{ConnID: "tablet", Authorization: "Bearer " + tablet, QueryLang: "en"}); err != nil {
			t.Fatal(err)
		}
		c := &gatewayClient{t: t, gs: gs, id: "tablet", post: post.postRecorder}
		c.send(`{"action":"subscribe","gameId":"` + gameID + `"}`)
		c.untilPong()
		if p := presence(a, gameID); p["connected"] != true {
			t.Fatalf("white streaming from the tablet: %v; want connected", p)
		}
		a.do("DELETE", "/v1/players/me/sessions/"+tabletSession, phone, nil).expect(t, http.StatusNoContent)
		if p := presence(a, gameID); !off(p) {
			t.Errorf("white after its only stream's session was revoked: %v; want off, its grace running", p)
		}
		if len(post.closed) != 1 || post.closed[0] != "tablet" {
			t.Errorf("connections closed through the management API: %v; want the tablet's", post.closed)
		}
		if _, err := conns.Connection(t.Context(), "tablet"); err != push.ErrNoConnection {
			t.Errorf("the tablet's connection record: %v; want gone", err)
		}
		// The $disconnect API Gateway runs afterwards finds nothing left.
		if err := gs.Disconnect(t.Context(), "tablet"); err != nil {
			t.Errorf("the later $disconnect: %v", err)
		}
	})
}
