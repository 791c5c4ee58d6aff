// Package engine plays chess: an alpha-beta searcher over shared/chess with a
// transposition table, a tapered hand-written evaluation, a time manager and
// playing levels from "easy" to full strength.
//
// Use one Engine per concurrent search: an Engine owns its transposition
// table and move-ordering tables, and Search holds the Engine's mutex for the
// whole search, so a second concurrent Search on the same Engine waits for the
// first. Several Engines may search at the same time (each search is
// single-threaded).
//
// A typical caller (the AI endpoint) does
//
//	eng := engine.New(engine.Options{})          // once per process
//	res, err := eng.Search(ctx, engine.Params{Position: pos, History: hashes, Level: engine.LevelHard})
//
// and plays res.BestMove. The deadline of ctx bounds every search in
// addition to the limits in Params.
//
// For several candidate moves ("multiPv" of the AI endpoint) set
// Params.MultiPV to 1..MaxMultiPV; Result.Lines then holds that many lines
// (fewer only when the position has fewer legal moves), best first, and
// Lines[0] is BestMove/Score/PV:
//
//	res, err := eng.Search(ctx, engine.Params{Position: pos, MoveTime: time.Second, MultiPV: 3})
//	for _, l := range res.Lines { … l.Move, l.Score, l.PV … }
//	win, draw, loss := engine.WDL(res.Score, pos) // per mille, side to move, sum 1000
//
// Files by concern: engine.go (API), levels.go (levels and request limits),
// search.go (the driver: iterative deepening with multi-PV, aspiration,
// limits), tree.go (the tree search: PVS negamax, pruning, quiescence),
// weakened.go (how the weakened levels search and pick), margins.go
// (every pruning constant), tt.go (transposition table), movepick.go (move
// ordering), history.go (killers, history, counter moves), see.go (static
// exchange), eval.go and pst.go (evaluation), wdl.go (win/draw/loss
// estimate), timeman.go (time), bench.go (bench).
package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue"
)

// Errors returned by Search.
var (
	// ErrNoPosition: Params.Position is nil.
	ErrNoPosition = errors.New("engine: no position to search")
	// ErrNoLegalMove: the side to move is checkmated or stalemated. The error
	// is a *NoMoveError carrying the status.
	ErrNoLegalMove = errors.New("engine: no legal move")
)

// NoMoveError reports a position without legal moves and why.
type NoMoveError struct {
	Status chess.Status // StatusCheckmate or StatusStalemate
}

func (e *NoMoveError) Error() string {
	return fmt.Sprintf("engine: no legal move (%s)", e.Status)
}

// Unwrap lets errors.Is(err, ErrNoLegalMove) match.
func (e *NoMoveError) Unwrap() error { return ErrNoLegalMove }

// DefaultHashMB is the transposition table size when Options.HashMB is zero:
// small enough for the smallest Lambda (512 MB) with room to spare, large
// enough that a 10-second search does not thrash it.
const DefaultHashMB = 64

// MaxHashMB bounds Options.HashMB.
const MaxHashMB = 4096

// DefaultMoveOverhead is the time kept back from every clock-based budget for
// the transport between engine and game (UCI pipes, HTTP).
const DefaultMoveOverhead = 20 * time.Millisecond

// Options configure an Engine.
type Options struct {
	// HashMB is the transposition table size in MiB (rounded down to a power
	// of two entries); 0 means DefaultHashMB.
	HashMB int
	// MoveOverhead is kept back from clock-based budgets (wtime/btime);
	// 0 means DefaultMoveOverhead. Fixed move times are handled separately.
	MoveOverhead time.Duration
	// Evaluation picks the static evaluation: the embedded network (the
	// zero value) or the classical hand-written one.
	Evaluation Evaluation
}

// Engine is a chess engine with its own transposition table and ordering
// tables. Its methods are safe for concurrent use, but searches on one
// Engine run one at a time.
type Engine struct {
	mu       sync.Mutex
	tt       *transpositionTable
	overhead time.Duration
	s        *searcher     // reused between searches: its stack is large
	net      *nnue.Network // nil: classical evaluation
	// now is the clock (time.Now; tests freeze it to show that a search
	// bounded by depth and nodes does not depend on the machine's speed).
	now func() time.Time
}

// New returns an Engine. An out-of-range HashMB is clamped to 1..MaxHashMB.
func New(opts Options) *Engine {
	mb := opts.HashMB
	if mb == 0 {
		mb = DefaultHashMB
	}
	mb = min(max(mb, 1), MaxHashMB)
	overhead := opts.MoveOverhead
	if overhead <= 0 {
		overhead = DefaultMoveOverhead
	}
	e := &Engine{tt: newTranspositionTable(mb), overhead: overhead, now: time.Now}
	if opts.Evaluation == EvalNetwork {
		e.net = nnue.Default()
	}
	e.s = newSearcher(e.tt, e.net)
	return e
}

// NewGame forgets everything learnt in earlier searches (transposition
// table, history, killers), so the next search behaves like a fresh engine's.
func (e *Engine) NewGame() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tt.clear()
	e.s.clearHeuristics()
}

// SetHashSize replaces the transposition table with one of mb MiB (clamped
// to 1..MaxHashMB), forgetting its contents.
func (e *Engine) SetHashSize(mb int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tt = newTranspositionTable(min(max(mb, 1), MaxHashMB))
	e.s = newSearcher(e.tt, e.net)
}

