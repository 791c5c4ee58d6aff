package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"chessapi/infra/rie/rietest"
)

// The functions are built once per test binary (or taken from make's
// build-native output); see rietest.
func TestMain(m *testing.M) { rietest.Main(m) }

// testLog sends emustack's messages to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func startTestStack(t *testing.T) *stack {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the functions and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// No limit of its own: the build and the start take what the test's
	// deadline allows, however loaded the machine.
	ctx, cancel := rietest.Context(t)
	defer cancel()
	st, err := startStack(ctx, config{
		Root: root, Template: filepath.Join(root, "template.yaml"), StackName: "chessapi", Addr: "127.0.0.1:0",
		LogLevel: "WARN", AIAPIKeys: "required",
		StreamPoll: 100 * time.Millisecond, SchedulePoll: 200 * time.Millisecond,
		AsyncRetryDelay: 100 * time.Millisecond, StreamRetryDelay: 100 * time.Millisecond,
		WSIdle: 10 * time.Minute, WSMax: 2 * time.Hour, Log: testLog{t},
		Bootstraps: rietest.Bootstraps(t),
	})
	if err != nil {
		t.Fatalf("startStack: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

// client calls the emulated stack's front.
type client struct {
	t    *testing.T
	base string
}

type gameAnswer struct {
	GameID string `json:"gameId"`
	Token  string `json:"token"`
	Game   struct {
		Version int64  `json:"version"`
		Phase   string `json:"phase"`
		Turn    string `json:"turn"`
		You     string `json:"you"`
		Moves   []struct {
			UCI   string `json:"uci"`
			Color string `json:"color"`
		} `json:"moves"`
	} `json:"game"`
}

func (c client) call(method, path, token string, body any, want int) gameAnswer {
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
	var a gameAnswer
	if res.Header.Get("Content-Type") != "" && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		json.Unmarshal(data, &a)
	}
	return a
}

func (c client) move(id, token, uci string) gameAnswer {
	c.t.Helper()
	return c.call("POST", "/v1/games/"+id+"/actions", token, map[string]any{"type": "move", "payload": map[string]any{"uci": uci}}, 200)
}

// counts settles the stack and takes the counts since the last call.
func (c client) counts() Counts {
	c.t.Helper()
	res, err := http.Get(c.base + "/_counts?settle=1&reset=1")
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var out Counts
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != 200 {
		c.t.Fatalf("/_counts: %d %v", res.StatusCode, err)
	}
	return out
}

type wsMessage struct {
	Type    string `json:"type"`
	Version int64  `json:"version"`
	Code    string `json:"code"`
}

func readWS(t *testing.T, ws *websocket.Conn) wsMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, data, err := ws.Read(ctx)
	if err != nil {
		t.Fatalf("reading the stream: %v", err)
	}
	var m wsMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("stream message %s: %v", data, err)
	}
	return m
}

// readNewer reads the next message that is not a change the client has
// (version ≤ *last, as docs/push.md tells apps to ignore, or one before the
// first subscribed: nothing else commits meanwhile here, so the view has
// it), and moves *last to a subscribed's or change's version.
func readNewer(t *testing.T, ws *websocket.Conn, last *int64) wsMessage {
	t.Helper()
	for {
		m := readWS(t, ws)
		if m.Type == "change" && (*last == 0 || m.Version <= *last) {
			continue // before the subscribed (whose view has it here), or had
		}
		if m.Type == "change" || m.Type == "subscribed" {
			*last = max(*last, m.Version)
		}
		return m
	}
}

func summary(c Counts) string {
	var parts []string
	for _, m := range []map[string]int64{c.AWSCalls} {
		parts = append(parts, sorted(m))
	}
	fns := []string{}
	for id, f := range c.Functions {
		if f.Invocations > 0 {
			fns = append(fns, fmt.Sprintf("%s×%d", id, f.Invocations))
		}
	}
	return strings.Join(parts, " ") + "; invocations " + strings.Join(slices.Sorted(slices.Values(fns)), " ") +
		fmt.Sprintf("; stream records %d (game item %d B, %d write units), posts delivered %d (%d B)",
			c.Platform["dynamodb-streams:Records"], c.Platform["dynamodb:GamesItemBytesMax"], c.Platform["dynamodb:GamesPutWriteUnits"],
			c.Platform["apigw-ws:MessagesOut"], c.Platform["apigw-ws:PostBytes"])
}

