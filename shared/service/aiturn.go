package service

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// AIMoveRequest is what an AI seat needs to choose a move.
type AIMoveRequest struct {
	Position *chess.Position
	// History holds the hashes of the game's earlier positions, oldest
	// first, so the engine sees repetitions.
	History []uint64
	Level   string // one of game.AILevels
	// Remaining and Increment are the AI's own clock (zero: no clock).
	Remaining, Increment time.Duration
	// Seed makes a weakened level's choice reproducible for this game and ply.
	Seed uint64
}

// AIMover chooses AI moves (shared/aiplayer adapts the engine).
type AIMover interface {
	ChooseMove(ctx context.Context, req AIMoveRequest) (chess.Move, error)
}

// PlayAITurn makes the AI seat's move if the game is still at task.Version
// and the AI is to move; a stale task is a no-op. The move is written only
// over that version, so a human action (resign, undo request...) that
// arrived meanwhile wins and the AI's move is dropped.
func (s *Service) PlayAITurn(ctx context.Context, task AITask) error {
	if s.cfg.AIMover == nil {
		return errors.New("service: no AI mover configured")
	}
	cur, err := s.load(ctx, task.GameID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	st := cur.state
	level, ok := st.AITurn()
	if st.Version != task.Version || !ok {
		return nil
	}
	req, err := aiRequest(st, level)
	if err != nil {
		return err
	}
	move, err := s.cfg.AIMover.ChooseMove(ctx, req)
	if err != nil {
		return fmt.Errorf("AI move for game %s: %w", st.GameID, err)
	}
	action := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: req.Position.UCI(move)}}
	next, _, err := game.Apply(st, st.Turn(), action, s.cfg.Now())
	if err != nil {
		return fmt.Errorf("AI move %s refused in game %s: %w", action.Move.UCI, st.GameID, err)
	}
	err = s.write(ctx, cur, next)
	if errors.Is(err, ErrVersionConflict) {
		return nil // the game moved on without us
	}
	return err
}

// aiRequest replays the game for the position history and reads the AI's
// clock.
func aiRequest(st *game.State, level string) (AIMoveRequest, error) {
	variant := chess.VariantStandard
	if st.Options.Variant == game.VariantChess960 {
		variant = chess.VariantChess960
	}
	pos, err := chess.ParseFENVariant(st.StartFEN, variant)
	if err != nil {
		return AIMoveRequest{}, fmt.Errorf("game %s start: %w", st.GameID, err)
	}
	history := make([]uint64, 0, len(st.Moves))
	for _, rec := range st.Moves {
		m, err := pos.ParseUCI(rec.UCI)
		if err != nil {
			return AIMoveRequest{}, fmt.Errorf("game %s replay %s: %w", st.GameID, rec.UCI, err)
		}
		history = append(history, pos.Hash())
		pos.Play(m)
	}
	req := AIMoveRequest{Position: pos, History: history, Level: level}
	me := st.Turn()
	if tc := st.Options.TimeControl; tc.Kind == game.TimeFischer && st.Clock.Started[me] {
		req.Remaining = time.Duration(st.Clock.RemainingMs[me]) * time.Millisecond
		req.Increment = time.Duration(tc.IncSec) * time.Second
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", st.GameID, len(st.Moves))
	req.Seed = h.Sum64()
	return req, nil
}
