package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/shared/aiplayer"
	"chessapi/shared/aitrigger/inprocess"
	"chessapi/shared/app"
	"chessapi/shared/chess"
	"chessapi/shared/schedule/localsched"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// panickingEngine is a real engine pool whose first AI-seat move panics
// with a runtime error, as a bug in the engine or the service would.
type panickingEngine struct {
	*aiplayer.Pool
	calls    atomic.Int32
	panicked chan struct{} // closed when the injected panic is raised
}

func (e *panickingEngine) ChooseMove(ctx context.Context, req service.AIMoveRequest) (chess.Move, error) {
	if e.calls.Add(1) == 1 {
		close(e.panicked)
		var seen []uint64
		seen[len(req.History)] = req.Position.Hash() // index out of range: a real runtime panic
	}
	return e.Pool.ChooseMove(ctx, req)
}

// lockedBuffer collects the process log for the checks.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestAITurnPanicIsSurvived (issue 15): the AI seat's turn panics inside
// the in-process AI runner of the local server's wiring (embedded store,
// local scheduler, real engines). The panic is logged with the game id and
// its stack, the server keeps answering reads and writes meanwhile, and the
// turn is retried and moves; the AI then keeps playing its later turns.
// Without the runner's recover the panic kills the test binary.
func TestAITurnPanicIsSurvived(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	engine := &panickingEngine{Pool: aiplayer.New(aiplayer.Options{SeatEngines: 1, PublicEngines: 1, HashMB: 1}), panicked: make(chan struct{})}
	var sched *localsched.Scheduler
	var trigger *inprocess.Trigger
	// Production options (cmd/local): the default retry delay and bounds.
	wired, err := app.New(app.Config{
		Config: service.Config{Store: store, Players: store, Lister: store, Engine: engine, Effects: service.EffectsInline, Logger: log},
		NewScheduler: func(handle app.TimeoutHandler) (service.Scheduler, error) {
			s, err := localsched.New(handle, localsched.Options{Logger: log})
			sched = s
			return s, err
		},
		NewAITrigger: func(run app.AIRunner) (service.AITrigger, error) {
			trigger = inprocess.New(run, inprocess.Options{Workers: 1, Logger: log})
			return trigger, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(wired.Handler)
	defer func() {
		srv.Close()
		trigger.Close(5 * time.Second)
		wired.Service.Close(time.Second)
		sched.Close()
	}()

	call := func(method, path, token string, body any) (int, map[string]any) {
		t.Helper()
		var rd *bytes.Reader
		if body != nil {
			data, _ := json.Marshal(body)
			rd = bytes.NewReader(data)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, srv.URL+path, rd)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatalf("%s %s: %d, body is not JSON: %v", method, path, res.StatusCode, err)
		}
		return res.StatusCode, out
	}
	moves := func(id, token string) []any {
		t.Helper()
		status, view := call("GET", "/v1/games/"+id, token, nil)
		if status != http.StatusOK {
			t.Fatalf("GET game: %d %v", status, view)
		}
		ms, _ := view["game"].(map[string]any)["moves"].([]any)
		return ms
	}
	waitForPlies := func(id, token string, plies int) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); len(moves(id, token)) < plies; {
			if time.Now().After(deadline) {
				t.Fatalf("game %s has %d plies after 15 s; want %d (the AI's turn was not retried)\nlog:\n%s", id, len(moves(id, token)), plies, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// The AI plays White: its first turn is triggered by the creation.
	status, created := call("POST", "/v1/games", "", map[string]any{
		"opponent": map[string]any{"type": "ai", "level": "easy"},
		"options":  map[string]any{"colorAssignment": "hostBlack"},
	})
	if status != http.StatusCreated {
		t.Fatalf("create AI game: %d %v", status, created)
	}
	id, token := created["gameId"].(string), created["token"].(string)
	select {
	case <-engine.panicked:
	case <-time.After(10 * time.Second):
		t.Fatal("the AI turn never reached the engine")
	}

	// The server keeps serving while the turn waits for its retry: a read,
	// and a write that creates another game.
	if n := len(moves(id, token)); n != 0 {
		t.Fatalf("game has %d plies right after the panic; want 0 (the panicked turn moved nothing)", n)
	}
	if status, other := call("POST", "/v1/games", "", map[string]any{}); status != http.StatusCreated {
		t.Fatalf("create after the panic: %d %v", status, other)
	}

	waitForPlies(id, token, 1)
	// The AI keeps playing: the human's reply gets its answer.
	status, acted := call("POST", "/v1/games/"+id+"/actions", token, map[string]any{"type": "move", "payload": map[string]any{"uci": firstLegalBlackReply(t, moves(id, token))}})
	if status != http.StatusOK {
		t.Fatalf("human move: %d %v", status, acted)
	}
	waitForPlies(id, token, 3)
	if n := engine.calls.Load(); n != 3 {
		t.Errorf("engine asked for %d AI moves; want 3 (the panic, its retry, the next turn)", n)
	}

	var panicLine map[string]any
	for line := range strings.SplitSeq(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "AI turn panicked" {
			panicLine = rec
		}
	}
	if panicLine == nil {
		t.Fatalf("no \"AI turn panicked\" log line:\n%s", logs.String())
	}
	if panicLine["level"] != "ERROR" || panicLine["game"] != id {
		t.Errorf("panic logged at %v for game %v; want ERROR for game %s", panicLine["level"], panicLine["game"], id)
	}
	if p, _ := panicLine["panic"].(string); !strings.Contains(p, "index out of range") {
		t.Errorf("panic logged as %q; want the runtime error", p)
	}
	if stack, _ := panicLine["stack"].(string); !strings.Contains(stack, "ChooseMove") {
		t.Errorf("logged stack does not show where it panicked:\n%s", stack)
	}
}

// firstLegalBlackReply is a legal reply to the AI's first move (White).
func firstLegalBlackReply(t *testing.T, moves []any) string {
	t.Helper()
	pos := chess.StartingPosition()
	first, err := pos.ParseUCI(moves[0].(map[string]any)["uci"].(string))
	if err != nil {
		t.Fatalf("AI's first move: %v", err)
	}
	pos.Play(first)
	return pos.UCI(pos.LegalMoves()[0])
}
