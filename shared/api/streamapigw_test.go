package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"chessapi/shared/api"
	"chessapi/shared/chess"
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
	store *boltstore.Store
	conns *memConns
	post  *recorder
	gs    *api.GatewayStream
}

func newFixture(t *testing.T) *fixture {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := service.New(service.Config{Store: store, Effects: service.EffectsByStream})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{svc: svc, store: store, conns: newMemConns(), post: &recorder{got: map[string][]map[string]any{}, gone: map[string]bool{}}}
	f.gs = api.NewGatewayStream(svc, f.conns, f.post, nil)
	return f
}

// fanout delivers the game's current record, decoded, as the fan-out
// function does for each record of the change stream.
func (f *fixture) fanout(t *testing.T, gameID string) int {
	t.Helper()
	rec, err := f.store.Get(t.Context(), gameID)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.svc.Decode(rec)
	if err != nil {
		t.Fatal(err)
	}
	sent, err := f.gs.Deliver(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	return sent
}

func TestFanoutGivesEachSubscriberItsView(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	host, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite(), Player: service.PlayerInput{Name: "w"}})
	if err != nil {
		t.Fatal(err)
	}
	guest, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Player: service.PlayerInput{Name: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	for id, auth := range map[string]string{"cw": "Bearer " + host.Token, "cb": "Bearer " + guest.Token, "cs": ""} {
		if err := f.gs.Connect(ctx, api.GatewayConnect{ConnID: id, Authorization: auth}); err != nil {
			t.Fatal(err)
		}
		if err := f.gs.Message(ctx, id, []byte(`{"action":"subscribe","gameId":"`+host.GameID+`"}`)); err != nil {
			t.Fatal(err)
		}
		if got := f.post.take(id); len(got) != 1 || got[0]["type"] != "subscribed" {
			t.Fatalf("%s after subscribe: %v", id, got)
		}
	}
	move := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e2e4"}}
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: host.Token}, service.ActionInput{Action: move}); err != nil {
		t.Fatal(err)
	}
	if sent := f.fanout(t, host.GameID); sent != 3 {
		t.Fatalf("fanout sent %d; want 3", sent)
	}
	for id, wantYou := range map[string]any{"cw": "white", "cb": "black", "cs": nil} {
		got := f.post.take(id)
		if len(got) != 1 || got[0]["type"] != "change" {
			t.Fatalf("%s: %v", id, got)
		}
		view := got[0]["game"].(map[string]any)
		_, legal := view["legalMoves"]
		if view["you"] != wantYou || legal != (id == "cb") || got[0]["version"].(float64) != view["version"].(float64) {
			t.Errorf("%s: you %v legalMoves %v version %v", id, view["you"], legal, got[0]["version"])
		}
	}
	// A gone connection is deleted on the first failed post.
	f.post.gone["cs"] = true
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: guest.Token}, service.ActionInput{Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e7e5"}}}); err != nil {
		t.Fatal(err)
	}
	if sent := f.fanout(t, host.GameID); sent != 2 {
		t.Errorf("fanout with one gone connection sent %d; want 2", sent)
	}
	if _, err := f.conns.Connection(ctx, "cs"); err == nil {
		t.Errorf("the gone connection is still stored")
	}
	// The last connection of black closing starts black's grace.
	if err := f.gs.Disconnect(ctx, "cb"); err != nil {
		t.Fatal(err)
	}
	v, err := f.svc.Get(ctx, host.GameID, service.Caller{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Players[chess.Black].Connected {
		t.Errorf("black still connected after its only connection closed")
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
