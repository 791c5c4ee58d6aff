package api

import (
	"errors"
	"net/http"
	"strconv"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// positionInput is the position part shared by POST /v1/positions and
// POST /v1/ai/move: a start FEN (default: the standard start), the variant
// and UCI moves played from it.
type positionInput struct {
	FEN     *string  `json:"fen"`
	Variant *string  `json:"variant"`
	Moves   []string `json:"moves"`
}

// resolve returns the position after the moves, and the hashes of every
// earlier position (oldest first) for repetition detection.
func (in *positionInput) resolve() (*chess.Position, []uint64, error) {
	variant := chess.VariantAuto
	if in.Variant != nil {
		v, ok := chess.ParseVariant(*in.Variant)
		if !ok {
			return nil, nil, errBadRequest("invalid_variant", "variant", `variant은 "standard" 또는 "chess960"이어야 해요`)
		}
		variant = v
	}
	var pos *chess.Position
	switch {
	case in.FEN != nil:
		p, err := chess.ParseFENVariant(*in.FEN, variant)
		if err != nil {
			return nil, nil, fenError("fen", err)
		}
		pos = p
	case variant == chess.VariantChess960:
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
			return nil, nil, moveError("moves."+strconv.Itoa(i), err)
		}
		history = append(history, pos.Hash())
		pos.Play(m)
	}
	return pos, history, nil
}

// fenError turns a FEN parse error into a 400 naming the field and the
// problem.
func fenError(field string, err error) *apiError {
	var fe *chess.FENError
	detail := "FEN을 읽을 수 없어요"
	if errors.As(err, &fe) {
		detail = "FEN이 올바르지 않아요: " + fenProblemKo(fe)
	}
	return &apiError{Status: http.StatusBadRequest, Code: "invalid_fen", Field: field, Message: detail}
}

func fenProblemKo(fe *chess.FENError) string {
	switch {
	case errors.Is(fe, chess.ErrKingCount):
		return "킹은 양쪽에 하나씩 있어야 해요"
	case errors.Is(fe, chess.ErrPawnOnBackRank):
		return "폰은 1행이나 8행에 있을 수 없어요"
	case errors.Is(fe, chess.ErrTooManyPieces):
		return "한쪽 기물이 16개를 넘어요"
	case errors.Is(fe, chess.ErrTooManyPawns):
		return "한쪽 폰이 8개를 넘어요"
	case errors.Is(fe, chess.ErrOpponentInCheck):
		return "차례가 아닌 쪽의 킹이 체크 상태예요"
	case errors.Is(fe, chess.ErrImpossibleCheck):
		return "체크하는 기물이 너무 많아요"
	case errors.Is(fe, chess.ErrCastlingRights):
		return "캐슬링 권리에 맞는 킹·룩이 제자리에 없어요"
	case errors.Is(fe, chess.ErrChess960Castling):
		return "이 캐슬링 권리는 chess960에서만 가능해요"
	case errors.Is(fe, chess.ErrEnPassantSquare):
		return "앙파상 칸이 불가능한 칸이에요"
	case errors.Is(fe, chess.ErrMoveCounterSyntax):
		return "수 카운터가 올바른 숫자가 아니에요"
	}
	return fe.Field + " 필드 형식이 맞지 않아요"
}

// moveError maps a rules-package move error to the API's codes: malformed
// text is a 400; a well-formed move against the rules is a 422 with the same
// codes and messages a game uses (SPEC §5).
func moveError(field string, err error) *apiError {
	code := game.CodeIllegalMove
	switch {
	case errors.Is(err, chess.ErrSyntax):
		return errBadRequest("invalid_move", field, "수 표기를 읽을 수 없어요")
	case errors.Is(err, chess.ErrKingInCheck):
		code = game.CodeKingInCheck
	case errors.Is(err, chess.ErrPromotionRequired):
		code = game.CodePromotionRequired
	case errors.Is(err, chess.ErrAmbiguousMove):
		code = game.CodeAmbiguousMove
	}
	return &apiError{Status: http.StatusUnprocessableEntity, Code: code.String(), Field: field, Message: code.Message()}
}

// legalMoveJSON is one entry of legalMoves in rules answers and game views.
type legalMoveJSON struct {
	UCI       string `json:"uci"`
	SAN       string `json:"san"`
	From      string `json:"from"`
	To        string `json:"to"`
	Promotion string `json:"promotion,omitempty"`
	Castle    string `json:"castle,omitempty"`
}

func legalMovesJSON(pos *chess.Position) []legalMoveJSON {
	moves := pos.LegalMoves()
	sans := pos.SANs(moves)
	out := make([]legalMoveJSON, len(moves))
	for i, m := range moves {
		uci := pos.UCI(m)
		e := legalMoveJSON{UCI: uci, SAN: sans[i], From: uci[0:2], To: uci[2:4]}
		if p := m.Promotion(); p != chess.NoPieceType {
			e.Promotion = string(p.Letter())
		}
		e.Castle = chess.CastleSideOf(m).String()
		out[i] = e
	}
	return out
}

type positionsResponse struct {
	FEN        string          `json:"fen"`
	Turn       string          `json:"turn"`
	Check      bool            `json:"check"`
	Status     string          `json:"status"`
	LegalMoves []legalMoveJSON `json:"legalMoves"`
}

// handlePositions answers POST /v1/positions: the stateless rules service.
func (h *handler) handlePositions(w http.ResponseWriter, r *http.Request) error {
	var in positionInput
	if err := decodeBody(w, r, &in, true); err != nil {
		return err
	}
	pos, _, err := in.resolve()
	if err != nil {
		return err
	}
	resp := positionsResponse{
		FEN:        pos.FEN(),
		Turn:       pos.Turn().String(),
		Check:      pos.InCheck(),
		Status:     pos.Status().String(),
		LegalMoves: legalMovesJSON(pos),
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
