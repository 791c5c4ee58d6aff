package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// The test binary doubles as a tiny UCI engine when MATCH_FAKE_ENGINE is
// set: it plays the first legal move ("first"), an illegal move
// ("illegal"), never answers ("silent"), or plays the first legal move
// after 150 ms for "go nodes N" and an illegal one for any other go
// ("nodes").
func TestMain(m *testing.M) {
	if mode := os.Getenv("MATCH_FAKE_ENGINE"); mode != "" {
		fakeEngine(mode)
		return
	}
	os.Exit(m.Run())
}

func fakeEngine(mode string) {
	pos := chess.StartingPosition()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "uci":
			fmt.Println("id name fake")
			fmt.Println("uciok")
		case "isready":
			fmt.Println("readyok")
		case "position":
			// position fen <6 fields> [moves ...]
			p, err := chess.ParseFEN(strings.Join(f[2:8], " "))
			if err != nil {
				panic(err)
			}
			if len(f) > 9 {
				for _, u := range f[9:] {
					m, err := p.ParseUCI(u)
					if err != nil {
						panic(err)
					}
					p.Play(m)
				}
			}
			pos = p
		case "go":
			switch mode {
			case "silent":
			case "illegal":
				fmt.Println("bestmove a1a8")
			case "nodes":
				if len(f) != 3 || f[1] != "nodes" {
					fmt.Println("bestmove a1a8")
					break
				}
				time.Sleep(150 * time.Millisecond)
				fmt.Println("bestmove " + pos.UCI(pos.LegalMoves()[0]))
			default:
				fmt.Println("info depth 1 currmove e2e4")
				fmt.Println("info depth 3 seldepth 5 score cp 0 nodes 1234 pv e2e4")
				fmt.Println("info depth 4 currmove e2e4 nodes 2000")
				fmt.Println("bestmove " + pos.UCI(pos.LegalMoves()[0]))
			}
		case "quit":
			return
		}
	}
}

func fakeSpec(t *testing.T, name, mode string) engineSpec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("MATCH_FAKE_ENGINE", "") // the child reads its own env below
	return engineSpec{name: name, command: []string{"env", "MATCH_FAKE_ENGINE=" + mode, exe}}
}

func startFake(t *testing.T, name, mode string) *uciEngine {
	t.Helper()
	e, err := startEngine(fakeSpec(t, name, mode))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	return e
}

func TestPlayGameAdjudicates(t *testing.T) {
	tc := timeControl{base: 5 * time.Second, inc: 50 * time.Millisecond}
	adj := adjudication{timeMargin: 50 * time.Millisecond}
	tests := []struct {
		name         string
		white, black string
		opening      opening
		wantResult   outcome
		wantReason   string
	}{
		{"checkmate", "first", "first", opening{fen: "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"}, whiteWins, "checkmate"},
		{"insufficient material after capture", "first", "first", opening{fen: "8/8/8/8/8/8/8/Kq5k w - - 0 1"}, draw, "insufficient material"},
		{"illegal move loses", "illegal", "first", opening{fen: chess.StartFEN}, blackWins, "illegal move"},
		{"silence loses on time", "first", "silent", opening{fen: chess.StartFEN, moves: []string{"e2e4"}}, whiteWins, "time forfeit"},
		{"fifty-move rule", "first", "first", opening{fen: "8/8/3k4/8/8/3K4/8/8 w - - 0 1"}, draw, "insufficient material"},
		{"stalemate", "first", "first", opening{fen: "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"}, draw, "stalemate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.black == "silent" {
				tc.base = 300 * time.Millisecond
			}
			w := startFake(t, "w", tt.white)
			b := startFake(t, "b", tt.black)
			g, err := playGame(w, b, tt.opening, [2]timeControl{tc, tc}, adj)
			if err != nil {
				t.Fatal(err)
			}
			if g.result != tt.wantResult || !strings.Contains(g.reason, tt.wantReason) {
				t.Errorf("playGame(%s) = %s (%s); want %s (%s)", tt.name, g.result.pgn(), g.reason, tt.wantResult.pgn(), tt.wantReason)
			}
		})
	}
}

