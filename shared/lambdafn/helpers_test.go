package lambdafn

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/deploy"
	"chessapi/internal/apispec"
	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// eventsStart is when the sample events were "sent" (their timeEpoch is
// 2026-11-29 14:00 UTC onwards); the fixtures' clock starts there.
var eventsStart = time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)

type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func (c *testClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// recordingScheduler is a service.Scheduler that remembers what it was
// asked to schedule (EventBridge Scheduler is tested in its own package and
// in the as-deployed test).
type recordingScheduler struct {
	mu        sync.Mutex
	tasks     []service.TimeoutTask
	cancelled []string
}

var _ service.Scheduler = (*recordingScheduler)(nil)

func (s *recordingScheduler) ScheduleTimeout(_ context.Context, task service.TimeoutTask) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tasks = append(s.tasks, task)
	return nil
}

func (s *recordingScheduler) CancelTimeout(_ context.Context, gameID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelled = append(s.cancelled, gameID)
	return nil
}

func (s *recordingScheduler) Cancelled() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cancelled)
}

func (s *recordingScheduler) Tasks() []service.TimeoutTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.tasks)
}

// recordingTrigger is a service.AITrigger that remembers the tasks it was
// given instead of invoking the AI function; tests replay them.
type recordingTrigger struct {
	mu    sync.Mutex
	tasks []service.AITask
}

var _ service.AITrigger = (*recordingTrigger)(nil)

func (r *recordingTrigger) TriggerAI(_ context.Context, task service.AITask) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tasks = append(r.tasks, task)
	return nil
}

func (r *recordingTrigger) Tasks() []service.AITask {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.tasks)
}

// fixture is the three functions wired as FromEnv wires them, but on the
// embedded store, a fixed clock and recording scheduler and trigger.
type fixture struct {
	store   *boltstore.Store
	clock   *testClock
	sched   *recordingScheduler
	trigger *recordingTrigger
	move    *App
	timeout *App
	ai      *App
}

func newFixture(t testing.TB, aiAPIKey string) *fixture {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &fixture{store: store, clock: &testClock{now: eventsStart}, sched: &recordingScheduler{}, trigger: &recordingTrigger{}}
	deps := Deps{Config: service.Config{Store: store, Players: store, Lister: store, Notifications: store, Sender: eventsSender{},
		Scheduler: f.sched, AITrigger: f.trigger, Now: f.clock.Now}}
	for _, fn := range []struct {
		app **App
		cfg Config
	}{
		{&f.move, Config{Function: Move}},
		{&f.timeout, Config{Function: Timeout}},
		// Without a bootstrap key the fixture's ai function has keys off
		// (AI_API_KEYS=off); with one, keys from the embedded store and
		// that key are required, counted in the embedded store.
		{&f.ai, Config{Function: AI, AIAPIKey: aiAPIKey, AIKeysOff: aiAPIKey == "", MemoryMB: 256}},
	} {
		d := deps
		if fn.cfg.Function == AI {
			d.AITrigger = nil // as FromEnv: the ai function has no AI_FUNCTION_NAME
			d.APIKeys, d.KeyCounter = store, store
		}
		app, err := NewApp(fn.cfg, d)
		if err != nil {
			t.Fatalf("NewApp(%s): %v", fn.cfg.Function, err)
		}
		*fn.app = app
	}
	return f
}

// loadEvents reads events/ through deploy.LoadEvents, which decodes every
// file strictly into its handler's input type.
func loadEvents(t *testing.T) map[string]deploy.Event {
	t.Helper()
	evs, err := deploy.LoadEventsByName(filepath.Join("..", "..", "events"))
	if err != nil {
		t.Fatalf("deploy.LoadEventsByName: %v", err)
	}
	return evs
}

// Player ids of the seeded sample game's seats.
const (
	sampleWhitePlayer = "sample-white"
	sampleBlackPlayer = "sample-black"
)

// seedSample stores the game events/README.md replays against: id
// deploy.SampleGameID, standard, human against human, the README's options
// (10+5, drawMode fide), white holding deploy.SampleWhiteToken and black
// deploy.SampleBlackToken, both seated, no moves, created at the clock's
// now. With joinBlack false the second seat stays free.
func seedSample(t *testing.T, f *fixture, joinBlack bool) *game.State {
	t.Helper()
	opts := game.DefaultOptions() // 10+5
	opts.DrawMode = game.DrawFIDE
	now := f.clock.Now()
	white := game.Player{ID: sampleWhitePlayer, Name: "White", TokenHash: service.HashToken(deploy.SampleWhiteToken)}
	black := game.Player{ID: sampleBlackPlayer, Name: "Black", TokenHash: service.HashToken(deploy.SampleBlackToken)}
	// The colours follow colorAssignment (random by default, from the seed):
	// host with the white token, and swap the players if the host came out
	// black, so the README's options stay as they are.
	host, guest := white, black
	st, _, err := game.New(game.NewGame{GameID: deploy.SampleGameID, Options: opts, Host: host, Seed: 1}, now)
	if err != nil {
		t.Fatalf("game.New: %v", err)
	}
	if c, _ := st.SeatOf(host.ID); c != chess.White {
		host, guest = black, white
		if st, _, err = game.New(game.NewGame{GameID: deploy.SampleGameID, Options: opts, Host: host, Seed: 1}, now); err != nil {
			t.Fatalf("game.New: %v", err)
		}
	}
	if joinBlack {
		if st, _, err = game.Reduce(st, game.Join{Player: guest}, now); err != nil {
			t.Fatalf("game.Join: %v", err)
		}
	}
	storeState(t, f.store, st)
	return st
}

