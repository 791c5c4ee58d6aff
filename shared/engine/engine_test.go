package engine

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// longTests enables the big samples (ENGINE_LONG=1 go test ./shared/engine).
var longTests = os.Getenv("ENGINE_LONG") != ""

var allLevels = []Level{LevelEasy, LevelNormal, LevelHard, LevelMax}

// allEvaluations: the behaviour tests run with the default evaluation (the
// network) and with the classical one the Evaluation option selects.
var allEvaluations = []Evaluation{EvalNetwork, EvalClassical}

func mustFEN(t testing.TB, fen string) *chess.Position {
	t.Helper()
	pos, err := chess.ParseFEN(fen)
	if err != nil {
		t.Fatalf("ParseFEN(%q): %v", fen, err)
	}
	return pos
}

type mateFixture struct {
	fen string
	n   int
}

func readMateFixtures(t *testing.T) []mateFixture {
	t.Helper()
	f, err := os.Open("testdata/mates.epd")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mateFixture
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fen, rest, ok := strings.Cut(line, ";")
		n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(rest), "mate "))
		if !ok || err != nil {
			t.Fatalf("bad fixture line %q", line)
		}
		out = append(out, mateFixture{strings.TrimSpace(fen), n})
	}
	return out
}

// TestMateFixturesAreExact keeps the fixtures honest: each is a mate in
// exactly n by brute force.
func TestMateFixturesAreExact(t *testing.T) {
	for _, fx := range readMateFixtures(t) {
		pos := mustFEN(t, fx.fen)
		if !mateIn(pos, fx.n) || mateIn(pos, fx.n-1) {
			t.Errorf("%s: not a mate in exactly %d", fx.fen, fx.n)
		}
	}
}

// TestSolvesMates: every level finds the mates within its think time, and
// the move it plays really mates in n, with either evaluation.
func TestSolvesMates(t *testing.T) {
	fixtures := readMateFixtures(t)
	for _, ev := range allEvaluations {
		for _, level := range allLevels {
			t.Run(ev.String()+"/"+level.String(), func(t *testing.T) {
				solvesMates(t, New(Options{HashMB: 8, Evaluation: ev}), level, fixtures)
			})
		}
	}
}

func solvesMates(t *testing.T, e *Engine, level Level, fixtures []mateFixture) {
	for _, fx := range fixtures {
		pos := mustFEN(t, fx.fen)
		params := Params{Position: pos, Level: level, Seed: 7}
		if level == LevelMax {
			params.MoveTime = 500 * time.Millisecond
		}
		res, err := e.Search(context.Background(), params)
		if err != nil {
			t.Fatalf("Search(%s): %v", fx.fen, err)
		}
		if res.Score.Mate != fx.n {
			t.Errorf("Search(%s) score = %v; want mate %d", fx.fen, res.Score, fx.n)
		}
		child := *pos
		child.Play(res.BestMove)
		if !allRepliesMated(&child, fx.n-1) {
			t.Errorf("Search(%s) = %s; does not mate in %d", fx.fen, pos.UCI(res.BestMove), fx.n)
		}
		if limit := level.ThinkTime() + 100*time.Millisecond; level != LevelMax && res.Time > limit {
			t.Errorf("Search(%s) took %v; want at most %v", fx.fen, res.Time, limit)
		}
	}
}

func TestTakesHangingQueen(t *testing.T) {
	// want is the queen's square: any capture there wins the queen.
	tests := []struct{ fen, want string }{
		{"rnb1kbnr/pppp1ppp/8/4p1q1/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 3", "g5"},
		{"rnbqkb1r/pppp1ppp/5n2/4p3/4P1Q1/8/PPPP1PPP/RNB1KBNR b KQkq - 3 3", "g4"},
		{"r1bqkbnr/pppp1ppp/2n5/4p3/3QP3/8/PPP2PPP/RNB1KBNR b KQkq - 1 3", "d4"},
	}
	for _, level := range allLevels {
		for i, tc := range tests {
			ev := allEvaluations[i%2]
			t.Run(ev.String()+"/"+level.String(), func(t *testing.T) {
				pos := mustFEN(t, tc.fen)
				res, err := New(Options{HashMB: 8, Evaluation: ev}).Search(context.Background(),
					Params{Position: pos, Level: level, MoveTime: 300 * time.Millisecond, Seed: 11})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.BestMove.To().String(); got != tc.want {
					t.Errorf("Search(%s) at %s = %s; want a capture on %s", tc.fen, level, pos.UCI(res.BestMove), tc.want)
				}
			})
		}
	}
}

