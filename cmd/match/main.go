// Command match plays two UCI engines against each other and reports the
// result with an Elo estimate.
//
//	go run ./cmd/match -e1 "./uci" -o1 Level=hard \
//	    -e2 /usr/games/stockfish -o2 UCI_LimitStrength=true,UCI_Elo=1600 \
//	    -games 40 -tc 10+0.1 -concurrency 1
//
// -tc nodes=N searches every move with "go nodes N" instead of a clock.
// -depth D plays no games: each engine searches every opening position to
// depth D and the nodes each needed are printed.
//
// Each opening of the openings file is played twice with colours swapped.
// Games are adjudicated with shared/chess: checkmate, stalemate,
// insufficient material, the 50-move rule, threefold repetition, illegal
// moves, engine failures and time forfeits (beyond -timemargin). Scores are
// from the first engine's point of view.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "match:", err)
		os.Exit(2)
	}
}

type config struct {
	engines     [2]engineSpec
	games       int
	tc          [2]timeControl // per engine (first, second)
	concurrency int
	openings    []opening
	adj         adjudication
	pgnPath     string
	quiet       bool
	depth       int // > 0: nodes to this depth instead of games
}

func run(args []string) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	if cfg.depth > 0 {
		nodes, err := depthNodes(cfg.engines, cfg.openings, cfg.depth)
		if err != nil {
			return err
		}
		fmt.Print(depthReport([2]string{cfg.engines[0].name, cfg.engines[1].name}, cfg.depth, nodes))
		return nil
	}
	var pgn *os.File
	if cfg.pgnPath != "" {
		pgn, err = os.Create(cfg.pgnPath)
		if err != nil {
			return fmt.Errorf("-pgn: %w", err)
		}
		defer pgn.Close()
	}
	fmt.Printf("%s (%s) vs %s (%s), %d games, concurrency %d, %d openings\n",
		cfg.engines[0].name, formatTC(cfg.tc[0]), cfg.engines[1].name, formatTC(cfg.tc[1]), cfg.games, cfg.concurrency, len(cfg.openings))
	var stats moveStats
	t, err := playMatch(cfg, func(round int, g gameRecord, first bool, t tally) {
		stats.add(&g, first)
		if pgn != nil {
			_, _ = pgn.WriteString(g.pgn(round))
		}
		if !cfg.quiet {
			fmt.Printf("game %3d: %s - %s %s (%s), %d plies; %s\n", round, g.white, g.black, g.result.pgn(), g.reason, len(g.moves), t)
		}
	})
	if err != nil {
		return err
	}
	fmt.Printf("%s vs %s: %s\n", cfg.engines[0].name, cfg.engines[1].name, t)
	if !cfg.quiet {
		fmt.Print(stats.report([2]string{cfg.engines[0].name, cfg.engines[1].name}))
	}
	return nil
}

