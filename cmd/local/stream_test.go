package main

import (
	"bufio"
	"chessapi/internal/fakeclock"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"chessapi/shared/api"
	"chessapi/shared/api/streamtest"
)

// End-to-end tests of the local stream (/v1/stream) with real WebSocket
// clients against the real local server.

// startLocal runs the local server on a free port until the test ends.
func startLocal(t *testing.T, mutate ...func(*config)) client {
	t.Helper()
	cfg := config{addr: "127.0.0.1:0", dataPath: filepath.Join(t.TempDir(), "chess.db"), engines: 1, hashMB: 1}
	for _, m := range mutate {
		m(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.DiscardHandler), ready) }()
	t.Cleanup(func() { cancel(); <-done })
	return client{t: t, base: "http://" + <-ready}
}

// streamClient is one WebSocket connection with a reader goroutine, and
// the follower that applies what it reads as an app would
// (api/streamtest).
type streamClient struct {
	t      testing.TB
	ws     *websocket.Conn
	msgs   chan map[string]any
	follow *streamtest.Follower
	// sizes are the bytes of each message read, by type.
	sizes map[string][]int
	// ended receives the error that ended the reader (the close).
	ended chan error
}

func (c client) dialStream(token string, query string) (*streamClient, *http.Response, error) {
	c.t.Helper()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}, CompressionMode: websocket.CompressionNoContextTakeover}
	if token != "" {
		opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	}
	u := "ws" + strings.TrimPrefix(c.base, "http") + "/v1/stream" + query
	ws, resp, err := websocket.Dial(context.Background(), u, opts)
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(1 << 20)
	sc := &streamClient{t: c.t, ws: ws, msgs: make(chan map[string]any, 4096), follow: streamtest.New(), sizes: map[string][]int{}, ended: make(chan error, 1)}
	go func() {
		defer close(sc.msgs)
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				sc.ended <- err
				return
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				c.t.Errorf("stream message is not JSON: %q", data)
				return
			}
			m["_bytes"] = float64(len(data))
			sc.msgs <- m
		}
	}()
	c.t.Cleanup(func() { ws.Close(websocket.StatusNormalClosure, "") })
	return sc, resp, nil
}

func (c client) stream(token string, query ...string) *streamClient {
	c.t.Helper()
	sc, _, err := c.dialStream(token, strings.Join(query, ""))
	if err != nil {
		c.t.Fatalf("dial stream: %v", err)
	}
	return sc
}

func (s *streamClient) send(v any) {
	s.t.Helper()
	data, _ := json.Marshal(v)
	if err := s.ws.Write(context.Background(), websocket.MessageText, data); err != nil {
		s.t.Fatalf("stream write: %v", err)
	}
}

// next returns the next message (failing after 5 s), applied to the
// follower.
func (s *streamClient) next() map[string]any {
	s.t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			s.t.Fatalf("stream closed")
		}
		size := int(m["_bytes"].(float64))
		delete(m, "_bytes")
		s.sizes[m["type"].(string)] = append(s.sizes[m["type"].(string)], size)
		if err := s.follow.Apply(m); err != nil {
			s.t.Fatal(err)
		}
		return m
	case <-time.After(5 * time.Second):
		s.t.Fatalf("no stream message within 5 s")
	}
	return nil
}

// expect returns the next message, which must have the given type.
func (s *streamClient) expect(typ string) map[string]any {
	s.t.Helper()
	m := s.next()
	if m["type"] != typ {
		s.t.Fatalf("stream message %v; want type %q", m, typ)
	}
	return m
}

// until reads until the followed game is at version v.
func (s *streamClient) until(gameID string, v int64) {
	s.t.Helper()
	for g := s.follow.Game(gameID); g == nil || g.Version < v; g = s.follow.Game(gameID) {
		s.next()
	}
}

func (s *streamClient) subscribe(gameID string, after ...int64) map[string]any {
	s.t.Helper()
	req := map[string]any{"action": "subscribe", "gameId": gameID}
	if len(after) > 0 {
		req["afterVersion"] = after[0]
	}
	s.send(req)
	return s.expect("subscribed")
}

func eventTypes(m map[string]any) []string {
	var out []string
	for _, e := range m["events"].([]any) {
		out = append(out, e.(map[string]any)["type"].(string))
	}
	return out
}

