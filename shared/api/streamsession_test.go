package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"chessapi/shared/api/streamtest"
	"chessapi/shared/game"
	"chessapi/shared/push"
	"chessapi/shared/service"
)

// The conversation is written once (streamsession.go); these tests hold the
// two transports to it and cover what only the local one does (following
// the in-process feed, recovering from its overflow).

// wsClient is a client of the local transport.
type wsClient struct {
	t  *testing.T
	ws *websocket.Conn
}

func dialLocal(t *testing.T, srv *httptest.Server, token string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	opts := &websocket.DialOptions{}
	if token != "" {
		opts.HTTPHeader = http.Header{"Authorization": {"Bearer " + token}}
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"?lang=en", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &wsClient{t: t, ws: ws}
}

func (c *wsClient) send(msg string) {
	c.t.Helper()
	if err := c.ws.Write(c.t.Context(), websocket.MessageText, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *wsClient) read() map[string]any {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(c.t.Context(), 10*time.Second)
	defer cancel()
	_, data, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("reading: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		c.t.Fatal(err)
	}
	return m
}

// untilPong reads the messages up to the answer of a ping sent now.
func (c *wsClient) untilPong() []map[string]any {
	c.t.Helper()
	c.send(`{"action":"ping"}`)
	var out []map[string]any
	for {
		m := c.read()
		if m["type"] == MsgPong {
			return out
		}
		out = append(out, m)
	}
}

// gatewayClient is a client of the API Gateway transport: connections in
// memory, posts recorded.
type gatewayClient struct {
	t    *testing.T
	gs   *GatewayStream
	id   string
	post *postRecorder
}

type postRecorder struct {
	mu  sync.Mutex
	got map[string][]map[string]any
}

func (r *postRecorder) Post(_ context.Context, connID string, data []byte) error {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got[connID] = append(r.got[connID], m)
	return nil
}

func (c *gatewayClient) send(msg string) {
	c.t.Helper()
	if err := c.gs.Message(c.t.Context(), c.id, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *gatewayClient) untilPong() []map[string]any {
	c.t.Helper()
	c.send(`{"action":"ping"}`)
	c.post.mu.Lock()
	defer c.post.mu.Unlock()
	got := c.post.got[c.id]
	c.post.got[c.id] = nil
	if len(got) == 0 || got[len(got)-1]["type"] != MsgPong {
		c.t.Fatalf("no pong last: %v", got)
	}
	return got[:len(got)-1]
}

// memoryConnections is push.Connections in memory.
type memoryConnections struct {
	mu    sync.Mutex
	conns map[string]push.Connection
	subs  map[string]map[string]push.Subscription // game → connection → sub
}

func (m *memoryConnections) PutConnection(_ context.Context, c push.Connection) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conns[c.ID] = c
	return nil
}

func (m *memoryConnections) Connection(_ context.Context, id string) (push.Connection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.conns[id]
	if !ok {
		return c, push.ErrNoConnection
	}
	return c, nil
}

func (m *memoryConnections) DeleteConnection(_ context.Context, id string) ([]push.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.conns, id)
	var out []push.Subscription
	for _, byConn := range m.subs {
		if s, ok := byConn[id]; ok {
			out = append(out, s)
			delete(byConn, id)
		}
	}
	return out, nil
}

func (m *memoryConnections) Subscribe(_ context.Context, s push.Subscription, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	count, already := 0, false
	for g, byConn := range m.subs {
		if _, ok := byConn[s.ConnID]; ok {
			count++
			already = already || g == s.GameID
		}
	}
	if !already && count >= max {
		return push.ErrTooManySubscriptions
	}
	if m.subs[s.GameID] == nil {
		m.subs[s.GameID] = map[string]push.Subscription{}
	}
	m.subs[s.GameID][s.ConnID] = s
	return nil
}

func (m *memoryConnections) Unsubscribe(_ context.Context, connID, gameID string) (push.Subscription, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.subs[gameID][connID]
	delete(m.subs[gameID], connID)
	return s, ok, nil
}

func (m *memoryConnections) Subscribers(_ context.Context, gameID string) ([]push.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []push.Subscription
	for _, s := range m.subs[gameID] {
		out = append(out, s)
	}
	return out, nil
}

// shape is what the two transports must agree on in a message: its type,
// version, error code and field, which game (the script's own as "G"),
// the types of its events, and for a subscribed the missed versions with
// their events' types (or the reset).
func shape(m map[string]any, gameID string) string {
	g, _ := m["gameId"].(string)
	if g == gameID {
		g = "G"
	}
	eventTypes := func(evs any) []string {
		var out []string
		list, _ := evs.([]any)
		for _, e := range list {
			out = append(out, fmt.Sprint(e.(map[string]any)["type"]))
		}
		return out
	}
	view, _ := m["game"].(map[string]any)
	out := fmt.Sprintf("%v v%v code=%v field=%v game=%s events=%v you=%v", m["type"], m["version"], m["code"], m["field"], g, eventTypes(m["events"]), view["you"])
	if missed, ok := m["missed"].([]any); ok {
		var ms []string
		for _, c := range missed {
			mc := c.(map[string]any)
			ms = append(ms, fmt.Sprintf("%v:%v", mc["version"], eventTypes(mc["events"])))
		}
		out += fmt.Sprintf(" missed=%v", ms)
	}
	if m["reset"] == true {
		out += " reset"
	}
	return out
}

// TestOneConversationTwoTransports: the same client messages on the local
// WebSocket and through API Gateway get the same answers (each transport
// on its own game, played the same way), for a seat's connection and a
// spectator's.
func TestOneConversationTwoTransports(t *testing.T) {
	a := newTestAPI(t)
	play := func() seat {
		white, black := a.createHumanGame(map[string]any{"colorAssignment": "hostWhite"})
		a.move(white, "e2e4").expect(t, http.StatusOK)
		a.move(black, "e7e5").expect(t, http.StatusOK)
		return white
	}
	var extra []string
	for range MaxSubscriptions {
		w, _ := a.createHumanGame(nil)
		extra = append(extra, w.gameID)
	}
	type step struct {
		spectator bool // sent on the spectator's connection, else the seat's
		msgs      []string
	}
	script := func(gameID string) []step {
		sub := func(rest string) string { return `{"action":"subscribe","gameId":"` + gameID + `"` + rest + `}` }
		steps := []step{
			{false, []string{`nope`}},
			{false, []string{`{"action":"teleport"}`}},
			{false, []string{sub(`,"extra":1`)}},
			{false, []string{`{"action":"subscribe","gameId":"nosuchgameatall"}`}},
			{false, []string{sub(``)}},
			{false, []string{sub(`,"afterVersion":1`)}},
			{false, []string{sub(`,"afterVersion":3`)}},
			{false, []string{`{"action":"unsubscribe","gameId":"` + gameID + `","afterVersion":1}`}},
			{false, []string{`{"action":"unsubscribe","gameId":"` + gameID + `"}`}},
			{false, []string{`{"action":"unsubscribe","gameId":"` + gameID + `"}`}},
			{true, []string{sub(`,"afterVersion":4`)}},
			{true, []string{`{"action":"sync","gameId":"` + gameID + `"}`}},
			{false, []string{`{"action":"subscribe","player":"me"}`}},
			{true, []string{`{"action":"subscribe","player":"me"}`}},
		}
		// Nine more games, then an eleventh: refused.
		var fill []string
		for _, id := range extra[:MaxSubscriptions-1] {
			fill = append(fill, `{"action":"subscribe","gameId":"`+id+`"}`)
		}
		return append(steps, step{true, fill}, step{true, []string{`{"action":"subscribe","gameId":"` + extra[MaxSubscriptions-1] + `"}`}})
	}
	type client interface {
		send(string)
		untilPong() []map[string]any
	}
	run := func(gameID string, seatConn, spectatorConn client) [][]string {
		var got [][]string
		for _, st := range script(gameID) {
			c := seatConn
			if st.spectator {
				c = spectatorConn
			}
			for _, msg := range st.msgs {
				c.send(msg)
			}
			var shapes []string
			for _, m := range c.untilPong() {
				shapes = append(shapes, shape(m, gameID))
			}
			got = append(got, shapes)
		}
		return got
	}

	// The local transport.
	stream := NewStream(a.svc, StreamOptions{})
	srv := httptest.NewServer(stream)
	t.Cleanup(func() { srv.Close(); stream.Close() })
	lw := play()
	gotLocal := run(lw.gameID, dialLocal(t, srv, lw.token), dialLocal(t, srv, ""))

	// The API Gateway transport.
	conns := &memoryConnections{conns: map[string]push.Connection{}, subs: map[string]map[string]push.Subscription{}}
	post := &postRecorder{got: map[string][]map[string]any{}}
	gs := NewGatewayStream(a.svc, conns, post, nil)
	gw := play()
	for id, auth := range map[string]string{"seat": "Bearer " + gw.token, "spectator": ""} {
		if err := gs.Connect(t.Context(), GatewayConnect{ConnID: id, Authorization: auth, QueryLang: "en"}); err != nil {
			t.Fatal(err)
		}
	}
	gotGateway := run(gw.gameID, &gatewayClient{t: t, gs: gs, id: "seat", post: post}, &gatewayClient{t: t, gs: gs, id: "spectator", post: post})

	steps := script("G")
	for i, st := range steps {
		if !slices.Equal(gotLocal[i], gotGateway[i]) {
			t.Errorf("after %s:\n local   %q\n gateway %q", st.msgs, gotLocal[i], gotGateway[i])
		}
	}
	// And what they agree on is the protocol.
	ok := "code=<nil> field=<nil> game=G"
	want := [][]string{
		{"error v<nil> code=invalid_json field=<nil> game= events=[] you=<nil>"},
		{"error v<nil> code=invalid_field field=action game= events=[] you=<nil>"},
		{"error v<nil> code=unknown_field field=extra game= events=[] you=<nil>"},
		{"error v<nil> code=game_not_found field=<nil> game=nosuchgameatall events=[] you=<nil>"},
		// The seat's first stream connection connects it: version 5.
		{"subscribed v5 " + ok + " events=[] you=white missed=[]"},
		{"subscribed v5 " + ok + " events=[] you=white missed=[2:[playerJoined gameStarted] 3:[moved] 4:[moved] 5:[]]"},
		{"subscribed v5 " + ok + " events=[] you=white missed=[4:[moved] 5:[]]"},
		{"error v<nil> code=invalid_field field=afterVersion game= events=[] you=<nil>"},
		nil, // unsubscribed: nothing to say
		nil, // again: nothing either
		// The seat's last subscription ended: it was marked disconnected
		// (version 6), which the spectator catches up on.
		{"subscribed v6 " + ok + " events=[] you=<nil> missed=[5:[] 6:[playerDisconnected]]"},
		{"subscribed v6 " + ok + " events=[] you=<nil> missed=[]"},
		// The account-wide stream: a seat token, then no token at all.
		{"error v<nil> code=player_required field=<nil> game= events=[] you=<nil>"},
		{"error v<nil> code=player_required field=<nil> game= events=[] you=<nil>"},
	}
	for i, w := range want {
		if !slices.Equal(gotLocal[i], w) {
			t.Errorf("after %s: %q; want %q", steps[i].msgs, gotLocal[i], w)
		}
	}
	if last := gotLocal[len(gotLocal)-1]; len(last) != 1 || !strings.HasPrefix(last[0], "error v<nil> code=too_many_subscriptions") {
		t.Errorf("an eleventh game: %q; want too_many_subscriptions", last)
	}
}

// gatedFeed is the service as the local stream sees it, with the game's
// feed held on a gate once armed: a follower that stalls so while commits
// go on overflows its feed (the service's buffer, which never waits).
type gatedFeed struct {
	*service.Service
	armed    atomic.Bool
	held     chan struct{} // closed when the gate holds a change
	release  chan struct{}
	catchUps atomic.Int32 // reads of the game after the subscribe's
}

func (g *gatedFeed) Watch(gameID string, buffer int) (<-chan service.Change, func()) {
	in, stop := g.Service.Watch(gameID, buffer)
	out := make(chan service.Change)
	go func() {
		defer close(out)
		for c := range in {
			if g.armed.CompareAndSwap(true, false) {
				close(g.held)
				<-g.release
			}
			out <- c
		}
	}()
	return out, stop
}

func (g *gatedFeed) Observe(ctx context.Context, gameID string, c service.Caller) (service.Observation, error) {
	g.catchUps.Add(1)
	return g.Service.Observe(ctx, gameID, c)
}

// TestLocalFollowerCatchesUpAfterOverflow: a subscriber whose feed
// overflowed (the feed never waits for a slow reader) gets the versions it
// missed from the change log, each once and in order, not a gap: as
// changes while the log keeps their deltas, else as the whole view again
// with the missed events. Either way its view from the messages is the
// GET view, and it saw every version's events once.
func TestLocalFollowerCatchesUpAfterOverflow(t *testing.T) {
	// The feed holds 16 and drops the oldest: a follower stalled for more
	// commits sees the gap at the first of the newest 16, behind by more+1
	// versions (more than the log's deltas only in the second case).
	for _, more := range []int{20, game.ChangeLogDeltas + 24} {
		t.Run(fmt.Sprintf("%d versions behind", more), func(t *testing.T) {
			a := newTestAPI(t)
			white, black := a.createHumanGame(map[string]any{"colorAssignment": "hostWhite"})
			feed := &gatedFeed{Service: a.svc, held: make(chan struct{}), release: make(chan struct{})}
			stream := NewStream(feed, StreamOptions{SendBuffer: 256})
			srv := httptest.NewServer(stream)
			t.Cleanup(func() { srv.Close(); stream.Close() })
			spectator := dialLocal(t, srv, "")
			follower := streamtest.New()
			spectator.send(`{"action":"subscribe","gameId":"` + white.gameID + `"}`)
			sub := spectator.read()
			if sub["type"] != MsgSubscribed {
				t.Fatalf("subscribe: %v", sub)
			}
			if err := follower.Apply(sub); err != nil {
				t.Fatal(err)
			}
			at := int64(sub["version"].(float64))
			subscribeReads := feed.catchUps.Load()

			// The follower takes the next change and stalls on it while
			// more are committed: its feed (16 deep) drops the rest.
			feed.armed.Store(true)
			a.move(white, "e2e4").expect(t, http.StatusOK)
			<-feed.held
			for i := range more {
				a.do("POST", "/v1/games/"+white.gameID+"/presence", black.token, map[string]any{"connected": i%2 == 1}).expect(t, http.StatusOK)
			}
			close(feed.release)
			// One more commit after the stall shows the follower the gap.
			a.move(black, "e7e5").expect(t, http.StatusOK)
			last := at + 1 + int64(more) + 1
			seen := map[int64]int{}
			resyncs := 0
			for follower.Game(white.gameID).Version < last {
				m := spectator.read()
				if err := follower.Apply(m); err != nil {
					t.Fatal(err)
				}
				switch m["type"] {
				case MsgChange:
					seen[int64(m["version"].(float64))]++
				case MsgSubscribed:
					resyncs++
					for _, c := range m["missed"].([]any) {
						seen[int64(c.(map[string]any)["version"].(float64))]++
					}
				default:
					t.Fatalf("unexpected %s", shape(m, white.gameID))
				}
			}
			for v := at + 1; v <= last; v++ {
				if seen[v] != 1 {
					t.Errorf("version %d: its events came %d times; want once", v, seen[v])
				}
			}
			if feed.catchUps.Load() == subscribeReads {
				t.Error("no catch-up from the change log; the versions cannot all have come from the overflowing feed")
			}
			if wantResync := more+1 > game.ChangeLogDeltas; (resyncs > 0) != wantResync {
				t.Errorf("%d whole views sent again; want them only past the %d deltas the log keeps", resyncs, game.ChangeLogDeltas)
			}
			want := a.do("GET", "/v1/games/"+white.gameID, "", nil).expect(t, http.StatusOK).game()
			if got := follower.Game(white.gameID).View; !streamtest.Equal(got, want) {
				t.Errorf("the followed view differs from GET: %s", streamtest.Diff(got, want))
			}
			if rest := spectator.untilPong(); len(rest) != 0 {
				t.Errorf("after the last version: %d more messages, first %s", len(rest), shape(rest[0], white.gameID))
			}
		})
	}
}

// TestLocalPresence: a seat is disconnected when its last subscription
// ends (by unsubscribing or by closing the connection), not while another
// connection holds it, and subscribing again to the same game on a
// connection is not a disconnection.
func TestLocalPresence(t *testing.T) {
	a := newTestAPI(t)
	white, _ := a.createHumanGame(map[string]any{"colorAssignment": "hostWhite"})
	stream := NewStream(a.svc, StreamOptions{})
	srv := httptest.NewServer(stream)
	t.Cleanup(func() { srv.Close(); stream.Close() })
	version := func() int64 {
		return int64(a.do("GET", "/v1/games/"+white.gameID, "", nil).expect(t, http.StatusOK).game()["version"].(float64))
	}
	connected := func() bool {
		p := a.do("GET", "/v1/games/"+white.gameID, "", nil).expect(t, http.StatusOK).game()["players"].(map[string]any)["white"].(map[string]any)
		return p["connected"].(bool)
	}
	// waitConnected polls: closing a connection marks its seats off the
	// connection's goroutines.
	waitConnected := func(want bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for connected() != want {
			if time.Now().After(deadline) {
				t.Fatalf("white connected = %v; want %v", !want, want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	one := dialLocal(t, srv, white.token)
	one.send(`{"action":"subscribe","gameId":"` + white.gameID + `"}`)
	one.untilPong()
	before := version()
	one.send(`{"action":"subscribe","gameId":"` + white.gameID + `","afterVersion":1}`)
	one.untilPong()
	two := dialLocal(t, srv, white.token)
	two.send(`{"action":"subscribe","gameId":"` + white.gameID + `"}`)
	two.untilPong()
	if v := version(); v != before || !connected() {
		t.Errorf("after subscribing again and a second connection: version %d (was %d), connected %v; want no presence change", v, before, connected())
	}
	one.send(`{"action":"unsubscribe","gameId":"` + white.gameID + `"}`)
	one.untilPong()
	if v := version(); v != before || !connected() {
		t.Errorf("one of two subscriptions gone: version %d (was %d), connected %v; want still connected", v, before, connected())
	}
	two.ws.Close(websocket.StatusNormalClosure, "")
	waitConnected(false)
	// A new subscription is a sign of life.
	three := dialLocal(t, srv, white.token)
	three.send(`{"action":"subscribe","gameId":"` + white.gameID + `"}`)
	three.untilPong()
	if !connected() {
		t.Error("white subscribed again but is not connected")
	}
}
