package engine

import (
	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue"
)

// The static evaluation the search uses: the network (shared/engine/nnue)
// by default, the hand-written evaluation (eval.go) for Evaluation
// EvalClassical and for the weakened level easy (its classical flag in
// levels.go: calibrated on it; normal and hard were recalibrated on the
// network). The network became the default when
// network max beat classical max at 10+0.1 over 100 games (docs/engine.md,
// Learned evaluation). With the network, eval.go still evaluates the
// positions where one side has only its king left (its mop-up terms drive the bare king to the edge, the
// bishop's corner in KBNK, which the network was never shown).
//
// The network's accumulators live on a stack beside the positions: the
// accumulator of ply p is computed only when p is evaluated, from its
// parent's (computed first if need be, so siblings share it) with the
// features the move added and removed, or from scratch when that is
// cheaper. Writing a position to the stack (play) marks its accumulator
// stale.

// Evaluation selects the static evaluation of an Engine.
type Evaluation uint8

const (
	// EvalNetwork is the learned evaluation embedded in the binary, the
	// default.
	EvalNetwork Evaluation = iota
	// EvalClassical is the hand-written evaluation of eval.go.
	EvalClassical
)

// String returns "network" or "classical".
func (e Evaluation) String() string {
	if e == EvalClassical {
		return "classical"
	}
	return "network"
}

// ParseEvaluation reads "network" or "classical".
func ParseEvaluation(s string) (Evaluation, bool) {
	switch s {
	case "network":
		return EvalNetwork, true
	case "classical":
		return EvalClassical, true
	}
	return EvalNetwork, false
}

// netEvaluator is the network state of a searcher.
type netEvaluator struct {
	net   *nnue.Network // nil: classical evaluation
	accs  [maxPly + 2]nnue.Accumulator
	fresh [maxPly + 2]bool // accs[ply] belongs to stack[ply].pos
	upd   nnue.Updates
	spare nnue.Accumulator
}

// play writes parent ply's position with m played (nullMove: a pass) to
// ply+1 of the stack.
func (s *searcher) play(ply int, m chess.Move) *chess.Position {
	child := &s.stack[ply+1].pos
	*child = s.stack[ply].pos
	if m == nullMove {
		child.PlayNull()
	} else {
		child.Play(m)
	}
	s.ev.fresh[ply+1] = false
	return child
}

// setRoot writes the root position to ply 0.
func (s *searcher) setRoot(pos *chess.Position) {
	s.stack[0].pos = *pos
	s.ev.fresh[0] = false
}

// staticEval is the static evaluation of stack[ply].pos, side to move.
func (s *searcher) staticEval(ply int) int32 {
	pos := &s.stack[ply].pos
	if s.ev.net == nil || bareKing(pos) {
		return evaluate(pos)
	}
	return s.networkScore(s.accumulator(ply), pos)
}

// evalPosition evaluates a position that is not on the stack.
func (s *searcher) evalPosition(pos *chess.Position) int32 {
	if s.ev.net == nil || bareKing(pos) {
		return evaluate(pos)
	}
	s.ev.net.Refresh(&s.ev.spare, pos)
	return s.networkScore(&s.ev.spare, pos)
}

// networkScore is the network's score, kept clear of mate scores.
func (s *searcher) networkScore(acc *nnue.Accumulator, pos *chess.Position) int32 {
	v := s.ev.net.Evaluate(acc, pos.Turn(), pos.Occupied().Count())
	return min(max(v, -mateBound+1), mateBound-1)
}

// accumulator returns the accumulator of stack[ply].pos, bringing it up to
// date from the nearest ancestor that has one.
func (s *searcher) accumulator(ply int) *nnue.Accumulator {
	ev := &s.ev
	if ev.fresh[ply] {
		return &ev.accs[ply]
	}
	pos := &s.stack[ply].pos
	if ply == 0 {
		ev.net.Refresh(&ev.accs[0], pos)
	} else {
		parent := s.accumulator(ply - 1)
		if nnue.Diff(&ev.upd, &s.stack[ply-1].pos, pos) && ev.upd.Len() < pos.Occupied().Count() {
			ev.net.Apply(&ev.accs[ply], parent, &ev.upd)
		} else {
			ev.net.Refresh(&ev.accs[ply], pos)
		}
	}
	ev.fresh[ply] = true
	return &ev.accs[ply]
}

// bareKing reports whether a side has nothing but its king.
func bareKing(pos *chess.Position) bool {
	return pos.ByColor(chess.White).Count() == 1 || pos.ByColor(chess.Black).Count() == 1
}
