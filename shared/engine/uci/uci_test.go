package uci

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
)

// syncBuffer is a bytes.Buffer safe for the search goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runScript feeds the lines to a session and returns its output.
func runScript(t *testing.T, lines ...string) string {
	t.Helper()
	var out syncBuffer
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := Run(ctx, in, &out, engine.Options{HashMB: 4}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out.String()
}

// bestMoves returns the moves of the bestmove lines.
func bestMoves(out string) []string {
	var moves []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "bestmove" {
			moves = append(moves, f[1])
		}
	}
	return moves
}

func TestHandshake(t *testing.T) {
	out := runScript(t, "uci", "isready", "quit")
	for _, want := range []string{"id name ", "option name Hash type spin", "option name UCI_Chess960 type check",
		"option name Level type combo", "option name MultiPV type spin default 1 min 1 max 5",
		"option name Evaluation type combo default network var network var classical", "uciok", "readyok"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "uciok") > strings.Index(out, "readyok") {
		t.Errorf("readyok before uciok:\n%s", out)
	}
}

func TestGoPlaysLegalMoves(t *testing.T) {
	tests := []struct {
		name   string
		script []string
		fen    string // position the move must be legal in
		moves  []string
	}{
		{"startpos depth", []string{"position startpos", "go depth 4"}, chess.StartFEN, nil},
		{"startpos moves movetime", []string{"position startpos moves e2e4 e7e5 g1f3", "go movetime 50"}, chess.StartFEN,
			[]string{"e2e4", "e7e5", "g1f3"}},
		{"fen clock", []string{"position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "go wtime 1000 btime 1000 winc 10 binc 10"},
			"r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", nil},
		{"nodes", []string{"position startpos", "go nodes 2000"}, chess.StartFEN, nil},
		{"level easy", []string{"setoption name Level value easy", "position startpos", "go movetime 100"}, chess.StartFEN, nil},
		{"classical", []string{"setoption name Evaluation value classical", "position startpos", "go depth 5"}, chess.StartFEN, nil},
		{"network", []string{"setoption name Evaluation value network", "position startpos", "go depth 5"}, chess.StartFEN, nil},
		{"movestogo", []string{"position startpos", "go wtime 500 btime 500 movestogo 1"}, chess.StartFEN, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := runScript(t, append(tc.script, "isready")...)
			got := bestMoves(out)
			if len(got) != 1 {
				t.Fatalf("bestmove lines = %v; want 1\n%s", got, out)
			}
			pos, err := chess.ParseFEN(tc.fen)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range tc.moves {
				m, err := pos.ParseUCI(u)
				if err != nil {
					t.Fatal(err)
				}
				pos.Play(m)
			}
			if _, err := pos.ParseUCI(got[0]); err != nil {
				t.Errorf("bestmove %s illegal in %s: %v", got[0], pos.FEN(), err)
			}
			if !strings.Contains(out, "info depth ") {
				t.Errorf("no info lines:\n%s", out)
			}
		})
	}
}

func TestInfiniteWaitsForStop(t *testing.T) {
	pr, pw := io.Pipe()
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(context.Background(), pr, &out, engine.Options{HashMB: 4}) }()
	write := func(s string) {
		if _, err := io.WriteString(pw, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write("position fen 7k/8/8/8/8/8/8/R6K w - - 0 1")
	write("go infinite")
	time.Sleep(300 * time.Millisecond)
	if moves := bestMoves(out.String()); len(moves) != 0 {
		t.Fatalf("bestmove %v before stop", moves)
	}
	write("stop")
	write("isready")
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "readyok") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	write("quit")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if moves := bestMoves(out.String()); len(moves) != 1 {
		t.Errorf("bestmove lines after stop = %v; want 1\n%s", moves, out.String())
	}
}

func TestChess960CastlingNotation(t *testing.T) {
	// Castling is the only sensible move and must be written king→rook.
	fen := "1r2k2r/8/8/8/8/8/8/1R2K2R w HBhb - 0 1"
	out := runScript(t, "setoption name UCI_Chess960 value true", "position fen "+fen+" moves e1h1", "d")
	if !strings.Contains(out, "1r2k2r/8/8/8/8/8/8/1R3RK1 b hb") {
		t.Errorf("after e1h1 in Chess960 the position is wrong:\n%s", out)
	}
	out = runScript(t, "position fen r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1 moves e1g1", "d")
	if !strings.Contains(out, "r3k2r/8/8/8/8/8/8/R4RK1 b kq") {
		t.Errorf("after e1g1 in standard chess the position is wrong:\n%s", out)
	}
}

