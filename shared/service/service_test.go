package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// recorder records scheduled deadlines and AI triggers.
type recorder struct {
	mu       sync.Mutex
	timeouts []service.TimeoutTask
	aiTasks  []service.AITask
}

func (r *recorder) ScheduleTimeout(_ context.Context, t service.TimeoutTask) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timeouts = append(r.timeouts, t)
	return nil
}

func (r *recorder) CancelTimeout(context.Context, string) error { return nil }

func (r *recorder) TriggerAI(_ context.Context, t service.AITask) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.aiTasks = append(r.aiTasks, t)
	return nil
}

func (r *recorder) lastTimeout(t *testing.T) service.TimeoutTask {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.timeouts) == 0 {
		t.Fatal("nothing scheduled")
	}
	return r.timeouts[len(r.timeouts)-1]
}

// firstMover is an Engine whose AI seats play the first legal move.
type firstMover struct{}

func (firstMover) ChooseMove(_ context.Context, req service.AIMoveRequest) (chess.Move, error) {
	return req.Position.LegalMoves()[0], nil
}

func (firstMover) Search(context.Context, engine.Params) (engine.Result, error) {
	return engine.Result{}, errors.New("firstMover does not search")
}

// moveUCI is a move action.
func moveUCI(uci string) game.Action {
	return game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}
}

// options builds options from a JSON object of string and integer values
// (the request decoding is the edge's).
func options(t *testing.T, js string) game.Options {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		t.Fatal(err)
	}
	var in game.OptionsInput
	str := func(k string) *string {
		if v, ok := raw[k].(string); ok {
			return &v
		}
		return nil
	}
	num := func(k string) *int64 {
		if v, ok := raw[k].(float64); ok {
			n := int64(v)
			return &n
		}
		return nil
	}
	in.TimeControl, in.ColorAssignment, in.Variant, in.DrawMode = str("timeControl"), str("colorAssignment"), str("variant"), str("drawMode")
	in.FirstMoveSec, in.DisconnectGraceSec, in.IdleLimitSec = num("firstMoveSec"), num("disconnectGraceSec"), num("idleLimitSec")
	o, err := game.BuildOptions(in)
	if err != nil {
		t.Fatalf("options(%s): %v", js, err)
	}
	return o
}

type fixture struct {
	svc   *service.Service
	clock *fakeclock.Clock
	rec   *recorder
}

func newFixture(t *testing.T, store service.Store) *fixture {
	t.Helper()
	if store == nil {
		bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bolt.Close() })
		store = bolt
	}
	clock := fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	rec := &recorder{}
	svc, err := service.New(service.Config{
		Store: store, Scheduler: rec, AITrigger: rec, Engine: firstMover{},
		Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, clock: clock, rec: rec}
}

type seats struct {
	gameID       string
	white, black service.Caller
}

// newGame creates and joins a human game with the given options.
func (f *fixture) newGame(t *testing.T, opts string) seats {
	t.Helper()
	ctx := t.Context()
	host, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, opts), Player: service.PlayerInput{Name: "host"}})
	if err != nil {
		t.Fatal(err)
	}
	guest, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Player: service.PlayerInput{Name: "guest"}})
	if err != nil {
		t.Fatal(err)
	}
	s := seats{gameID: host.GameID}
	if *guest.Game.You == chess.White {
		s.white, s.black = service.Caller{Token: guest.Token}, service.Caller{Token: host.Token}
	} else {
		s.white, s.black = service.Caller{Token: host.Token}, service.Caller{Token: guest.Token}
	}
	return s
}

func (f *fixture) move(t *testing.T, gameID string, v service.Caller, uci string) error {
	t.Helper()
	_, err := f.svc.Act(t.Context(), gameID, v, service.ActionInput{Action: moveUCI(uci)})
	return err
}

