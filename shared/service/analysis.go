package service

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/game"
	"chessapi/shared/obs"
)

// Stateless analysis: the rules answers of POST /v1/positions and the best
// move of POST /v1/ai/move. One replay of the request's position (with the
// history of positions, for repetitions) serves both; the search policy
// (levels, time budgets, clamping) lives here, not in the engine or the
// edge.

// PositionInput is a position as a request gives it: a start FEN (default:
// the standard start), the variant and UCI moves played from it.
type PositionInput struct {
	FEN     *string
	Variant chess.Variant // VariantAuto: from the FEN
	Moves   []string
}

// FENError is a FEN that cannot be read (HTTP 400 invalid_fen); Err is the
// rules package's *chess.FENError.
type FENError struct {
	Field string
	Err   error
}

func (e *FENError) Error() string { return "invalid fen in " + e.Field + ": " + e.Err.Error() }
func (e *FENError) Unwrap() error { return e.Err }

// replay returns the position after in.Moves and the hashes of every
// earlier position, oldest first.
func (in PositionInput) replay() (*chess.Position, []uint64, error) {
	var pos *chess.Position
	switch {
	case in.FEN != nil:
		p, err := chess.ParseFENVariant(*in.FEN, in.Variant)
		if err != nil {
			return nil, nil, &FENError{Field: "fen", Err: err}
		}
		pos = p
	case in.Variant == chess.VariantChess960:
		// Without a FEN, a Chess960 request starts from the standard setup
		// (Scharnagl 518) under Chess960 rules, as PGN readers do.
		p, err := chess.Chess960Start(chess.Chess960StandardIndex)
		if err != nil {
			return nil, nil, err
		}
		pos = p
	default:
		pos = chess.StartingPosition()
	}
	history := make([]uint64, 0, len(in.Moves))
	for i, s := range in.Moves {
		m, err := pos.ParseUCI(s)
		if err != nil {
			field := "moves." + strconv.Itoa(i)
			refusal := game.MoveRefusal(err, field)
			var rule *game.RuleError
			if errors.As(refusal, &rule) {
				rule.Field = field // which of the moves is refused
			}
			return nil, nil, refusal
		}
		history = append(history, pos.Hash())
		pos.Play(m)
	}
	return pos, history, nil
}

// PositionAnswer is the rules answer for a position.
type PositionAnswer struct {
	FEN        string
	Turn       chess.Color
	Check      bool
	Status     chess.Status
	LegalMoves []game.LegalMove
}

// Position answers POST /v1/positions: the position after the moves, its
// status and its legal moves, listed as in a game view.
func (s *Service) Position(in PositionInput) (PositionAnswer, error) {
	pos, _, err := in.replay()
	if err != nil {
		return PositionAnswer{}, err
	}
	return PositionAnswer{
		FEN:        pos.FEN(),
		Turn:       pos.Turn(),
		Check:      pos.InCheck(),
		Status:     pos.Status(),
		LegalMoves: game.LegalMoves(pos),
	}, nil
}

// BestMoveInput asks for a best move: a level, or a time, or a depth
// (zero values: not given), and how many lines (MultiPV, 1..5).
type BestMoveInput struct {
	Position   PositionInput
	Level      string // "" for none
	MovetimeMs int64
	Depth      int64
	MultiPV    int64
}

// Limits of POST /v1/ai/move.
const (
	MaxMultiPV = 5
	maxDepth   = 64
)

// Line is one analysed line: the first move, its score and the principal
// variation from the position (legal moves only).
type Line struct {
	Move  chess.Move
	Score engine.Score
	PV    []chess.Move
}

// BestMove is the answer of POST /v1/ai/move.
type BestMove struct {
	Position *chess.Position // the position searched (for notation)
	Lines    []Line          // best first; Lines[0] is the best move
	Depth    int
	Nodes    uint64
	Time     time.Duration
	// WDL is the win/draw/loss estimate in per mille from the side to
	// move (level max only; nil otherwise).
	WDL *[3]int
}

// NoMoveError is a position without legal moves (HTTP 422 no_legal_moves).
type NoMoveError struct{ Status chess.Status }

func (e *NoMoveError) Error() string { return "no legal moves: " + e.Status.String() }