func TestErrorsAreReportedNotFatal(t *testing.T) {
	tests := []struct{ cmd, want string }{
		{"position fen not-a-fen", "info string error: position fen"},
		{"position startpos moves e2e5", `move "e2e5"`},
		{"position sideways", "neither startpos nor fen"},
		{"setoption name Hash value lots", "setoption Hash"},
		{"setoption name Level value grandmaster", "setoption Level"},
		{"setoption name Colour value blue", "unknown option"},
		{"setoption Hash 3", "setoption: want"},
		{"setoption name MultiPV value 0", "setoption MultiPV"},
		{"setoption name MultiPV value 6", "setoption MultiPV"},
		{"setoption name MultiPV value two", "setoption MultiPV"},
		{"setoption name Evaluation value hce", "setoption Evaluation"},
		{"go depth", "missing value"},
		{"go movetime soon", "not a number"},
		{"go sideways 3", "unknown parameter"},
		{"flip", "unknown command"},
		{"bench 0", "bench: depth"},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			out := runScript(t, tc.cmd, "isready")
			if !strings.Contains(out, tc.want) || !strings.Contains(out, "readyok") {
				t.Errorf("%q: output = %q; want it to contain %q and go on", tc.cmd, out, tc.want)
			}
		})
	}
}

func TestBadPositionKeepsPrevious(t *testing.T) {
	out := runScript(t, "position startpos moves e2e4", "position startpos moves e2e5", "d")
	if !strings.Contains(out, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1") {
		t.Errorf("position after a rejected command = %q; want the previous one", out)
	}
}

func TestNoLegalMove(t *testing.T) {
	out := runScript(t, "position fen 7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", "go depth 3", "isready")
	if got := bestMoves(out); len(got) != 1 || got[0] != "0000" {
		t.Errorf("bestmove in a mated position = %v; want 0000\n%s", got, out)
	}
}

// TestBenchCommand: "bench 4" prints the engine's bench total for depth 4
// with the session's evaluation (the depth-10 signatures are pinned in
// shared/engine and cmd/uci).
func TestBenchCommand(t *testing.T) {
	network := engine.Bench(4, nil).Nodes
	classical := engine.BenchEvaluation(4, engine.EvalClassical, nil).Nodes
	if classical == network {
		t.Fatalf("bench 4: %d nodes with either evaluation; the test cannot tell them apart", classical)
	}
	for _, tc := range []struct {
		script []string
		nodes  uint64
	}{
		{[]string{"bench 4"}, network},
		{[]string{"setoption name Evaluation value classical", "bench 4"}, classical},
		{[]string{"setoption name Evaluation value classical", "setoption name Evaluation value network", "bench 4"}, network},
	} {
		out := runScript(t, tc.script...)
		want := fmt.Sprintf("bench depth 4 positions 13 nodes %d ", tc.nodes)
		if !strings.Contains(out, "\n"+want) || strings.Count(out, "info string position ") != 13 {
			t.Errorf("%q output = %q; want 13 position lines and a line starting %q", tc.script, out, want)
		}
	}
}

// TestMultiPV: with MultiPV N every completed depth has info lines
// multipv 1..N with distinct first moves, and bestmove is the first move of
// the last multipv 1 line.
func TestMultiPV(t *testing.T) {
	tests := []struct {
		name, fen string
		lines     int
	}{
		{"start 3", chess.StartFEN, 3},
		{"start 5", chess.StartFEN, 5},
		{"two legal moves", "k7/8/2K5/8/8/8/7P/8 b - - 0 1", 2},
		{"one", chess.StartFEN, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := runScript(t, fmt.Sprintf("setoption name MultiPV value %d", min(tc.lines+1, engine.MaxMultiPV)),
				"setoption name MultiPV value "+strconv.Itoa(tc.lines), "position fen "+tc.fen, "go depth 5", "isready")
			pos, err := chess.ParseFEN(tc.fen)
			if err != nil {
				t.Fatal(err)
			}
			firsts := map[int][]string{} // depth → first pv move of multipv 1, 2, ...
			lastBest := ""
			for _, line := range strings.Split(out, "\n") {
				if !strings.HasPrefix(line, "info depth") {
					continue
				}
				il, err := parseInfo(line)
				if err != nil {
					t.Fatalf("parseInfo(%q) = %v", line, err)
				}
				if err := playUCI(pos, il.pv); err != nil {
					t.Fatalf("info line %q: %v", line, err)
				}
				if il.bound != "" {
					continue
				}
				if il.multiPV == len(firsts[il.depth])+1 {
					firsts[il.depth] = append(firsts[il.depth], il.pv[0])
				}
				if il.multiPV == 1 {
					lastBest = il.pv[0]
				}
			}
			for d := 1; d <= 5; d++ {
				got := firsts[d]
				if len(got) < tc.lines || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(got) {
					t.Errorf("depth %d: multipv lines start with %v; want %d distinct moves", d, got, tc.lines)
				}
			}
			if bm := bestMoves(out); len(bm) != 1 || bm[0] != lastBest {
				t.Errorf("bestmove = %v; want the last multipv 1 move %q\n%s", bm, lastBest, out)
			}
		})
	}
}

