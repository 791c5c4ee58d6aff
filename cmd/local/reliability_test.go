package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/store/boltstore"
)

// TestAISeatAnswersUnderPublicLoad (issue 15, SPEC §13): twenty POST
// /v1/ai/move requests at the longest movetime are in flight on the local
// server, with its production engine count (-engines default), so every
// public engine is searching and the rest are queued; an AI seat's move
// still arrives within the level's think time plus one second, measured
// from the human's move being acknowledged (the AI's turn begins at that
// commit) to the AI's move being visible to the human. The public
// requests are cancelled once the seat's moves are measured, so the test
// takes seconds, not the 10 s of a full movetime.
func TestAISeatAnswersUnderPublicLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("real engines under load: full run only")
	}
	base, logs := startKeyedLocal(t, config{
		addr: "127.0.0.1:0", dataPath: filepath.Join(t.TempDir(), "chess.db"),
		engines: max(1, runtime.GOMAXPROCS(0)/2), // main.go's default
		hashMB:  16,
	})
	c := client{t: t, base: base}

	// The public load: twenty searches of movetimeMs 10000 that stay in
	// flight until cancelled.
	const public = 20
	publicCtx, cancelPublic := context.WithCancel(context.Background())
	type answer struct {
		status int
		err    error
		after  time.Duration
	}
	answers := make(chan answer, public)
	var inFlight sync.WaitGroup
	loadStart := time.Now()
	for i := range public {
		inFlight.Add(1)
		go func() {
			defer inFlight.Done()
			// Different positions, so no search is a cache hit of another.
			body := fmt.Sprintf(`{"moves":[%q],"movetimeMs":%d}`, []string{"e2e4", "d2d4", "c2c4", "g1f3", "b2b3"}[i%5], engine.MaxMoveTime.Milliseconds())
			req, _ := http.NewRequestWithContext(publicCtx, "POST", base+"/v1/ai/move", strings.NewReader(body))
			res, err := http.DefaultClient.Do(req)
			a := answer{err: err, after: time.Since(loadStart)}
			if err == nil {
				a.status = res.StatusCode
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			answers <- a
		}()
	}
	stopPublic := sync.OnceFunc(func() { cancelPublic(); inFlight.Wait() })
	t.Cleanup(stopPublic)
	// Every request has reached the server and the public engines are
	// searching: searches log nothing, so give the loopback requests time
	// to arrive; the check below proves they were still in flight.
	time.Sleep(300 * time.Millisecond)
	measureStart := time.Now()

	for _, level := range []string{"easy", "normal"} {
		lv, err := engine.ParseLevel(level)
		if err != nil {
			t.Fatal(err)
		}
		limit := lv.ThinkTime() + time.Second
		status, created := c.call("POST", "/v1/games", "", map[string]any{
			"opponent": map[string]any{"type": "ai", "level": level},
			"options":  map[string]any{"colorAssignment": "hostWhite"},
		})
		if status != http.StatusCreated {
			t.Fatalf("create %s AI game: %d %v", level, status, created)
		}
		id, token := created["gameId"].(string), created["token"].(string)
		pos := chess.StartingPosition()
		for reply := 1; reply <= 2; reply++ {
			human := pos.LegalMoves()[reply] // any legal move; the AI's answer is what is timed
			uci := pos.UCI(human)
			status, acted := c.call("POST", "/v1/games/"+id+"/actions", token, map[string]any{"type": "move", "payload": map[string]any{"uci": uci}})
			if status != http.StatusOK {
				t.Fatalf("%s game: human move %s: %d %v", level, uci, status, acted)
			}
			// The AI's turn began when the human's move was committed, just
			// before its answer arrived.
			turnBegan := time.Now()
			pos.Play(human)
			aiMove, took := awaitAIReply(t, c, id, token, 2*reply, gameOf(acted), turnBegan)
			if took > limit {
				t.Errorf("%s AI seat answered after %v with %d public searches in flight; want ≤ %v (think time %v + 1 s)", level, took.Round(time.Millisecond), public, limit, lv.ThinkTime())
			} else {
				t.Logf("%s AI seat answered in %v (limit %v)", level, took.Round(time.Millisecond), limit)
			}
			m, err := pos.ParseUCI(aiMove)
			if err != nil {
				t.Fatalf("%s AI played %q: %v", level, aiMove, err)
			}
			pos.Play(m)
		}
	}

	// The load was real: no public request had been answered (each needs
	// its full 10 s) while the seats were timed ...
	measured := time.Since(loadStart)
	select {
	case a := <-answers:
		t.Fatalf("a public request ended after %v (status %d, err %v), before the seats were measured (%v): the load was not in flight", a.after, a.status, a.err, measured)
	default:
	}
	stopPublic()
	// ... and every one had reached the server before they were: its
	// access log line, written when it ended, puts its arrival (end minus
	// duration) before the first measurement.
	arrivals := publicArrivals(t, logs, public)
	for i, at := range arrivals {
		if at.After(measureStart) {
			t.Errorf("public request %d reached the server at %v, after the seats' measurement began (%v)", i, at.Format(time.StampMilli), measureStart.Format(time.StampMilli))
		}
	}
	if t.Failed() {
		t.Logf("server log:\n%s", logs)
	}
}

