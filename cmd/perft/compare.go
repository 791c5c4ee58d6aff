package main

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"chessapi/shared/chess"
)

// stockfishPerft drives a Stockfish process over UCI and times `go perft`
// from the moment the command is written until the node count is read, so
// start-up is not counted.
type stockfishPerft struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startStockfish(path string) (*stockfishPerft, error) {
	cmd := exec.Command(path)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	sf := &stockfishPerft{cmd: cmd, in: in, out: bufio.NewScanner(stdout)}
	if _, err := sf.until("uciok", "uci"); err != nil {
		return nil, err
	}
	return sf, nil
}

// until writes the commands and reads lines until one starts with prefix.
func (s *stockfishPerft) until(prefix string, commands ...string) (string, error) {
	for _, c := range commands {
		if _, err := io.WriteString(s.in, c+"\n"); err != nil {
			return "", err
		}
	}
	for s.out.Scan() {
		if line := s.out.Text(); strings.HasPrefix(line, prefix) {
			return line, nil
		}
	}
	return "", fmt.Errorf("stockfish ended before %q", prefix)
}

func (s *stockfishPerft) perft(fen string, depth int) (uint64, time.Duration, error) {
	if _, err := s.until("readyok", "position fen "+fen, "isready"); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	line, err := s.until("Nodes searched", "go perft "+strconv.Itoa(depth))
	elapsed := time.Since(start)
	if err != nil {
		return 0, 0, err
	}
	nodes, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "Nodes searched:")), 10, 64)
	return nodes, elapsed, err
}

func (s *stockfishPerft) close() {
	_, _ = io.WriteString(s.in, "quit\n")
	_ = s.in.Close()
	_ = s.cmd.Wait()
}

// compare alternates our perft and Stockfish's on the same position, rounds
// times, and prints both medians and their ratio: a speed comparison made in
// one run on one machine, as robust to machine load as a ratio can be.
func compare(stockfishPath string, pos *chess.Position, depth, rounds int) error {
	sf, err := startStockfish(stockfishPath)
	if err != nil {
		return err
	}
	defer sf.close()
	if pos.Chess960() {
		if _, err := sf.until("readyok", "setoption name UCI_Chess960 value true", "isready"); err != nil {
			return err
		}
	}
	fen := pos.FEN()
	var ours, theirs []float64
	for i := 0; i < rounds; i++ {
		start := time.Now()
		n := pos.Perft(depth)
		ours = append(ours, float64(n)/time.Since(start).Seconds()/1e6)
		m, d, err := sf.perft(fen, depth)
		if err != nil {
			return err
		}
		if m != n {
			return fmt.Errorf("node counts differ: ours %d, stockfish %d", n, m)
		}
		theirs = append(theirs, float64(m)/d.Seconds()/1e6)
	}
	slices.Sort(ours)
	slices.Sort(theirs)
	o, t := ours[len(ours)/2], theirs[len(theirs)/2]
	fmt.Printf("perft %d of %s, %d rounds (median M nodes/s): ours %.1f, stockfish %.1f, ratio %.2f\n", depth, fen, rounds, o, t, o/t)
	fmt.Printf("  ours %v\n  stockfish %v\n", fmtAll(ours), fmtAll(theirs))
	return nil
}

func fmtAll(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strings.Join(parts, " ")
}