// infoLine is what the tests read from an "info" line (not "info string").
type infoLine struct {
	depth, multiPV int
	bound          string // "", "lowerbound" or "upperbound"
	pv             []string
}

// parseInfo reads an info line as a GUI would: known keys, each at most
// once, with well-formed values; depth, score, nodes, time and pv required.
func parseInfo(line string) (infoLine, error) {
	f := strings.Fields(line)
	il := infoLine{multiPV: 1}
	if len(f) == 0 || f[0] != "info" {
		return il, fmt.Errorf("not an info line")
	}
	seen := map[string]bool{}
	for i := 1; i < len(f); i++ {
		key := f[i]
		if seen[key] {
			return il, fmt.Errorf("%s twice", key)
		}
		seen[key] = true
		switch key {
		case "depth", "seldepth", "multipv", "nodes", "nps", "hashfull", "time":
			if i+1 >= len(f) {
				return il, fmt.Errorf("%s without a value", key)
			}
			i++
			n, err := strconv.ParseUint(f[i], 10, 64)
			if err != nil {
				return il, fmt.Errorf("%s %q: %v", key, f[i], err)
			}
			switch {
			case key == "depth" && (n < 1 || n > engine.MaxDepth+1):
				return il, fmt.Errorf("depth %d", n)
			case key == "multipv" && (n < 1 || n > engine.MaxMultiPV):
				return il, fmt.Errorf("multipv %d", n)
			case key == "hashfull" && n > 1000:
				return il, fmt.Errorf("hashfull %d", n)
			}
			if key == "depth" {
				il.depth = int(n)
			} else if key == "multipv" {
				il.multiPV = int(n)
			}
		case "score":
			if i+2 >= len(f) || (f[i+1] != "cp" && f[i+1] != "mate") {
				return il, fmt.Errorf("score without cp or mate")
			}
			v, err := strconv.Atoi(f[i+2])
			if err != nil || (f[i+1] == "mate" && v == 0) {
				return il, fmt.Errorf("score %s %q", f[i+1], f[i+2])
			}
			i += 2
			if i+1 < len(f) && (f[i+1] == "lowerbound" || f[i+1] == "upperbound") {
				i++
				il.bound = f[i]
			}
		case "pv":
			il.pv = f[i+1:]
			i = len(f)
		default:
			return il, fmt.Errorf("unknown key %q", key)
		}
	}
	for _, k := range []string{"depth", "score", "nodes", "time", "pv"} {
		if !seen[k] {
			return il, fmt.Errorf("no %s", k)
		}
	}
	if len(il.pv) == 0 {
		return il, fmt.Errorf("empty pv")
	}
	return il, nil
}

// playUCI plays the UCI moves from pos and reports the first illegal one.
func playUCI(pos *chess.Position, moves []string) error {
	p := *pos
	for _, u := range moves {
		m, err := p.ParseUCI(u)
		if err != nil {
			return fmt.Errorf("%s in %s: %v", u, p.FEN(), err)
		}
		p.Play(m)
	}
	return nil
}

// modelPosition is the test's own reading of "position startpos|fen ...
// [moves ...]"; ok is false when the session must keep its position.
func modelPosition(args []string, chess960 bool) (pos *chess.Position, ok bool) {
	if len(args) == 0 {
		return nil, false
	}
	rest := args[1:]
	switch args[0] {
	case "startpos":
		pos = chess.StartingPosition()
		if chess960 {
			p, err := chess.Chess960Start(chess.Chess960StandardIndex)
			if err != nil {
				return nil, false
			}
			pos = p
		}
	case "fen":
		n := slices.Index(rest, "moves")
		if n < 0 {
			n = len(rest)
		}
		variant := chess.VariantAuto
		if chess960 {
			variant = chess.VariantChess960
		}
		p, err := chess.ParseFENVariant(strings.Join(rest[:n], " "), variant)
		if err != nil {
			return nil, false
		}
		pos, rest = p, rest[n:]
	default:
		return nil, false
	}
	if len(rest) > 0 {
		if rest[0] != "moves" {
			return nil, false
		}
		for _, u := range rest[1:] {
			m, err := pos.ParseUCI(u)
			if err != nil {
				return nil, false
			}
			pos.Play(m)
		}
	}
	return pos, true
}

