package api

import (
	"net/http"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/game"
)

// The stateless routes: POST /v1/positions and POST /v1/ai/move.

type positionsResponse struct {
	FEN        string           `json:"fen"`
	Turn       string           `json:"turn"`
	Check      bool             `json:"check"`
	Status     string           `json:"status"`
	LegalMoves []game.LegalMove `json:"legalMoves"`
}

func (h *handler) handlePositions(w http.ResponseWriter, r *request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	in, err := decodePositions(body)
	if err != nil {
		return err
	}
	ans, err := h.deps.Games.Position(in)
	if err != nil {
		return err
	}
	legal := ans.LegalMoves
	if legal == nil {
		legal = []game.LegalMove{}
	}
	writeJSON(w, http.StatusOK, positionsResponse{
		FEN: ans.FEN, Turn: ans.Turn.String(), Check: ans.Check, Status: ans.Status.String(), LegalMoves: legal,
	})
	return nil
}

type scoreJSON struct {
	CP   *int `json:"cp,omitempty"`
	Mate *int `json:"mate,omitempty"`
}

func scoreOf(s engine.Score) scoreJSON {
	if s.IsMate() {
		m := s.Mate
		return scoreJSON{Mate: &m}
	}
	cp := s.CP
	return scoreJSON{CP: &cp}
}

type lineJSON struct {
	Move  string    `json:"move"`
	SAN   string    `json:"san"`
	Score scoreJSON `json:"score"`
	PV    []string  `json:"pv"`
}

type wdlJSON struct {
	Win  int `json:"win"`
	Draw int `json:"draw"`
	Loss int `json:"loss"`
}

type aiMoveResponse struct {
	BestMove string     `json:"bestMove"`
	SAN      string     `json:"san"`
	Score    scoreJSON  `json:"score"`
	Depth    int        `json:"depth"`
	Nodes    uint64     `json:"nodes"`
	TimeMs   int64      `json:"timeMs"`
	PV       []string   `json:"pv"`
	Lines    []lineJSON `json:"lines,omitempty"`
	WDL      *wdlJSON   `json:"wdl,omitempty"`
}

// pvText writes a principal variation in UCI from pos.
func pvText(pos *chess.Position, pv []chess.Move) []string {
	walk := *pos
	out := make([]string, 0, len(pv))
	for _, m := range pv {
		out = append(out, walk.UCI(m))
		walk.Play(m)
	}
	return out
}

func (h *handler) handleAIMove(w http.ResponseWriter, r *request) error {
	release, err := h.checkAPIKey(r)
	if err != nil {
		return err
	}
	defer release() // the key's in-flight request ends with the answer
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	in, err := decodeBestMove(body)
	if err != nil {
		return err
	}
	best, err := h.deps.Games.BestMove(r.Context(), in)
	if err != nil {
		return err
	}
	pos := best.Position
	first := best.Lines[0]
	resp := aiMoveResponse{
		BestMove: pos.UCI(first.Move),
		SAN:      pos.SAN(first.Move),
		Score:    scoreOf(first.Score),
		Depth:    best.Depth,
		Nodes:    best.Nodes,
		TimeMs:   best.Time.Milliseconds(),
		PV:       pvText(pos, first.PV),
	}
	if in.MultiPV > 0 {
		for _, l := range best.Lines {
			resp.Lines = append(resp.Lines, lineJSON{Move: pos.UCI(l.Move), SAN: pos.SAN(l.Move), Score: scoreOf(l.Score), PV: pvText(pos, l.PV)})
		}
	}
	if best.WDL != nil {
		resp.WDL = &wdlJSON{Win: best.WDL[0], Draw: best.WDL[1], Loss: best.WDL[2]}
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
