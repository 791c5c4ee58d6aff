package uci

import (
	"bytes"
	"context"
	"io"
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
		"option name Level type combo", "uciok", "readyok"} {
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

func TestBenchCommand(t *testing.T) {
	a := runScript(t, "bench 4")
	b := runScript(t, "bench 4")
	sig := func(out string) string {
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "bench ") {
				f := strings.Fields(line)
				for i := range f {
					if f[i] == "nodes" && i+1 < len(f) {
						return f[i+1]
					}
				}
			}
		}
		return ""
	}
	if sig(a) == "" || sig(a) != sig(b) {
		t.Errorf("bench 4 nodes = %q then %q; want the same non-empty signature\n%s", sig(a), sig(b), a)
	}
}

func FuzzHandle(f *testing.F) {
	for _, seed := range []string{"uci", "position startpos moves e2e4", "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
		"setoption name Hash value 1", "go depth 1", "go nodes 100", "setoption name Level value easy", "d"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.Contains(line, "infinite") || strings.Contains(line, "bench") {
			return // would wait for stop / take long
		}
		s := NewSession(io.Discard, engine.Options{HashMB: 1})
		s.Handle("setoption name Hash value 1")
		s.Handle(line)
		s.Handle("go nodes 200")
		s.stopSearch()
	})
}