func version(m map[string]any) int64 { return int64(m["version"].(float64)) }

func gameOf(m map[string]any) map[string]any { return m["game"].(map[string]any) }

func deltaOf(m map[string]any) map[string]any { return m["delta"].(map[string]any) }

// view is GET /v1/games/{id} as a client with token (or none) reading lang
// gets it.
func (c client) view(id, token, lang string) map[string]any {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.base+"/v1/games/"+id, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept-Language", lang)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Game map[string]any `json:"game"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
		c.t.Fatalf("GET %s: %d %v", id, res.StatusCode, err)
	}
	return out.Game
}

// A test's service clock moves only when the test says (fakeclock): the
// views a stream client builds and the GET views are then read at the same
// instant, clocks included.

// frozenClock runs the local server on clock.
func frozenClock(cfg *config, clock *fakeclock.Clock) { cfg.now = clock.Now }

func TestStreamDeliversEachSubscriberItsView(t *testing.T) {
	clock := fakeclock.New(time.Now())
	c := startLocal(t, func(cfg *config) { frozenClock(cfg, clock) })
	id, tokens := c.humanGame(map[string]any{"timeControl": "10+5"})
	white, black, spectator := c.stream(tokens["white"]), c.stream(tokens["black"]), c.stream("")
	for _, s := range []*streamClient{white, black, spectator} {
		s.subscribe(id)
	}
	// The seats' own connections made versions (they are connected now).
	cur := version(c.view(id, "", "ko"))
	for _, s := range []*streamClient{white, black, spectator} {
		s.until(id, cur)
	}
	clock.Advance(2 * time.Second)
	if code, _ := c.call("POST", "/v1/games/"+id+"/actions", tokens["white"], map[string]any{"type": "move", "payload": map[string]any{"uci": "e2e4"}}); code != 200 {
		t.Fatalf("e4: %d", code)
	}
	for name, s := range map[string]*streamClient{"white": white, "black": black, "spectator": spectator} {
		m := s.expect("change")
		d := deltaOf(m)
		lm, hasLegal := d["legalMoves"]
		if m["gameId"] != id || version(m) != int64(d["version"].(float64)) || eventTypes(m)[0] != "moved" || d["move"].(map[string]any)["san"] != "e4" {
			t.Errorf("%s: change %v", name, m)
		}
		if _, ok := d["moves"]; ok {
			t.Errorf("%s: the delta carries the move list", name)
		}
		switch name {
		case "black":
			if list, _ := lm.([]any); len(list) != 20 {
				t.Errorf("black, to move: legalMoves %v; want its 20 moves", lm)
			}
		case "white":
			if !hasLegal || lm != nil {
				t.Errorf("white, who moved: legalMoves %v (present %v); want null", lm, hasLegal)
			}
		default:
			if hasLegal {
				t.Errorf("spectator: legalMoves present")
			}
		}
		token := map[string]string{"white": tokens["white"], "black": tokens["black"]}[name]
		if got, want := s.follow.Game(id).View, c.view(id, token, "ko"); !streamtest.Equal(got, want) {
			t.Errorf("%s: the view from deltas differs from GET: %s", name, streamtest.Diff(got, want))
		}
	}
	// A draw offer made and withdrawn between two reads is two changes.
	c.call("POST", "/v1/games/"+id+"/actions", tokens["black"], map[string]any{"type": "offerDraw"})
	c.call("POST", "/v1/games/"+id+"/actions", tokens["black"], map[string]any{"type": "cancelOffer"})
	first, second := spectator.expect("change"), spectator.expect("change")
	if eventTypes(first)[0] != "drawOffered" || eventTypes(second)[0] != "drawOfferCancelled" || version(second) != version(first)+1 {
		t.Errorf("offer then withdrawal: %v then %v; want drawOffered, drawOfferCancelled at consecutive versions", eventTypes(first), eventTypes(second))
	}
	// ping
	spectator.send(map[string]any{"action": "ping"})
	spectator.expect("pong")
}