// BestMove runs one bounded search. The policy: level think times for
// easy/normal/hard (weakened play, one line whatever MultiPV asks), full
// strength for max; movetimeMs clamped to 10 ms..10 s; a depth-only search
// still bounded by 10 s; with neither level nor time, max for the level's
// time. The answer comes within the time bound plus the engine's queueing,
// bounded by the request's context.
func (s *Service) BestMove(ctx context.Context, in BestMoveInput) (BestMove, error) {
	if s.cfg.Engine == nil {
		return BestMove{}, ErrNoEngine
	}
	level := engine.LevelMax
	if in.Level != "" {
		l, err := engine.ParseLevel(in.Level)
		if err != nil {
			return BestMove{}, game.FieldOneOf("level", game.AILevels...)
		}
		level = l
	}
	switch {
	case in.Level != "" && in.MovetimeMs != 0:
		return BestMove{}, &game.InputError{Field: "movetimeMs", Problem: game.ProblemConflict, Want: "level"}
	case in.MovetimeMs < 0:
		return BestMove{}, game.FieldRange("movetimeMs", 1, int64(engine.MaxMoveTime/time.Millisecond))
	case in.Depth < 0 || in.Depth > maxDepth:
		return BestMove{}, game.FieldRange("depth", 1, maxDepth)
	case in.MultiPV < 0 || in.MultiPV > MaxMultiPV:
		return BestMove{}, game.FieldRange("multiPv", 1, MaxMultiPV)
	}
	pos, history, err := in.Position.replay()
	if err != nil {
		return BestMove{}, err
	}
	if pos.Status() != chess.StatusPlaying && pos.CountMoves() == 0 {
		return BestMove{}, &NoMoveError{Status: pos.Status()}
	}
	p := searchParams(level, in.MovetimeMs, in.Depth)
	p.Position, p.History = pos, history
	if level == engine.LevelMax && in.MultiPV > 1 {
		p.MultiPV = int(in.MultiPV)
	}
	ctx, cancel := context.WithTimeout(ctx, p.MoveTime+2*time.Second)
	defer cancel()
	res, err := s.cfg.Engine.Search(ctx, p)
	if err != nil {
		var noMove *engine.NoMoveError
		if errors.As(err, &noMove) {
			return BestMove{}, &NoMoveError{Status: noMove.Status}
		}
		return BestMove{}, fmt.Errorf("search: %w", err)
	}
	s.cfg.Metrics.Emit(nil, obs.Point{Name: obs.MetricAIThinkMs, Value: float64(res.Time.Microseconds()) / 1000, Unit: obs.UnitMilliseconds},
		obs.Point{Name: obs.MetricAINodes, Value: float64(res.Nodes), Unit: obs.UnitCount})
	out := BestMove{Position: pos, Depth: res.Depth, Nodes: res.Nodes, Time: res.Time}
	lines := res.Lines
	if len(lines) == 0 {
		lines = []engine.Line{{Move: res.BestMove, Score: res.Score, PV: res.PV}}
	}
	for _, l := range lines {
		out.Lines = append(out.Lines, Line{Move: l.Move, Score: l.Score, PV: legalPrefix(pos, l.PV)})
	}
	if level == engine.LevelMax {
		win, draw, loss := engine.WDL(out.Lines[0].Score, pos)
		out.WDL = &[3]int{win, draw, loss}
	}
	return out, nil
}

// searchParams turns the request's limits into search limits: movetime
// clamped to MinMoveTime..MaxMoveTime, depth to 1..MaxDepth, a depth-only
// request still bounded by MaxMoveTime, and a request with neither uses the
// level's think time.
func searchParams(level engine.Level, movetimeMs, depth int64) engine.Params {
	p := engine.Params{Level: level}
	if movetimeMs > 0 {
		p.MoveTime = engine.ClampMoveTime(time.Duration(movetimeMs) * time.Millisecond)
	}
	if depth > 0 {
		p.Depth = engine.ClampDepth(int(depth))
		if p.MoveTime == 0 {
			p.MoveTime = engine.MaxMoveTime
		}
	}
	if p.MoveTime == 0 && p.Depth == 0 {
		p.MoveTime = level.ThinkTime()
	}
	return p
}

// legalPrefix returns the longest prefix of pv that is legal from pos: a
// table-reconstructed tail must never reach a client as an illegal move.
func legalPrefix(pos *chess.Position, pv []chess.Move) []chess.Move {
	walk := *pos
	out := make([]chess.Move, 0, len(pv))
	for _, m := range pv {
		if !walk.IsLegal(m) {
			break
		}
		out = append(out, m)
		walk.Play(m)
	}
	return out
}