// modelChess960 returns the UCI_Chess960 setting after "setoption args".
func modelChess960(args []string, cur bool) bool {
	if len(args) < 2 || args[0] != "name" {
		return cur
	}
	name, value, _ := strings.Cut(strings.Join(args[1:], " "), " value ")
	if strings.ToLower(name) != "uci_chess960" {
		return cur
	}
	b, err := strconv.ParseBool(strings.TrimSpace(value))
	if err != nil {
		return cur
	}
	return b
}

// fuzzMarker is a position the fuzz target sets and prints after its final
// "quit": it must never appear in the output.
const fuzzMarker = "8/8/8/8/8/8/8/K1k5 w - - 0 1"

// FuzzHandle runs a command stream (one command per line; seed corpus in
// testdata/fuzz/FuzzHandle) through Run, followed by "stop" and "quit", and
// checks what a GUI relies on:
//   - every "go" gets exactly one answer, a bestmove or an "info string
//     error: go ..." line, in order; a bestmove is a legal move of the
//     position the test itself derives from the stream, and 0000 exactly
//     when that position has none;
//   - every info line parses and its pv is legal from that position;
//   - one readyok per isready and one uciok per uci before the first quit,
//     and nothing from the commands after it (the marker position's "d").
func FuzzHandle(f *testing.F) {
	f.Fuzz(func(t *testing.T, script string) {
		if strings.Contains(script, "K1k5") {
			return // would fake the marker
		}
		var lines []string
		for _, line := range strings.Split(script, "\n") {
			line = strings.TrimSuffix(line, "\r")
			lower := strings.ToLower(line)
			if fs := strings.Fields(line); (len(fs) > 0 && fs[0] == "bench") || strings.Contains(lower, "hash") {
				continue // bench takes seconds, a big table takes memory
			}
			lines = append(lines, line)
		}
		if len(lines) > 64 {
			return
		}
		lines = append(lines, "stop", "quit", "position fen "+fuzzMarker, "d", "isready", "uci")

		var out syncBuffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := Run(ctx, strings.NewReader(strings.Join(lines, "\n")+"\n"), &out, engine.Options{HashMB: 1}); err != nil {
			t.Fatalf("Run: %v", err)
		}

		// What the session was given, up to the first quit.
		pos, chess960 := chess.StartingPosition(), false
		var goPos []*chess.Position
		isready, uci := 0, 0
	model:
		for _, line := range lines {
			fs := strings.Fields(line)
			if len(fs) == 0 {
				continue
			}
			switch fs[0] {
			case "quit":
				break model
			case "isready":
				isready++
			case "uci":
				uci++
			case "ucinewgame":
				pos = chess.StartingPosition()
			case "setoption":
				chess960 = modelChess960(fs[1:], chess960)
			case "position":
				if p, ok := modelPosition(fs[1:], chess960); ok {
					pos = p
				}
			case "go":
				goPos = append(goPos, pos)
			}
		}

		text := out.String()
		if strings.Contains(text, fuzzMarker) {
			t.Fatalf("a command after quit was executed:\n%s", text)
		}
		answered, readyok, uciok := 0, 0, 0
		for _, line := range strings.Split(text, "\n") {
			fs := strings.Fields(line)
			switch {
			case len(fs) == 0:
			case strings.HasPrefix(line, "info string error: go"):
				answered++
			case fs[0] == "info" && (len(fs) < 2 || fs[1] != "string"):
				il, err := parseInfo(line)
				if err != nil {
					t.Fatalf("info line %q: %v", line, err)
				}
				if answered >= len(goPos) {
					t.Fatalf("info line %q with no search running", line)
				}
				if err := playUCI(goPos[answered], il.pv); err != nil {
					t.Fatalf("info line %q: pv illegal: %v", line, err)
				}
			case fs[0] == "bestmove":
				if answered >= len(goPos) {
					t.Fatalf("%q answers no go (%d go commands)", line, len(goPos))
				}
				p := goPos[answered]
				answered++
				if len(fs) != 2 {
					t.Fatalf("bestmove line %q", line)
				}
				if fs[1] == "0000" {
					if p.Status() == chess.StatusPlaying || p.Status() == chess.StatusInsufficientMaterial {
						t.Fatalf("bestmove 0000 in %s, which has legal moves", p.FEN())
					}
				} else if _, err := p.ParseUCI(fs[1]); err != nil {
					t.Fatalf("bestmove %s illegal in %s: %v", fs[1], p.FEN(), err)
				}
			case line == "readyok":
				readyok++
			case line == "uciok":
				uciok++
			}
		}
		if answered != len(goPos) || readyok != isready || uciok != uci {
			t.Fatalf("answers: %d to %d go, %d readyok to %d isready, %d uciok to %d uci; want equal\n%s",
				answered, len(goPos), readyok, isready, uciok, uci, text)
		}
	})
}