// playMatch plays cfg.games games on cfg.concurrency workers; done is
// called (serialised) after each game with the running tally.
func playMatch(cfg config, done func(round int, g gameRecord, firstIsWhite bool, t tally)) (tally, error) {
	type job struct{ round int }
	jobs := make(chan job)
	var (
		mu       sync.Mutex
		t        tally
		firstErr error
	)
	var wg sync.WaitGroup
	for w := 0; w < cfg.concurrency; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var engines [2]*uciEngine
			defer func() {
				for _, e := range engines {
					if e != nil {
						e.close()
					}
				}
			}()
			for j := range jobs {
				for i := range engines {
					if engines[i] == nil {
						e, err := startEngine(cfg.engines[i])
						if err != nil {
							mu.Lock()
							if firstErr == nil {
								firstErr = err
							}
							mu.Unlock()
							return
						}
						engines[i] = e
					}
				}
				op := cfg.openings[(j.round-1)/2%len(cfg.openings)]
				firstIsWhite := j.round%2 == 1
				white, black := engines[0], engines[1]
				tcs := cfg.tc
				if !firstIsWhite {
					white, black = black, white
					tcs[0], tcs[1] = tcs[1], tcs[0]
				}
				g, err := playGame(white, black, op, tcs, cfg.adj)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
				if g.restart {
					for i := range engines {
						engines[i].close()
						engines[i] = nil
					}
				}
				mu.Lock()
				switch {
				case g.result == draw:
					t.draws++
				case (g.result == whiteWins) == firstIsWhite:
					t.wins++
				default:
					t.losses++
				}
				done(j.round, g, firstIsWhite, t)
				mu.Unlock()
			}
		}()
	}
	for r := 1; r <= cfg.games; r++ {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		jobs <- job{round: r}
	}
	close(jobs)
	wg.Wait()
	return t, firstErr
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("match", flag.ContinueOnError)
	e1 := fs.String("e1", "", "first engine command line (required)")
	e2 := fs.String("e2", "", "second engine command line (required)")
	n1 := fs.String("n1", "", "first engine name (default: its command)")
	n2 := fs.String("n2", "", "second engine name (default: its command)")
	o1 := fs.String("o1", "", "UCI options of the first engine: Name=value,Name=value")
	o2 := fs.String("o2", "", "UCI options of the second engine")
	games := fs.Int("games", 20, "number of games (even: each opening twice, colours swapped)")
	tcFlag := fs.String("tc", "10+0.1", "time control: base seconds + increment seconds, or nodes=N (a fixed node budget per move, no clock)")
	tc1Flag := fs.String("tc1", "", "time control of the first engine only (default -tc)")
	tc2Flag := fs.String("tc2", "", "time control of the second engine only (default -tc)")
	conc := fs.Int("concurrency", 1, "games played at the same time")
	openingsPath := fs.String("openings", "cmd/match/testdata/openings.txt", "openings file (SAN lines or fen lines)")
	margin := fs.Duration("timemargin", 50*time.Millisecond, "time allowed beyond the clock before a time forfeit")
	resign := fs.Int("resign", 0, "adjudicate a win when both engines report at least this many centipawns (0 = off)")
	resignMoves := fs.Int("resignmoves", 4, "... for this many consecutive moves each")
	maxPlies := fs.Int("maxplies", 0, "adjudicate a draw after this many plies (0 = off)")
	pgnPath := fs.String("pgn", "", "write the games to this PGN file")
	quiet := fs.Bool("quiet", false, "print only the final result")
	depth := fs.Int("depth", 0, "play no games: search every opening position to this depth with each engine and print the nodes (0 = off)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	var cfg config
	if *e1 == "" || *e2 == "" {
		return cfg, fmt.Errorf("-e1 and -e2 are required")
	}
	if *games < 1 {
		return cfg, fmt.Errorf("-games %d: want at least 1", *games)
	}
	if *depth < 0 {
		return cfg, fmt.Errorf("-depth %d: want 0 (off) or more", *depth)
	}
	if *conc < 1 {
		return cfg, fmt.Errorf("-concurrency %d: want at least 1", *conc)
	}
	tc, err := parseTC(*tcFlag)
	if err != nil {
		return cfg, err
	}
	cfg.tc = [2]timeControl{tc, tc}
	for i, text := range []string{*tc1Flag, *tc2Flag} {
		if text == "" {
			continue
		}
		if cfg.tc[i], err = parseTC(text); err != nil {
			return cfg, fmt.Errorf("-tc%d: %w", i+1, err)
		}
	}
	for i, spec := range []struct{ cmd, name, opts string }{{*e1, *n1, *o1}, {*e2, *n2, *o2}} {
		opts, err := parseOptions(spec.opts)
		if err != nil {
			return cfg, fmt.Errorf("-o%d: %w", i+1, err)
		}
		name := spec.name
		if name == "" {
			name = spec.cmd
			if len(opts) > 0 {
				name += " (" + spec.opts + ")"
			}
		}
		cfg.engines[i] = engineSpec{name: name, command: strings.Fields(spec.cmd), options: opts}
	}
	f, err := os.Open(*openingsPath)
	if err != nil {
		return cfg, fmt.Errorf("-openings: %w", err)
	}
	defer f.Close()
	if cfg.openings, err = readOpenings(f); err != nil {
		return cfg, err
	}
	cfg.games, cfg.concurrency = *games, *conc
	cfg.adj = adjudication{timeMargin: *margin, resignScore: *resign, resignMoves: *resignMoves, maxPlies: *maxPlies}
	cfg.pgnPath, cfg.quiet, cfg.depth = *pgnPath, *quiet, *depth
	return cfg, nil
}

// parseTC reads "base+inc" in seconds ("10+0.1", "60", "0.5+0.05") or
// "nodes=N".
func parseTC(s string) (timeControl, error) {
	if text, ok := strings.CutPrefix(s, "nodes="); ok {
		n, err := strconv.ParseUint(text, 10, 64)
		if err != nil || n < 1 {
			return timeControl{}, fmt.Errorf("-tc %q: nodes must be a whole number > 0", s)
		}
		return timeControl{nodes: n}, nil
	}
	baseText, incText, hasInc := strings.Cut(s, "+")
	base, err := strconv.ParseFloat(baseText, 64)
	if err != nil || base <= 0 || base > 86400 {
		return timeControl{}, fmt.Errorf("-tc %q: base must be seconds > 0", s)
	}
	var inc float64
	if hasInc {
		inc, err = strconv.ParseFloat(incText, 64)
		if err != nil || inc < 0 || inc > 3600 {
			return timeControl{}, fmt.Errorf("-tc %q: increment must be seconds >= 0", s)
		}
	}
	return timeControl{base: time.Duration(base * float64(time.Second)), inc: time.Duration(inc * float64(time.Second))}, nil
}

func formatTC(tc timeControl) string {
	if tc.nodes > 0 {
		return fmt.Sprintf("nodes=%d", tc.nodes)
	}
	return fmt.Sprintf("%g+%g", tc.base.Seconds(), tc.inc.Seconds())
}

// parseOptions reads "Name=value,Name=value" (names may contain spaces).
func parseOptions(s string) ([][2]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out [][2]string
	for _, part := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(part, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return nil, fmt.Errorf("option %q: want Name=value", part)
		}
		out = append(out, [2]string{name, value})
	}
	return out, nil
}
