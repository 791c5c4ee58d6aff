package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"chessapi/shared/game"
	"chessapi/shared/service"
)

// Games is the application service the game routes call.
type Games = service.Service

type playerJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

type opponentJSON struct {
	Type  string `json:"type"`
	Level string `json:"level"`
}

type createRequest struct {
	Options   json.RawMessage `json:"options"`
	Opponent  *opponentJSON   `json:"opponent"`
	Player    *playerJSON     `json:"player"`
	RematchOf *string         `json:"rematchOf"`
}

type seatedResponse struct {
	GameID   string     `json:"gameId,omitempty"`
	PlayerID string     `json:"playerId"`
	Token    string     `json:"token"`
	Game     *game.View `json:"game"`
}

type joinRequest struct {
	Player *playerJSON `json:"player"`
}

type actionRequest struct {
	Type            *string         `json:"type"`
	Payload         json.RawMessage `json:"payload"`
	ExpectedVersion *int64          `json:"expectedVersion"`
	RequestID       *string         `json:"requestId"`
}

type actionResponse struct {
	Game   *game.View      `json:"game"`
	Events json.RawMessage `json:"events"`
}

type presenceRequest struct {
	Connected *bool `json:"connected"`
}

type gameResponse struct {
	Game *game.View `json:"game"`
}

func (h *handler) games() (*Games, error) {
	if h.deps.Games == nil {
		return nil, errUnavailable
	}
	return h.deps.Games, nil
}

// gamesFor returns the service and the caller: a seat token when the
// Authorization header has one (malformed → 401), else a spectator.
func (h *handler) gamesFor(r *http.Request) (*Games, service.Viewer, error) {
	games, err := h.games()
	if err != nil {
		return nil, service.Viewer{}, err
	}
	token, _, err := service.ParseBearer(r.Header.Get("Authorization"))
	if err != nil {
		return nil, service.Viewer{}, err
	}
	return games, service.Viewer{Token: token}, nil
}

// seat is gamesFor for routes that need a seat: no token is 401.
func (h *handler) seat(r *http.Request) (*Games, service.Viewer, error) {
	games, v, err := h.gamesFor(r)
	if err == nil && v.Token == "" {
		err = service.ErrUnauthorized
	}
	return games, v, err
}

func (h *handler) handleCreate(w http.ResponseWriter, r *http.Request) error {
	games, err := h.games()
	if err != nil {
		return err
	}
	var req createRequest
	if err := decodeBody(w, r, &req, true); err != nil {
		return err
	}
	in := service.CreateInput{Options: req.Options}
	if req.Opponent != nil {
		switch req.Opponent.Type {
		case "human":
			if req.Opponent.Level != "" {
				return errBadRequest("invalid_field", "opponent.level", "사람 상대에는 level을 쓸 수 없어요")
			}
		case "ai":
			if req.Opponent.Level == "" {
				return errBadRequest("invalid_field", "opponent.level", "AI 상대에는 level이 필요해요")
			}
			in.AILevel = req.Opponent.Level
		default:
			return errBadRequest("invalid_field", "opponent.type", `opponent.type은 "human" 또는 "ai"여야 해요`)
		}
	}
	if req.Player != nil {
		in.Player = service.PlayerInput{ID: req.Player.ID, Name: req.Player.Name}
	}
	if req.RematchOf != nil {
		if *req.RematchOf == "" {
			return errBadRequest("invalid_field", "rematchOf", "rematchOf가 비어 있어요")
		}
		in.RematchOf = *req.RematchOf
	}
	seated, err := games.Create(r.Context(), in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/games/"+seated.GameID)
	writeJSON(w, http.StatusCreated, seatedResponse{GameID: seated.GameID, PlayerID: seated.PlayerID, Token: seated.Token, Game: seated.Game})
	return nil
}

func (h *handler) handleJoin(w http.ResponseWriter, r *http.Request) error {
	games, err := h.games()
	if err != nil {
		return err
	}
	var req joinRequest
	if err := decodeBody(w, r, &req, true); err != nil {
		return err
	}
	var in service.PlayerInput
	if req.Player != nil {
		in = service.PlayerInput{ID: req.Player.ID, Name: req.Player.Name}
	}
	seated, err := games.Join(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, seatedResponse{PlayerID: seated.PlayerID, Token: seated.Token, Game: seated.Game})
	return nil
}

func (h *handler) handleView(w http.ResponseWriter, r *http.Request) error {
	games, v, err := h.gamesFor(r)
	if err != nil {
		return err
	}
	var after *int64
	if raw := r.URL.Query().Get("afterVersion"); raw != "" || r.URL.Query().Has("afterVersion") {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil || n < 0 {
			return errBadRequest("invalid_field", "afterVersion", "afterVersion은 0 이상의 정수여야 해요")
		}
		after = &n
	}
	view, err := games.Get(r.Context(), r.PathValue("id"), v, after, h.deps.LongPollMax)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, gameResponse{Game: view})
	return nil
}

