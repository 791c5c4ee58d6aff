// Package uci speaks the Universal Chess Interface for an engine.Engine:
// a GUI or match runner writes commands, one per line, and reads the
// engine's answers. Searches run in their own goroutine so "stop",
// "isready" and "quit" are answered while the engine thinks.
//
// Supported: uci, isready, ucinewgame, setoption (Hash, UCI_Chess960, Level,
// Move Overhead, MultiPV, Evaluation: classical or network), position startpos|fen ... [moves ...], go
// (movetime, wtime, btime, winc, binc, movestogo, depth, nodes, mate,
// infinite), stop, quit, and the non-standard "bench [depth]" and "d" (print
// the position). With MultiPV N every iteration prints N info lines,
// "multipv 1" (the best) to "multipv N". Unknown or malformed commands are
// answered with "info string error: ..." and otherwise ignored, as the
// protocol asks. Nothing is printed after "quit".
package uci

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/engine/nnue"
)

// EngineName is reported in "id name".
const EngineName = "chessapi engine"

// Session is one UCI conversation.
type Session struct {
	out   io.Writer
	outMu sync.Mutex

	eng      *engine.Engine
	hashMB   int
	overhead time.Duration
	chess960 bool
	level    engine.Level
	multiPV  int
	eval     engine.Evaluation

	pos     *chess.Position
	history []uint64

	// The running search, if any.
	cancel context.CancelFunc
	done   chan struct{}
	stopCh chan struct{} // closed by "stop" (releases "go infinite")
}

// NewSession returns a session writing to out with a fresh engine.
func NewSession(out io.Writer, opts engine.Options) *Session {
	mb := opts.HashMB
	if mb == 0 {
		mb = engine.DefaultHashMB
	}
	overhead := opts.MoveOverhead
	if overhead == 0 {
		overhead = engine.DefaultMoveOverhead
	}
	return &Session{
		out:      out,
		eng:      engine.New(engine.Options{HashMB: mb, MoveOverhead: overhead, Evaluation: opts.Evaluation}),
		hashMB:   mb,
		overhead: overhead,
		eval:     opts.Evaluation,
		pos:      chess.StartingPosition(),
	}
}

// Run reads commands from in until "quit", end of input or ctx ends, then
// stops any search (its bestmove is still written).
func Run(ctx context.Context, in io.Reader, out io.Writer, opts engine.Options) error {
	s := NewSession(out, opts)
	defer s.stopSearch()
	lines := make(chan string)
	readErr := make(chan error, 1)
	quit := make(chan struct{})
	defer close(quit) // the reader stops at its next line
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-quit:
				return
			}
		}
		readErr <- sc.Err()
		close(lines)
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok {
				s.waitSearch()
				return <-readErr
			}
			if !s.Handle(line) {
				return nil
			}
		}
	}
}

func (s *Session) println(a ...any) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintln(s.out, a...)
}

func (s *Session) printf(format string, a ...any) {
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.out, format, a...)
}

func (s *Session) errorf(format string, a ...any) {
	s.printf("info string error: "+format+"\n", a...)
}

// Handle executes one command line; it returns false for "quit".
func (s *Session) Handle(line string) bool {
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return true
	}
	cmd, args := fields[0], fields[1:]
	switch cmd {
	case "uci":
		s.println("id name " + EngineName)
		s.println("id author chessapi")
		s.printf("option name Hash type spin default %d min 1 max %d\n", engine.DefaultHashMB, engine.MaxHashMB)
		s.println("option name UCI_Chess960 type check default false")
		s.println("option name Level type combo default max var easy var normal var hard var max")
		s.printf("option name MultiPV type spin default 1 min 1 max %d\n", engine.MaxMultiPV)
		s.printf("option name Move Overhead type spin default %d min 0 max 5000\n", engine.DefaultMoveOverhead.Milliseconds())
		s.println("option name Evaluation type combo default network var network var classical")
		s.println("uciok")
	case "isready":
		s.println("readyok")
	case "ucinewgame":
		s.stopSearch()
		s.eng.NewGame()
		s.pos, s.history = chess.StartingPosition(), nil
	case "setoption":
		s.stopSearch()
		if err := s.setOption(args); err != nil {
			s.errorf("%v", err)
		}
	case "position":
		s.stopSearch()
		if err := s.setPosition(args); err != nil {
			s.errorf("%v", err)
		}
	case "go":
		s.stopSearch()
		if err := s.goSearch(args); err != nil {
			s.errorf("%v", err)
		}
	case "stop":
		s.stopSearch()
	case "quit":
		s.stopSearch()
		return false
	case "bench":
		s.stopSearch()
		s.bench(args)
	case "d":
		s.println(s.pos.FEN())
	default:
		s.errorf("unknown command %q", cmd)
	}
	return true
}

