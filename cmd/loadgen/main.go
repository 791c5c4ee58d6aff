// Command loadgen plays many games at once against a running server and
// reports move throughput and latency, and how fast the opponent learns of
// each move (delivery), the service's performance benchmark:
//
//	go run ./cmd/local -data /tmp/load/chess.db -log-level warn &
//	go run ./cmd/loadgen -url http://127.0.0.1:3000 -games 200 -duration 30s [-think 1s] [-mode fetch]
//	go run ./cmd/loadgen -mode both -games 200 -duration 30s -think 1s
//	go run ./cmd/loadgen -mode idle -conns 2000 -server-pid <the server's pid, e.g. $! after starting it>
//
// Each game slot creates a human-vs-human game without a clock, joins it,
// then its two seats alternate random legal moves (chosen from the seat's
// own view, as an app would offer them); a finished game is replaced by a
// new one. -mode says how the opponent learns of a move (package
// chessapi/cmd/loadgen/load explains the modes and the clocks):
//
//   - fetch (the default, and what loadgen always did): after every move
//     the opponent fetches the view at once;
//   - poll: the waiting seat holds the long poll GET /v1/games/{id}?afterVersion=N
//     and moves when it returns with the opponent's move;
//   - stream: both seats hold a WebSocket connection to /v1/stream
//     subscribed to their game and move when the opponent's change
//     arrives; nothing polls;
//   - both: poll and stream side by side in the same run, -games games
//     EACH (so -games 200 plays 400 games), so that the comparison shares
//     the machine's noise; a comma-separated list (fetch,poll,stream) runs
//     any set the same way.
//
// With -think 0 every seat moves as soon as it learns it is its turn (a
// closed loop: the server's saturation); -think adds a pause before each
// move, like players thinking (uniform over ±50 % so that games do not move
// in lockstep). -moves ends the run after that many moves in all instead
// of (or before) -duration.
//
// -mode idle measures memory per open stream connection: it creates
// -conns/2 games, reads the server's resident memory (VmRSS of -server-pid,
// so the server must run on this machine), opens -conns connections (both
// seats of each game, subscribed, then silent), reads it again and reports
// the difference per connection. RSS includes memory the server's garbage
// collector has freed but not yet returned; BenchmarkStreamIdleMemory in
// cmd/local reads the Go heap and stacks after a forced collection instead.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"chessapi/cmd/loadgen/load"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:3000", "server base URL")
	mode := flag.String("mode", "fetch", "fetch, poll, stream, both (poll and stream side by side), a comma-separated list, or idle")
	games := flag.Int("games", 200, "concurrent games (of each mode)")
	duration := flag.Duration("duration", 30*time.Second, "how long to run (0: until -moves)")
	moves := flag.Int("moves", 0, "stop after this many moves in all (0: no limit)")
	think := flag.Duration("think", 0, "pause before each move (0: as fast as the turn comes)")
	stall := flag.Duration("stall", 30*time.Second, "a game whose seat waits this long for the opponent's move fails")
	seed := flag.Uint64("seed", 42, "random seed of the moves")
	conns := flag.Int("conns", 2000, "idle: connections to open")
	pid := flag.Int("server-pid", 0, "idle: the server's process id (its VmRSS is read from /proc)")
	settle := flag.Duration("settle", 3*time.Second, "idle: pause before each memory reading")
	gzip := flag.Bool("gzip", true, "accept gzip-encoded answers (as phones' HTTP stacks do)")
	answerMoves := flag.Bool("answer-moves", true, "answer each move with the whole view (false: ?moves=false, no move list)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if *mode == "idle" {
		err = idle(ctx, os.Stdout, *url, *conns, *pid, *settle)
	} else {
		err = play(ctx, os.Stdout, *url, *mode, load.Config{
			Games: *games, Duration: *duration, MaxMoves: *moves, Think: *think, StallTimeout: *stall, Seed: *seed,
			NoGzip: !*gzip, AnswersWithoutMoves: !*answerMoves,
		})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func play(ctx context.Context, w io.Writer, url, mode string, cfg load.Config) error {
	modes, err := load.ParseModes(mode)
	if err != nil {
		return err
	}
	cfg.BaseURL, cfg.Modes = url, modes
	loadBefore := loadAverage()
	results, err := load.Run(ctx, cfg)
	if err != nil {
		return err
	}
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	fmt.Fprintf(w, "modes %s, %d games each, think %v, %.1f s; load average %s at start, %s at end\n",
		strings.Join(names, "+"), cfg.Games, cfg.Think, results[0].Elapsed.Seconds(), loadBefore, loadAverage())
	report(w, results)
	return nil
}

// report prints one row per mode. Times in ms: p50/p95/p99/max.
func report(w io.Writer, results []load.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tmoves\tmoves/s\tmove (sent→answer)\tsent→notified\tanswer→notified\tstamp→notified\tundelivered\tfinished\terrors")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", r.Mode, r.Moves, r.MovesPerSec,
			ms(r.Move), ms(r.SentToNotified), ms(r.AnswerToNotified), ms(r.StampToNotified), r.Undelivered, r.Finished, errorList(r.Errors))
	}
	tw.Flush()
	fmt.Fprintln(w, "ms p50/p95/p99/max. notified: the opponent read the long poll's answer or the stream's change (fetch: its GET) in full.")
	fmt.Fprintln(w, "The commit lies between sent and answer; stamp is the move's \"at\" (server wall clock, ms, before the write) against this process's wall clock.")
	fmt.Fprintln(w, "undelivered: moves whose delivery was not seen (in flight when the time ran out: at most one per game).")
}

func ms(s load.Summary) string {
	if s.N == 0 {
		return "-"
	}
	f := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	return f(s.P50) + "/" + f(s.P95) + "/" + f(s.P99) + "/" + f(s.Max)
}

func errorList(errs map[string]int) string {
	if len(errs) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, errs[k])
	}
	return strings.Join(parts, ", ")
}

func idle(ctx context.Context, w io.Writer, url string, conns, pid int, settle time.Duration) error {
	if pid <= 0 {
		return fmt.Errorf("-server-pid: %d; idle needs the server's process id to read its memory", pid)
	}
	memory := load.ProcessRSS(pid)
	if _, err := memory(ctx); err != nil { // before creating a thousand games for nothing
		return fmt.Errorf("-server-pid %d: %w", pid, err)
	}
	loadBefore := loadAverage()
	res, err := load.Idle(ctx, load.IdleConfig{BaseURL: url, Conns: conns, Settle: settle, Memory: memory})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "idle: %d stream connections subscribed to %d games, opened in %.1f s; load average %s at start, %s at end\n",
		res.Conns, res.Games, res.Open.Seconds(), loadBefore, loadAverage())
	before, after := res.Before["VmRSS"], res.After["VmRSS"]
	fmt.Fprintf(w, "server VmRSS: %.1f MiB before, %.1f MiB with the connections open: %.0f bytes per connection\n",
		float64(before)/(1<<20), float64(after)/(1<<20), res.PerConn["VmRSS"])
	return nil
}

// loadAverage is the 1, 5 and 15 minute load averages (Linux), or "?".
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
