package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

type client struct {
	t    testing.TB
	base string
}

func (c client) call(method, path, token string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, c.base+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return 0, nil // e.g. the server died mid-answer
	}
	return res.StatusCode, out
}

// humanGame creates and joins a game; it returns the tokens by colour.
func (c client) humanGame(options map[string]any) (id string, tokens map[string]string) {
	c.t.Helper()
	status, created := c.call("POST", "/v1/games", "", map[string]any{"options": options})
	if status != 201 {
		c.t.Fatalf("create: %d %v", status, created)
	}
	id = created["gameId"].(string)
	status, joined := c.call("POST", "/v1/games/"+id+"/join", "", nil)
	if status != 200 {
		c.t.Fatalf("join: %d %v", status, joined)
	}
	tokens = map[string]string{}
	hostColor := "black"
	if joined["game"].(map[string]any)["you"] == "black" {
		hostColor = "white"
	}
	tokens[hostColor] = created["token"].(string)
	tokens[map[string]string{"white": "black", "black": "white"}[hostColor]] = joined["token"].(string)
	return id, tokens
}

// TestSchedulerEndsGameWithNobodyCalling: the in-process scheduler applies a
// deadline on its own. The service clock runs 14.9 s behind while the game is
// created, so its 15 s first-move limit passes 0.1 s later in real time;
// the game is read back with the clock behind again, where lazy enforcement
// would not end it, so only the scheduler can have.
func TestSchedulerEndsGameWithNobodyCalling(t *testing.T) {
	var offset atomic.Int64
	offset.Store(int64(-14900 * time.Millisecond))
	cfg := config{addr: "127.0.0.1:0", dataPath: filepath.Join(t.TempDir(), "chess.db"), engines: 1, hashMB: 1,
		now: func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, cfg, slog.New(slog.DiscardHandler), ready) }()
	defer func() { cancel(); <-done }()
	c := client{t: t, base: "http://" + <-ready}

	id, _ := c.humanGame(map[string]any{"firstMoveSec": 15})
	offset.Store(0)
	time.Sleep(1500 * time.Millisecond)
	offset.Store(int64(-14900 * time.Millisecond))
	_, view := c.call("GET", "/v1/games/"+id, "", nil)
	g := view["game"].(map[string]any)
	if g["phase"] != "finished" {
		t.Fatalf("the scheduler did not end the game: phase %v", g["phase"])
	}
	if reason := g["result"].(map[string]any)["reason"]; reason != "aborted" {
		t.Errorf("result reason %v; want aborted", reason)
	}
}

// TestCrashSafety kills the server with SIGKILL in the middle of a stream of
// moves, restarts it on the same file and checks that every acknowledged
// move is there.
func TestCrashSafety(t *testing.T) { stopMidStream(t, syscall.SIGKILL) }

// TestGracefulShutdown does the same with SIGTERM, which must also exit
// cleanly (status 0) after finishing the requests in flight.
func TestGracefulShutdown(t *testing.T) { stopMidStream(t, syscall.SIGTERM) }

func stopMidStream(t *testing.T, sig syscall.Signal) {
	if testing.Short() {
		t.Skip("builds and runs the server binary")
	}
	bin := filepath.Join(t.TempDir(), "local")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := filepath.Join(t.TempDir(), "db", "chess.db")
	start := func() (*exec.Cmd, client) {
		cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", data, "-engines", "1", "-hash", "1")
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

	cmd, c := start()
	id, tokens := c.humanGame(map[string]any{"timeControl": "none"})
	rng := rand.New(rand.NewPCG(1, 2))
	killAfter := 10 + rng.IntN(20)
	var acked []string
	var ackCount atomic.Int32
	killed := make(chan struct{})
	go func() {
		// Kill while moves are in flight.
		for int(ackCount.Load()) < killAfter {
			time.Sleep(time.Millisecond)
		}
		_ = cmd.Process.Signal(sig)
		close(killed)
	}()
	for {
		status, view := c.call("GET", "/v1/games/"+id, "", nil)
		if status != 200 {
			break // the server is gone
		}
		g := view["game"].(map[string]any)
		if g["phase"] != "playing" {
			break // a random game that ended early: kill now
		}
		turn := g["turn"].(string)
		status, mine := c.call("GET", "/v1/games/"+id, tokens[turn], nil)
		if status != 200 {
			break
		}
		legal, _ := mine["game"].(map[string]any)["legalMoves"].([]any)
		if len(legal) == 0 {
			break
		}
		uci := legal[rng.IntN(len(legal))].(map[string]any)["uci"].(string)
		status, _ = c.call("POST", "/v1/games/"+id+"/actions", tokens[turn], map[string]any{"type": "move", "payload": map[string]any{"uci": uci}})
		if status != 200 {
			break
		}
		acked = append(acked, uci)
		ackCount.Add(1)
	}
	ackCount.Store(int32(killAfter)) // make sure the kill happens
	<-killed
	waitErr := cmd.Wait()
	if sig == syscall.SIGTERM && waitErr != nil {
		t.Errorf("after SIGTERM the server exited with %v; want status 0", waitErr)
	}

	cmd2, c2 := start()
	defer func() { _ = cmd2.Process.Signal(syscall.SIGTERM); _ = cmd2.Wait() }()
	status, view := c2.call("GET", "/v1/games/"+id, "", nil)
	if status != 200 {
		t.Fatalf("after restart: %d %v", status, view)
	}
	moves := view["game"].(map[string]any)["moves"].([]any)
	if len(moves) < len(acked) {
		t.Fatalf("after %v: %d moves stored, %d acknowledged", sig, len(moves), len(acked))
	}
	for i, uci := range acked {
		if got := moves[i].(map[string]any)["uci"]; got != uci {
			t.Fatalf("move %d is %v; acknowledged %s", i+1, got, uci)
		}
	}
	t.Logf("%d moves acknowledged before %v, %d stored", len(acked), sig, len(moves))
	if len(moves) > len(acked)+1 {
		t.Errorf("%d stored moves were never sent", len(moves)-len(acked)-1)
	}
}