// TestStreamFollowsALongGameFromDeltas: two seats and two spectators (in
// Korean and English) follow 300 plies of the long game — moves, draw
// offers, take-backs — from deltas only; at every version each one's view
// equals the view GET /v1/games/{id} gives it. A client reconnecting with
// afterVersion at a random version gets the whole view and exactly the
// events it missed, then only newer changes; sync gives the whole view.
// Changes do not grow with the game.
func TestStreamFollowsALongGameFromDeltas(t *testing.T) {
	if testing.Short() {
		t.Skip("300 plies, four followers, a GET per follower and version")
	}
	script, err := streamtest.LongGame()
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	c := startLocal(t, func(cfg *config) { frozenClock(cfg, clock) })
	id, tokens := c.humanGame(map[string]any{"colorAssignment": "hostWhite"})
	type follower struct {
		name, token, lang string
		s                 *streamClient
	}
	followers := []*follower{
		{name: "white (ko)", token: tokens["white"], lang: "ko"},
		{name: "black (en)", token: tokens["black"], lang: "en"},
		{name: "spectator (ko)", lang: "ko"},
		{name: "spectator (en)", lang: "en"},
	}
	for _, f := range followers {
		f.s = c.stream(f.token, "?lang="+f.lang)
		f.s.subscribe(id)
	}
	seat := map[string]string{"w": tokens["white"], "b": tokens["black"]}
	rng := rand.New(rand.NewPCG(21, 300))
	reconnectAt := int64(20 + rng.IntN(200))
	var late *streamClient
	var lateFrom, lateV int64
	check := func(when string) {
		t.Helper()
		cur := version(c.view(id, "", "ko"))
		for _, f := range followers {
			f.s.until(id, cur)
			// An action that made no version (POST presence while the
			// seat's stream is open) leaves the last reading of the clock.
			if got, want := f.s.follow.Game(id).View, c.view(id, f.token, f.lang); !streamtest.SameAt(got, want) {
				t.Fatalf("%s, %s (version %d): the view from deltas differs from GET: %s", when, f.name, cur, streamtest.DiffAt(got, want))
			}
		}
		if late != nil {
			late.until(id, cur)
			if g := late.follow.Game(id); !streamtest.SameAt(g.View, c.view(id, "", "en")) {
				t.Fatalf("%s: the reconnected client's view differs from GET", when)
			}
		}
		if late == nil && cur >= reconnectAt {
			// A client that had version lateFrom connects again.
			lateFrom = cur - 1 - int64(rng.IntN(20))
			late = c.stream("", "?lang=en")
			m := late.subscribe(id, lateFrom)
			lateV = version(m)
			var missed []int64
			for _, mc := range m["missed"].([]any) {
				missed = append(missed, int64(mc.(map[string]any)["version"].(float64)))
			}
			want := followers[2].s.follow.Game(id).Events
			for v := lateFrom + 1; v <= lateV; v++ {
				if len(missed) == 0 || missed[0] != v {
					t.Fatalf("reconnect after %d at %d: missed versions %v; want every one from %d", lateFrom, lateV, missed, lateFrom+1)
				}
				missed = missed[1:]
				if got := late.follow.Game(id).Events[v]; !reflect.DeepEqual(got, want[v]) {
					t.Errorf("missed version %d: events %v; the followers got %v", v, got, want[v])
				}
			}
			if len(missed) != 0 {
				t.Fatalf("missed versions past the view's %d: %v", lateV, missed)
			}
		}
	}
	check("subscribed")
	plies := 0
	for _, l := range script {
		if plies >= 300 {
			break
		}
		clock.Advance(l.Delay)
		body, presence := l.Body()
		path := "/v1/games/" + id + "/actions"
		if presence {
			path = "/v1/games/" + id + "/presence"
		}
		code, resp := c.call("POST", path, seat[l.Seat], body)
		if code != 200 {
			t.Fatalf("%s %s %s: %d %v", l.Seat, l.Verb, l.Arg, code, resp)
		}
		if l.Verb == "move" {
			plies++
		}
		check(fmt.Sprintf("after %s %s %s (ply %d)", l.Seat, l.Verb, l.Arg, plies))
	}
	// The reconnected client got only versions after its view, once each.
	if g := late.follow.Game(id); g.Ignored != 0 || g.Subscribed != 1 {
		t.Errorf("reconnected client: %d versions ignored, %d whole views; want none again, one", g.Ignored, g.Subscribed)
	}
	// sync: the whole view again.
	sp := followers[3].s
	sp.send(map[string]any{"action": "sync", "gameId": id})
	m := sp.expect("subscribed")
	if len(m["missed"].([]any)) != 0 || !streamtest.Equal(gameOf(m), c.view(id, "", "en")) {
		t.Errorf("sync: missed %v, %s", m["missed"], streamtest.Diff(gameOf(m), c.view(id, "", "en")))
	}
	// Changes do not grow with the game: the largest of the last 100 is
	// no larger than the largest of the first 100 plus the result.
	sizes := followers[0].s.sizes["change"]
	early, lateMax := slices.Max(sizes[:100]), slices.Max(sizes[len(sizes)-100:])
	if lateMax > early+512 || lateMax > 8<<10 {
		t.Errorf("change messages: at most %d bytes early, %d late; want no growth with the game", early, lateMax)
	}
	t.Logf("white over %d plies: %d changes, %d bytes in all (largest %d)", plies, len(sizes), sum(sizes), slices.Max(sizes))
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

func TestStreamCatchUpAndReset(t *testing.T) {
	c := startLocal(t)
	id, tokens := c.humanGame(nil)
	sub := c.stream("")
	at := version(sub.subscribe(id))
	// Versions the subscriber missed while away: a reconnect with
	// afterVersion gets the whole view with exactly their events.
	sub.ws.Close(websocket.StatusNormalClosure, "")
	for _, uci := range []string{"e2e4", "e7e5", "g1f3"} {
		seat := tokens["white"]
		if uci == "e7e5" {
			seat = tokens["black"]
		}
		if code, body := c.call("POST", "/v1/games/"+id+"/actions", seat, map[string]any{"type": "move", "payload": map[string]any{"uci": uci}}); code != 200 {
			t.Fatalf("%s: %d %v", uci, code, body)
		}
	}
	back := c.stream("")
	m := back.subscribe(id, at)
	missed := m["missed"].([]any)
	if version(m) != at+3 || len(missed) != 3 {
		t.Fatalf("subscribed after %d: version %d, missed %v; want the 3 moves", at, version(m), missed)
	}
	for i, mc := range missed {
		if v := int64(mc.(map[string]any)["version"].(float64)); v != at+1+int64(i) || eventTypes(mc.(map[string]any))[0] != "moved" {
			t.Errorf("missed[%d] = %v; want version %d, moved", i, mc, at+1+int64(i))
		}
	}
	if moves := gameOf(m)["moves"].([]any); len(moves) != 3 {
		t.Errorf("the view has %d moves; want 3", len(moves))
	}
	// More changes than the log keeps: a reset.
	cur := version(m)
	for i := 0; i < 70; i++ {
		c.call("POST", "/v1/games/"+id+"/presence", tokens["white"], map[string]any{"connected": i%2 == 1})
	}
	back.until(id, cur+70)
	again := c.stream("")
	if m := again.subscribe(id, at); m["reset"] != true || m["missed"] != nil || gameOf(m)["version"] == nil {
		t.Errorf("subscribed after a version older than the log: %v; want reset with the view", m)
	}
}

func TestStreamBadMessages(t *testing.T) {
	c := startLocal(t)
	id, tokens := c.humanGame(nil)
	other, otherTokens := c.humanGame(nil)
	s := c.stream(tokens["white"])
	errorOf := func(m map[string]any) (string, string) {
		code, _ := m["code"].(string)
		gid, _ := m["gameId"].(string)
		if m["message"] == "" {
			t.Errorf("error without a message: %v", m)
		}
		return code, gid
	}
	s.ws.Write(context.Background(), websocket.MessageText, []byte("not json"))
	if code, _ := errorOf(s.expect("error")); code != "invalid_json" {
		t.Errorf("not JSON: %s", code)
	}
	s.send(map[string]any{"action": "teleport"})
	if code, _ := errorOf(s.expect("error")); code != "invalid_field" {
		t.Errorf("unknown action: %s", code)
	}
	s.send(map[string]any{"action": "subscribe", "gameId": id, "extra": 1})
	if code, _ := errorOf(s.expect("error")); code != "unknown_field" {
		t.Errorf("unknown field: %s", code)
	}
	s.send(map[string]any{"action": "subscribe", "player": "you"})
	if code, _ := errorOf(s.expect("error")); code != "invalid_field" {
		t.Errorf("player other than me: %s", code)
	}
	s.send(map[string]any{"action": "sync", "gameId": id, "afterVersion": 3})
	if code, _ := errorOf(s.expect("error")); code != "invalid_field" {
		t.Errorf("sync with afterVersion: %s", code)
	}
	// This token is a seat of another game: forbidden there, named.
	s.send(map[string]any{"action": "subscribe", "gameId": other})
	if code, gid := errorOf(s.expect("error")); code != "forbidden" || gid != other {
		t.Errorf("other game's token: %s %s", code, gid)
	}
	s.send(map[string]any{"action": "subscribe", "gameId": "nosuchgame12345"})
	if code, _ := errorOf(s.expect("error")); code != "game_not_found" {
		t.Errorf("unknown game: %s", code)
	}
	// Ten games at most per connection.
	spectator := c.stream("")
	for i := 0; i < api.MaxSubscriptions; i++ {
		g, _ := c.humanGame(nil)
		spectator.subscribe(g)
	}
	spectator.send(map[string]any{"action": "subscribe", "gameId": other})
	if code, _ := errorOf(spectator.expect("error")); code != "too_many_subscriptions" {
		t.Errorf("11th game: %s", code)
	}
	// The connections stay usable after errors.
	s.subscribe(id)
	s.send(map[string]any{"action": "ping"})
	for s.next()["type"] != "pong" { // the seat's own presence change may come first
	}
	spectator.send(map[string]any{"action": "unsubscribe", "gameId": other})
	spectator.send(map[string]any{"action": "ping"})
	spectator.expect("pong")
	// A malformed token is refused before the upgrade; ?token= works.
	if _, resp, err := c.dialStream("st_bad", ""); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Errorf("malformed token: err %v; want a 401 refusal", err)
	}
	q, _, err := c.dialStream("", "?token="+otherTokens["black"]+"&lang=en")
	if err != nil {
		t.Fatal(err)
	}
	q.send(map[string]any{"action": "subscribe", "gameId": id})
	if m := q.expect("error"); m["code"] != "forbidden" || !strings.Contains(m["message"].(string), "not a seat") {
		t.Errorf("query token, English: %v", m)
	}
}