func TestSearchErrors(t *testing.T) {
	e := New(Options{HashMB: 1})
	if _, err := e.Search(context.Background(), Params{}); !errors.Is(err, ErrNoPosition) {
		t.Errorf("Search(no position) error = %v; want ErrNoPosition", err)
	}
	tests := []struct {
		fen  string
		want chess.Status
	}{
		{"7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", chess.StatusCheckmate},
		{"7k/8/6QK/8/8/8/8/8 b - - 0 1", chess.StatusStalemate},
	}
	for _, tc := range tests {
		_, err := e.Search(context.Background(), Params{Position: mustFEN(t, tc.fen), Depth: 3})
		var nm *NoMoveError
		if !errors.As(err, &nm) || nm.Status != tc.want || !errors.Is(err, ErrNoLegalMove) {
			t.Errorf("Search(%s) error = %v; want NoMoveError{%v}", tc.fen, err, tc.want)
		}
	}
}

func TestOneLegalMoveAnswersAtOnce(t *testing.T) {
	// Black king in check with a single escape.
	pos := mustFEN(t, "R6k/8/5K2/8/8/8/8/8 b - - 0 1")
	var list chess.MoveList
	pos.GenerateMoves(&list, chess.GenAll)
	if list.Len() != 1 {
		t.Fatalf("fixture has %d legal moves; want 1", list.Len())
	}
	start := time.Now()
	res, err := New(Options{HashMB: 1}).Search(context.Background(), Params{Position: pos, MoveTime: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.BestMove != list.At(0) {
		t.Errorf("Search = %v; want %v", res.BestMove, list.At(0))
	}
	if el := time.Since(start); el > 50*time.Millisecond {
		t.Errorf("Search with one legal move took %v; want an immediate answer", el)
	}
}

func TestFiftyMoveRuleInSearch(t *testing.T) {
	// KQ v K: winning, but the next non-mating move completes 50 moves and no
	// mate in one exists, so the search must see a draw.
	pos := mustFEN(t, "8/8/8/3k4/8/8/8/QK6 w - - 99 120")
	res, err := New(Options{HashMB: 4}).Search(context.Background(), Params{Position: pos, Depth: 6})
	if err != nil {
		t.Fatal(err)
	}
	if res.Score != (Score{}) {
		t.Errorf("Search(50-move draw) score = %v; want cp 0", res.Score)
	}
}

func TestRepetitionWithGameHistory(t *testing.T) {
	// Black has a bare king against K+Q: lost, unless a move repeats a
	// position of the game. History marks the position after Kb8 as seen.
	pos := mustFEN(t, "k7/8/8/8/8/8/2Q5/K7 b - - 10 40")
	escape, err := pos.ParseUCI("a8b8")
	if err != nil {
		t.Fatal(err)
	}
	child := *pos
	child.Play(escape)
	history := []uint64{11, child.Hash(), 13, 14}
	e := New(Options{HashMB: 4})
	res, err := e.Search(context.Background(), Params{Position: pos, History: history, Depth: 6})
	if err != nil {
		t.Fatal(err)
	}
	if res.BestMove != escape || res.Score != (Score{}) {
		t.Errorf("Search with repetition = %s %v; want a8b8 cp 0", pos.UCI(res.BestMove), res.Score)
	}
	e.NewGame()
	res, err = e.Search(context.Background(), Params{Position: pos, Depth: 6})
	if err != nil {
		t.Fatal(err)
	}
	if res.Score.CP > -500 && res.Score.Mate == 0 {
		t.Errorf("Search without history score = %v; want clearly lost", res.Score)
	}
}

// randomPlayout plays n random legal moves from pos (fewer if the game ends).
func randomPlayout(pos *chess.Position, n int, rng *rand.Rand) (*chess.Position, []uint64) {
	var hist []uint64
	var list chess.MoveList
	for range n {
		pos.GenerateMoves(&list, chess.GenAll)
		if list.Len() == 0 {
			break
		}
		hist = append(hist, pos.Hash())
		pos.Play(list.At(rng.IntN(list.Len())))
	}
	return pos, hist
}

// TestFuzzedPositionsGiveLegalMoves: random playouts from standard and
// Chess960 starts; every search result is a legal move of the position.
func TestFuzzedPositionsGiveLegalMoves(t *testing.T) {
	n := 60
	if longTests {
		n = 1000
	}
	rng := rand.New(rand.NewPCG(3, 4))
	engines := []*Engine{New(Options{HashMB: 4}), New(Options{HashMB: 4, Evaluation: EvalClassical})}
	for i := range n {
		e := engines[i/len(allLevels)%2] // every level with either evaluation
		var start *chess.Position
		if i%2 == 0 {
			start = chess.StartingPosition()
		} else {
			p, err := chess.Chess960Start(rng.IntN(960))
			if err != nil {
				t.Fatal(err)
			}
			start = p
		}
		pos, hist := randomPlayout(start, rng.IntN(120), rng)
		if pos.Status() != chess.StatusPlaying {
			continue
		}
		level := allLevels[i%len(allLevels)]
		multiPV := i % (MaxMultiPV + 1)
		before := pos.FEN()
		res, err := e.Search(context.Background(), Params{Position: pos, History: hist, Level: level,
			MoveTime: 20 * time.Millisecond, Seed: uint64(i + 1), MultiPV: multiPV})
		if err != nil {
			t.Fatalf("Search(%s): %v", before, err)
		}
		var list chess.MoveList
		pos.GenerateMoves(&list, chess.GenAll)
		if !list.Contains(res.BestMove) {
			t.Fatalf("Search(%s) at %s = %v; not a legal move", before, level, res.BestMove)
		}
		if pos.FEN() != before {
			t.Fatalf("Search changed the position: %s -> %s", before, pos.FEN())
		}
		checkPV(t, pos, res.PV)
		if level.Weakened() {
			multiPV = 1
		}
		checkLines(t, pos, multiPV, res)
	}
}

// checkPV asserts that every move of the PV is legal in turn.
func checkPV(t *testing.T, pos *chess.Position, pv []chess.Move) {
	t.Helper()
	p := *pos
	var list chess.MoveList
	for i, m := range pv {
		p.GenerateMoves(&list, chess.GenAll)
		if !list.Contains(m) {
			t.Fatalf("PV move %d (%v) illegal in %s", i, m, p.FEN())
		}
		p.Play(m)
	}
}

func FuzzSearchLegalMove(f *testing.F) {
	f.Add(uint64(1), uint8(10), false)
	f.Add(uint64(2), uint8(60), true)
	f.Fuzz(func(t *testing.T, seed uint64, plies uint8, chess960 bool) {
		rng := rand.New(rand.NewPCG(seed, 99))
		start := chess.StartingPosition()
		if chess960 {
			start, _ = chess.Chess960Start(int(seed % 960))
		}
		pos, hist := randomPlayout(start, int(plies), rng)
		if pos.Status() != chess.StatusPlaying {
			return
		}
		multiPV := int(seed>>8) % (MaxMultiPV + 1)
		res, err := New(Options{HashMB: 1}).Search(context.Background(),
			Params{Position: pos, History: hist, Nodes: 3000, Level: Level(seed % 4), Seed: seed | 1, MultiPV: multiPV})
		if err != nil {
			t.Fatalf("Search(%s): %v", pos.FEN(), err)
		}
		var list chess.MoveList
		pos.GenerateMoves(&list, chess.GenAll)
		if !list.Contains(res.BestMove) {
			t.Fatalf("Search(%s) = %v; not legal", pos.FEN(), res.BestMove)
		}
		if Level(seed % 4).Weakened() {
			multiPV = 1
		}
		checkLines(t, pos, multiPV, res)
	})
}

// TestWeakenedLevelsAreDeterministicWithSeed replays each weakened level
// with one seed on an engine whose clock is frozen: no time limit can cut
// the search, so it is bounded by the level's depth cap and the mate
// probe's node limit only, and the result must be identical every time
// however loaded the machine is.
func TestWeakenedLevelsAreDeterministicWithSeed(t *testing.T) {
	pos := mustFEN(t, "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
	frozen := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, level := range []Level{LevelEasy, LevelNormal, LevelHard} {
		var first Result
		for i := range 3 {
			e := New(Options{HashMB: 4})
			e.now = func() time.Time { return frozen }
			res, err := e.Search(context.Background(), Params{Position: pos, Level: level, Seed: 42})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = res
				continue
			}
			if res.BestMove != first.BestMove || res.Score != first.Score || res.Nodes != first.Nodes || res.Depth != first.Depth {
				t.Errorf("%s with seed 42: run %d = %v %v %d nodes depth %d; run 0 = %v %v %d nodes depth %d", level, i,
					res.BestMove, res.Score, res.Nodes, res.Depth, first.BestMove, first.Score, first.Nodes, first.Depth)
			}
		}
		if first.Depth != level.settings().maxDepth {
			t.Errorf("%s: depth %d; want the level's cap %d (nothing else may stop it)", level, first.Depth, level.settings().maxDepth)
		}
	}
}

func TestParseLevel(t *testing.T) {
	for _, l := range allLevels {
		got, err := ParseLevel(l.String())
		if err != nil || got != l {
			t.Errorf("ParseLevel(%q) = %v, %v; want %v", l.String(), got, err, l)
		}
	}
	for _, bad := range []string{"", "Easy", "expert", "max "} {
		_, err := ParseLevel(bad)
		var le *LevelError
		if !errors.As(err, &le) || !errors.Is(err, ErrUnknownLevel) {
			t.Errorf("ParseLevel(%q) error = %v; want *LevelError", bad, err)
		}
	}
	wantTimes := map[Level]time.Duration{LevelEasy: 200 * time.Millisecond, LevelNormal: 900 * time.Millisecond,
		LevelHard: 2200 * time.Millisecond, LevelMax: DefaultMoveTime}
	for l, want := range wantTimes {
		if got := l.ThinkTime(); got != want {
			t.Errorf("%s.ThinkTime() = %v; want %v", l, got, want)
		}
	}
}

func TestClampMoveTime(t *testing.T) {
	tests := []struct{ in, want time.Duration }{
		{0, MinMoveTime}, {time.Millisecond, MinMoveTime}, {500 * time.Millisecond, 500 * time.Millisecond},
		{10 * time.Second, 10 * time.Second}, {time.Minute, MaxMoveTime},
	}
	for _, tc := range tests {
		if got := ClampMoveTime(tc.in); got != tc.want {
			t.Errorf("ClampMoveTime(%v) = %v; want %v", tc.in, got, tc.want)
		}
	}
}

func TestScoreString(t *testing.T) {
	tests := []struct {
		in   int32
		want string
	}{
		{37, "cp 37"}, {mateScore - 1, "mate 1"}, {mateScore - 3, "mate 2"}, {-mateScore + 2, "mate -1"}, {-mateScore + 4, "mate -2"},
	}
	for _, tc := range tests {
		if got := toScore(tc.in).String(); got != tc.want {
			t.Errorf("toScore(%d) = %s; want %s", tc.in, got, tc.want)
		}
	}
}