// setOption handles "setoption name <id> [value <x>]"; names may contain
// spaces ("Move Overhead").
func (s *Session) setOption(args []string) error {
	if len(args) < 2 || args[0] != "name" {
		return errors.New(`setoption: want "setoption name <id> [value <x>]"`)
	}
	var name, value []string
	inValue := false
	for _, a := range args[1:] {
		switch {
		case a == "value" && !inValue:
			inValue = true
		case inValue:
			value = append(value, a)
		default:
			name = append(name, a)
		}
	}
	id, v := strings.ToLower(strings.Join(name, " ")), strings.Join(value, " ")
	switch id {
	case "hash":
		mb, err := strconv.Atoi(v)
		if err != nil || mb < 1 || mb > engine.MaxHashMB {
			return fmt.Errorf("setoption Hash: value %q is not 1..%d", v, engine.MaxHashMB)
		}
		s.hashMB = mb
		s.eng.SetHashSize(mb)
	case "uci_chess960":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("setoption UCI_Chess960: value %q is not true or false", v)
		}
		s.chess960 = b
	case "level":
		l, err := engine.ParseLevel(strings.ToLower(v))
		if err != nil {
			return fmt.Errorf("setoption Level: %w", err)
		}
		s.level = l
	case "multipv":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > engine.MaxMultiPV {
			return fmt.Errorf("setoption MultiPV: value %q is not 1..%d", v, engine.MaxMultiPV)
		}
		s.multiPV = n
	case "move overhead":
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 || ms > 5000 {
			return fmt.Errorf("setoption Move Overhead: value %q is not 0..5000", v)
		}
		s.overhead = time.Duration(ms) * time.Millisecond
		s.newEngine()
	case "evaluation":
		e, ok := engine.ParseEvaluation(strings.ToLower(v))
		if !ok {
			return fmt.Errorf("setoption Evaluation: value %q is not classical or network", v)
		}
		s.eval = e
		s.newEngine()
	default:
		return fmt.Errorf("setoption: unknown option %q", strings.Join(name, " "))
	}
	return nil
}

// newEngine replaces the engine after an option that New takes changed.
func (s *Session) newEngine() {
	s.eng = engine.New(engine.Options{HashMB: s.hashMB, MoveOverhead: max(s.overhead, time.Microsecond), Evaluation: s.eval})
}

// setPosition handles "position startpos|fen <fen> [moves m1 m2 ...]". On an
// error the previous position is kept.
func (s *Session) setPosition(args []string) error {
	if len(args) == 0 {
		return errors.New("position: want startpos or fen")
	}
	var pos *chess.Position
	rest := args[1:]
	switch args[0] {
	case "startpos":
		pos = chess.StartingPosition()
		if s.chess960 {
			p, err := chess.Chess960Start(chess.Chess960StandardIndex)
			if err != nil {
				return fmt.Errorf("position startpos: %w", err)
			}
			pos = p
		}
	case "fen":
		n := 0
		for n < len(rest) && rest[n] != "moves" {
			n++
		}
		variant := chess.VariantAuto
		if s.chess960 {
			variant = chess.VariantChess960
		}
		p, err := chess.ParseFENVariant(strings.Join(rest[:n], " "), variant)
		if err != nil {
			return fmt.Errorf("position fen: %w", err)
		}
		pos, rest = p, rest[n:]
	default:
		return fmt.Errorf("position: %q is neither startpos nor fen", args[0])
	}
	var history []uint64
	if len(rest) > 0 {
		if rest[0] != "moves" {
			return fmt.Errorf("position: unexpected %q (want moves)", rest[0])
		}
		for _, text := range rest[1:] {
			m, err := pos.ParseUCI(text)
			if err != nil {
				return fmt.Errorf("position: move %q: %w", text, err)
			}
			history = append(history, pos.Hash())
			pos.Play(m)
		}
	}
	s.pos, s.history = pos, history
	return nil
}