// TestStreamPresence: a seat is not connected before any stream connection
// (and its HTTP requests do not change that), connected while one is open,
// and not connected since the moment its last one closed; closing the last
// connection of the side to move starts its disconnect grace, and the game
// ends when it runs out with nobody calling; reconnecting inside the grace
// keeps the game going.
func TestStreamPresence(t *testing.T) {
	// The service clock runs 29.7 s behind from the start; when white is
	// gone for good it catches up, so the 30 s grace that began with
	// white's turn ends 0.3 s later in real time, and only the scheduler
	// is there to end the game.
	var offset atomic.Int64
	offset.Store(int64(-29700 * time.Millisecond))
	c := startLocal(t, func(cfg *config) {
		cfg.now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	})
	id, tokens := c.humanGame(map[string]any{"timeControl": "10+0", "disconnectGraceSec": 30})
	for _, mv := range []struct{ seat, uci string }{{"white", "e2e4"}, {"black", "e7e5"}} {
		if code, _ := c.call("POST", "/v1/games/"+id+"/actions", tokens[mv.seat], map[string]any{"type": "move", "payload": map[string]any{"uci": mv.uci}}); code != 200 {
			t.Fatalf("%s", mv.uci)
		}
	}
	presence := func() map[string]any {
		return c.view(id, "", "ko")["players"].(map[string]any)["white"].(map[string]any)["presence"].(map[string]any)
	}
	if p := presence(); p["connected"] != false || p["since"] != nil {
		t.Fatalf("before any stream connection (moves over HTTP): %v; want not connected, since null", p)
	}
	watcher := c.stream("")
	watcher.subscribe(id)
	white := c.stream(tokens["white"])
	white.subscribe(id)
	if ev := eventTypes(watcher.expect("change")); len(ev) != 0 {
		t.Fatalf("white's first connection: events %v; want none (nothing to reconnect)", ev)
	}
	if p := presence(); p["connected"] != true || p["since"] == nil {
		t.Fatalf("while white's connection is open: %v; want connected since then", p)
	}

	// Reconnecting inside the grace: the disconnect and the reconnect are
	// two changes, and the game goes on.
	white.ws.Close(websocket.StatusNormalClosure, "")
	m := watcher.expect("change")
	if ev := eventTypes(m); ev[0] != "playerDisconnected" {
		t.Fatalf("after white's stream closed: %v", ev)
	}
	closedAt := m["events"].([]any)[0].(map[string]any)["at"]
	if p := presence(); p["connected"] != false || p["since"] != closedAt {
		t.Fatalf("after white's connection closed: %v; want not connected since %v", p, closedAt)
	}
	white = c.stream(tokens["white"])
	white.subscribe(id)
	if ev := eventTypes(watcher.expect("change")); ev[0] != "playerReconnected" {
		t.Fatalf("after white reconnected: %v", ev)
	}

	// Gone for good.
	white.ws.Close(websocket.StatusNormalClosure, "")
	if ev := eventTypes(watcher.expect("change")); ev[0] != "playerDisconnected" {
		t.Fatalf("after white left: %v", ev)
	}
	offset.Store(0)
	m = watcher.expect("change")
	g := watcher.follow.Game(id).View
	if g["phase"] != "finished" {
		t.Fatalf("after the grace: %v", m)
	}
	res := g["result"].(map[string]any)
	if res["winner"] != "black" || res["reason"] != "timeLoss" {
		t.Errorf("result %v; want black wins on time", res)
	}
	found := false
	for _, e := range m["events"].([]any) {
		if ev := e.(map[string]any); ev["type"] == "timeout" && ev["reason"] == "disconnect" {
			found = true
		}
	}
	if !found {
		t.Errorf("events %v; want a disconnect timeout", m["events"])
	}
}

