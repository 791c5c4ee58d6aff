// Command loadgen plays many games at once against a running server and
// reports move throughput and latency, the service's performance benchmark:
//
//	go run ./cmd/local -data /tmp/load/chess.db &
//	go run ./cmd/loadgen -url http://127.0.0.1:3000 -games 200 -duration 30s [-think 0]
//
// Each game slot creates a human-vs-human game, joins it, then its two seats
// alternate random legal moves (chosen locally with shared/chess, so the
// server sees exactly the requests an app would send): after every move the
// opponent fetches the game view. With -think 0 every slot moves as fast as
// the server answers (a closed loop: maximum throughput); -think adds a
// pause before each move, like players thinking (uniformly spread over
// ±50 % so that games do not move in lockstep). A finished game is replaced
// by a new one.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"chessapi/shared/chess"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:3000", "server base URL")
	games := flag.Int("games", 200, "concurrent games")
	duration := flag.Duration("duration", 30*time.Second, "how long to run")
	think := flag.Duration("think", 0, "pause before each move (0: as fast as answers come)")
	flag.Parse()
	if err := run(*url, *games, *duration, *think); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

type stats struct {
	mu        sync.Mutex
	moves     []time.Duration
	views     []time.Duration
	creates   []time.Duration
	errors    map[string]int
	finished  int
	startedAt time.Time
}

func (s *stats) add(kind string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch kind {
	case "move":
		s.moves = append(s.moves, d)
	case "view":
		s.views = append(s.views, d)
	case "create":
		s.creates = append(s.creates, d)
	}
}

func (s *stats) fail(what string) {
	s.mu.Lock()
	s.errors[what]++
	s.mu.Unlock()
}

func run(base string, games int, duration, think time.Duration) error {
	transport := &http.Transport{MaxIdleConns: games * 2, MaxIdleConnsPerHost: games * 2}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	if _, _, err := call(client, "GET", base+"/v1/health", "", nil); err != nil {
		return fmt.Errorf("server not reachable at %s: %w", base, err)
	}
	st := &stats{errors: map[string]int{}, startedAt: time.Now()}
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < games; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(i), 42))
			for ctx.Err() == nil {
				playGame(ctx, client, base, rng, think, st)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(st.startedAt)
	report(st, games, elapsed, think)
	return nil
}

// playGame plays one game until it ends or ctx is done.
func playGame(ctx context.Context, client *http.Client, base string, rng *rand.Rand, think time.Duration, st *stats) {
	start := time.Now()
	status, created, err := call(client, "POST", base+"/v1/games", "", map[string]any{"options": map[string]any{"timeControl": "none"}})
	if err != nil || status != 201 {
		st.fail(fmt.Sprintf("create %d", status))
		time.Sleep(100 * time.Millisecond)
		return
	}
	st.add("create", time.Since(start))
	id := created["gameId"].(string)
	status, joined, err := call(client, "POST", base+"/v1/games/"+id+"/join", "", nil)
	if err != nil || status != 200 {
		st.fail(fmt.Sprintf("join %d", status))
		return
	}
	tokens := [2]string{}
	if joined["game"].(map[string]any)["you"] == "white" {
		tokens[chess.White], tokens[chess.Black] = joined["token"].(string), created["token"].(string)
	} else {
		tokens[chess.White], tokens[chess.Black] = created["token"].(string), joined["token"].(string)
	}
	pos := chess.StartingPosition()
	for ctx.Err() == nil {
		moves := pos.LegalMoves()
		if len(moves) == 0 {
			break
		}
		if think > 0 {
			// Players think independently: uniform in [think/2, 3·think/2),
			// so the slots do not move in lockstep.
			pause := think/2 + time.Duration(rng.Int64N(int64(think)))
			select {
			case <-time.After(pause):
			case <-ctx.Done():
				return
			}
		}
		m := moves[rng.IntN(len(moves))]
		mover := pos.Turn()
		start := time.Now()
		status, out, err := call(client, "POST", base+"/v1/games/"+id+"/actions", tokens[mover],
			map[string]any{"type": "move", "payload": map[string]any{"uci": pos.UCI(m)}})
		if err != nil || status != 200 {
			if ctx.Err() == nil {
				st.fail(fmt.Sprintf("move %d", status))
			}
			return
		}
		st.add("move", time.Since(start))
		pos.Play(m)
		start = time.Now()
		status, _, err = call(client, "GET", base+"/v1/games/"+id, tokens[mover.Other()], nil)
		if err != nil || status != 200 {
			if ctx.Err() == nil {
				st.fail(fmt.Sprintf("view %d", status))
			}
			return
		}
		st.add("view", time.Since(start))
		if out["game"].(map[string]any)["phase"] == "finished" {
			st.mu.Lock()
			st.finished++
			st.mu.Unlock()
			return
		}
	}
}

func call(client *http.Client, method, url, token string, body any) (int, map[string]any, error) {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		return res.StatusCode, nil, err
	}
	return res.StatusCode, out, nil
}

func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds)-1) * p)
	return ds[i]
}

func report(st *stats, games int, elapsed, think time.Duration) {
	st.mu.Lock()
	defer st.mu.Unlock()
	slices.Sort(st.moves)
	slices.Sort(st.views)
	slices.Sort(st.creates)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	fmt.Printf("games %d, think %v, %.1f s\n", games, think, elapsed.Seconds())
	fmt.Printf("moves: %d (%.0f/s)  p50 %s  p90 %s  p99 %s  max %s\n", len(st.moves), float64(len(st.moves))/elapsed.Seconds(),
		ms(percentile(st.moves, .5)), ms(percentile(st.moves, .9)), ms(percentile(st.moves, .99)), ms(percentile(st.moves, 1)))
	fmt.Printf("views: %d  p50 %s  p99 %s\n", len(st.views), ms(percentile(st.views, .5)), ms(percentile(st.views, .99)))
	fmt.Printf("creates: %d  p50 %s  p99 %s\n", len(st.creates), ms(percentile(st.creates, .5)), ms(percentile(st.creates, .99)))
	fmt.Printf("games finished: %d, errors: %v\n", st.finished, st.errors)
}
