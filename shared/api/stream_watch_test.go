package api

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"chessapi/shared/push"
)

// TestPlayerTokenWatchesOthersGames (SPEC §15): on the stream, a player
// token on a game where that player holds no seat subscribes as a
// spectator — on both transports, which share the conversation — while a
// player seated in the game subscribes as its seat, a seat token of another
// game is still refused, and over HTTP the same: the player token reads
// the spectators' view, the other game's seat token is 403. The watcher's subscription and its
// end change nobody's presence.
func TestPlayerTokenWatchesOthersGames(t *testing.T) {
	a := newTestAPI(t)
	type client interface {
		send(string)
		untilPong() []map[string]any
	}
	// play makes a game whose white seat is a registered player's, with
	// one move, and returns it with a watcher's player token and a seat
	// token of another game.
	play := func() (gameID, hostToken, watcher, otherSeat string) {
		hostToken = a.newPlayer("Host")
		created := a.do("POST", "/v1/games", hostToken, map[string]any{"opponent": map[string]any{"type": "human"}, "options": map[string]any{"colorAssignment": "hostWhite"}}).expect(t, http.StatusCreated)
		gameID = created.json["gameId"].(string)
		a.do("POST", "/v1/games/"+gameID+"/join", "", map[string]any{"player": map[string]any{"name": "Guest"}}).expect(t, http.StatusOK)
		a.move(seat{gameID: gameID, token: hostToken}, "e2e4").expect(t, http.StatusOK)
		other, _ := a.createHumanGame(nil)
		return gameID, hostToken, a.newPlayer("Watcher"), other.token
	}
	version := func(gameID string) float64 {
		return a.do("GET", "/v1/games/"+gameID, "", nil).expect(t, http.StatusOK).game()["version"].(float64)
	}
	check := func(t *testing.T, gameID, hostToken, watcher, otherSeat string, host, watching, stranger client) {
		sub := `{"action":"subscribe","gameId":"` + gameID + `"}`
		host.send(sub)
		if got := host.untilPong(); len(got) != 1 || got[0]["type"] != MsgSubscribed || got[0]["game"].(map[string]any)["you"] != "white" {
			t.Fatalf("the seated player's subscribe: %v; want subscribed as white", got)
		}
		before := version(gameID)
		watching.send(sub)
		got := watching.untilPong()
		if len(got) != 1 || got[0]["type"] != MsgSubscribed {
			t.Fatalf("a player with no seat subscribing: %v; want subscribed", got)
		}
		view := got[0]["game"].(map[string]any)
		if view["you"] != nil || view["legalMoves"] != nil || float64Of(got[0]["version"]) != before {
			t.Errorf("the watcher's view: you %v, legalMoves %v, version %v; want a spectator's at version %v", view["you"], view["legalMoves"], got[0]["version"], before)
		}
		watching.send(`{"action":"sync","gameId":"` + gameID + `"}`)
		if got := watching.untilPong(); len(got) != 1 || got[0]["type"] != MsgSubscribed || got[0]["game"].(map[string]any)["you"] != nil {
			t.Errorf("the watcher's sync: %v; want a spectator's view", got)
		}
		watching.send(`{"action":"unsubscribe","gameId":"` + gameID + `"}`)
		watching.untilPong()
		if v := version(gameID); v != before {
			t.Errorf("the watcher's subscription and its end made versions %v..%v; want none", before, v)
		}
		stranger.send(sub)
		if got := stranger.untilPong(); len(got) != 1 || got[0]["code"] != "forbidden" {
			t.Errorf("a seat token of another game subscribing: %v; want forbidden", got)
		}
		// Over HTTP the same: the spectators' view.
		if got := a.do("GET", "/v1/games/"+gameID, watcher, nil).expect(t, http.StatusOK).game(); got["you"] != nil || got["legalMoves"] != nil {
			t.Errorf("GET with the watcher's player token: you %v, legalMoves %v; want a spectator's view", got["you"], got["legalMoves"])
		}
		a.do("GET", "/v1/games/"+gameID, otherSeat, nil).expect(t, http.StatusForbidden)
	}

	t.Run("local", func(t *testing.T) {
		stream := NewStream(a.svc, StreamOptions{})
		srv := httptest.NewServer(stream)
		t.Cleanup(func() { srv.Close(); stream.Close() })
		gameID, hostToken, watcher, other := play()
		check(t, gameID, hostToken, watcher, other, dialLocal(t, srv, hostToken), dialLocal(t, srv, watcher), dialLocal(t, srv, other))
	})
	t.Run("gateway", func(t *testing.T) {
		conns := &memoryConnections{conns: map[string]push.Connection{}, subs: map[string]map[string]push.Subscription{}}
		post := &postRecorder{got: map[string][]map[string]any{}}
		gs := NewGatewayStream(a.svc, conns, post, nil)
		gameID, hostToken, watcher, other := play()
		clients := map[string]client{}
		for _, c := range []struct{ id, token string }{{"host", hostToken}, {"watcher", watcher}, {"stranger", other}} {
			if err := gs.Connect(t.Context(), GatewayConnect{ConnID: c.id, Authorization: "Bearer " + c.token, QueryLang: "en"}); err != nil {
				t.Fatal(err)
			}
			clients[c.id] = &gatewayClient{t: t, gs: gs, id: c.id, post: post}
		}
		check(t, gameID, hostToken, watcher, other, clients["host"], clients["watcher"], clients["stranger"])
		subs, err := conns.Subscribers(t.Context(), gameID)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(subs, func(s push.Subscription) bool { return s.ConnID == "host" && s.Seat == "white" }) {
			t.Errorf("the host's subscription: %+v; want one as white", subs)
		}
	})
}

func float64Of(v any) float64 { f, _ := v.(float64); return f }