// TestStreamAccountWide: a player with three games, following its account
// on one connection, gets yourTurn after each opponent move in any of them,
// one gameEnded per game that ends, and nothing of other players' games; a
// spectator or a seat token cannot follow an account.
func TestStreamAccountWide(t *testing.T) {
	c := startLocal(t)
	code, created := c.call("POST", "/v1/players", "", map[string]any{"name": "지우"})
	if code != 201 {
		t.Fatalf("create player: %d %v", code, created)
	}
	me := created["token"].(string)
	playerID := created["player"].(map[string]any)["playerId"].(string)
	acct := c.stream(me)
	acct.send(map[string]any{"action": "subscribe", "player": "me"})
	if m := acct.expect("subscribed"); m["player"] != playerID {
		t.Fatalf("account subscribe: %v; want player %s", m, playerID)
	}
	var games []string
	opponents := map[string]string{}
	for range 3 {
		code, g := c.call("POST", "/v1/games", me, map[string]any{"options": map[string]any{"colorAssignment": "hostWhite"}})
		if code != 201 {
			t.Fatalf("create: %d %v", code, g)
		}
		id := g["gameId"].(string)
		code, j := c.call("POST", "/v1/games/"+id+"/join", "", map[string]any{"player": map[string]any{"name": "상대"}})
		if code != 200 {
			t.Fatalf("join: %d %v", code, j)
		}
		games, opponents[id] = append(games, id), j["token"].(string)
	}
	otherGame, otherTokens := c.humanGame(nil) // nobody of ours in it
	kinds := map[string][]string{}
	read := func(n int) {
		t.Helper()
		for range n {
			m := acct.expect("playerEvent")
			kinds[m["gameId"].(string)] = append(kinds[m["gameId"].(string)], m["kind"].(string))
			if m["kind"] == "yourTurn" && (m["move"].(map[string]any)["san"] == "" || m["deadline"] == nil) {
				t.Errorf("yourTurn without the move and deadline: %v", m)
			}
		}
	}
	read(3) // gameStarted of each
	move := func(id, token, uci string) {
		t.Helper()
		if code, body := c.call("POST", "/v1/games/"+id+"/actions", token, map[string]any{"type": "move", "payload": map[string]any{"uci": uci}}); code != 200 {
			t.Fatalf("%s in %s: %d %v", uci, id, code, body)
		}
	}
	for _, id := range games {
		move(id, me, "e2e4")
		move(id, opponents[id], "e7e5")
		move(id, me, "g1f3")
		move(id, opponents[id], "b8c6")
	}
	move(otherGame, otherTokens["white"], "e2e4")
	read(6) // two opponent moves in each game
	c.call("POST", "/v1/games/"+games[1]+"/actions", opponents[games[1]], map[string]any{"type": "resign"})
	c.call("POST", "/v1/games/"+games[2]+"/actions", me, map[string]any{"type": "resign"})
	read(2)
	acct.send(map[string]any{"action": "ping"})
	acct.expect("pong") // nothing else came: not the other game's move
	want := map[string][]string{
		games[0]: {"gameStarted", "yourTurn", "yourTurn"},
		games[1]: {"gameStarted", "yourTurn", "yourTurn", "gameEnded"},
		games[2]: {"gameStarted", "yourTurn", "yourTurn", "gameEnded"},
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("player events %v; want %v", kinds, want)
	}
	for _, tt := range []struct{ token, code string }{{"", "player_required"}, {otherTokens["black"], "player_required"}} {
		s := c.stream(tt.token)
		s.send(map[string]any{"action": "subscribe", "player": "me"})
		if m := s.expect("error"); m["code"] != tt.code {
			t.Errorf("account subscribe with token %q: %v; want %s", tt.token, m, tt.code)
		}
	}
}

