package asdeployed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/deploy"
	"chessapi/infra/rie"
	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/store/dynamostore"
)

// wsEvent sends a stream event file (rewritten by edit, when not nil) to the
// stream function and returns the route's answer.
func wsEvent(t *testing.T, f *rie.Function, ev deploy.Event, edit func(*events.APIGatewayWebsocketProxyRequest)) events.APIGatewayProxyResponse {
	t.Helper()
	payload := ev.Raw
	if edit != nil {
		req := *ev.WebSocket
		edit(&req)
		var err error
		if payload, err = json.Marshal(req); err != nil {
			t.Fatal(err)
		}
	}
	res := invoke(t, f, ev.Name, payload)
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(res.Payload, &resp); err != nil || resp.StatusCode == 0 {
		t.Fatalf("%s: payload %s is not a route answer (%v)", ev.Name, res.Payload, err)
	}
	return resp
}

// TestAsDeployedStream plays a game that both seats and a spectator follow
// only through the stream, as deployed: the stream function (WebSocket
// routes) and the fan-out function (the games table's change stream) under
// the emulator, connections in the data table on moto, and a stand-in for
// the @connections endpoint recording who got which version. It covers a
// commit whose writer died before anything was pushed, a reconnect with
// afterVersion, a connection that is gone (410) and presence, and logs the
// AWS requests each step made.
func TestAsDeployedStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	s := newStack(t)
	stream := start(t, streamSpec, s.env(streamSpec))
	fanout := startConsumers(t, s)
	move := start(t, moveSpec, s.env(moveSpec))
	ctx := context.Background()

	white := evs["stream/connect-white.json"].WebSocket.RequestContext.ConnectionID
	black := evs["stream/connect-query-token-black.json"].WebSocket.RequestContext.ConnectionID
	spectator := evs["stream/connect-spectator.json"].WebSocket.RequestContext.ConnectionID
	followers := []string{white, black, spectator}

	// A fresh game, human against human, no moves (version 2).
	st := sampleGame(t, "", time.Now())
	s.put(t, st)
	s.pump(t, fanout)
	s.calls.Take()

	for _, name := range []string{"connect-white.json", "connect-query-token-black.json", "connect-spectator.json"} {
		if resp := wsEvent(t, stream, evs["stream/"+name], nil); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s; want 200", name, resp.StatusCode, resp.Body)
		}
	}
	if resp := wsEvent(t, stream, evs["stream/connect-bad-token.json"], nil); resp.StatusCode != 401 {
		t.Errorf("connect-bad-token: %d %s; want 401 (connection refused)", resp.StatusCode, resp.Body)
	}
	for _, name := range []string{"subscribe-white.json", "subscribe-black.json"} {
		wsEvent(t, stream, evs["stream/"+name], nil)
	}
	// The spectator subscribes from the start (afterVersion 0): the
	// current view, then every version from the log.
	wsEvent(t, stream, evs["stream/subscribe-spectator-after-version.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
		r.Body = fmt.Sprintf(`{"action":"subscribe","gameId":%q,"afterVersion":0}`, deploy.SampleGameID)
	})
	for _, c := range followers {
		got := s.conns.take(c)
		if len(got) == 0 || got[0].Type != "subscribed" || got[0].Version != st.Version {
			t.Fatalf("%s after subscribing: %+v; want subscribed at version %d", c, got, st.Version)
		}
		if c == spectator && (len(got) != 3 || got[1].Version != 1 || got[2].Version != 2) {
			t.Errorf("spectator catch-up: %+v; want versions 1 and 2 as changes", got[1:])
		}
	}
	subscribeCalls := s.calls.Take()
	subscribePosts := s.conns.requests()

	// 1. e4 through the move function; the change stream pushes it.
	resp, _ := invokeHTTP(t, move, "e4", moveEvent(t, evs["move/action-move-from-to.json"], deploy.SampleWhiteToken, "e2e4", "stream-1"))
	if resp.StatusCode != 200 {
		t.Fatalf("e4: %d %s", resp.StatusCode, resp.Body)
	}
	moveCalls := s.calls.Take()
	if n := s.pump(t, fanout); n != 1 {
		t.Fatalf("change stream records after e4 = %d; want 1", n)
	}
	fanoutCalls := s.calls.Take()
	fanoutPosts := s.conns.requests()
	fanoutInvokes := len(s.invokes.take())
	expectVersion(t, s, followers, 3, "e2e4")

	// 1... e5 written by a writer that died right after its write: nothing
	// but the table's change stream ever sees it, and that is enough.
	rec, cur := s.game(t, deploy.SampleGameID)
	next, _, err := game.Reduce(cur, game.Act{By: chess.Black, Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e7e5"}}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	data := storedgame.Encode(next)
	nextRec := rec
	nextRec.Version, nextRec.State = next.Version, data
	if d, ok := game.Deadline(next); ok {
		nextRec.Deadline = d
	}
	if err := s.store.Update(ctx, nextRec, rec.Version); err != nil {
		t.Fatal(err)
	}
	s.pump(t, fanout)
	expectVersion(t, s, followers, 4, "e7e5")

	// The spectator drops and comes back with afterVersion 3: it gets
	// the current view and exactly the version it missed.
	wsEvent(t, stream, evs["stream/unsubscribe-spectator.json"], nil)
	wsEvent(t, stream, evs["stream/subscribe-spectator-after-version.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
		r.Body = fmt.Sprintf(`{"action":"subscribe","gameId":%q,"afterVersion":3}`, deploy.SampleGameID)
	})
	if got := s.conns.take(spectator); len(got) != 2 || got[0].Type != "subscribed" || got[1].Type != "change" || got[1].Version != 4 {
		t.Errorf("spectator back with afterVersion 3: %+v; want subscribed, then the change of version 4", got)
	}

	wsEvent(t, stream, evs["stream/ping.json"], nil)
	if got := s.conns.take(white); len(got) != 1 || got[0].Type != "pong" {
		t.Errorf("ping: %+v; want pong", got)
	}
	wsEvent(t, stream, evs["stream/unknown-action.json"], nil)
	if got := s.conns.take(white); len(got) != 1 || got[0].Type != "error" || got[0].Code != "invalid_field" {
		t.Errorf("unknown action: %+v; want an invalid_field error", got)
	}

	// Black's connection is gone (the phone went away without a close):
	// the first post after the next move removes it, and black's seat is
	// marked disconnected, which is itself a version everyone else sees.
	s.conns.setGone(black)
	resp, _ = invokeHTTP(t, move, "Nf3", moveEvent(t, evs["move/action-move-from-to.json"], deploy.SampleWhiteToken, "g1f3", "stream-3"))
	if resp.StatusCode != 200 {
		t.Fatalf("Nf3: %d %s", resp.StatusCode, resp.Body)
	}
	s.pump(t, fanout)
	if _, err := s.data.Connection(ctx, black); !errors.Is(err, dynamostore.ErrNoConnection) {
		t.Errorf("black's connection after a 410: %v; want it deleted", err)
	}
	s.pump(t, fanout) // the presence change
	if _, cur := s.game(t, deploy.SampleGameID); cur.Seats[chess.Black].Connected {
		t.Error("black's seat is still connected after its only connection was found gone")
	}
	for _, c := range []string{white, spectator} {
		got := s.conns.take(c)
		if len(got) != 2 || got[0].Version != 5 || got[1].Version != 6 {
			t.Errorf("%s after Nf3 and black's disconnect: %+v; want versions 5 and 6", c, got)
		}
	}

	// White closes its connection: its seat is disconnected too.
	wsEvent(t, stream, evs["stream/disconnect-white.json"], nil)
	if _, cur := s.game(t, deploy.SampleGameID); cur.Seats[chess.White].Connected {
		t.Error("white's seat is still connected after $disconnect of its only connection")
	}

	// What one move cost, as measured here (docs/operations.md).
	t.Logf("subscribe of 3 connections: AWS calls %v, posts %d", sorted(subscribeCalls), subscribePosts)
	t.Logf("one move, move function: AWS calls %v", sorted(moveCalls))
	t.Logf("one move, the stream's two consumers (3 subscribers): AWS calls %v, posts %d, AI invokes %d", sorted(fanoutCalls), fanoutPosts, fanoutInvokes)
	if moveCalls["dynamodb:GetItem"] != 1 || moveCalls["dynamodb:PutItem"] != 1 || len(moveCalls) != 2 {
		t.Errorf("move function calls for one move = %v; want one GetItem and one PutItem (the schedule is the fan-out's)", moveCalls)
	}
	// Lazy timers: black's first move is due after the join's armed
	// first-move timer, which stays: no schedule.
	if fanoutPosts != 3 || fanoutCalls["dynamodb:Query"] != 1 || fanoutCalls["scheduler:CreateSchedule"] != 0 {
		t.Errorf("the stream consumers for one move to 3 subscribers: calls %v, posts %d; want one subscriber query, no schedule, three posts", fanoutCalls, fanoutPosts)
	}
}

// expectVersion checks every follower got exactly the change to version v,
// with the move uci among its events and a view of its own.
func expectVersion(t *testing.T, s *stack, followers []string, v int64, uci string) {
	t.Helper()
	for i, c := range followers {
		got := s.conns.take(c)
		if len(got) != 1 || got[0].Type != "change" || got[0].Version != v || got[0].Game == nil || got[0].Game.Version != v {
			t.Errorf("%s: %+v; want exactly the change of version %d", c, got, v)
			continue
		}
		m := got[0]
		if !slices.ContainsFunc(m.Events, func(e struct {
			Type string `json:"type"`
			UCI  string `json:"uci"`
		}) bool {
			return e.UCI == uci
		}) {
			t.Errorf("%s: events %+v; want the move %s", c, m.Events, uci)
		}
		you := "<nil>"
		if m.Game.You != nil {
			you = *m.Game.You
		}
		wantYou := []string{"white", "black", "<nil>"}[i]
		toMove := (v%2 == 0) == (wantYou == "white") // version 3 is after white's move
		if you != wantYou || (len(m.Game.LegalMoves) > 0) != (toMove && wantYou != "<nil>") {
			t.Errorf("%s: view for %s with %d legal moves; want %s's view, legal moves only for the side to move", c, you, len(m.Game.LegalMoves), wantYou)
		}
	}
}

func sorted(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
