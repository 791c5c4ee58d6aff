package api

import (
	"net/http"

	"chessapi/shared/service"
)

// The account routes (SPEC §16.2): deletion, sessions, the recovery code,
// public profiles and blocks.

func (h *handler) handleDeleteMe(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	if _, err := readEmptyBody(w, r); err != nil {
		return err
	}
	if err := h.deps.Games.DeleteMe(r.Context(), caller); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// sessionJSON is one session as its owner sees it.
type sessionJSON struct {
	SessionID  string `json:"sessionId"`
	Label      string `json:"label"`
	CreatedAt  int64  `json:"createdAt"`
	LastUsedAt int64  `json:"lastUsedAt"`
	Current    bool   `json:"current"`
}

func sessionOf(s service.SessionInfo) sessionJSON {
	return sessionJSON{SessionID: s.ID, Label: s.Label, CreatedAt: s.CreatedAt.UnixMilli(), LastUsedAt: s.LastUsedAt.UnixMilli(), Current: s.Current}
}

type sessionsJSON struct {
	Sessions []sessionJSON `json:"sessions"`
}

func (h *handler) handleSessions(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	list, err := h.deps.Games.Sessions(r.Context(), caller)
	if err != nil {
		return err
	}
	out := sessionsJSON{Sessions: make([]sessionJSON, 0, len(list))}
	for _, s := range list {
		out.Sessions = append(out.Sessions, sessionOf(s))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) handleLabelSession(w http.ResponseWriter, r *request) error {
	caller, label, err := playerRequest(w, r, decodeLabel)
	if err != nil {
		return err
	}
	s, err := h.deps.Games.LabelCurrentSession(r.Context(), caller, label)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sessionOf(s))
	return nil
}

func (h *handler) handleRevokeSession(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	if _, err := readEmptyBody(w, r); err != nil {
		return err
	}
	if err := h.deps.Games.RevokeSession(r.Context(), caller, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type recoveryCodeJSON struct {
	RecoveryCode string `json:"recoveryCode"`
}

func (h *handler) handleNewRecoveryCode(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	if _, err := readEmptyBody(w, r); err != nil {
		return err
	}
	code, err := h.deps.Games.NewRecoveryCode(r.Context(), caller)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, recoveryCodeJSON{RecoveryCode: code})
	return nil
}

func (h *handler) handleRecover(w http.ResponseWriter, r *request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	playerID, code, err := decodeRecover(body)
	if err != nil {
		return err
	}
	np, err := h.deps.Games.Recover(r.Context(), playerID, code)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/players/me")
	writeJSON(w, http.StatusCreated, newPlayerOf(np, r.lang))
	return nil
}

// ratingPointJSON is one point of a profile's rating history.
type ratingPointJSON struct {
	GameID string `json:"gameId"`
	At     int64  `json:"at"`
	Rating int    `json:"rating"`
}

// publicProfileJSON is a player as anyone sees them.
type publicProfileJSON struct {
	profileJSON
	RatingHistory []ratingPointJSON `json:"ratingHistory"`
}

func (h *handler) handlePublicProfile(w http.ResponseWriter, r *request) error {
	p, err := h.deps.Games.PublicProfileOf(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	out := publicProfileJSON{profileJSON: profileOf(p.Profile, r.lang), RatingHistory: make([]ratingPointJSON, 0, len(p.RatingHistory))}
	for _, e := range p.RatingHistory {
		out.RatingHistory = append(out.RatingHistory, ratingPointJSON{GameID: e.GameID, At: e.At.UnixMilli(), Rating: e.After})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// blockJSON is one blocked player.
type blockJSON struct {
	PlayerID  string `json:"playerId"`
	Name      string `json:"name"`
	BlockedAt int64  `json:"blockedAt"`
}

type blocksJSON struct {
	Blocks []blockJSON `json:"blocks"`
}

func (h *handler) handleBlocks(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	list, err := h.deps.Games.Blocks(r.Context(), caller)
	if err != nil {
		return err
	}
	out := blocksJSON{Blocks: make([]blockJSON, 0, len(list))}
	for _, b := range list {
		out.Blocks = append(out.Blocks, blockJSON{PlayerID: b.PlayerID, Name: seatName(b.Name, "", r.lang), BlockedAt: b.CreatedAt.UnixMilli()})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) handleBlock(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	if _, err := readEmptyBody(w, r); err != nil {
		return err
	}
	if err := h.deps.Games.Block(r.Context(), caller, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *handler) handleUnblock(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	if _, err := readEmptyBody(w, r); err != nil {
		return err
	}
	if err := h.deps.Games.Unblock(r.Context(), caller, r.PathValue("id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
