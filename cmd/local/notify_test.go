package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// End-to-end tests of notifications (SPEC §16.3) on the local server: the
// inbox, and the device notifications posted to a webhook server run by
// the test (NOTIFY_WEBHOOK_URL), from real games with real stream
// connections.

// webhookPost is one device notification the webhook received.
type webhookPost struct {
	Device struct {
		Platform string `json:"platform"`
		Token    string `json:"token"`
	} `json:"device"`
	Notification struct {
		ID     string         `json:"notificationId"`
		Kind   string         `json:"kind"`
		GameID string         `json:"gameId"`
		Title  string         `json:"title"`
		Body   string         `json:"body"`
		Data   map[string]any `json:"data"`
	} `json:"notification"`
}

// webhookServer records what it is posted.
type webhookServer struct {
	t     *testing.T
	mu    sync.Mutex
	posts []webhookPost
	got   chan struct{}
}

func startWebhook(t *testing.T) (*webhookServer, string) {
	w := &webhookServer{t: t, got: make(chan struct{}, 1000)}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var p webhookPost
		if err := json.NewDecoder(r.Body).Decode(&p); err != nil || r.Method != http.MethodPost {
			t.Errorf("webhook got %s %v", r.Method, err)
			rw.WriteHeader(http.StatusBadRequest)
			return
		}
		w.mu.Lock()
		w.posts = append(w.posts, p)
		w.mu.Unlock()
		w.got <- struct{}{}
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	return w, srv.URL
}

// kinds returns the kinds posted to a device token so far, sorted.
func (w *webhookServer) kinds(token string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, p := range w.posts {
		if p.Device.Token == token {
			out = append(out, p.Notification.Kind)
		}
	}
	slices.Sort(out)
	return out
}