// Params describe one search. Every limit that is set applies; the search
// stops at the first one reached. With no limit at all the level's think
// time applies (Level.ThinkTime).
type Params struct {
	// Position is the position to search (required).
	Position *chess.Position
	// History holds the Hash of every earlier position of the game, oldest
	// first, not including Position; it lets the search see repetitions.
	// Only the positions since the last capture or pawn move matter.
	History []uint64

	// MoveTime is a fixed time for this move.
	MoveTime time.Duration
	// Clock: time left and increment per move of each side, and the moves to
	// the next time control (0 = sudden death).
	WhiteTime, BlackTime, WhiteInc, BlackInc time.Duration
	MovesToGo                                int
	// Depth limits the nominal search depth in plies (0 = none).
	Depth int
	// Nodes limits the nodes searched (0 = none); checked every 512 nodes.
	Nodes uint64
	// Infinite searches until ctx is cancelled (UCI "go infinite").
	Infinite bool

	// MultiPV is how many best lines to search and return in
	// Result.Lines, 1..MaxMultiPV (0 or 1 = one line; more is clamped).
	// Fewer come back only when the position has fewer legal moves.
	// Weakened levels always answer one line.
	MultiPV int

	// Level weakens the play; the zero value is LevelMax (full strength).
	Level Level
	// Seed drives the randomness of weakened levels; searches with the same
	// seed, position and limits other than time play the same way. 0 picks
	// a seed from the clock.
	Seed uint64

	// Info, if set, is called after every completed iteration (and on
	// aspiration failures) from the searching goroutine.
	Info func(Info)
}

// MaxMultiPV is the most lines a search returns (Params.MultiPV).
const MaxMultiPV = 5

// Score is a search score from the side to move's point of view.
type Score struct {
	// CP is the evaluation in centipawns (meaningful when Mate is 0).
	CP int
	// Mate is non-zero for a forced mate: +N when the side to move mates in
	// N moves, -N when it is mated in N moves.
	Mate int
}

// IsMate reports whether the score is a forced mate.
func (s Score) IsMate() bool { return s.Mate != 0 }

// String writes the score as UCI does: "cp 23" or "mate -3".
func (s Score) String() string {
	if s.Mate != 0 {
		return fmt.Sprintf("mate %d", s.Mate)
	}
	return fmt.Sprintf("cp %d", s.CP)
}

// Bound tells whether an Info score is exact or a bound from an aspiration
// window failure.
type Bound uint8

const (
	BoundExact Bound = iota
	BoundLower
	BoundUpper
)

// Info reports search progress (UCI "info" lines).
type Info struct {
	// MultiPV is the line reported, 1-based (always 1 with one line).
	MultiPV  int
	Depth    int
	SelDepth int
	Score    Score
	Bound    Bound
	Nodes    uint64
	Time     time.Duration
	HashFull int // per mille of the transposition table in use
	PV       []chess.Move
}

// NPS returns nodes per second.
func (i Info) NPS() uint64 { return nps(i.Nodes, i.Time) }

func nps(nodes uint64, d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(float64(nodes) / d.Seconds())
}

// Line is one of the best lines of a search (Params.MultiPV).
type Line struct {
	Move  chess.Move   // the root move
	Score Score        // its score, from the side to move
	PV    []chess.Move // starts with Move
	Depth int          // nominal depth of the iteration the line comes from
}

// Result is the outcome of a search.
type Result struct {
	BestMove chess.Move
	Score    Score
	Depth    int // last completed nominal depth
	SelDepth int // deepest ply reached
	Nodes    uint64
	Time     time.Duration
	PV       []chess.Move // starts with BestMove

	// Lines holds min(Params.MultiPV, legal moves) lines (at least one),
	// best first: distinct root moves ordered by score. Lines[0] is
	// BestMove, Score and PV. With more than one line, all come from the
	// last iteration that completed every line.
	Lines []Line
}

// singleLine sets Lines to the one line BestMove, Score, PV.
func (r *Result) singleLine() {
	r.Lines = []Line{{Move: r.BestMove, Score: r.Score, PV: r.PV, Depth: r.Depth}}
}

// Search searches p.Position and returns the move to play. It always returns
// a legal move for a position that has one, also when the time is very
// short; the errors are ErrNoPosition and a *NoMoveError (checkmate or
// stalemate: nothing to play).
func (e *Engine) Search(ctx context.Context, p Params) (Result, error) {
	start := e.now() // before the lock: waiting for another search counts against this one's time
	if p.Position == nil {
		return Result{}, ErrNoPosition
	}
	var moves chess.MoveList
	p.Position.GenerateMoves(&moves, chess.GenAll)
	if moves.Len() == 0 {
		st := chess.StatusStalemate
		if p.Position.InCheck() {
			st = chess.StatusCheckmate
		}
		return Result{}, &NoMoveError{Status: st}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	e.s.now = e.now
	if moves.Len() == 1 {
		// Nothing to think about: answer at once with a static opinion.
		m := moves.At(0)
		child := *p.Position
		child.Play(m)
		score := Score{CP: int(-e.s.evalPosition(&child))}
		if child.IsCheckmate() {
			score = Score{Mate: 1}
		}
		res := Result{
			BestMove: m,
			Score:    score,
			Depth:    1,
			Nodes:    1,
			Time:     e.s.since(start),
			PV:       []chess.Move{m},
		}
		res.singleLine()
		return res, nil
	}
	return e.s.run(ctx, start, &p, e.overhead), nil
}
