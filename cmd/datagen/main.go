// Command datagen makes training data for the learned evaluation: the
// engine plays itself at a fixed node budget per move from varied openings
// and writes the quiet positions of every finished game, each with its
// search score and the game's result, in the format of
// shared/engine/nnue/dataset.
//
//	go run ./cmd/datagen -out /work/data/nnue/r1 -eval classical -threads 2 -nodes 5000 -positions 10000000
//
// Each thread t writes DIR/part-<t>.bin and DIR/part-<t>.json (its state:
// games finished, records and bytes written). Run the same command again to
// continue: a thread truncates its file to the length its state names (the
// end of the last finished game) and plays on from the next game; the games
// are a function of -seed, the thread and the game number, so a resumed run
// writes what an uninterrupted one would have.
//
// Openings (per game, chosen by its seed): 45 % the standard start plus 8
// random legal plies, 35 % a line of the book (-book, the match openings by
// default) plus 4 random plies, 20 % a random Chess960 start plus 6 random
// plies. An opening whose search score after the random plies is beyond
// ±-openingmax centipawns is drawn again.
//
// Kept positions ("quiet"): from ply -minply on, not in check, the chosen
// move neither a capture nor a promotion, the score not a mate and within
// ±4000.
//
// Adjudication (besides the rules: checkmate, stalemate, insufficient
// material, threefold repetition, the fifty-move rule):
//   - win: the score is at least -winscore (or a mate) for the same side on
//     -winplies consecutive plies (both sides' searches agree);
//   - draw: from ply -drawply on, |score| ≤ -drawscore on -drawplies
//     consecutive plies; any game reaching -maxplies plies is a draw.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/engine/nnue/dataset"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "datagen:", err)
		os.Exit(2)
	}
}

// config holds the flags.
type config struct {
	out        string
	threads    int
	nodes      uint64
	positions  int64
	games      int64 // per thread, 0 = until -positions
	seed       uint64
	book       string
	minPly     int
	maxPlies   int
	openingMax int
	winScore   int
	winPlies   int
	drawPly    int
	drawScore  int
	drawPlies  int
	hashMB     int
	eval       engine.Evaluation
	report     time.Duration
	cpuProfile string

	makeOpenings  int
	openingsOut   string
	openingsNodes uint64
	openingsMax   int
}

func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("datagen", flag.ContinueOnError)
	fs.StringVar(&c.out, "out", "", "output directory (created; required)")
	fs.IntVar(&c.threads, "threads", 1, "games played at once, one file each")
	fs.Uint64Var(&c.nodes, "nodes", 6000, "nodes searched per move")
	fs.Int64Var(&c.positions, "positions", 0, "stop when all threads together have written this many positions (0 = no limit)")
	fs.Int64Var(&c.games, "games", 0, "stop each thread after this many games (0 = no limit)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of every game's opening")
	fs.StringVar(&c.book, "book", "cmd/match/testdata/openings.txt", "opening lines (SAN from the start, as cmd/match reads them)")
	fs.IntVar(&c.minPly, "minply", 16, "first ply whose position may be kept")
	fs.IntVar(&c.maxPlies, "maxplies", 400, "a game this long is a draw")
	fs.IntVar(&c.openingMax, "openingmax", 300, "redraw an opening whose score is beyond this (centipawns)")
	fs.IntVar(&c.winScore, "winscore", 1500, "win adjudication score (centipawns)")
	fs.IntVar(&c.winPlies, "winplies", 6, "consecutive plies at -winscore for a win")
	fs.IntVar(&c.drawPly, "drawply", 80, "first ply of draw adjudication")
	fs.IntVar(&c.drawScore, "drawscore", 8, "draw adjudication score bound (centipawns)")
	fs.IntVar(&c.drawPlies, "drawplies", 10, "consecutive plies within -drawscore for a draw")
	fs.IntVar(&c.hashMB, "hash", 16, "transposition table per thread (MiB)")
	evalName := fs.String("eval", "", "evaluation of the playing engine: classical or network (required)")
	fs.DurationVar(&c.report, "report", 30*time.Second, "progress line interval")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile to this file")
	fs.IntVar(&c.makeOpenings, "make-openings", 0, "instead of data, write this many balanced match openings to -openings-out (balance checked with the classical evaluation, whatever -eval says)")
	fs.StringVar(&c.openingsOut, "openings-out", "", "file for -make-openings")
	fs.Uint64Var(&c.openingsNodes, "openings-nodes", 200_000, "nodes of the balance check of -make-openings")
	fs.IntVar(&c.openingsMax, "openings-max", 60, "largest |score| of a -make-openings opening (centipawns)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	var ok bool
	if c.eval, ok = engine.ParseEvaluation(*evalName); !ok && c.makeOpenings == 0 {
		return c, fmt.Errorf("-eval %q: want classical or network", *evalName)
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.makeOpenings > 0 && c.openingsOut == "":
		return c, errors.New("-make-openings needs -openings-out")
	case c.makeOpenings > 0:
		return c, nil
	case c.out == "":
		return c, errors.New("-out: an output directory is required")
	case c.threads < 1 || c.threads > 64:
		return c, fmt.Errorf("-threads %d: want 1..64", c.threads)
	case c.nodes < 512:
		return c, fmt.Errorf("-nodes %d: want at least 512", c.nodes)
	case c.minPly < 0 || c.maxPlies < c.minPly+1:
		return c, fmt.Errorf("-minply %d, -maxplies %d: want 0 <= minply < maxplies", c.minPly, c.maxPlies)
	case c.winPlies < 1 || c.drawPlies < 1:
		return c, errors.New("-winplies and -drawplies must be at least 1")
	}
	return c, nil
}