// publicArrivals waits (up to 10 s) for the access log lines of n ended
// POST /v1/ai/move requests and returns when each arrived.
func publicArrivals(t *testing.T, logs *lockedBuffer, n int) []time.Time {
	t.Helper()
	var arrivals []time.Time
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		arrivals = arrivals[:0]
		for line := range strings.SplitSeq(logs.String(), "\n") {
			var rec struct {
				Time       time.Time `json:"time"`
				Msg        string    `json:"msg"`
				Route      string    `json:"route"`
				DurationMs float64   `json:"durationMs"`
			}
			if json.Unmarshal([]byte(line), &rec) != nil || rec.Msg != "request" || rec.Route != "POST /v1/ai/move" {
				continue
			}
			arrivals = append(arrivals, rec.Time.Add(-time.Duration(rec.DurationMs*float64(time.Millisecond))))
		}
		if len(arrivals) >= n {
			return arrivals
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d public requests logged within 10 s of cancelling them; want %d", len(arrivals), n)
		}
	}
}

// awaitAIReply long-polls the game until it has plies moves and returns the
// last one (the AI's) with the time since since. after is the game as the
// human's move left it.
func awaitAIReply(t *testing.T, c client, id, token string, plies int, after map[string]any, since time.Time) (string, time.Duration) {
	t.Helper()
	version := int64(after["version"].(float64))
	for deadline := since.Add(15 * time.Second); time.Now().Before(deadline); {
		status, view := c.call("GET", fmt.Sprintf("/v1/games/%s?afterVersion=%d", id, version), token, nil)
		if status != http.StatusOK {
			t.Fatalf("long poll: %d %v", status, view)
		}
		g := gameOf(view)
		moves, _ := g["moves"].([]any)
		if len(moves) >= plies {
			return moves[plies-1].(map[string]any)["uci"].(string), time.Since(since)
		}
		version = int64(g["version"].(float64))
	}
	t.Fatalf("game %s: no AI reply within 15 s", id)
	return "", 0
}

// TestStartFailsWhenDeadlinesCannotBeRestored (issue 15): a store whose
// pending deadlines cannot be listed (here one corrupt game record) stops
// the local server at start-up with an error naming the game, instead of
// serving with games whose timers were silently lost.
func TestStartFailsWhenDeadlinesCannotBeRestored(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chess.db")
	store, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("games")).Put([]byte("corrupt-game"), []byte{0xff, 0x00})
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	var logs bytes.Buffer
	ready := make(chan string, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = run(ctx, config{addr: "127.0.0.1:0", dataPath: path, engines: 1, hashMB: 1}, slog.New(slog.NewTextHandler(&logs, nil)), ready)
	select {
	case addr := <-ready:
		t.Fatalf("the server started listening on %s with unrestorable deadlines", addr)
	default:
	}
	if err == nil || !strings.Contains(err.Error(), "re-arm deadlines") || !strings.Contains(err.Error(), "corrupt-game") {
		t.Fatalf("run = %v; want a start-up error about re-arming deadlines naming game corrupt-game\n%s", err, logs.String())
	}
}
