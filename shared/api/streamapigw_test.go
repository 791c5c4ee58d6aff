package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/api"
	"chessapi/shared/api/streamtest"
	"chessapi/shared/game"
	"chessapi/shared/push"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// memConns is an in-memory push.Connections (the data table's is tested
// against the emulators in shared/store/dynamostore and shared/lambdafn).
type memConns struct {
	mu    sync.Mutex
	conns map[string]push.Connection
	subs  map[string]map[string]push.Subscription // game → connection → sub
}

func newMemConns() *memConns {
	return &memConns{conns: map[string]push.Connection{}, subs: map[string]map[string]push.Subscription{}}
}

func (m *memConns) PutConnection(_ context.Context, c push.Connection) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.conns[c.ID] = c
	return nil
}

func (m *memConns) Connection(_ context.Context, id string) (push.Connection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.conns[id]
	if !ok {
		return c, push.ErrNoConnection
	}
	return c, nil
}

func (m *memConns) DeleteConnection(_ context.Context, id string) ([]push.Subscription, error) {
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

func (m *memConns) Subscribe(_ context.Context, s push.Subscription, max int) error {
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

func (m *memConns) Unsubscribe(_ context.Context, connID, gameID string) (push.Subscription, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.subs[gameID][connID]
	delete(m.subs[gameID], connID)
	return s, ok, nil
}

func (m *memConns) Subscribers(_ context.Context, gameID string) ([]push.Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []push.Subscription
	for _, s := range m.subs[gameID] {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ConnID < out[j].ConnID })
	return out, nil
}

// recorder is a push.Poster recording what each connection got; gone
// connections answer 410.
type recorder struct {
	mu   sync.Mutex
	got  map[string][]map[string]any
	gone map[string]bool
}

func (r *recorder) Post(_ context.Context, connID string, data []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.gone[connID] {
		return push.ErrGone
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("posted %q: %w", data, err)
	}
	r.got[connID] = append(r.got[connID], m)
	return nil
}

func (r *recorder) take(connID string) []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.got[connID]
	r.got[connID] = nil
	return out
}

type fixture struct {
	svc   *service.Service
	http  http.Handler
	store *boltstore.Store
	clock *fakeclock.Clock
	conns *memConns
	post  *recorder
	gs    *api.GatewayStream

	mu      sync.Mutex
	pending map[string]<-chan service.Change // game → its commits not yet fanned out
}

