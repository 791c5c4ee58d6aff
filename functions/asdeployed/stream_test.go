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
	"chessapi/shared/api/streamtest"
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

// asFollowers applies what was posted to each follower's connection (as
// an app does, api/streamtest) and returns the posts.
func asFollowers(t *testing.T, s *stack, followers map[string]*streamtest.Follower) map[string][]streamMessage {
	t.Helper()
	out := map[string][]streamMessage{}
	for conn, f := range followers {
		for _, m := range s.conns.take(conn) {
			if err := f.Apply(m.Raw); err != nil {
				t.Fatalf("%s: %v", conn, err)
			}
			out[conn] = append(out[conn], m)
		}
	}
	return out
}

// viewOf is GET /v1/games/{id} through the move function as a client with
// token (or none) reading lang.
func viewOf(t *testing.T, move *rie.Function, base deploy.Event, gameID, token, lang string) map[string]any {
	t.Helper()
	payload := playerRequest(t, base, "GET", "/v1/games/"+gameID, token, nil)
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		t.Fatal(err)
	}
	req.Headers["accept-language"] = lang
	payload, _ = json.Marshal(req)
	resp, _ := invokeHTTP(t, move, "view", payload)
	var a struct {
		Game map[string]any `json:"game"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &a); err != nil || resp.StatusCode != 200 {
		t.Fatalf("view of %s: %d %s", gameID, resp.StatusCode, resp.Body)
	}
	return a.Game
}

// TestAsDeployedStream plays a game that both seats and a spectator follow
// only through the stream, as deployed: the stream function (WebSocket
// routes) and the fan-out function (the games table's change stream) under
// the emulator, connections in the data table on moto, and a stand-in for
// the @connections endpoint recording who got which message. Each follower
// builds its view from the deltas as an app does, and after every step it
// equals what GET /v1/games/{id} answers it. It covers a commit whose
// writer died before anything was pushed, a reconnect with afterVersion, a
// connection that is gone (410) and presence, and logs the AWS requests
// each step made.
func TestAsDeployedStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	s := newStack(t)
	stream := start(t, streamSpec, s.env(streamSpec))
	fanout := start(t, fanoutSpec, s.env(fanoutSpec))
	move := start(t, moveSpec, s.env(moveSpec))
	ctx := context.Background()

	white := evs["stream/connect-white.json"].WebSocket.RequestContext.ConnectionID
	black := evs["stream/connect-query-token-black.json"].WebSocket.RequestContext.ConnectionID
	spectator := evs["stream/connect-spectator.json"].WebSocket.RequestContext.ConnectionID
	followers := map[string]*streamtest.Follower{white: streamtest.New(), black: streamtest.New(), spectator: streamtest.New()}
	// Who each connection is, and its language (the events' headers).
	reader := map[string]struct{ token, lang string }{
		white: {deploy.SampleWhiteToken, "en"}, black: {deploy.SampleBlackToken, "ko"}, spectator: {"", "ko"},
	}
	base := evs["move/view-spectator.json"]
	checkViews := func(when string) {
		t.Helper()
		for conn, f := range followers {
			g := f.Game(deploy.SampleGameID)
			if g == nil {
				t.Fatalf("%s: %s follows nothing", when, conn)
			}
			if want := viewOf(t, move, base, deploy.SampleGameID, reader[conn].token, reader[conn].lang); !streamtest.SameAt(g.View, want) {
				t.Fatalf("%s: %s's view from the stream differs from GET: %s", when, conn, streamtest.DiffAt(g.View, want))
			}
		}
	}

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
	// Each seat's subscription connects it: a version each (3, 4).
	for _, name := range []string{"subscribe-white.json", "subscribe-black.json"} {
		wsEvent(t, stream, evs["stream/"+name], nil)
	}
	// The spectator subscribes from the start (afterVersion 0): the whole
	// view, with the events of every version.
	wsEvent(t, stream, evs["stream/subscribe-spectator-after-version.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
		r.Body = fmt.Sprintf(`{"action":"subscribe","gameId":%q,"afterVersion":0}`, deploy.SampleGameID)
	})
	subscribeCalls := s.calls.Take()
	subscribePosts := s.conns.requests()
	got := asFollowers(t, s, followers)
	if m := got[spectator]; len(m) != 1 || m[0].Type != "subscribed" || m[0].Version != 4 || len(m[0].Raw["missed"].([]any)) != 4 {
		t.Fatalf("spectator after subscribing: %+v; want subscribed at version 4 with the 4 versions' events", m)
	}
	if n := s.pump(t, fanout); n != 2 {
		t.Fatalf("change stream records after two seats subscribed = %d; want 2 (each connected)", n)
	}
	asFollowers(t, s, followers)
	checkViews("subscribed")
	s.calls.Take()
	s.conns.requests()

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
	expectChange(t, asFollowers(t, s, followers), 5, "e2e4")
	checkViews("e4")

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
	expectChange(t, asFollowers(t, s, followers), 6, "e7e5")
	checkViews("e5 by a writer that died")

	// The spectator drops and comes back with afterVersion 5: the whole
	// view and exactly the events of the version it missed.
	wsEvent(t, stream, evs["stream/unsubscribe-spectator.json"], nil)
	wsEvent(t, stream, evs["stream/subscribe-spectator-after-version.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
		r.Body = fmt.Sprintf(`{"action":"subscribe","gameId":%q,"afterVersion":5}`, deploy.SampleGameID)
	})
	if m := asFollowers(t, s, followers)[spectator]; len(m) != 1 || m[0].Type != "subscribed" || m[0].Version != 6 || len(m[0].Raw["missed"].([]any)) != 1 {
		t.Errorf("spectator back with afterVersion 5: %+v; want subscribed at 6 with version 6's events", m)
	}
	wsEvent(t, stream, evs["stream/subscribe-spectator-after-version.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
		r.Body = fmt.Sprintf(`{"action":"sync","gameId":%q}`, deploy.SampleGameID)
	})
	if m := asFollowers(t, s, followers)[spectator]; len(m) != 1 || m[0].Type != "subscribed" || len(m[0].Raw["missed"].([]any)) != 0 {
		t.Errorf("sync: %+v; want subscribed with no missed events", m)
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
	// disconnected, which is itself a version everyone else sees.
	s.conns.setGone(black)
	delete(followers, black)
	resp, _ = invokeHTTP(t, move, "Nf3", moveEvent(t, evs["move/action-move-from-to.json"], deploy.SampleWhiteToken, "g1f3", "stream-3"))
	if resp.StatusCode != 200 {
		t.Fatalf("Nf3: %d %s", resp.StatusCode, resp.Body)
	}
	s.pump(t, fanout)
	if _, err := s.data.Connection(ctx, black); !errors.Is(err, dynamostore.ErrNoConnection) {
		t.Errorf("black's connection after a 410: %v; want it deleted", err)
	}
	s.pump(t, fanout) // the presence change
	if _, cur := s.game(t, deploy.SampleGameID); cur.Seats[chess.Black].Connected || cur.Seats[chess.Black].DisconnectedAt == 0 {
		t.Error("black's seat is still connected after its only connection was found gone")
	}
	for c, m := range asFollowers(t, s, followers) {
		if len(m) != 2 || m[0].Version != 7 || m[1].Version != 8 {
			t.Errorf("%s after Nf3 and black's disconnect: %+v; want versions 7 and 8", c, m)
		}
	}
	checkViews("black gone")

	// White closes its connection: its seat is disconnected too.
	wsEvent(t, stream, evs["stream/disconnect-white.json"], nil)
	if _, cur := s.game(t, deploy.SampleGameID); cur.Seats[chess.White].Connected {
		t.Error("white's seat is still connected after $disconnect of its only connection")
	}

	// What one move cost, as measured here (docs/operations.md).
	t.Logf("subscribe of 3 connections (2 seats connected): AWS calls %v, posts %d", sorted(subscribeCalls), subscribePosts)
	t.Logf("one move, move function: AWS calls %v", sorted(moveCalls))
	t.Logf("one move, fan-out to 3 subscribers: AWS calls %v, posts %d, AI invokes %d", sorted(fanoutCalls), fanoutPosts, fanoutInvokes)
	if moveCalls["dynamodb:GetItem"] != 1 || moveCalls["dynamodb:PutItem"] != 1 || len(moveCalls) != 2 {
		t.Errorf("move function calls for one move = %v; want one GetItem and one PutItem (the schedule is the fan-out's)", moveCalls)
	}
	if fanoutPosts != 3 || fanoutCalls["dynamodb:Query"] != 1 || fanoutCalls["scheduler:CreateSchedule"] != 1 {
		t.Errorf("fan-out of one move to 3 subscribers: calls %v, posts %d; want one subscriber query, one schedule, three posts", fanoutCalls, fanoutPosts)
	}
}

// expectChange checks every follower got exactly the change to version v,
// with the move uci among its events and a delta with the move.
func expectChange(t *testing.T, got map[string][]streamMessage, v int64, uci string) {
	t.Helper()
	for c, msgs := range got {
		if len(msgs) != 1 || msgs[0].Type != "change" || msgs[0].Version != v {
			t.Errorf("%s: %+v; want exactly the change of version %d", c, msgs, v)
			continue
		}
		m := msgs[0]
		if !slices.ContainsFunc(m.Events, func(e struct {
			Type string `json:"type"`
			UCI  string `json:"uci"`
		}) bool {
			return e.UCI == uci
		}) {
			t.Errorf("%s: events %+v; want the move %s", c, m.Events, uci)
		}
		d, _ := m.Raw["delta"].(map[string]any)
		if mv, _ := d["move"].(map[string]any); mv["uci"] != uci {
			t.Errorf("%s: delta %v; want the move %s", c, d, uci)
		}
	}
}

// TestAsDeployedStreamLongGame: 300 plies of the long game, followed from
// the start through the API Gateway transport by both seats and a
// spectator, and by White's account (a player token, {"player":"me"}):
// every post to @connections stays under the 32 KB frame of API Gateway's
// WebSocket quota, each follower's view equals its GET view at the end,
// and the account got a yourTurn for each of Black's moves and one
// gameEnded.
func TestAsDeployedStreamLongGame(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	script, err := streamtest.LongGame()
	if err != nil {
		t.Fatal(err)
	}
	evs := loadEvents(t)
	s := newStack(t)
	stream := start(t, streamSpec, s.env(streamSpec))
	fanout := start(t, fanoutSpec, s.env(fanoutSpec))
	move := start(t, moveSpec, s.env(moveSpec))
	base := evs["move/view-spectator.json"]

	player := callMove(t, move, base, "POST", "/v1/players", "", map[string]any{"name": "지우"}, 201)
	playerToken := player["token"].(string)
	created := callMove(t, move, base, "POST", "/v1/games", playerToken, map[string]any{"options": map[string]any{"colorAssignment": "hostWhite"}}, 201)
	id := created["gameId"].(string)
	joined := callMove(t, move, base, "POST", "/v1/games/"+id+"/join", "", map[string]any{}, 200)
	tokens := map[string]string{"w": created["token"].(string), "b": joined["token"].(string)}
	s.pump(t, fanout)

	type conn struct{ id, token, lang string }
	conns := []conn{{"lg-white", playerToken, "ko"}, {"lg-black", tokens["b"], "en"}, {"lg-spectator", "", "en"}}
	followers := map[string]*streamtest.Follower{}
	for _, c := range conns {
		connectAs(t, stream, evs, c.id, c.token, c.lang)
		sendAs(t, stream, evs, c.id, fmt.Sprintf(`{"action":"subscribe","gameId":%q}`, id))
		followers[c.id] = streamtest.New()
	}
	connectAs(t, stream, evs, "lg-account", playerToken, "ko")
	sendAs(t, stream, evs, "lg-account", `{"action":"subscribe","player":"me"}`)
	largest, posts := 0, 0
	var kinds []string
	drain := func() {
		s.pump(t, fanout)
		for _, c := range conns {
			for _, m := range s.conns.take(c.id) {
				posts++
				largest = max(largest, m.Bytes)
				if m.Bytes > 32<<10 {
					t.Errorf("a post of %d bytes to %s (%s version %d): over API Gateway's 32 KB frame", m.Bytes, c.id, m.Type, m.Version)
				}
				if err := followers[c.id].Apply(m.Raw); err != nil {
					t.Fatalf("%s: %v", c.id, err)
				}
			}
		}
		for _, m := range s.conns.take("lg-account") {
			if m.Type == "playerEvent" {
				kinds = append(kinds, m.Raw["kind"].(string))
			} else if m.Type != "subscribed" {
				t.Errorf("account connection got %+v", m)
			}
		}
	}
	drain()
	plies, blackMoves := 0, 0
	for _, l := range script {
		if plies >= 300 {
			break
		}
		body, presence := l.Body()
		path := "/v1/games/" + id + "/actions"
		if presence {
			path = "/v1/games/" + id + "/presence"
		}
		callMove(t, move, base, "POST", path, tokens[l.Seat], body, 200)
		if l.Verb == "move" {
			plies++
			if l.Seat == "b" {
				blackMoves++
			}
		}
		drain()
	}
	callMove(t, move, base, "POST", "/v1/games/"+id+"/actions", tokens["b"], map[string]any{"type": "resign"}, 200)
	drain()
	for _, c := range conns {
		if got, want := followers[c.id].Game(id).View, viewOf(t, move, base, id, c.token, c.lang); !streamtest.SameAt(got, want) {
			t.Errorf("%s after %d plies: the view from the stream differs from GET: %s", c.id, plies, streamtest.DiffAt(got, want))
		}
	}
	yourTurns, ended := 0, 0
	for _, k := range kinds {
		switch k {
		case "yourTurn":
			yourTurns++
		case "gameEnded":
			ended++
		}
	}
	// A take-back gives the move back to the one who made it: a yourTurn
	// counts the opponent's moves that stood when they were made.
	if yourTurns < blackMoves-10 || yourTurns > blackMoves || ended != 1 {
		t.Errorf("account events: %d yourTurn for %d moves of Black, %d gameEnded; want one per move, one end", yourTurns, blackMoves, ended)
	}
	t.Logf("%d plies: %d posts to the game's followers, the largest %d bytes", plies, posts, largest)
}

// connectAs opens a stream connection id with token (none: a spectator)
// and language, as $connect does.
func connectAs(t *testing.T, stream *rie.Function, evs map[string]deploy.Event, id, token, lang string) {
	t.Helper()
	resp := wsEvent(t, stream, evs["stream/connect-spectator.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
		r.RequestContext.ConnectionID = id
		r.Headers = map[string]string{"Accept-Language": lang}
		r.MultiValueHeaders = nil
		if token != "" {
			r.Headers["Authorization"] = "Bearer " + token
		}
	})
	if resp.StatusCode != 200 {
		t.Fatalf("connect %s: %d %s", id, resp.StatusCode, resp.Body)
	}
}

// sendAs sends a client message on connection id.
func sendAs(t *testing.T, stream *rie.Function, evs map[string]deploy.Event, id, body string) {
	t.Helper()
	wsEvent(t, stream, evs["stream/ping.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
		r.RequestContext.ConnectionID = id
		r.Body = body
	})
}

func sorted(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
