package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"chessapi/shared/api"
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

// streamClient is one WebSocket connection with a reader goroutine.
type streamClient struct {
	t    *testing.T
	ws   *websocket.Conn
	msgs chan map[string]any
}

func (c client) dialStream(token string, query string) (*streamClient, *http.Response, error) {
	c.t.Helper()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
	if token != "" {
		opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	}
	u := "ws" + strings.TrimPrefix(c.base, "http") + "/v1/stream" + query
	ws, resp, err := websocket.Dial(context.Background(), u, opts)
	if err != nil {
		return nil, resp, err
	}
	sc := &streamClient{t: c.t, ws: ws, msgs: make(chan map[string]any, 1024)}
	go func() {
		defer close(sc.msgs)
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				c.t.Errorf("stream message is not JSON: %q", data)
				return
			}
			sc.msgs <- m
		}
	}()
	c.t.Cleanup(func() { ws.Close(websocket.StatusNormalClosure, "") })
	return sc, resp, nil
}

func (c client) stream(token string) *streamClient {
	c.t.Helper()
	sc, _, err := c.dialStream(token, "")
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

// next returns the next message (failing after 5 s).
func (s *streamClient) next() map[string]any {
	s.t.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			s.t.Fatalf("stream closed")
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

func TestStreamDeliversEachSubscriberItsView(t *testing.T) {
	c := startLocal(t)
	id, tokens := c.humanGame(map[string]any{"timeControl": "10+5"})
	white, black, spectator := c.stream(tokens["white"]), c.stream(tokens["black"]), c.stream("")
	for _, s := range []*streamClient{white, black, spectator} {
		s.subscribe(id)
	}
	if code, _ := c.call("POST", "/v1/games/"+id+"/actions", tokens["white"], map[string]any{"type": "move", "payload": map[string]any{"uci": "e2e4"}}); code != 200 {
		t.Fatalf("e4: %d", code)
	}
	for name, s := range map[string]*streamClient{"white": white, "black": black, "spectator": spectator} {
		m := s.expect("change")
		g := gameOf(m)
		_, hasLegal := g["legalMoves"]
		if m["gameId"] != id || version(m) != int64(g["version"].(float64)) || eventTypes(m)[0] != "moved" {
			t.Errorf("%s: change %v", name, m)
		}
		if hasLegal != (name == "black") {
			t.Errorf("%s: legalMoves present = %v; only the seat to move (black) gets them", name, hasLegal)
		}
		wantYou := map[string]any{"white": "white", "black": "black", "spectator": nil}[name]
		if g["you"] != wantYou {
			t.Errorf("%s: you = %v; want %v", name, g["you"], wantYou)
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

func TestStreamCatchUpAndReset(t *testing.T) {
	c := startLocal(t)
	id, tokens := c.humanGame(nil)
	sub := c.stream("")
	at := version(sub.subscribe(id))
	// Versions the subscriber missed while away: a reconnect with
	// afterVersion replays exactly those.
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
	cur := version(back.subscribe(id, at))
	for v := at + 1; v <= cur; v++ {
		m := back.expect("change")
		if version(m) != v {
			t.Fatalf("replayed version %d; want %d", version(m), v)
		}
	}
	if cur != at+3 {
		t.Errorf("missed versions %d..%d; want 3", at+1, cur)
	}
	// More changes than the log keeps: a reset.
	for i := 0; i < 70; i++ {
		c.call("POST", "/v1/games/"+id+"/presence", tokens["white"], map[string]any{"connected": i%2 == 1})
	}
	for version(back.expect("change")) < cur+70 {
	}
	again := c.stream("")
	again.subscribe(id, at)
	if m := again.expect("reset"); gameOf(m)["version"] == nil {
		t.Errorf("reset without the game: %v", m)
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
	s.expect("pong")
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

// TestStreamPresence: closing the last connection of the side to move
// starts its disconnect grace, and the game ends when it runs out with
// nobody calling; reconnecting inside the grace keeps the game going.
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
	white := c.stream(tokens["white"])
	white.subscribe(id)
	watcher := c.stream("")
	watcher.subscribe(id)

	// Reconnecting inside the grace: the disconnect and the reconnect are
	// two changes, and the game goes on.
	white.ws.Close(websocket.StatusNormalClosure, "")
	if ev := eventTypes(watcher.expect("change")); ev[0] != "playerDisconnected" {
		t.Fatalf("after white's stream closed: %v", ev)
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
	m := watcher.expect("change")
	g := gameOf(m)
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
				if version(m) != v || version(gameOf(m)) != v || len(eventTypes(m)) == 0 {
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
	cur := version(back.subscribe(id, at))
	m := back.expect("change")
	if cur != at+1 || version(m) != at+1 || eventTypes(m)[0] != "moved" {
		t.Fatalf("after the restart: current %d, replayed %v; want version %d with the e4 that was never pushed", cur, m, at+1)
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