// TestFixedNodesHasNoClock: with -tc nodes=N every move is asked for with
// "go nodes N" and the time it takes is no time forfeit.
func TestFixedNodesHasNoClock(t *testing.T) {
	w := startFake(t, "w", "nodes")
	b := startFake(t, "b", "nodes")
	tc := timeControl{nodes: 500}
	g, err := playGame(w, b, opening{fen: "8/8/8/8/8/8/8/Kq5k w - - 0 1"}, [2]timeControl{tc, tc}, adjudication{timeMargin: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if g.result != draw || g.reason != "insufficient material" {
		t.Errorf("playGame = %s (%s); want a draw by insufficient material", g.result.pgn(), g.reason)
	}
}

func TestRepetitionAndFiftyMoves(t *testing.T) {
	// Two rooks shuffle: first-legal-move players repeat or hit 50 moves.
	w := startFake(t, "w", "first")
	b := startFake(t, "b", "first")
	g, err := playGame(w, b, opening{fen: "r6k/8/8/8/8/8/8/R6K w - - 0 1"}, [2]timeControl{{base: 10 * time.Second}, {base: 10 * time.Second}}, adjudication{timeMargin: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if g.result != draw || !(strings.Contains(g.reason, "repetition") || strings.Contains(g.reason, "50-move")) {
		t.Errorf("rook shuffle = %s (%s); want a repetition or 50-move draw", g.result.pgn(), g.reason)
	}
	if !strings.Contains(g.pgn(1), "[Result \"1/2-1/2\"]") {
		t.Errorf("pgn lacks the result:\n%s", g.pgn(1))
	}
}

func TestPlayMatchCountsFromFirstEngine(t *testing.T) {
	cfg := config{
		engines:     [2]engineSpec{fakeSpec(t, "illegal", "illegal"), fakeSpec(t, "first", "first")},
		games:       4,
		tc:          [2]timeControl{{base: time.Second}, {base: time.Second}},
		concurrency: 2,
		openings:    []opening{{fen: chess.StartFEN}},
		adj:         adjudication{timeMargin: time.Second},
	}
	got, err := playMatch(cfg, func(int, gameRecord, bool, tally) {})
	if err != nil {
		t.Fatal(err)
	}
	// The illegal-move engine loses every game, with either colour.
	if got != (tally{losses: 4}) {
		t.Errorf("playMatch = %+v; want 4 losses", got)
	}
}

func TestReadOpeningsFile(t *testing.T) {
	f, err := os.Open("testdata/openings.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops, err := readOpenings(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) < 20 {
		t.Errorf("openings = %d; want at least 20", len(ops))
	}
}

func TestReadOpeningsErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"1. e4 e5 2. Ke3", "line 1"},
		{"fen 8/8/8/8/8/8/8/8 w - - 0 1", "line 1"},
		{"# only a comment\n", "no opening"},
		{"1. f3 e5 2. g4 Qh4#", "game already over"},
	}
	for _, tc := range tests {
		_, err := readOpenings(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("readOpenings(%q) error = %v; want it to mention %q", tc.in, err, tc.want)
		}
	}
}

func TestParseTC(t *testing.T) {
	tests := []struct {
		in   string
		want timeControl
		ok   bool
	}{
		{"10+0.1", timeControl{base: 10 * time.Second, inc: 100 * time.Millisecond}, true},
		{"nodes=20000", timeControl{nodes: 20000}, true},
		{"nodes=0", timeControl{}, false},
		{"nodes=-3", timeControl{}, false},
		{"nodes=", timeControl{}, false},
		{"60", timeControl{base: time.Minute}, true},
		{"0.5+0.05", timeControl{base: 500 * time.Millisecond, inc: 50 * time.Millisecond}, true},
		{"", timeControl{}, false},
		{"0+1", timeControl{}, false},
		{"10+x", timeControl{}, false},
		{"-5", timeControl{}, false},
	}
	for _, tc := range tests {
		got, err := parseTC(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("parseTC(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestParseOptions(t *testing.T) {
	got, err := parseOptions("UCI_LimitStrength=true, UCI_Elo=2000,Move Overhead=30")
	want := [][2]string{{"UCI_LimitStrength", "true"}, {"UCI_Elo", "2000"}, {"Move Overhead", "30"}}
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parseOptions = %v, %v; want %v", got, err, want)
	}
	if _, err := parseOptions("Level"); err == nil {
		t.Errorf("parseOptions(%q) = nil error; want one", "Level")
	}
}

func TestElo(t *testing.T) {
	tests := []struct {
		t        tally
		diff     float64
		contains bool // whether the interval holds 0
	}{
		{tally{wins: 50, losses: 50}, 0, true},
		{tally{wins: 75, draws: 0, losses: 25}, 190.8, false},
		{tally{wins: 10, draws: 80, losses: 10}, 0, true},
		{tally{wins: 2, draws: 1, losses: 1}, 88.7, true},
	}
	for _, tc := range tests {
		d, lo, hi := tc.t.elo()
		if math.Abs(d-tc.diff) > 0.5 {
			t.Errorf("%+v.elo() = %.1f; want %.1f", tc.t, d, tc.diff)
		}
		if lo > d || hi < d || (lo <= 0 && hi >= 0) != tc.contains {
			t.Errorf("%+v.elo() interval [%.1f, %.1f]; want it around %.1f, holding 0 = %v", tc.t, lo, hi, d, tc.contains)
		}
	}
	// More games, narrower interval.
	_, lo1, hi1 := tally{wins: 6, draws: 4, losses: 10}.elo()
	_, lo2, hi2 := tally{wins: 60, draws: 40, losses: 100}.elo()
	if hi2-lo2 >= hi1-lo1 {
		t.Errorf("interval of 200 games (%.0f) not narrower than of 20 (%.0f)", hi2-lo2, hi1-lo1)
	}
}

func FuzzReadOpenings(f *testing.F) {
	f.Add("1. e4 e5 2. Nf3 Nc6 ; Open game\n# comment\nfen 4k3/8/8/8/8/8/8/4K2R w K - 0 1")
	f.Add("1. d4 d5 2. c4")
	f.Fuzz(func(t *testing.T, text string) {
		ops, err := readOpenings(strings.NewReader(text))
		if err != nil {
			return
		}
		for _, o := range ops {
			pos, err := chess.ParseFEN(o.fen)
			if err != nil {
				t.Fatalf("opening FEN %q invalid: %v", o.fen, err)
			}
			for _, u := range o.moves {
				m, err := pos.ParseUCI(u)
				if err != nil {
					t.Fatalf("opening move %q illegal: %v", u, err)
				}
				pos.Play(m)
			}
		}
	})
}

func FuzzParseTC(f *testing.F) {
	f.Add("10+0.1")
	f.Add("60")
	f.Fuzz(func(t *testing.T, s string) {
		tc, err := parseTC(s)
		if err == nil && (tc.base <= 0 || tc.inc < 0) {
			t.Errorf("parseTC(%q) = %+v; want a positive base and non-negative increment", s, tc)
		}
	})
}