// TestStreamDeliversEveryVersionOnceInOrder: while one change follows
// another as fast as a client can ask for them, a subscriber gets every
// committed version, in order, exactly once, each as its own change with
// its events. How long a delivery takes is BenchmarkStreamDelivery's
// (delivery_bench_test.go), not a test's: a figure taken here would only
// measure how busy the machine is.
func TestStreamDeliversEveryVersionOnceInOrder(t *testing.T) {
	c := startLocal(t)
	id, tokens := c.humanGame(nil)
	s := c.stream("")
	at := version(s.subscribe(id))
	const n = 50
	// Every request is answered before the next is sent, but nothing waits
	// for the pushes: up to n changes are on their way at once.
	for i := range n + 1 {
		if code, body := c.call("POST", "/v1/games/"+id+"/presence", tokens["white"], map[string]any{"connected": i%2 == 1}); code != 200 {
			t.Fatalf("presence %d: %d %v", i, code, body)
		}
		if i == n-1 {
			// The last change is only sent once the first n are read,
			// so that it shows no version came twice before it.
			for v := at + 1; v <= at+n; v++ {
				m := s.expect("change")
				if version(m) != v || version(deltaOf(m)) != v || len(eventTypes(m)) == 0 {
					t.Fatalf("change %v; want version %d with its events (every version, in order, once)", m, v)
				}
			}
		}
	}
	if m := s.expect("change"); version(m) != at+n+1 {
		t.Fatalf("after version %d: change %v; want version %d next", at+n, m, at+n+1)
	}
}