func (h *handler) handleAction(w http.ResponseWriter, r *http.Request) error {
	games, v, err := h.seat(r)
	if err != nil {
		return err
	}
	var req actionRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	if req.Type == nil {
		return errBadRequest("missing_field", "type", "type이 필요해요")
	}
	in := service.ActionInput{Type: *req.Type, Payload: req.Payload, ExpectedVersion: req.ExpectedVersion}
	if req.RequestID != nil {
		if *req.RequestID == "" {
			return errBadRequest("invalid_field", "requestId", "requestId가 비어 있어요")
		}
		in.RequestID = *req.RequestID
	}
	out, err := games.Act(r.Context(), r.PathValue("id"), v, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, actionResponse{Game: out.Game, Events: out.Events})
	return nil
}

func (h *handler) handlePGN(w http.ResponseWriter, r *http.Request) error {
	games, v, err := h.gamesFor(r)
	if err != nil {
		return err
	}
	text, err := games.PGN(r.Context(), r.PathValue("id"), v)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-chess-pgn; charset=utf-8")
	w.Header().Set("Content-Disposition", `inline; filename="`+r.PathValue("id")+`.pgn"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(text))
	return nil
}

func (h *handler) handlePresence(w http.ResponseWriter, r *http.Request) error {
	games, v, err := h.seat(r)
	if err != nil {
		return err
	}
	var req presenceRequest
	if err := decodeBody(w, r, &req, false); err != nil {
		return err
	}
	if req.Connected == nil {
		return errBadRequest("missing_field", "connected", "connected가 필요해요")
	}
	view, err := games.SetPresence(r.Context(), r.PathValue("id"), v, *req.Connected)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, gameResponse{Game: view})
	return nil
}

// mapServiceError maps the errors of the service and the reducer to API
// errors; nil for errors that are failures (5xx).
func mapServiceError(err error) *apiError {
	var (
		conflict *service.ConflictError
		input    *game.InputError
		rule     *game.RuleError
	)
	switch {
	case errors.Is(err, service.ErrNotFound):
		return &apiError{Status: http.StatusNotFound, Code: "game_not_found", Message: "대국을 찾을 수 없어요"}
	case errors.Is(err, service.ErrUnauthorized):
		return &apiError{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "좌석 토큰이 필요해요 (Authorization: Bearer <token>)"}
	case errors.Is(err, service.ErrForbidden):
		return &apiError{Status: http.StatusForbidden, Code: "forbidden", Message: "이 대국의 좌석 토큰이 아니에요"}
	case errors.As(err, &conflict):
		return &apiError{Status: http.StatusConflict, Code: "version_conflict", Message: "대국이 그사이에 바뀌었어요. 최신 상태를 확인해 주세요",
			Extra: map[string]any{"game": conflict.Current}}
	case errors.Is(err, service.ErrBusy):
		return &apiError{Status: http.StatusServiceUnavailable, Code: "busy", Message: "요청이 몰려 처리하지 못했어요. 다시 시도해 주세요"}
	case errors.Is(err, service.ErrTooLarge):
		return &apiError{Status: http.StatusUnprocessableEntity, Code: "game_too_large", Message: "대국 기록이 너무 길어 더 저장할 수 없어요"}
	case errors.As(err, &input):
		return &apiError{Status: http.StatusBadRequest, Code: "invalid_field", Field: input.Field, Message: input.Message}
	case errors.As(err, &rule):
		status := http.StatusUnprocessableEntity
		if rule.Code == game.CodeGameFull || rule.Code == game.CodeAlreadySeated {
			status = http.StatusConflict
		}
		return &apiError{Status: status, Code: rule.Code.String(), Message: rule.Message}
	}
	return nil
}