func (f *fixture) view(t *testing.T, gameID string) *game.View {
	t.Helper()
	v, err := f.svc.Get(t.Context(), gameID, service.Caller{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestLazyTimeout: a Fischer game whose clock runs out ends with the right
// result on the next read, without any scheduler involvement.
func TestLazyTimeout(t *testing.T) {
	f := newFixture(t, nil)
	g := f.newGame(t, `{"timeControl":"1+0"}`)
	for i, uci := range []string{"e2e4", "e7e5", "g1f3"} {
		v := g.white
		if i%2 == 1 {
			v = g.black
		}
		if err := f.move(t, g.gameID, v, uci); err != nil {
			t.Fatal(err)
		}
	}
	// Black's main clock started with its first move; 60 s run out now.
	f.clock.Advance(61 * time.Second)
	view := f.view(t, g.gameID)
	if view.Phase != game.PhaseFinished || view.Result == nil || view.Result.Reason != game.ReasonTimeLoss || view.Result.Winner == nil || *view.Result.Winner != chess.White {
		t.Fatalf("after black's flag: phase %s result %+v", view.Phase, view.Result)
	}
	// A move after the flag is refused.
	if err := f.move(t, g.gameID, g.black, "b8c6"); err == nil {
		t.Error("a move after the flag was accepted")
	}
}

func TestFirstMoveAbort(t *testing.T) {
	f := newFixture(t, nil)
	g := f.newGame(t, `{"firstMoveSec":15}`)
	f.clock.Advance(16 * time.Second)
	view := f.view(t, g.gameID)
	if view.Result == nil || view.Result.Reason != game.ReasonAborted || len(view.Result.Ranking) != 0 {
		t.Fatalf("first-move abort: %+v", view.Result)
	}
}

func TestDisconnectGrace(t *testing.T) {
	f := newFixture(t, nil)
	g := f.newGame(t, `{"timeControl":"10+0","disconnectGraceSec":30}`)
	for i, uci := range []string{"e2e4", "e7e5"} {
		v := g.white
		if i == 1 {
			v = g.black
		}
		if err := f.move(t, g.gameID, v, uci); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.svc.SetPresence(t.Context(), g.gameID, g.white, false); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(29 * time.Second)
	if v := f.view(t, g.gameID); v.Phase != game.PhasePlaying {
		t.Fatalf("ended inside the grace period: %+v", v.Result)
	}
	f.clock.Advance(2 * time.Second)
	v := f.view(t, g.gameID)
	if v.Result == nil || v.Result.Winner == nil || *v.Result.Winner != chess.Black {
		t.Fatalf("after the grace period: %+v", v.Result)
	}
}

// TestHandleTimeout drives the scheduled path: not due → nothing (re-armed
// for the same version), due → the game ends, repeated delivery → no-op.
func TestHandleTimeout(t *testing.T) {
	f := newFixture(t, nil)
	g := f.newGame(t, `{"firstMoveSec":30}`)
	task := f.rec.lastTimeout(t)
	if task.GameID != g.gameID || !task.Deadline.Equal(f.clock.Now().Add(30*time.Second)) {
		t.Fatalf("scheduled %+v", task)
	}
	ctx := t.Context()
	if err := f.svc.HandleTimeout(ctx, task); err != nil {
		t.Fatal(err)
	}
	if v := f.view(t, g.gameID); v.Phase != game.PhasePlaying {
		t.Fatalf("early delivery ended the game")
	}
	f.clock.Advance(31 * time.Second)
	if err := f.svc.HandleTimeout(ctx, task); err != nil {
		t.Fatal(err)
	}
	v := f.view(t, g.gameID)
	if v.Result == nil || v.Result.Reason != game.ReasonAborted {
		t.Fatalf("timeout not applied: %+v", v.Result)
	}
	version := v.Version
	if err := f.svc.HandleTimeout(ctx, task); err != nil {
		t.Fatal(err)
	}
	if again := f.view(t, g.gameID); again.Version != version {
		t.Errorf("repeated delivery changed the game: v%d -> v%d", version, again.Version)
	}
	if err := f.svc.HandleTimeout(ctx, service.TimeoutTask{GameID: "nosuchgame123", Version: 1}); err != nil {
		t.Errorf("unknown game: %v", err)
	}
}

// TestAITurnNeverFlags: a due AI turn re-triggers the AI instead of ending
// the game on time.
func TestAITurnNeverFlags(t *testing.T) {
	f := newFixture(t, nil)
	host, err := f.svc.Create(t.Context(), service.CreateInput{AILevel: "easy", Options: options(t, `{"colorAssignment":"hostWhite","timeControl":"1+0"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.move(t, host.GameID, service.Caller{Token: host.Token}, "e2e4"); err != nil {
		t.Fatal(err)
	}
	f.rec.mu.Lock()
	triggers := len(f.rec.aiTasks)
	f.rec.mu.Unlock()
	if triggers != 1 {
		t.Fatalf("AI triggered %d times after the human move", triggers)
	}
	f.clock.Advance(10 * time.Minute)
	if err := f.svc.HandleTimeout(t.Context(), f.rec.lastTimeout(t)); err != nil {
		t.Fatal(err)
	}
	if v := f.view(t, host.GameID); v.Phase != game.PhasePlaying {
		t.Fatalf("AI lost on time: %+v", v.Result)
	}
	f.rec.mu.Lock()
	triggers = len(f.rec.aiTasks)
	task := f.rec.aiTasks[len(f.rec.aiTasks)-1]
	f.rec.mu.Unlock()
	if triggers != 2 {
		t.Fatalf("overdue AI turn triggered %d times in all; want 2", triggers)
	}
	if err := f.svc.PlayAITurn(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	if v := f.view(t, host.GameID); len(v.Moves) != 2 {
		t.Fatalf("AI did not move: %d moves", len(v.Moves))
	}
}

func TestActErrors(t *testing.T) {
	f := newFixture(t, nil)
	g := f.newGame(t, `{}`)
	ctx := t.Context()
	_, err := f.svc.Act(ctx, g.gameID, service.Caller{}, service.ActionInput{Action: game.Action{Type: game.ActionResign}})
	if !errors.Is(err, service.ErrUnauthorized) {
		t.Errorf("no token: %v", err)
	}
	_, err = f.svc.Act(ctx, g.gameID, service.Caller{Token: "st_nope"}, service.ActionInput{Action: game.Action{Type: game.ActionResign}})
	if !errors.Is(err, service.ErrForbidden) {
		t.Errorf("bad token: %v", err)
	}
	_, err = f.svc.Act(ctx, "nosuchgame123", g.white, service.ActionInput{Action: game.Action{Type: game.ActionResign}})
	if !errors.Is(err, service.ErrNotFound) {
		t.Errorf("unknown game: %v", err)
	}
	var conflict *service.ConflictError
	stale := int64(0)
	_, err = f.svc.Act(ctx, g.gameID, g.white, service.ActionInput{Action: game.Action{Type: game.ActionResign}, ExpectedVersion: &stale})
	if !errors.As(err, &conflict) || conflict.Current == nil {
		t.Errorf("stale expectedVersion: %v", err)
	}
}

// TestMigratedV1Game: a version-1 record (schema without variant, 960 index,
// id or version in the state) is served after migration, read as standard.
func TestMigratedV1Game(t *testing.T) {
	dir := t.TempDir()
	bolt, err := boltstore.Open(filepath.Join(dir, "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	for _, name := range []string{"v1_playing", "v1_finished"} {
		data, err := os.ReadFile(filepath.Join("..", "game", "storedgame", "testdata", "records", "v1-typescript", strings.TrimPrefix(name, "v1_")+".json"))
		if err != nil {
			t.Fatal(err)
		}
		id := "legacy" + strings.ReplaceAll(name, "_", "")
		if err := bolt.Create(t.Context(), service.GameRecord{GameID: id, Version: 7, StateVersion: 1, State: data}); err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, bolt)
		v, err := f.svc.Get(t.Context(), id, service.Caller{}, nil, 0)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if v.GameID != id || v.Version < 7 || v.Variant != game.VariantStandard || v.StateVersion != game.StateVersion {
			t.Errorf("%s: view id %q version %d variant %q stateVersion %d", name, v.GameID, v.Version, v.Variant, v.StateVersion)
		}
		if _, err := f.svc.PGN(t.Context(), id, service.Caller{}); err != nil {
			t.Errorf("%s: PGN: %v", name, err)
		}
	}
}

// TestAIPlaysWhiteFirst: an AI seat that gets white is started as soon as
// the game is created.
func TestAIPlaysWhiteFirst(t *testing.T) {
	f := newFixture(t, nil)
	host, err := f.svc.Create(t.Context(), service.CreateInput{AILevel: "normal", Options: options(t, `{"colorAssignment":"hostBlack"}`)})
	if err != nil {
		t.Fatal(err)
	}
	f.rec.mu.Lock()
	tasks := append([]service.AITask(nil), f.rec.aiTasks...)
	f.rec.mu.Unlock()
	if len(tasks) != 1 || tasks[0].GameID != host.GameID || tasks[0].Version != host.Game.Version {
		t.Fatalf("AI triggers after create: %+v", tasks)
	}
	if err := f.svc.PlayAITurn(t.Context(), tasks[0]); err != nil {
		t.Fatal(err)
	}
	v, err := f.svc.Get(t.Context(), host.GameID, service.Caller{Token: host.Token}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Moves) != 1 || v.Turn != chess.Black || len(v.LegalMoves) == 0 {
		t.Errorf("after the AI's first move: %d moves, turn %v, %d legal moves for the host", len(v.Moves), v.Turn, len(v.LegalMoves))
	}
}

// TestChess960CastlingListedAlike: the same Chess960 position lists its
// castling moves identically in the game view of the seat to move and in
// the stateless rules answer (POST /v1/positions): both targets of
// seeds/000 §9 (the rook's square and, when it is not an ordinary king
// step, the g/c square), from the one listing of the game package.
func TestChess960CastlingListedAlike(t *testing.T) {
	const fen = "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1" // king g1, rooks b1 and h1
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	f := newFixture(t, bolt)
	ctx := t.Context()
	host, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{"variant":"chess960","colorAssignment":"hostWhite"}`), Player: service.PlayerInput{Name: "w"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Player: service.PlayerInput{Name: "b"}}); err != nil {
		t.Fatal(err)
	}
	// Put the game on the position: rewrite its stored state with that
	// start (the JSON form of a state is a stored form Decode reads).
	rec, err := bolt.Get(ctx, host.GameID)
	if err != nil {
		t.Fatal(err)
	}
	st, err := storedgame.Decode(rec.State)
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(st)
	var raw map[string]any
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	rec.Version++
	raw["startFen"], raw["fen"], raw["chess960Index"], raw["moves"], raw["version"] = fen, fen, nil, []any{}, rec.Version
	rec.State, _ = json.Marshal(raw)
	if err := bolt.Update(ctx, rec, rec.Version-1); err != nil {
		t.Fatal(err)
	}

	view, err := f.svc.Get(ctx, host.GameID, service.Caller{Token: host.Token}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	fenCopy := fen
	ans, err := f.svc.Position(service.PositionInput{FEN: &fenCopy, Variant: chess.VariantChess960})
	if err != nil {
		t.Fatal(err)
	}
	castles := func(list []game.LegalMove) []game.LegalMove {
		var out []game.LegalMove
		for _, m := range list {
			if m.Castle != "" {
				out = append(out, m)
			}
		}
		return out
	}
	inView, inRules := castles(view.LegalMoves), castles(ans.LegalMoves)
	if !reflect.DeepEqual(inView, inRules) {
		t.Errorf("castling in the view = %+v;\non /v1/positions = %+v", inView, inRules)
	}
	// O-O by the rook's square only (the king stays on g1); O-O-O by b1
	// and by c1.
	var targets []string
	for _, m := range inView {
		targets = append(targets, m.Castle+":"+m.To+":"+m.UCI)
	}
	want := []string{"king:h1:g1h1", "queen:b1:g1b1", "queen:c1:g1b1"}
	slices.Sort(targets)
	if !slices.Equal(targets, want) {
		t.Errorf("castling targets = %q; want %q", targets, want)
	}
}