func newFixture(t *testing.T) *fixture {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	clock := fakeclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	svc, err := service.New(service.Config{Store: store, Players: store, Lister: store, Effects: service.EffectsByStream, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{svc: svc, http: api.NewHandler(api.Deps{Games: svc}), store: store, clock: clock, conns: newMemConns(),
		post: &recorder{got: map[string][]map[string]any{}, gone: map[string]bool{}}, pending: map[string]<-chan service.Change{}}
	f.gs = api.NewGatewayStream(svc, f.conns, f.post, nil)
	return f
}

// record makes the fixture keep the game's commits from now on, as the
// table's change stream does.
func (f *fixture) record(t *testing.T, gameID string) {
	ch, stop := f.svc.Watch(gameID, 10000)
	t.Cleanup(stop)
	f.mu.Lock()
	f.pending[gameID] = ch
	f.mu.Unlock()
}

// fanout delivers the game's commits since the last fan-out, in order, as
// the fan-out function does with the stream's records (the state before
// and after each), and returns how many posts it made.
func (f *fixture) fanout(t *testing.T, gameID string) int {
	t.Helper()
	f.mu.Lock()
	ch := f.pending[gameID]
	f.mu.Unlock()
	if ch == nil {
		t.Fatalf("fanout of %s, whose commits are not recorded", gameID)
	}
	sent := 0
	for {
		select {
		case c := <-ch:
			n, err := f.gs.Deliver(t.Context(), c.Prev, c.State)
			if err != nil {
				t.Fatal(err)
			}
			sent += n
		default:
			return sent
		}
	}
}

// get is GET /v1/games/{id} as a client with token and language sees it.
func (f *fixture) get(t *testing.T, gameID, token, lang string) map[string]any {
	t.Helper()
	req := httptest.NewRequest("GET", "/v1/games/"+gameID, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Accept-Language", lang)
	rec := httptest.NewRecorder()
	f.http.ServeHTTP(rec, req)
	var body struct {
		Game map[string]any `json:"game"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
		t.Fatalf("GET %s: %d %s", gameID, rec.Code, rec.Body)
	}
	return body.Game
}

// gwClient is one connection of the fixture with the follower of its
// games.
type gwClient struct {
	id, token, lang string
	follow          *streamtest.Follower
}

func (f *fixture) connect(t *testing.T, id, token, lang string) *gwClient {
	t.Helper()
	auth := ""
	if token != "" {
		auth = "Bearer " + token
	}
	if err := f.gs.Connect(t.Context(), api.GatewayConnect{ConnID: id, Authorization: auth, AcceptLanguage: lang}); err != nil {
		t.Fatal(err)
	}
	return &gwClient{id: id, token: token, lang: lang, follow: streamtest.New()}
}

func (f *fixture) send(t *testing.T, c *gwClient, msg string) {
	t.Helper()
	if err := f.gs.Message(t.Context(), c.id, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// take applies what was posted to c and returns it.
func (f *fixture) take(t *testing.T, c *gwClient) []map[string]any {
	t.Helper()
	got := f.post.take(c.id)
	for _, m := range got {
		if err := c.follow.Apply(m); err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
	}
	return got
}

// TestFanoutDeltasRebuildEachSubscribersView: through the API Gateway
// transport, two seats and spectators in Korean and English follow a game
// from deltas only; after every version each one's view equals its GET
// view, and the result's texts are in each one's language (the fan-out
// words a change once per seat and language: a Korean subscriber never
// gets an English one's texts).
func TestFanoutDeltasRebuildEachSubscribersView(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	host, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite(), Player: service.PlayerInput{Name: "w"}})
	if err != nil {
		t.Fatal(err)
	}
	f.record(t, host.GameID)
	guest, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Player: service.PlayerInput{Name: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	clients := []*gwClient{
		f.connect(t, "cw", host.Token, "en"),
		f.connect(t, "cb", guest.Token, "ko"),
		f.connect(t, "cs-en", "", "en"),
		f.connect(t, "cs-ko", "", "ko"),
	}
	for _, c := range clients {
		f.send(t, c, `{"action":"subscribe","gameId":"`+host.GameID+`"}`)
		if got := f.take(t, c); len(got) != 1 || got[0]["type"] != "subscribed" {
			t.Fatalf("%s after subscribe: %v", c.id, got)
		}
	}
	check := func(when string) {
		t.Helper()
		f.fanout(t, host.GameID)
		for _, c := range clients {
			f.take(t, c)
			g := c.follow.Game(host.GameID)
			if want := f.get(t, host.GameID, c.token, c.lang); !streamtest.Equal(g.View, want) {
				t.Fatalf("%s, %s: the view from deltas differs from GET: %s", when, c.id, streamtest.Diff(g.View, want))
			}
		}
	}
	check("subscribed")
	rng := rand.New(rand.NewPCG(3, 4))
	tokens := [2]string{host.Token, guest.Token}
	for ply := 0; ply < 40; ply++ {
		f.clock.Advance(time.Duration(500+rng.IntN(3000)) * time.Millisecond)
		obs, err := f.svc.Observe(ctx, host.GameID, service.Caller{})
		if err != nil {
			t.Fatal(err)
		}
		if obs.State.Phase != game.PhasePlaying {
			break
		}
		legal := obs.State.Position().LegalMoves()
		uci := obs.State.Position().UCI(legal[rng.IntN(len(legal))])
		move := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}
		if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: tokens[ply%2]}, service.ActionInput{Action: move}); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("ply %d", ply+1))
	}
	// A gone connection is deleted on the first failed post.
	f.post.gone["cs-gone"] = true
	gone := f.connect(t, "cs-gone", "", "en")
	f.send(t, gone, `{"action":"subscribe","gameId":"`+host.GameID+`"}`)
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: host.Token}, service.ActionInput{Action: game.Action{Type: game.ActionOfferDraw}}); err != nil {
		t.Fatal(err)
	}
	check("a draw offer")
	if _, err := f.conns.Connection(ctx, "cs-gone"); err == nil {
		t.Errorf("the gone connection is still stored")
	}
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: guest.Token}, service.ActionInput{Action: game.Action{Type: game.ActionResign}}); err != nil {
		t.Fatal(err)
	}
	check("resigned")
	summary := func(c *gwClient) string {
		r, _ := c.follow.Game(host.GameID).View["result"].(map[string]any)
		s, _ := r["summary"].(string)
		return s
	}
	if en, ko := summary(clients[2]), summary(clients[3]); en == ko || en == "" || ko == "" {
		t.Errorf("result summaries: English %q, Korean %q; want each in its language", en, ko)
	}
}

// TestFanoutPresence: a seat is connected while its connection is
// subscribed, and disconnected (with since) when its last one closes.
func TestFanoutPresence(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	host, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite()})
	if err != nil {
		t.Fatal(err)
	}
	guest, err := f.svc.Join(ctx, host.GameID, service.JoinInput{})
	if err != nil {
		t.Fatal(err)
	}
	presence := func() map[string]any {
		v := f.get(t, host.GameID, "", "en")
		return v["players"].(map[string]any)["black"].(map[string]any)["presence"].(map[string]any)
	}
	if p := presence(); p["connected"] != false || p["since"] != nil {
		t.Fatalf("before any connection: %v; want not connected, since null", p)
	}
	cb := f.connect(t, "cb", guest.Token, "en")
	f.send(t, cb, `{"action":"subscribe","gameId":"`+host.GameID+`"}`)
	if p := presence(); p["connected"] != true || p["since"] == nil {
		t.Fatalf("while subscribed: %v; want connected since now", p)
	}
	f.clock.Advance(5 * time.Second)
	if err := f.gs.Disconnect(ctx, "cb"); err != nil {
		t.Fatal(err)
	}
	if p := presence(); p["connected"] != false || p["since"] != float64(f.clock.Now().UnixMilli()) {
		t.Errorf("after its connection closed: %v; want not connected since %d", p, f.clock.Now().UnixMilli())
	}
}

// TestSubscribeRecordsBeforeItReads: a version committed and fanned out
// while a subscribe is between its authorization and its record never
// reaches the new subscription by the fan-out; the subscribe's own read,
// after the record, must therefore include it (record, then read).
func TestSubscribeRecordsBeforeItReads(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	host, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite()})
	if err != nil {
		t.Fatal(err)
	}
	f.record(t, host.GameID)
	guest, err := f.svc.Join(ctx, host.GameID, service.JoinInput{})
	if err != nil {
		t.Fatal(err)
	}
	f.fanout(t, host.GameID)
	racing := &racingConns{memConns: f.conns}
	f.gs = api.NewGatewayStream(f.svc, racing, f.post, nil)
	racing.beforeRecord = func() {
		move := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e2e4"}}
		if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: host.Token}, service.ActionInput{Action: move}); err != nil {
			t.Error(err)
		}
		f.fanout(t, host.GameID)
	}
	spec := f.connect(t, "cs", "", "en")
	f.send(t, spec, `{"action":"subscribe","gameId":"`+host.GameID+`"}`)
	racing.beforeRecord = nil
	f.take(t, spec)
	move := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e7e5"}}
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: guest.Token}, service.ActionInput{Action: move}); err != nil {
		t.Fatal(err)
	}
	f.fanout(t, host.GameID)
	f.take(t, spec)
	if g, want := spec.follow.Game(host.GameID), f.get(t, host.GameID, "", "en"); !streamtest.Equal(g.View, want) {
		t.Fatalf("the subscriber lost a version: at %d, %s", g.Version, streamtest.Diff(g.View, want))
	}
}

// racingConns runs beforeRecord just before a subscription is recorded.
type racingConns struct {
	*memConns
	beforeRecord func()
}

func (r *racingConns) Subscribe(ctx context.Context, s push.Subscription, max int) error {
	if r.beforeRecord != nil {
		r.beforeRecord()
	}
	return r.memConns.Subscribe(ctx, s, max)
}

// TestGatewayPlayerTokenConnection: a connection made with a player token
// keeps its kind, so the player's seat subscribes as that seat (the hash
// alone would not be authorized as a player token) and its account-wide
// subscription works.
func TestGatewayPlayerTokenConnection(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	p, err := f.svc.CreatePlayer(ctx, service.NewPlayerInput{Name: &[]string{"지우"}[0]})
	if err != nil {
		t.Fatal(err)
	}
	host, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite(), Caller: service.Caller{Token: p.Token}})
	if err != nil {
		t.Fatal(err)
	}
	f.record(t, host.GameID)
	c := f.connect(t, "cp", p.Token, "ko")
	f.send(t, c, `{"action":"subscribe","gameId":"`+host.GameID+`"}`)
	got := f.take(t, c)
	if len(got) != 1 || got[0]["type"] != "subscribed" || got[0]["game"].(map[string]any)["you"] != "white" {
		t.Fatalf("subscribe with a player token: %v; want subscribed as white", got)
	}
	f.send(t, c, `{"action":"subscribe","player":"me"}`)
	if got := f.take(t, c); len(got) != 1 || got[0]["type"] != "subscribed" || got[0]["player"] != p.Player.PlayerID {
		t.Fatalf("account-wide subscribe: %v", got)
	}
	guest, err := f.svc.Join(ctx, host.GameID, service.JoinInput{})
	if err != nil {
		t.Fatal(err)
	}
	f.fanout(t, host.GameID)
	got = f.take(t, c)
	move := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e2e4"}}
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: p.Token}, service.ActionInput{Action: move}); err != nil {
		t.Fatal(err)
	}
	move.Move.UCI = "e7e5"
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: guest.Token}, service.ActionInput{Action: move}); err != nil {
		t.Fatal(err)
	}
	f.fanout(t, host.GameID)
	var kinds []string
	for _, m := range append(got, f.take(t, c)...) {
		if m["type"] == "playerEvent" {
			kinds = append(kinds, fmt.Sprint(m["kind"]))
			if m["kind"] == "yourTurn" && m["move"].(map[string]any)["san"] != "e5" {
				t.Errorf("yourTurn %v; want the opponent's e5", m)
			}
		}
	}
	if !slices.Equal(kinds, []string{"gameStarted", "yourTurn"}) {
		t.Errorf("player events %v; want gameStarted, yourTurn", kinds)
	}
	// The account's subscription is one of the connection's ten: with the
	// game's, eight more games fit, a ninth does not.
	for i := range 9 {
		g, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite(), Caller: service.Caller{Token: p.Token}})
		if err != nil {
			t.Fatal(err)
		}
		f.send(t, c, `{"action":"subscribe","gameId":"`+g.GameID+`"}`)
		got := f.take(t, c)
		if want := map[bool]string{true: "error", false: "subscribed"}[i == 8]; len(got) != 1 || got[0]["type"] != want {
			t.Fatalf("subscription %d besides the account's and the game's: %v; want %s", i+1, got, want)
		}
	}
	spec := f.connect(t, "cs", "", "en")
	f.send(t, spec, `{"action":"subscribe","player":"me"}`)
	seat := f.connect(t, "cg", guest.Token, "en")
	f.send(t, seat, `{"action":"subscribe","player":"me"}`)
	if a, b := f.take(t, spec), f.take(t, seat); len(a) != 1 || a[0]["code"] != "player_required" || len(b) != 1 || b[0]["code"] != "player_required" {
		t.Errorf("account-wide subscribe without a player token: %v, with a seat token: %v; want player_required for both", a, b)
	}
}

func TestMessagesAndLimits(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if err := f.gs.Connect(ctx, api.GatewayConnect{ConnID: "bad", Authorization: "Bearer st_short"}); err == nil {
		t.Errorf("$connect with a malformed token = nil; want a refusal")
	}
	if err := f.gs.Connect(ctx, api.GatewayConnect{ConnID: "c", AcceptLanguage: "en"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ body, code string }{
		{`nope`, "invalid_json"},
		{`{"action":"fly"}`, "invalid_field"},
		{`{"action":"subscribe","gameId":"nosuchgame123"}`, "game_not_found"},
		{`{"action":"sync","gameId":"nosuchgame123"}`, "game_not_found"},
	} {
		if err := f.gs.Message(ctx, "c", []byte(tt.body)); err != nil {
			t.Fatal(err)
		}
		got := f.post.take("c")
		if len(got) != 1 || got[0]["type"] != "error" || got[0]["code"] != tt.code {
			t.Errorf("%s: %v; want error %s", tt.body, got, tt.code)
		}
	}
	f.gs.Message(ctx, "c", []byte(`{"action":"ping"}`))
	if got := f.post.take("c"); len(got) != 1 || got[0]["type"] != "pong" {
		t.Errorf("ping: %v", got)
	}
	var ids []string
	for i := 0; i < 11; i++ {
		host, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite()})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, host.GameID)
		f.gs.Message(ctx, "c", []byte(`{"action":"subscribe","gameId":"`+host.GameID+`"}`))
	}
	got := f.post.take("c")
	if len(got) != 11 || got[10]["type"] != "error" || got[10]["code"] != "too_many_subscriptions" || got[10]["gameId"] != ids[10] {
		t.Errorf("11 subscriptions: last answer %v; want too_many_subscriptions for %s", got[len(got)-1], ids[10])
	}
}

func hostWhite() game.Options {
	o := game.DefaultOptions()
	o.ColorAssignment = game.ColorsHostWhite
	return o
}

// gatedPoster holds every post until wave posts are in flight at once (or
// a bound passes: then the post fails), and records the most in flight.
type gatedPoster struct {
	push.Poster
	wave int

	mu       sync.Mutex
	inFlight int
	most     int
	release  chan struct{}
	released bool
}

func (g *gatedPoster) Post(ctx context.Context, connID string, data []byte) error {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	if g.inFlight >= g.wave && !g.released {
		g.released = true
		close(g.release)
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	select {
	case <-g.release:
		return g.Poster.Post(ctx, connID, data)
	case <-time.After(10 * time.Second):
		return fmt.Errorf("post to %s: never %d posts in flight at once", connID, g.wave)
	}
}

// TestDeliverPostsConcurrentlyBounded: a version of a game with 40
// spectators is posted to them concurrently (the fan-out does not wait for
// one round trip to @connections after another), at most 16 at once, and
// each gets its change once.
func TestDeliverPostsConcurrentlyBounded(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	host, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Join(ctx, host.GameID, service.JoinInput{}); err != nil {
		t.Fatal(err)
	}
	const spectators = 40
	var clients []*gwClient
	for i := range spectators {
		c := f.connect(t, fmt.Sprintf("spectator-%02d", i), "", "en")
		f.send(t, c, `{"action":"subscribe","gameId":"`+host.GameID+`"}`)
		f.take(t, c)
		clients = append(clients, c)
	}
	f.record(t, host.GameID)
	gated := &gatedPoster{Poster: f.post, wave: 16, release: make(chan struct{})}
	f.gs = api.NewGatewayStream(f.svc, f.conns, gated, nil)
	move := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e2e4"}}
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: host.Token}, service.ActionInput{Action: move}); err != nil {
		t.Fatal(err)
	}
	if sent := f.fanout(t, host.GameID); sent != spectators {
		t.Errorf("sent %d; want one post to each of the %d spectators", sent, spectators)
	}
	if gated.most != 16 {
		t.Errorf("at most %d posts in flight; want 16 (concurrent, bounded)", gated.most)
	}
	for _, c := range clients {
		if got := f.take(t, c); len(got) != 1 || got[0]["type"] != "change" {
			t.Errorf("%s got %v; want the move's change once", c.id, got)
		}
	}
}
