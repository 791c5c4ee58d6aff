package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// engineSpec says how to start one engine and what to set up.
type engineSpec struct {
	name    string
	command []string
	options [][2]string // UCI option name, value
}

// uciEngine is a running UCI engine process.
type uciEngine struct {
	spec  engineSpec
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

var errEngineExited = errors.New("engine exited")

// startEngine starts the engine, completes the uci/isready handshake and
// sets the options.
func startEngine(spec engineSpec) (*uciEngine, error) {
	if len(spec.command) == 0 {
		return nil, fmt.Errorf("engine %s: empty command", spec.name)
	}
	cmd := exec.Command(spec.command[0], spec.command[1:]...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("engine %s: %w", spec.name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("engine %s: %w", spec.name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("engine %s: start: %w", spec.name, err)
	}
	e := &uciEngine{spec: spec, cmd: cmd, stdin: stdin, lines: make(chan string, 256)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			e.lines <- sc.Text()
		}
		close(e.lines)
	}()
	if err := e.send("uci"); err != nil {
		return nil, err
	}
	if _, err := e.waitFor("uciok", 10*time.Second); err != nil {
		e.close()
		return nil, err
	}
	for _, o := range spec.options {
		if err := e.send(fmt.Sprintf("setoption name %s value %s", o[0], o[1])); err != nil {
			return nil, err
		}
	}
	if err := e.ready(); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *uciEngine) send(line string) error {
	if _, err := io.WriteString(e.stdin, line+"\n"); err != nil {
		return fmt.Errorf("engine %s: write %q: %w", e.spec.name, line, err)
	}
	return nil
}

func (e *uciEngine) ready() error {
	if err := e.send("isready"); err != nil {
		return err
	}
	_, err := e.waitFor("readyok", 10*time.Second)
	return err
}

// waitFor returns the first line starting with prefix.
func (e *uciEngine) waitFor(prefix string, timeout time.Duration) (string, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-e.lines:
			if !ok {
				return "", fmt.Errorf("engine %s: %w", e.spec.name, errEngineExited)
			}
			if strings.HasPrefix(line, prefix) {
				return line, nil
			}
		case <-timer.C:
			return "", fmt.Errorf("engine %s: no %q within %v", e.spec.name, prefix, timeout)
		}
	}
}

// positionCommand is the UCI "position" command of fen followed by moves.
func positionCommand(fen string, moves []string) string {
	if len(moves) == 0 {
		return "position fen " + fen
	}
	return "position fen " + fen + " moves " + strings.Join(moves, " ")
}

// searchResult is what an engine answered to "go".
type searchResult struct {
	move    string
	elapsed time.Duration
	// score is the last reported score from the mover's side in
	// centipawns (mates as ±100000); hasScore tells whether there was one.
	score    int
	hasScore bool
	// nodes and depth are the last reported ones (0 when none): depth
	// from an info line with a score, so a currmove line does not count.
	nodes uint64
	depth int
}

// think sends the position and go command and waits for bestmove, at most
// timeout (then the engine is considered to have lost on time).
func (e *uciEngine) think(position, goCmd string, timeout time.Duration) (searchResult, error) {
	if err := e.send(position); err != nil {
		return searchResult{}, err
	}
	start := time.Now()
	if err := e.send(goCmd); err != nil {
		return searchResult{}, err
	}
	var res searchResult
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-e.lines:
			if !ok {
				return res, fmt.Errorf("engine %s: %w", e.spec.name, errEngineExited)
			}
			if strings.HasPrefix(line, "info ") {
				if v, ok := parseInfoScore(line); ok {
					res.score, res.hasScore = v, true
				}
				nodes, nodesOK, depth, depthOK := parseInfoNodesDepth(line)
				if nodesOK {
					res.nodes = nodes
				}
				if depthOK && strings.Contains(line, " score ") {
					res.depth = depth
				}
				continue
			}
			if strings.HasPrefix(line, "bestmove") {
				res.elapsed = time.Since(start)
				f := strings.Fields(line)
				if len(f) < 2 {
					return res, fmt.Errorf("engine %s: malformed %q", e.spec.name, line)
				}
				res.move = f[1]
				return res, nil
			}
		case <-timer.C:
			res.elapsed = time.Since(start)
			return res, errTimeout
		}
	}
}

var errTimeout = errors.New("no move in time")

// parseInfoScore reads "score cp N" or "score mate N" from an info line;
// bounds (lowerbound/upperbound) are skipped.
func parseInfoScore(line string) (int, bool) {
	f := strings.Fields(line)
	for i := 0; i+2 < len(f); i++ {
		if f[i] != "score" {
			continue
		}
		if i+3 < len(f) && (f[i+3] == "lowerbound" || f[i+3] == "upperbound") {
			return 0, false
		}
		n, err := strconv.Atoi(f[i+2])
		if err != nil {
			return 0, false
		}
		switch f[i+1] {
		case "cp":
			return n, true
		case "mate":
			if n > 0 {
				return 100000 - n, true
			}
			return -100000 - n, true
		}
	}
	return 0, false
}

func (e *uciEngine) close() {
	_ = e.send("quit")
	_ = e.stdin.Close()
	done := make(chan struct{})
	go func() { _ = e.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		_ = e.cmd.Process.Kill()
		<-done
	}
}