// state is a thread's progress, written after every finished game.
type state struct {
	Seed    uint64 `json:"seed"`
	Nodes   uint64 `json:"nodes"`
	Eval    string `json:"eval"`
	Thread  int    `json:"thread"`
	Games   int64  `json:"games"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"bytes"`
	// Results counts finished games by result: white wins, draws, black
	// wins; Adjudicated counts those ended by the win or draw rule.
	Results     [3]int64 `json:"results"`
	Adjudicated int64    `json:"adjudicated"`
	Plies       int64    `json:"plies"`
}

func run(args []string, stdout io.Writer) error {
	cfg, err := parseFlags(args)
	if err != nil {
		return err
	}
	book, err := readBook(cfg.book)
	if err != nil {
		return err
	}
	if cfg.makeOpenings > 0 {
		return makeOpenings(cfg, book, stdout)
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var total, fresh atomic.Int64
	states := make([]*state, cfg.threads)
	for t := range cfg.threads {
		st, err := loadState(cfg, t)
		if err != nil {
			return err
		}
		states[t] = st
		total.Add(st.Records)
	}
	fmt.Fprintf(stdout, "datagen: %d threads, %d nodes a move, %s evaluation, seed %d, %d positions so far, into %s\n",
		cfg.threads, cfg.nodes, cfg.eval, cfg.seed, total.Load(), cfg.out)

	start := time.Now()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(cfg.report)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				fmt.Fprintln(stdout, progress(total.Load(), fresh.Load(), time.Since(start), cfg.positions))
			}
		}
	}()

	var wg sync.WaitGroup
	errs := make([]error, cfg.threads)
	for t := range cfg.threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[t] = worker(ctx, cfg, book, states[t], func(n int64) {
				total.Add(n)
				fresh.Add(n)
			}, func() bool { return cfg.positions > 0 && total.Load() >= cfg.positions })
		}()
	}
	wg.Wait()
	close(done)
	fmt.Fprintln(stdout, progress(total.Load(), fresh.Load(), time.Since(start), cfg.positions))
	var res [3]int64
	var games, adj, plies int64
	for _, st := range states {
		for i := range res {
			res[i] += st.Results[i]
		}
		games += st.Games
		adj += st.Adjudicated
		plies += st.Plies
	}
	if games > 0 {
		fmt.Fprintf(stdout, "datagen: %d games (white %d, draw %d, black %d; %d adjudicated), %.1f plies a game\n",
			games, res[0], res[1], res[2], adj, float64(plies)/float64(games))
	}
	return errors.Join(errs...)
}

// progress formats a progress line with the rate of this run and an ETA.
func progress(total, fresh int64, elapsed time.Duration, target int64) string {
	rate := float64(fresh) / elapsed.Seconds()
	line := fmt.Sprintf("datagen: %d positions (%d this run, %.0f/s, %s)", total, fresh, rate, elapsed.Round(time.Second))
	if target > 0 && rate > 0 && total < target {
		eta := time.Duration(float64(target-total) / rate * float64(time.Second))
		line += fmt.Sprintf(", ETA %s for %d", eta.Round(time.Minute), target)
	}
	return line
}

func statePath(cfg config, t int) string {
	return filepath.Join(cfg.out, fmt.Sprintf("part-%d.json", t))
}
func dataPath(cfg config, t int) string { return filepath.Join(cfg.out, fmt.Sprintf("part-%d.bin", t)) }

