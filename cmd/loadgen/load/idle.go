package load

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// MemorySample is a reading of the server's memory, by measure name (e.g.
// "VmRSS" in bytes); every measure is compared before and after.
type MemorySample map[string]int64

// IdleConfig is a memory-per-connection measurement.
type IdleConfig struct {
	BaseURL string
	// Conns is how many connections to open: both seats of Conns/2 games
	// (one spectator more when Conns is odd), each subscribed to its game.
	Conns int
	// Settle is the pause before each reading, for the server to finish
	// the work the connections caused (presence, goroutines starting).
	Settle time.Duration
	// Parallel bounds the games created and connections opened at once
	// (default 32).
	Parallel int
	// Memory reads the server's memory.
	Memory func(context.Context) (MemorySample, error)
	// HTTPClient sends the game requests (default: a pool of Parallel).
	HTTPClient *http.Client
}

// IdleResult is the memory of Conns idle connections.
type IdleResult struct {
	Conns, Games  int
	Before, After MemorySample
	// PerConn is (after − before) / Conns, per measure.
	PerConn map[string]float64
	// Open is how long opening and subscribing all connections took.
	Open time.Duration
}

// Idle opens cfg.Conns stream connections that subscribe to their games and
// then stay silent, and reads the server's memory before the first opens
// and while all are open. The games are created before the first reading,
// so only the connections are measured.
func Idle(ctx context.Context, cfg IdleConfig) (IdleResult, error) {
	var res IdleResult
	switch {
	case cfg.Conns < 1:
		return res, fmt.Errorf("-conns: %d; at least 1", cfg.Conns)
	case cfg.Memory == nil:
		return res, errors.New("idle: no memory reader")
	case cfg.Settle < 0:
		return res, fmt.Errorf("-settle: %v is negative", cfg.Settle)
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 32
	}
	client := cfg.HTTPClient
	if client == nil {
		client = newHTTPClient(cfg.Parallel)
	}
	h := &httpAPI{base: strings.TrimRight(cfg.BaseURL, "/"), client: client}
	if err := h.health(ctx); err != nil {
		return res, fmt.Errorf("server not reachable at %s: %w", cfg.BaseURL, err)
	}

	// Who connects: both seats of each game, a spectator for an odd one.
	type seat struct{ id, token string }
	res.Conns, res.Games = cfg.Conns, (cfg.Conns+1)/2
	seats := make([]seat, cfg.Conns)
	err := parallel(ctx, res.Games, cfg.Parallel, func(i int) error {
		id, tokens, err := h.newGame(ctx)
		if err != nil {
			return err
		}
		seats[2*i] = seat{id, tokens["white"]}
		if 2*i+1 < cfg.Conns {
			seats[2*i+1] = seat{id, tokens["black"]}
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	if res.Before, err = settleAndRead(ctx, cfg); err != nil {
		return res, err
	}

	conns := make([]*websocket.Conn, cfg.Conns)
	defer func() {
		for _, ws := range conns {
			if ws != nil {
				ws.CloseNow()
			}
		}
	}()
	start := time.Now()
	err = parallel(ctx, cfg.Conns, cfg.Parallel, func(i int) error {
		ws, err := dialStream(ctx, cfg.BaseURL, seats[i].token, seats[i].id)
		if err != nil {
			return err
		}
		conns[i] = ws
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, data, err := ws.Read(rctx)
		if err != nil {
			return fmt.Errorf("connection %d: no answer to subscribe: %w", i, err)
		}
		if !bytes.Contains(data, []byte(`"type":"subscribed"`)) {
			return fmt.Errorf("connection %d: answer to subscribe %.200s", i, data)
		}
		// An idle client still answers the server's pings, which the
		// library does while a read is pending.
		go func() { _, _, _ = ws.Read(ctx) }()
		return nil
	})
	res.Open = time.Since(start)
	if err != nil {
		return res, err
	}
	if res.After, err = settleAndRead(ctx, cfg); err != nil {
		return res, err
	}
	res.PerConn = map[string]float64{}
	for k, after := range res.After {
		if before, ok := res.Before[k]; ok {
			res.PerConn[k] = float64(after-before) / float64(cfg.Conns)
		}
	}
	return res, nil
}

func settleAndRead(ctx context.Context, cfg IdleConfig) (MemorySample, error) {
	select {
	case <-time.After(cfg.Settle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	m, err := cfg.Memory(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the server's memory: %w", err)
	}
	return m, nil
}

// parallel runs f(0..n-1) with at most width at once and returns the first
// error (the rest still run to their end).
func parallel(ctx context.Context, n, width int, f func(int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	slots := make(chan struct{}, width)
	for i := range n {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		mu.Lock()
		failed := first != nil
		mu.Unlock()
		if failed {
			<-slots
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			if err := f(i); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return first
}

// ProcessRSS reads the resident set size of process pid (Linux,
// /proc/<pid>/status), as a MemorySample {"VmRSS": bytes}.
func ProcessRSS(pid int) func(context.Context) (MemorySample, error) {
	return func(context.Context) (MemorySample, error) {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			return nil, err
		}
		rss, err := ParseVmRSS(data)
		if err != nil {
			return nil, fmt.Errorf("/proc/%d/status: %w", pid, err)
		}
		return MemorySample{"VmRSS": rss}, nil
	}
}

// ParseVmRSS returns the VmRSS line of a /proc/<pid>/status text in bytes.
func ParseVmRSS(status []byte) (int64, error) {
	for line := range strings.SplitSeq(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, "VmRSS:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("VmRSS line %q: want <number> kB", line)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<40 {
			return 0, fmt.Errorf("VmRSS line %q: not a size in kB", line)
		}
		return kb << 10, nil
	}
	return 0, errors.New("no VmRSS line (not a process status, or a kernel thread)")
}