// TestEmustackPlaysGames drives the emulated stack through its front as an
// app would: a timed game between two seats, one following it on the
// WebSocket API and the other by long poll, to its end; and a game
// against the AI, whose seat moves through the asynchronous trigger. It
// checks what each step cost in AWS calls and logs it
// (docs/operations.md).
func TestEmustackPlaysGames(t *testing.T) {
	st := startTestStack(t)
	c := client{t: t, base: st.URL}
	c.call("GET", "/v1/health", "", nil, 200)
	c.call("GET", "/v1/nothing", "", nil, 404)

	created := c.call("POST", "/v1/games", "", map[string]any{"options": map[string]any{"timeControl": "5+3", "colorAssignment": "hostWhite"}}, 201)
	id, white := created.GameID, created.Token
	createCounts := c.counts()

	// White follows the game on the stream; a bad token is refused at
	// the handshake, as $connect answers.
	ctx := context.Background()
	wsURL := "ws" + strings.TrimPrefix(st.URL, "http") + "/v1/stream"
	if _, res, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer nonsense"}}}); err == nil || res == nil || res.StatusCode != 401 {
		t.Errorf("connect with a malformed token: %v, %v; want the handshake refused with 401", err, res)
	}
	refusedCounts := c.counts()
	if n := refusedCounts.Functions["StreamFunction"].Invocations; n != 1 || refusedCounts.Platform["apigw-ws:Connections"] != 0 {
		t.Errorf("a refused connect: %d invocations, %d connections; want $connect only, no connection", n, refusedCounts.Platform["apigw-ws:Connections"])
	}
	ws, _, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + white}}})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	sub, _ := json.Marshal(map[string]any{"action": "subscribe", "gameId": id})
	if err := ws.Write(ctx, websocket.MessageText, sub); err != nil {
		t.Fatal(err)
	}
	// Subscribing connects white's seat: a version of its own, which the
	// fan-out may post to white too, before or after the subscribed.
	var last int64
	if m := readNewer(t, ws, &last); m.Type != "subscribed" || m.Version != created.Game.Version+1 {
		t.Fatalf("after subscribing: %+v; want subscribed at version %d (white connected)", m, created.Game.Version+1)
	}
	subscribeCounts := c.counts()

	joined := c.call("POST", "/v1/games/"+id+"/join", "", nil, 200)
	black := joined.Token
	if joined.Game.You != "black" || joined.Game.Phase != "playing" {
		t.Fatalf("join: %+v; want black, playing", joined.Game)
	}
	if m := readNewer(t, ws, &last); m.Type != "change" || m.Version != joined.Game.Version {
		t.Errorf("white's stream after the join: %+v; want the change of version %d", m, joined.Game.Version)
	}
	joinCounts := c.counts()

	// 1. e4: one request of the move function, then the fan-out.
	e4 := c.move(id, white, "e2e4")
	if m := readNewer(t, ws, &last); m.Type != "change" || m.Version != e4.Game.Version {
		t.Errorf("white's stream after e4: %+v; want the change of version %d", m, e4.Game.Version)
	}
	moveCounts := c.counts()
	if f := moveCounts.Functions["MoveFunction"]; f.Invocations != 1 {
		t.Errorf("MoveFunction invocations for one move: %d; want 1", f.Invocations)
	}
	if n := moveCounts.AWSCalls["dynamodb:PutItem"]; n != 1 {
		t.Errorf("PutItem for one move: %d; want 1 (the game's write)", n)
	}
	if n := moveCounts.AWSCalls["scheduler:CreateSchedule"]; n != 1 {
		t.Errorf("CreateSchedule for one move: %d; want 1 (the deadline moved to black)", n)
	}
	if n := moveCounts.AWSCalls["execute-api:PostToConnection"]; n != 1 {
		t.Errorf("posts for one move with one subscriber: %d; want 1", n)
	}
	if n := moveCounts.Platform["dynamodb-streams:Records"]; n != 1 {
		t.Errorf("stream records for one move: %d; want 1", n)
	}

	// 1... e5 while white holds a long poll: it answers with black's move.
	polled := make(chan gameAnswer, 1)
	go func() {
		polled <- c.call("GET", fmt.Sprintf("/v1/games/%s?afterVersion=%d", id, e4.Game.Version), white, nil, 200)
	}()
	time.Sleep(time.Second) // the poll is waiting
	e5 := c.move(id, black, "e7e5")
	select {
	case p := <-polled:
		if p.Game.Version != e5.Game.Version {
			t.Errorf("white's long poll answered version %d; want %d", p.Game.Version, e5.Game.Version)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("white's long poll did not answer after black's move")
	}
	readNewer(t, ws, &last)
	pollCounts := c.counts()
	if f := pollCounts.Functions["PollFunction"]; f.Invocations != 1 {
		t.Errorf("PollFunction for one long poll: %+v; want 1 invocation", f)
	}

	// White resigns: the game ends and its schedule goes.
	end := c.call("POST", "/v1/games/"+id+"/actions", white, map[string]any{"type": "resign"}, 200)
	if end.Game.Phase != "finished" {
		t.Errorf("after resigning: phase %q", end.Game.Phase)
	}
	readNewer(t, ws, &last)
	endCounts := c.counts()
	if endCounts.AWSCalls["scheduler:DeleteSchedule"] < 1 {
		t.Errorf("the end of a game: %v; want its schedule deleted", endCounts.AWSCalls)
	}
	ws.Close(websocket.StatusNormalClosure, "")

	// Against the AI: the human's move makes the fan-out invoke the AI
	// seat asynchronously, whose move is written and fanned out in turn.
	ai := c.call("POST", "/v1/games", "", map[string]any{"options": map[string]any{"timeControl": "5+3", "colorAssignment": "hostWhite"},
		"opponent": map[string]any{"type": "ai", "level": "easy"}}, 201)
	c.counts()
	c.move(ai.GameID, ai.Token, "d2d4")
	aiCounts := c.counts()
	view := c.call("GET", "/v1/games/"+ai.GameID, ai.Token, nil, 200)
	if len(view.Game.Moves) != 2 || view.Game.Moves[1].Color != "black" || view.Game.Turn != "white" {
		t.Errorf("the AI game after d4: %+v; want the AI's reply, white to move", view.Game)
	}
	if aiCounts.AWSCalls["lambda:Invoke(Event)"] != 1 || aiCounts.Functions["AiSeatFunction"].Invocations != 1 {
		t.Errorf("AI turn: %v, AI seat invocations %d; want one asynchronous invoke, run once", aiCounts.AWSCalls, aiCounts.Functions["AiSeatFunction"].Invocations)
	}

	t.Logf("create (5+3, waiting): %s", summary(createCounts))
	t.Logf("a $connect refused (malformed token): %s", summary(refusedCounts))
	t.Logf("stream connect + subscribe (1 connection): %s", summary(subscribeCounts))
	t.Logf("join (game starts, 1 subscriber): %s", summary(joinCounts))
	t.Logf("one move, 1 subscriber: %s", summary(moveCounts))
	t.Logf("one move answering a waiting long poll (~1 s) + 1 subscriber: %s; poll billed %d ms", summary(pollCounts), pollCounts.Functions["PollFunction"].BilledMs)
	t.Logf("resign (game ends), 1 subscriber: %s", summary(endCounts))
	t.Logf("one move against the AI (human move + AI seat's reply): %s; AI seat billed %d ms at %d MB",
		summary(aiCounts), aiCounts.Functions["AiSeatFunction"].BilledMs, aiCounts.Functions["AiSeatFunction"].MemoryMB)
}

func sorted(m map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