// await waits until token's device has been posted want (sorted kinds),
// then a moment more so that a post too many shows.
func (w *webhookServer) await(token string, want ...string) []webhookPost {
	w.t.Helper()
	slices.Sort(want)
	deadline := time.After(10 * time.Second)
	for !slices.Equal(w.kinds(token), want) {
		if len(w.kinds(token)) > len(want) {
			w.t.Fatalf("webhook got %v for %s…; want %v", w.kinds(token), token[:8], want)
		}
		select {
		case <-w.got:
		case <-deadline:
			w.t.Fatalf("webhook got %v for %s… within 10 s; want %v", w.kinds(token), token[:8], want)
		}
	}
	select {
	case <-w.got:
	case <-time.After(200 * time.Millisecond):
	}
	if got := w.kinds(token); !slices.Equal(got, want) {
		w.t.Fatalf("webhook got %v for %s…; want %v", got, token[:8], want)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []webhookPost
	for _, p := range w.posts {
		if p.Device.Token == token {
			out = append(out, p)
		}
	}
	return out
}

// notifPlayer is a registered player with one device.
type notifPlayer struct {
	token, id, device string
}

func (c client) notifPlayer(name string, n int, locale string) notifPlayer {
	c.t.Helper()
	code, created := c.call("POST", "/v1/players", "", map[string]any{"name": name})
	if code != 201 {
		c.t.Fatalf("create player: %d %v", code, created)
	}
	p := notifPlayer{token: created["token"].(string), id: created["player"].(map[string]any)["playerId"].(string),
		device: fmt.Sprintf("%064x", 0xd0d0+n)}
	if code, body := c.call("POST", "/v1/players/me/devices", p.token, map[string]any{"platform": "apns", "token": p.device, "locale": locale}); code != 201 {
		c.t.Fatalf("register device: %d %v", code, body)
	}
	return p
}

// inboxKinds is the player's inbox, oldest first.
func (c client) inboxKinds(token string) []string {
	c.t.Helper()
	code, body := c.call("GET", "/v1/players/me/notifications", token, nil)
	if code != 200 {
		c.t.Fatalf("inbox: %d %v", code, body)
	}
	var out []string
	items := body["notifications"].([]any)
	for i := len(items) - 1; i >= 0; i-- {
		out = append(out, items[i].(map[string]any)["kind"].(string))
	}
	return out
}

func (c client) move(id, token, uci string) {
	c.t.Helper()
	if code, body := c.call("POST", "/v1/games/"+id+"/actions", token, map[string]any{"type": "move", "payload": map[string]any{"uci": uci}}); code != 200 {
		c.t.Fatalf("%s in %s: %d %v", uci, id, code, body)
	}
}

// TestNotificationsEndToEnd: Ana plays from her phone over HTTP alone
// (no stream: away), Ben with the game's stream open. Ben's phone hears
// nothing while his stream is open; his stream closing on his turn starts
// the grace, and his phone and inbox are told; he comes back in time and
// the game goes on. Ana's phone gets a yourTurn after each of Ben's moves
// (a minute apart), and each player's phone the end once.
func TestNotificationsEndToEnd(t *testing.T) {
	hook, url := startWebhook(t)
	var offset atomic.Int64
	c := startLocal(t, func(cfg *config) {
		cfg.notifyWebhook = url
		cfg.now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	})
	later := func() { offset.Add(int64(61 * time.Second)) } // past the per-game-and-kind minute

	ana := c.notifPlayer("Ana", 1, "en")
	ben := c.notifPlayer("벤", 2, "ko")
	code, g := c.call("POST", "/v1/games", ana.token, map[string]any{"options": map[string]any{
		"colorAssignment": "hostWhite", "timeControl": "10+0", "disconnectGraceSec": 30}})
	if code != 201 {
		t.Fatalf("create: %d %v", code, g)
	}
	id := g["gameId"].(string)
	if code, j := c.call("POST", "/v1/games/"+id+"/join", ben.token, map[string]any{}); code != 200 {
		t.Fatalf("join: %d %v", code, j)
	}
	hook.await(ana.device, "gameStarted")
	hook.await(ben.device, "gameStarted")

	benStream := c.stream(ben.token)
	benStream.subscribe(id)
	c.move(id, ana.token, "e2e4")
	// Ben's stream closes on his turn: the grace starts.
	benStream.ws.Close(websocket.StatusNormalClosure, "")
	posts := hook.await(ben.device, "gameStarted", "disconnectGraceStarted")
	for _, p := range posts {
		if p.Notification.Kind == "disconnectGraceStarted" && (p.Notification.GameID != id || p.Notification.Data["deadline"] == nil) {
			t.Errorf("disconnectGraceStarted %+v; want the game and the grace's end", p.Notification)
		}
	}
	if got := c.inboxKinds(ben.token); !slices.Equal(got, []string{"gameStarted", "yourTurn", "disconnectGraceStarted"}) {
		t.Errorf("Ben's inbox %v; want gameStarted, yourTurn (heard on the stream), disconnectGraceStarted", got)
	}
	// He is back within the grace: the game goes on.
	benStream = c.stream(ben.token)
	benStream.subscribe(id)
	if phase := c.view(id, "", "en")["phase"]; phase != "playing" {
		t.Fatalf("after Ben came back the game is %v", phase)
	}
	c.move(id, ben.token, "e7e5")
	posts = hook.await(ana.device, "gameStarted", "yourTurn")
	for _, p := range posts {
		if p.Notification.Kind == "yourTurn" && p.Notification.Data["move"].(map[string]any)["san"] != "e5" {
			t.Errorf("Ana's yourTurn %+v; want Ben's e5", p.Notification)
		}
	}
	later()
	c.move(id, ana.token, "g1f3")
	c.move(id, ben.token, "b8c6")
	hook.await(ana.device, "gameStarted", "yourTurn", "yourTurn")
	later()
	c.call("POST", "/v1/games/"+id+"/actions", ben.token, map[string]any{"type": "resign"})
	// Ana is away: her phone hears the end; Ben's stream is open: his
	// inbox only.
	hook.await(ana.device, "gameStarted", "yourTurn", "yourTurn", "gameEnded")
	hook.await(ben.device, "gameStarted", "disconnectGraceStarted")
	if got := c.inboxKinds(ana.token); !slices.Equal(got, []string{"gameStarted", "yourTurn", "yourTurn", "gameEnded"}) {
		t.Errorf("Ana's inbox %v", got)
	}
	if got := c.inboxKinds(ben.token); !slices.Equal(got, []string{"gameStarted", "yourTurn", "disconnectGraceStarted", "yourTurn", "gameEnded"}) {
		t.Errorf("Ben's inbox %v", got)
	}
}