// loadState reads thread t's state, or a fresh one. A state from another
// seed or node budget is refused: the file would mix two data sets.
func loadState(cfg config, t int) (*state, error) {
	st := &state{Seed: cfg.seed, Nodes: cfg.nodes, Eval: cfg.eval.String(), Thread: t}
	b, err := os.ReadFile(statePath(cfg, t))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("%s: %w", statePath(cfg, t), err)
	}
	if st.Eval == "" {
		st.Eval = engine.EvalClassical.String() // files from before -eval: the classical engine
	}
	if st.Seed != cfg.seed || st.Nodes != cfg.nodes || st.Eval != cfg.eval.String() || st.Thread != t {
		return nil, fmt.Errorf("%s: made with -seed %d -nodes %d -eval %s, not %d, %d and %s: use another -out",
			statePath(cfg, t), st.Seed, st.Nodes, st.Eval, cfg.seed, cfg.nodes, cfg.eval)
	}
	return st, nil
}

func saveState(cfg config, st *state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(cfg, st.Thread) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(cfg, st.Thread))
}

// worker plays games on one thread until ctx ends, enough is reported or
// the -games limit is reached, appending each finished game to its file.
func worker(ctx context.Context, cfg config, book [][]chess.Move, st *state, add func(int64), enough func() bool) error {
	f, err := os.OpenFile(dataPath(cfg, st.Thread), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if st.Bytes == 0 {
		st.Bytes = int64(len(dataset.Header))
		if err := f.Truncate(0); err != nil {
			return err
		}
		if _, err := f.WriteString(dataset.Header); err != nil {
			return err
		}
	} else if err := f.Truncate(st.Bytes); err != nil {
		return err
	}
	if _, err := f.Seek(st.Bytes, io.SeekStart); err != nil {
		return err
	}
	w := dataset.NewAppender(f)
	eng := engine.New(engine.Options{HashMB: cfg.hashMB, Evaluation: cfg.eval})
	g := newGamePlayer(cfg, book, eng)
	for ctx.Err() == nil && !enough() && (cfg.games == 0 || st.Games < cfg.games) {
		game, err := g.play(ctx, gameSeed(cfg.seed, st.Thread, st.Games))
		if ctx.Err() != nil {
			break // the unfinished game is dropped
		}
		if err != nil {
			return err
		}
		for i := range game.records {
			if err := w.Write(&game.records[i]); err != nil {
				return err
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		n := int64(len(game.records))
		st.Games++
		st.Records += n
		st.Bytes += n * dataset.RecordSize
		st.Results[game.white]++
		st.Plies += int64(game.plies)
		if game.adjudicated {
			st.Adjudicated++
		}
		if err := saveState(cfg, st); err != nil {
			return err
		}
		add(n)
	}
	return nil
}

// gameSeed derives a game's seed from the run's seed, the thread and the
// game's number.
func gameSeed(seed uint64, thread int, game int64) uint64 {
	return splitMix(splitMix(seed^uint64(thread)<<40) ^ uint64(game))
}

func splitMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// readBook reads the opening lines: SAN from the standard start per line,
// move numbers ("1.") and a trailing "; name" ignored, # comments.
func readBook(path string) ([][]chess.Move, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-book: %w", err)
	}
	var out [][]chess.Move
	for n, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, ";")
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "fen ") {
			continue
		}
		pos := chess.StartingPosition()
		var moves []chess.Move
		for _, tok := range strings.Fields(line) {
			if strings.HasSuffix(tok, ".") {
				continue
			}
			m, err := pos.ParseSAN(tok)
			if err != nil {
				return nil, fmt.Errorf("-book %s line %d: move %q: %w", path, n+1, tok, err)
			}
			moves = append(moves, m)
			pos.Play(m)
		}
		out = append(out, moves)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-book %s: no opening line", path)
	}
	return out, nil
}

// gameResult indexes state.Results.
type gameResult int

const (
	whiteWins gameResult = 0
	drawn     gameResult = 1
	blackWins gameResult = 2
)

type finishedGame struct {
	records     []dataset.Record
	white       gameResult
	plies       int
	adjudicated bool
}

type gamePlayer struct {
	cfg  config
	book [][]chess.Move
	eng  *engine.Engine
}

func newGamePlayer(cfg config, book [][]chess.Move, eng *engine.Engine) *gamePlayer {
	return &gamePlayer{cfg: cfg, book: book, eng: eng}
}