// storeState creates the record of st as the service would.
func storeState(t *testing.T, store service.Store, st *game.State) {
	t.Helper()
	data := storedgame.Encode(st)
	rec := service.GameRecord{GameID: st.GameID, Version: st.Version, StateVersion: st.StateVersion, State: data}
	if d, ok := game.Deadline(st); ok {
		rec.Deadline = d
	}
	if err := store.Create(context.Background(), rec); err != nil {
		t.Fatalf("store.Create(%s): %v", st.GameID, err)
	}
}

// stored reads a game's state back from the store.
func stored(t *testing.T, store service.Store, gameID string) *game.State {
	t.Helper()
	rec, err := store.Get(context.Background(), gameID)
	if err != nil {
		t.Fatalf("store.Get(%s): %v", gameID, err)
	}
	st, err := storedgame.Decode(rec.State)
	if err != nil {
		t.Fatalf("storedgame.Decode(%s): %v", gameID, err)
	}
	return st
}

// response is the part of the API's JSON answers the tests look at.
type response struct {
	// The change log (GET /v1/games/{id}/events).
	Version int64 `json:"version"`
	Reset   bool  `json:"reset"`
	Changes []struct {
		Version int64       `json:"version"`
		At      int64       `json:"at"`
		Events  []eventJSON `json:"events"`
	} `json:"changes"`
	GameID   string          `json:"gameId"`
	PlayerID string          `json:"playerId"`
	Token    string          `json:"token"`
	Game     *viewJSON       `json:"game"`
	Events   []eventJSON     `json:"events"`
	Error    *errorFields    `json:"error"`
	Status   string          `json:"status"` // health; positions' game status
	FEN      string          `json:"fen"`
	Turn     string          `json:"turn"`
	Check    bool            `json:"check"`
	Legal    json.RawMessage `json:"legalMoves"`
	BestMove string          `json:"bestMove"`
	SAN      string          `json:"san"`
	Score    *struct {
		CP   *int `json:"cp"`
		Mate *int `json:"mate"`
	} `json:"score"`
}

type errorFields struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field"`
}

type viewJSON struct {
	GameID  string  `json:"gameId"`
	Version int64   `json:"version"`
	Phase   string  `json:"phase"`
	Variant string  `json:"variant"`
	You     *string `json:"you"`
	Turn    string  `json:"turn"`
	Players map[string]*struct {
		PlayerID string  `json:"playerId"`
		AI       *string `json:"ai"`
	} `json:"players"`
	Moves []struct {
		UCI   string `json:"uci"`
		SAN   string `json:"san"`
		Color string `json:"color"`
	} `json:"moves"`
	LegalMoves []json.RawMessage `json:"legalMoves"`
	Pending    struct {
		Undo *struct{ By string } `json:"undo"`
		Draw *struct{ By string } `json:"draw"`
	} `json:"pending"`
	Result *struct {
		Winner *string `json:"winner"`
		Reason string  `json:"reason"`
	} `json:"result"`
}

type eventJSON struct {
	Type   string `json:"type"`
	UCI    string `json:"uci"`
	SAN    string `json:"san"`
	Castle string `json:"castle"`
	Reason string `json:"reason"`
}

// sanList is the SAN of a view's moves.
func (v *viewJSON) sanList() []string {
	var out []string
	for _, m := range v.Moves {
		out = append(out, m.SAN)
	}
	return out
}

// httpRequest decodes an HTTP event file the way the Lambda runtime does
// (json.Unmarshal into the handler's parameter type).
func httpRequest(t *testing.T, ev deploy.Event) events.APIGatewayV2HTTPRequest {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(ev.Raw, &req); err != nil {
		t.Fatalf("%s: %v", ev.Name, err)
	}
	return req
}

// deref prints an optional string.
func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// checkContract validates the function's answer to an HTTP event against
// openapi.yaml (status, headers, body).
func checkContract(t *testing.T, req events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse) {
	t.Helper()
	if err := apispec.MustLoad(t).ValidateAPIGateway(req, resp); err != nil {
		t.Errorf("the answer breaks openapi.yaml: %v", err)
	}
}

func decodeResponse(t *testing.T, name string, resp events.APIGatewayV2HTTPResponse) response {
	t.Helper()
	var r response
	if strings.HasPrefix(resp.Headers["Content-Type"], "application/x-chess-pgn") {
		return r
	}
	body, err := apispec.APIGatewayBody(resp)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: response body %q: %v", name, body, err)
	}
	return r
}

// legalUCI reports whether uci is a legal move after playing moves from fen.
func legalUCI(t *testing.T, variant chess.Variant, fen string, moves []string, uci string) bool {
	t.Helper()
	pos, err := chess.ParseFENVariant(fen, variant)
	if err != nil {
		t.Fatalf("ParseFENVariant(%q): %v", fen, err)
	}
	for _, m := range moves {
		mv, err := pos.ParseUCI(m)
		if err != nil {
			t.Fatalf("ParseUCI(%q): %v", m, err)
		}
		pos.Play(mv)
	}
	_, err = pos.ParseUCI(uci)
	return err == nil
}