// TestStreamCrashAfterCommit: the server dies right after committing a
// change, before pushing it (CHESSAPI_TEST_CRASH_AFTER_WRITES); the
// subscriber reconnects to the restarted server with afterVersion and gets
// exactly that change from the game's change log.
func TestStreamCrashAfterCommit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	bin := filepath.Join(t.TempDir(), "local")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(t.TempDir(), "chess.db")
	// Writes: create (a Create, not counted), join (1), e4 (2): the server
	// dies right after committing e4.
	cmd, c := startBinary(t, bin, data, crashAfterWritesEnv+"=2")
	id, tokens := c.humanGame(map[string]any{"colorAssignment": "hostWhite"})
	s := c.stream("")
	at := version(s.subscribe(id))
	c.call("POST", "/v1/games/"+id+"/actions", tokens["white"], map[string]any{"type": "move", "payload": map[string]any{"uci": "e2e4"}})
	if err := cmd.Wait(); err == nil {
		t.Fatalf("the server did not crash")
	}
	for m := range s.msgs {
		t.Fatalf("a change was pushed before the crash: %v", m)
	}
	cmd2, c2 := startBinary(t, bin, data)
	defer func() { _ = cmd2.Process.Signal(syscall.SIGTERM); _ = cmd2.Wait() }()
	back := c2.stream("")
	m := back.subscribe(id, at)
	missed := m["missed"].([]any)
	if version(m) != at+1 || len(missed) != 1 || eventTypes(missed[0].(map[string]any))[0] != "moved" {
		t.Fatalf("after the restart: %v; want version %d with the events of the e4 that was never pushed", m, at+1)
	}
}

// startBinary runs the server binary on a free port with extra environment.
func startBinary(t *testing.T, bin, data string, env ...string) (*exec.Cmd, client) {
	t.Helper()
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", data, "-engines", "1", "-hash", "1")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "listening" {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return cmd, client{t: t, base: "http://" + line["addr"].(string)}
		}
	}
	t.Fatalf("server did not start")
	return nil, client{}
}