// opening returns the position after a random opening, and the plies
// played to reach it.
func (g *gamePlayer) opening(rng *rand.Rand) (*chess.Position, []uint64, int) {
	var pos *chess.Position
	var hist []uint64
	plies, random := 0, 8
	switch k := rng.IntN(100); {
	case k < 45:
		pos = chess.StartingPosition()
	case k < 80:
		pos = chess.StartingPosition()
		for _, m := range g.book[rng.IntN(len(g.book))] {
			hist = append(hist, pos.Hash())
			pos.Play(m)
			plies++
		}
		random = 4
	default:
		var err error
		pos, err = chess.Chess960Start(rng.IntN(960))
		if err != nil {
			panic(err) // 0..959 is always valid
		}
		random = 6
	}
	for range random {
		moves := pos.LegalMoves()
		if len(moves) == 0 {
			break
		}
		hist = append(hist, pos.Hash())
		pos.Play(moves[rng.IntN(len(moves))])
		plies++
	}
	return pos, hist, plies
}

// play plays one game from the seed's opening to its end.
func (g *gamePlayer) play(ctx context.Context, seed uint64) (finishedGame, error) {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	g.eng.NewGame()
	var pos *chess.Position
	var hist []uint64
	var ply int
	for {
		if ctx.Err() != nil {
			return finishedGame{}, ctx.Err()
		}
		pos, hist, ply = g.opening(rng)
		if pos.Status() != chess.StatusPlaying {
			continue
		}
		res, err := g.eng.Search(ctx, engine.Params{Position: pos, History: hist, Nodes: g.cfg.nodes})
		if err != nil {
			continue
		}
		if !res.Score.IsMate() && abs(res.Score.CP) <= g.cfg.openingMax {
			break
		}
	}

	var out finishedGame
	reps := map[uint64]int{pos.Hash(): 1}
	winRun, winSide, drawRun := 0, chess.White, 0
	result, adjudicated := drawn, false
	for {
		if st := pos.Status(); st != chess.StatusPlaying {
			if st == chess.StatusCheckmate {
				result = winnerOf(pos.Turn().Other())
			}
			break
		}
		if pos.HalfmoveClock() >= 100 || reps[pos.Hash()] >= 3 || ply >= g.cfg.maxPlies {
			break
		}
		res, err := g.eng.Search(ctx, engine.Params{Position: pos, History: hist, Nodes: g.cfg.nodes})
		if err != nil {
			return out, fmt.Errorf("search at ply %d (%s): %w", ply, pos.FEN(), err)
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		m := res.BestMove
		cp, mate := res.Score.CP, res.Score.Mate

		if ply >= g.cfg.minPly && !pos.InCheck() && !isNoisy(pos, m) && mate == 0 && abs(cp) <= 4000 {
			r := dataset.FromPosition(pos)
			r.Score, r.Ply, r.Move = int16(cp), uint16(ply), m
			out.records = append(out.records, r)
		}

		// Adjudication on the score from White's point of view.
		white := cp
		if mate != 0 {
			white = 100000 * sign(mate)
		}
		if pos.Turn() == chess.Black {
			white = -white
		}
		switch {
		case white >= g.cfg.winScore:
			winRun, winSide = runFor(winRun, winSide, chess.White), chess.White
		case white <= -g.cfg.winScore:
			winRun, winSide = runFor(winRun, winSide, chess.Black), chess.Black
		default:
			winRun = 0
		}
		if ply >= g.cfg.drawPly && abs(white) <= g.cfg.drawScore {
			drawRun++
		} else {
			drawRun = 0
		}
		if winRun >= g.cfg.winPlies {
			result, adjudicated = winnerOf(winSide), true
			break
		}
		if drawRun >= g.cfg.drawPlies {
			result, adjudicated = drawn, true
			break
		}

		hist = append(hist, pos.Hash())
		pos.Play(m)
		ply++
		reps[pos.Hash()]++
	}

	for i := range out.records {
		r := &out.records[i]
		switch {
		case result == drawn:
			r.Result = dataset.Draw
		case (result == whiteWins) == (r.Turn == chess.White):
			r.Result = dataset.Win
		default:
			r.Result = dataset.Loss
		}
	}
	out.white, out.plies, out.adjudicated = result, ply, adjudicated
	return out, nil
}

// runFor extends a run of plies won by side, or starts one.
func runFor(run int, prev, side chess.Color) int {
	if run > 0 && prev == side {
		return run + 1
	}
	return 1
}

func winnerOf(c chess.Color) gameResult {
	if c == chess.White {
		return whiteWins
	}
	return blackWins
}

// isNoisy reports a capture (en passant included) or a promotion.
func isNoisy(pos *chess.Position, m chess.Move) bool {
	if m.Kind() == chess.KindPromotion || m.IsEnPassant() {
		return true
	}
	return !m.IsCastling() && pos.PieceAt(m.To()) != chess.NoPiece
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func sign(x int) int {
	if x < 0 {
		return -1
	}
	return 1
}
