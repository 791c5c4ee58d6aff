package api

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
)

// MoveSearcher runs engine searches (an *aiplayer.Pool).
type MoveSearcher interface {
	Search(ctx context.Context, p engine.Params) (engine.Result, error)
}

type aiMoveRequest struct {
	positionInput
	Level      *string `json:"level"`
	MovetimeMs *int64  `json:"movetimeMs"`
	Depth      *int    `json:"depth"`
}

type scoreJSON struct {
	CP   *int `json:"cp,omitempty"`
	Mate *int `json:"mate,omitempty"`
}

type aiMoveResponse struct {
	BestMove string    `json:"bestMove"`
	SAN      string    `json:"san"`
	Score    scoreJSON `json:"score"`
	Depth    int       `json:"depth"`
	Nodes    uint64    `json:"nodes"`
	TimeMs   int64     `json:"timeMs"`
	PV       []string  `json:"pv"`
}

// handleAIMove answers POST /v1/ai/move: a best move for a position, bounded
// by the level's think time or movetimeMs (clamped to 10 ms .. 10 s).
func (h *handler) handleAIMove(w http.ResponseWriter, r *http.Request) error {
	if h.deps.AIAPIKey != "" {
		got := r.Header.Get("X-Api-Key")
		if subtle.ConstantTimeCompare([]byte(got), []byte(h.deps.AIAPIKey)) != 1 {
			return errBadAPIKey
		}
	}
	if h.deps.Searcher == nil {
		return errUnavailable
	}
	var in aiMoveRequest
	if err := decodeBody(w, r, &in, true); err != nil {
		return err
	}
	level := engine.LevelMax
	if in.Level != nil {
		if in.MovetimeMs != nil {
			return errBadRequest("invalid_field", "movetimeMs", "level과 movetimeMs는 함께 쓸 수 없어요")
		}
		l, err := engine.ParseLevel(*in.Level)
		if err != nil {
			return errBadRequest("invalid_level", "level", `level은 "easy", "normal", "hard", "max" 중 하나여야 해요`)
		}
		level = l
	}
	movetimeMs, depth := 0, 0
	if in.MovetimeMs != nil {
		if *in.MovetimeMs <= 0 {
			return errBadRequest("invalid_field", "movetimeMs", "movetimeMs는 양수여야 해요")
		}
		movetimeMs = int(min(*in.MovetimeMs, int64(engine.MaxMoveTime/time.Millisecond)))
	}
	if in.Depth != nil {
		if *in.Depth <= 0 {
			return errBadRequest("invalid_field", "depth", "depth는 양수여야 해요")
		}
		depth = *in.Depth
	}
	// Clamping and defaults (level think time, depth-only bounded by the
	// longest movetime) are the engine's request policy.
	params := engine.RequestParams(level, movetimeMs, depth)
	pos, history, err := in.resolve()
	if err != nil {
		return err
	}
	params.Position = pos
	params.History = history

	ctx, cancel := context.WithTimeout(r.Context(), params.MoveTime+2*time.Second)
	defer cancel()
	res, err := h.deps.Searcher.Search(ctx, params)
	if err != nil {
		var noMove *engine.NoMoveError
		if errors.As(err, &noMove) {
			return &apiError{Status: http.StatusUnprocessableEntity, Code: "no_legal_moves",
				Message: "둘 수 있는 수가 없어요", Extra: map[string]any{"status": noMove.Status.String()}}
		}
		return err
	}
	resp := aiMoveResponse{
		BestMove: pos.UCI(res.BestMove),
		SAN:      pos.SAN(res.BestMove),
		Depth:    res.Depth,
		Nodes:    res.Nodes,
		TimeMs:   res.Time.Milliseconds(),
		PV:       make([]string, 0, len(res.PV)),
	}
	if res.Score.IsMate() {
		resp.Score.Mate = &res.Score.Mate
	} else {
		resp.Score.CP = &res.Score.CP
	}
	walk := *pos
	var legal chess.MoveList
	for _, m := range res.PV {
		if walk.GenerateMoves(&legal, chess.GenAll); !legal.Contains(m) {
			break // never let a bad PV tail corrupt the answer
		}
		resp.PV = append(resp.PV, walk.UCI(m))
		walk.Play(m)
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