// goSearch parses "go ..." and starts the search.
func (s *Session) goSearch(args []string) error {
	p := engine.Params{Position: s.pos, History: s.history, Level: s.level, MultiPV: s.multiPV}
	for i := 0; i < len(args); i++ {
		key := args[i]
		switch key {
		case "infinite":
			p.Infinite = true
			continue
		case "ponder":
			continue // pondering is not supported: search normally
		case "searchmoves":
			return errors.New("go searchmoves is not supported")
		}
		if i+1 >= len(args) {
			return fmt.Errorf("go %s: missing value", key)
		}
		n, err := strconv.ParseInt(args[i+1], 10, 64)
		if err != nil {
			return fmt.Errorf("go %s: value %q is not a number", key, args[i+1])
		}
		i++
		ms := time.Duration(max(n, 0)) * time.Millisecond
		switch key {
		case "movetime":
			p.MoveTime = max(ms, time.Millisecond)
		case "wtime":
			p.WhiteTime = max(ms, time.Millisecond)
		case "btime":
			p.BlackTime = max(ms, time.Millisecond)
		case "winc":
			p.WhiteInc = ms
		case "binc":
			p.BlackInc = ms
		case "movestogo":
			p.MovesToGo = int(n)
		case "depth":
			p.Depth = engine.ClampDepth(int(n))
		case "nodes":
			p.Nodes = uint64(max(n, 1))
		case "mate":
			p.Depth = engine.ClampDepth(int(2*n + 1))
		default:
			return fmt.Errorf("go: unknown parameter %q", key)
		}
	}
	p.Info = s.printInfo
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done, s.stopCh = cancel, make(chan struct{}), make(chan struct{})
	pos, done, stopCh := s.pos, s.done, s.stopCh
	go func() {
		defer close(done)
		res, err := s.eng.Search(ctx, p)
		if p.Infinite {
			<-stopCh // UCI: no bestmove before "stop" in infinite mode
		}
		if err != nil {
			s.printf("info string %v\n", err)
			s.println("bestmove 0000")
			return
		}
		for i, l := range res.Lines {
			s.printf("info depth %d seldepth %d multipv %d score %s nodes %d nps %d time %d pv %s\n",
				l.Depth, res.SelDepth, i+1, l.Score, res.Nodes, nps(res.Nodes, res.Time), res.Time.Milliseconds(), pvString(pos, l.PV))
		}
		s.println("bestmove " + pos.UCI(res.BestMove))
	}()
	return nil
}

// stopSearch ends a running search and waits until its bestmove is written.
func (s *Session) stopSearch() {
	if s.cancel == nil {
		return
	}
	close(s.stopCh)
	s.cancel()
	<-s.done
	s.cancel, s.done, s.stopCh = nil, nil, nil
}

// waitSearch lets a running (finite) search finish, as at end of input.
func (s *Session) waitSearch() {
	if s.done == nil {
		return
	}
	select {
	case <-s.done:
	case <-time.After(time.Minute):
	}
	s.stopSearch()
}

func (s *Session) printInfo(i engine.Info) {
	bound := ""
	switch i.Bound {
	case engine.BoundLower:
		bound = " lowerbound"
	case engine.BoundUpper:
		bound = " upperbound"
	}
	s.printf("info depth %d seldepth %d multipv %d score %s%s nodes %d nps %d hashfull %d time %d pv %s\n",
		i.Depth, i.SelDepth, max(i.MultiPV, 1), i.Score, bound, i.Nodes, i.NPS(), i.HashFull, i.Time.Milliseconds(), pvString(s.pos, i.PV))
}

// pvString writes a PV in UCI notation, playing it out so castling is
// written for the position's variant.
func pvString(pos *chess.Position, pv []chess.Move) string {
	var b strings.Builder
	p := *pos
	for i, m := range pv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p.UCI(m))
		p.Play(m)
	}
	return b.String()
}

func nps(nodes uint64, d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(float64(nodes) / d.Seconds())
}

// bench handles "bench [depth]", with the session's evaluation.
func (s *Session) bench(args []string) {
	depth := engine.BenchDepth
	if len(args) > 0 {
		d, err := strconv.Atoi(args[0])
		if err != nil || d < 1 || d > 30 {
			s.errorf("bench: depth %q is not 1..30", args[0])
			return
		}
		depth = d
	}
	unit := "portable 64-bit code"
	if nnue.VectorUnit != "" {
		unit = nnue.VectorUnit
	}
	if s.eval == engine.EvalNetwork {
		s.println("info string evaluation network, inference on " + unit)
	}
	r := engine.BenchEvaluation(depth, s.eval, func(line string) { s.println("info string " + line) })
	s.printf("bench depth %d positions %d nodes %d time %d nps %d\n", depth, r.Positions, r.Nodes, r.Time.Milliseconds(), r.NPS())
}
