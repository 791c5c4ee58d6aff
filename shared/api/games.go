package api

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The game routes: decode, call the service, encode (views localized).

type seatedResponse struct {
	GameID   string     `json:"gameId,omitempty"`
	PlayerID string     `json:"playerId"`
	Token    string     `json:"token"`
	Game     *game.View `json:"game"`
	// InviteCode is a private game's code, for its host (SPEC §15).
	InviteCode string `json:"inviteCode,omitempty"`
}

type gameResponse struct {
	Game *game.View `json:"game"`
}

type actionResponse struct {
	Game   *game.View      `json:"game"`
	Events json.RawMessage `json:"events"`
}

type changeJSON struct {
	Version int64           `json:"version"`
	At      int64           `json:"at"`
	Events  json.RawMessage `json:"events"`
	Delta   json.RawMessage `json:"delta"`
}

type eventsResponse struct {
	Version int64 `json:"version"`
	Reset   bool  `json:"reset,omitempty"`
	// Changes is absent on a reset and present otherwise, [] when the
	// client is up to date.
	Changes *[]changeJSON `json:"changes,omitempty"`
	// Game is the caller's view: on a reset, or when asked (?view=true).
	Game *game.View `json:"game,omitempty"`
}

func (h *handler) handleCreate(w http.ResponseWriter, r *request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	in, err := decodeCreate(body)
	if err != nil {
		return err
	}
	if in.Caller, err = callerOf(r.Header.Get("Authorization")); err != nil {
		return err
	}
	seated, err := h.deps.Games.Create(r.Context(), in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/games/"+seated.GameID)
	writeJSON(w, http.StatusCreated, seatedResponse{GameID: seated.GameID, PlayerID: seated.PlayerID, Token: seated.Token,
		Game: localize(seated.Game, r.lang), InviteCode: seated.InviteCode})
	return nil
}

func (h *handler) handleJoin(w http.ResponseWriter, r *request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	in, err := decodeJoin(body)
	if err != nil {
		return err
	}
	if in.Caller, err = callerOf(r.Header.Get("Authorization")); err != nil {
		return err
	}
	seated, err := h.deps.Games.Join(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, seatedResponse{PlayerID: seated.PlayerID, Token: seated.Token, Game: localize(seated.Game, r.lang)})
	return nil
}

// afterVersionParam reads ?afterVersion= (nil when absent).
func afterVersionParam(r *request) (*int64, error) {
	q := r.URL.Query()
	if !q.Has("afterVersion") {
		return nil, nil
	}
	n, err := strconv.ParseInt(q.Get("afterVersion"), 10, 64)
	if err != nil || n < 0 {
		return nil, game.FieldRange("afterVersion", 0, 1<<62)
	}
	return &n, nil
}

// boolParam reads a true/false query parameter (def when absent).
func boolParam(r *request, name string, def bool) (bool, error) {
	q := r.URL.Query()
	if !q.Has(name) {
		return def, nil
	}
	switch q.Get(name) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return def, game.FieldOneOf(name, "true", "false")
}

// viewOptions reads ?moves= (default true): moves=false leaves the move
// list and the PGN out of the view (SPEC §16.1), for screens that do not
// need them.
func viewOptions(r *request) (func(*game.View) *game.View, error) {
	moves, err := boolParam(r, "moves", true)
	if err != nil || moves {
		return func(v *game.View) *game.View { return localize(v, r.lang) }, err
	}
	return func(v *game.View) *game.View {
		if v == nil {
			return nil
		}
		return localize(v.WithoutMoves(), r.lang)
	}, nil
}

// handleView answers GET /v1/games/{id}: the game as the caller sees it.
// With ?afterVersion=N it is the long poll's old address: a game already
// newer than N is answered at once (as the long poll would), and a poll
// that would have to wait is sent to GET /v1/games/{id}/poll with a 307,
// which keeps the method, the query and the headers (HTTP clients follow
// it by themselves). Views and long polls thus have routes of their own,
// and on AWS functions of their own (template.yaml: a flood of 20 s
// polls cannot take the views' instances); HTTP API routes cannot tell a
// query string apart, so the split needs two paths.
func (h *handler) handleView(w http.ResponseWriter, r *request) error {
	caller, err := callerOf(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	after, err := afterVersionParam(r)
	if err != nil {
		return err
	}
	shown, err := viewOptions(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	view, err := h.deps.Games.Get(r.Context(), id, caller, nil, 0)
	if err != nil {
		return err
	}
	if after != nil && view.Version <= *after {
		// Relative to /v1/games/{id}, so it holds under any base path (a
		// custom domain's mapping); "./" keeps an id with a colon from
		// reading as a scheme. The view's own options (moves=) go along.
		q := url.Values{"afterVersion": {strconv.FormatInt(*after, 10)}}
		if m := r.URL.Query(); m.Has("moves") {
			q.Set("moves", m.Get("moves"))
		}
		poll := "./" + url.PathEscape(id) + "/poll?" + q.Encode()
		w.Header().Set("Location", poll)
		writeJSON(w, http.StatusTemporaryRedirect, pollRedirect{Location: poll})
		return nil
	}
	writeJSON(w, http.StatusOK, gameResponse{Game: shown(view)})
	return nil
}

// pollRedirect is the body of the 307 to the long poll (openapi.yaml
// PollRedirect): the Location header again, for clients that read bodies.
type pollRedirect struct {
	Location string `json:"location"`
}

// handlePoll answers GET /v1/games/{id}/poll?afterVersion=N, the long
// poll: it waits up to LongPollMax (20 s) until the game's version is
// greater than N, then answers with the game as it is (also when nothing
// changed).
func (h *handler) handlePoll(w http.ResponseWriter, r *request) error {
	caller, err := callerOf(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	after, err := afterVersionParam(r)
	if err != nil {
		return err
	}
	if after == nil {
		return game.FieldRequired("afterVersion")
	}
	shown, err := viewOptions(r)
	if err != nil {
		return err
	}
	view, err := h.deps.Games.Get(r.Context(), r.PathValue("id"), caller, after, h.deps.LongPollMax)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, gameResponse{Game: shown(view)})
	return nil
}

func (h *handler) handleEvents(w http.ResponseWriter, r *request) error {
	caller, err := callerOf(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	after, err := afterVersionParam(r)
	if err != nil {
		return err
	}
	if after == nil {
		return game.FieldRequired("afterVersion")
	}
	withView, err := boolParam(r, "view", false)
	if err != nil {
		return err
	}
	shown, err := viewOptions(r)
	if err != nil {
		return err
	}
	log, err := h.deps.Games.Changes(r.Context(), r.PathValue("id"), caller, *after)
	if err != nil {
		return err
	}
	resp := eventsResponse{Version: log.Version, Reset: log.Reset}
	if log.Reset || withView {
		resp.Game = shown(log.Game)
	}
	if !log.Reset {
		changes := make([]changeJSON, len(log.Changes))
		for i, c := range log.Changes {
			delta, err := localizeDelta(log.Deltas[i], r.lang).MarshalJSON()
			if err != nil {
				return err
			}
			changes[i] = changeJSON{Version: c.Version, At: c.At, Events: c.Events, Delta: delta}
		}
		resp.Changes = &changes
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// seatCaller is the caller of a route that needs a seat: no token is 401
// before anything else is read.
func seatCaller(r *request) (service.Caller, error) {
	caller, err := callerOf(r.Header.Get("Authorization"))
	if err == nil && caller.Token == "" {
		err = service.ErrUnauthorized
	}
	return caller, err
}

func (h *handler) handleAction(w http.ResponseWriter, r *request) error {
	caller, err := seatCaller(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	in, err := decodeAction(body)
	if err != nil {
		return err
	}
	shown, err := viewOptions(r)
	if err != nil {
		return err
	}
	out, err := h.deps.Games.Act(r.Context(), r.PathValue("id"), caller, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, actionResponse{Game: shown(out.Game), Events: out.EventsJSON})
	return nil
}

func (h *handler) handlePGN(w http.ResponseWriter, r *request) error {
	caller, err := callerOf(r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	text, err := h.deps.Games.PGN(r.Context(), r.PathValue("id"), caller)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-chess-pgn; charset=utf-8")
	w.Header().Set("Content-Disposition", `inline; filename="`+r.PathValue("id")+`.pgn"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(text))
	return nil
}

func (h *handler) handlePresence(w http.ResponseWriter, r *request) error {
	caller, err := seatCaller(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	connected, err := decodePresence(body)
	if err != nil {
		return err
	}
	view, err := h.deps.Games.SetPresence(r.Context(), r.PathValue("id"), caller, connected)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, gameResponse{Game: localize(view, r.lang)})
	return nil
}
