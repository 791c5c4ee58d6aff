package api

import (
	"net"
	"net/http"
	"strconv"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The player and lobby routes (SPEC §12, §15).

// profileJSON is a player as the player routes show it.
type profileJSON struct {
	PlayerID   string `json:"playerId"`
	Name       string `json:"name"`
	Rating     int    `json:"rating"`
	Rank       string `json:"rank"`
	RankKey    string `json:"rankKey"`
	RatedGames int    `json:"ratedGames"`
	CreatedAt  int64  `json:"createdAt"`
}

func profileOf(p service.Profile, l Lang) profileJSON {
	key := p.RankKey()
	return profileJSON{PlayerID: p.PlayerID, Name: p.Name, Rating: p.Rating, Rank: l.RankLabel(key), RankKey: key,
		RatedGames: p.RatedGames, CreatedAt: p.CreatedAt.UnixMilli()}
}

// newPlayerJSON answers the routes that issue a player token (a new
// session): creation also shows the recovery code, once.
type newPlayerJSON struct {
	PlayerID     string      `json:"playerId"`
	Token        string      `json:"token"`
	SessionID    string      `json:"sessionId"`
	RecoveryCode string      `json:"recoveryCode,omitempty"`
	Player       profileJSON `json:"player"`
}

func newPlayerOf(np service.NewPlayer, l Lang) newPlayerJSON {
	return newPlayerJSON{PlayerID: np.Player.PlayerID, Token: np.Token, SessionID: np.SessionID, RecoveryCode: np.RecoveryCode, Player: profileOf(np.Player, l)}
}

// playerCaller is the caller of a player route: a player token is
// required (401 player_required without one, or with a seat token).
func playerCaller(r *request) (service.Caller, error) {
	caller, err := callerOf(r.Header.Get("Authorization"))
	if err != nil {
		return caller, err
	}
	if !isPlayerToken(caller.Token) {
		return caller, service.ErrPlayerRequired
	}
	return caller, nil
}

// playerRequest reads what a player's request with a body carries: the
// caller (a player token, as playerCaller says) and the body decoded by
// decode, or the first error of the three.
func playerRequest[T any](w http.ResponseWriter, r *request, decode func([]byte) (T, error)) (service.Caller, T, error) {
	var in T
	caller, err := playerCaller(r)
	if err != nil {
		return caller, in, err
	}
	body, err := readBody(w, r)
	if err != nil {
		return caller, in, err
	}
	in, err = decode(body)
	return caller, in, err
}

func (h *handler) handleCreatePlayer(w http.ResponseWriter, r *request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	in, err := decodeNewPlayer(body)
	if err != nil {
		return err
	}
	np, err := h.deps.Games.CreatePlayer(r.Context(), in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/players/me")
	writeJSON(w, http.StatusCreated, newPlayerOf(np, r.lang))
	return nil
}

func (h *handler) handleMe(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	p, err := h.deps.Games.Me(r.Context(), caller)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, profileOf(p, r.lang))
	return nil
}

func (h *handler) handleRename(w http.ResponseWriter, r *request) error {
	caller, name, err := playerRequest(w, r, decodeRename)
	if err != nil {
		return err
	}
	p, err := h.deps.Games.Rename(r.Context(), caller, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, profileOf(p, r.lang))
	return nil
}

// pageParams reads ?limit= and ?cursor= (SPEC §15: limit 1-100, default 20).
func pageParams(r *request) (limit int, cursor string, err error) {
	q := r.URL.Query()
	limit = service.DefaultPageSize
	if q.Has("limit") {
		n, perr := strconv.Atoi(q.Get("limit"))
		if perr != nil || n < 1 || n > service.MaxPageSize {
			return 0, "", game.FieldRange("limit", 1, service.MaxPageSize)
		}
		limit = n
	}
	if q.Has("cursor") {
		cursor = q.Get("cursor")
		if cursor == "" || len(cursor) > 512 {
			return 0, "", game.FieldFormat("cursor", "cursor", nil)
		}
	}
	return limit, cursor, nil
}

// opponentJSON is the other seat of one of the caller's games.
type opponentJSON struct {
	PlayerID string  `json:"playerId,omitempty"`
	Name     string  `json:"name"`
	Rating   *int    `json:"rating,omitempty"`
	AI       *string `json:"ai,omitempty"`
}

// summaryResultJSON is a finished game's outcome in a list.
type summaryResultJSON struct {
	Winner       *chess.Color       `json:"winner"`
	Reason       game.Reason        `json:"reason"`
	Summary      string             `json:"summary"`
	RatingChange *game.RatingChange `json:"ratingChange,omitempty"`
}

// myGameJSON is one of the caller's games (SPEC §16.2): what a list screen
// draws without opening the game.
type myGameJSON struct {
	GameID         string             `json:"gameId"`
	Phase          game.Phase         `json:"phase"`
	MyColor        chess.Color        `json:"myColor"`
	Opponent       *opponentJSON      `json:"opponent"`
	IsMyTurn       bool               `json:"isMyTurn"`
	FEN            string             `json:"fen"`
	LastMove       *game.LastMove     `json:"lastMove"`
	Deadline       *int64             `json:"deadline"`
	DeadlineReason *string            `json:"deadlineReason"`
	Clock          game.ClockView     `json:"clock"`
	Room           game.Room          `json:"room"`
	Rated          bool               `json:"rated"`
	TimeControl    string             `json:"timeControl"`
	Variant        game.Variant       `json:"variant"`
	Result         *summaryResultJSON `json:"result,omitempty"`
	UpdatedAt      int64              `json:"updatedAt"`
}

type myGamesJSON struct {
	Items      []myGameJSON `json:"items"`
	NextCursor *string      `json:"nextCursor"`
}

func nextCursor(next string) *string {
	if next == "" {
		return nil
	}
	return &next
}

// seatName is a seat's name as a reader of language l sees it: an AI
// seat's label, the deleted player's label, or the name.
func seatName(name, ai string, l Lang) string {
	switch {
	case ai != "":
		return l.AIName(ai)
	case name == game.DeletedPlayerName:
		return l.DeletedPlayerName()
	}
	return name
}

func (h *handler) handleMyGames(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	finished := false
	switch status := r.URL.Query().Get("status"); status {
	case "", "active":
	case "finished":
		finished = true
	default:
		return game.FieldOneOf("status", "active", "finished")
	}
	limit, cursor, err := pageParams(r)
	if err != nil {
		return err
	}
	page, err := h.deps.Games.MyGames(r.Context(), caller, finished, limit, cursor)
	if err != nil {
		return err
	}
	out := myGamesJSON{Items: make([]myGameJSON, 0, len(page.Items)), NextCursor: nextCursor(page.Next)}
	for _, g := range page.Items {
		st, v := g.State, g.View
		item := myGameJSON{
			GameID: st.GameID, Phase: st.Phase, MyColor: g.MyColor, IsMyTurn: g.IsMyTurn(),
			FEN: v.FEN, LastMove: v.LastMove, Deadline: v.Deadline, DeadlineReason: v.DeadlineReason, Clock: v.Clock,
			Room: st.Options.Room, Rated: g.Rated(), TimeControl: st.Options.TimeControl.String(), Variant: st.Options.Variant,
			UpdatedAt: g.UpdatedAt.UnixMilli(),
		}
		if opp := st.Seats[g.MyColor.Other()]; opp.PlayerID != "" {
			o := &opponentJSON{Name: seatName(opp.Name, opp.AI, r.lang)}
			if opp.Bound {
				rating := opp.Rating
				o.PlayerID, o.Rating = opp.PlayerID, &rating
			}
			if opp.AI != "" {
				level := opp.AI
				o.AI = &level
			}
			item.Opponent = o
		}
		if res := st.Result; res != nil {
			item.Result = &summaryResultJSON{Winner: res.Winner, Reason: res.Reason, RatingChange: res.RatingChange,
				Summary: r.lang.Summary(res.Winner, res.Reason, res.MoveCount)}
		}
		out.Items = append(out.Items, item)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type linkCodeJSON struct {
	Code      string `json:"code"`
	ExpiresAt int64  `json:"expiresAt"`
}

func (h *handler) handleNewLinkCode(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	if _, err := readEmptyBody(w, r); err != nil {
		return err
	}
	lc, err := h.deps.Games.NewLinkCode(r.Context(), caller)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, linkCodeJSON{Code: lc.Code, ExpiresAt: lc.ExpiresAt.UnixMilli()})
	return nil
}

// readEmptyBody accepts no body, or an empty JSON object.
func readEmptyBody(w http.ResponseWriter, r *request) ([]byte, error) {
	body, err := readBody(w, r)
	if err != nil {
		return nil, err
	}
	return body, decodeBody(body, true, func(*object) {})
}

// clientOf identifies a client for the limits on guessing: its address
// (API Gateway's source IP on Lambda).
func clientOf(r *request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

func (h *handler) handleLink(w http.ResponseWriter, r *request) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	code, err := decodeLink(body)
	if err != nil {
		return err
	}
	np, err := h.deps.Games.Link(r.Context(), code, clientOf(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPlayerOf(np, r.lang))
	return nil
}

// hostJSON is a lobby game's host.
type hostJSON struct {
	PlayerID string  `json:"playerId,omitempty"`
	Name     string  `json:"name"`
	Rating   *int    `json:"rating,omitempty"`
	Rank     *string `json:"rank,omitempty"`
	RankKey  *string `json:"rankKey,omitempty"`
}

// lobbyItemJSON is one waiting game of a room (SPEC §15).
type lobbyItemJSON struct {
	GameID    string       `json:"gameId"`
	Room      game.Room    `json:"room"`
	Host      hostJSON     `json:"host"`
	Options   game.Options `json:"options"`
	CreatedAt int64        `json:"createdAt"`
}

type lobbyJSON struct {
	Items      []lobbyItemJSON `json:"items"`
	NextCursor *string         `json:"nextCursor"`
}

func (h *handler) handleLobby(w http.ResponseWriter, r *request) error {
	q := r.URL.Query()
	if !q.Has("room") {
		return game.FieldRequired("room")
	}
	room, err := parseRoom("room", q.Get("room"))
	if err != nil {
		return err
	}
	limit, cursor, err := pageParams(r)
	if err != nil {
		return err
	}
	filter, err := lobbyFilter(q)
	if err != nil {
		return err
	}
	page, err := h.deps.Games.Lobby(r.Context(), room, limit, cursor, filter)
	if err != nil {
		return err
	}
	out := lobbyJSON{Items: make([]lobbyItemJSON, 0, len(page.Items)), NextCursor: nextCursor(page.Next)}
	for _, sum := range page.Items {
		item := lobbyItemJSON{GameID: sum.GameID, Room: sum.Options.Room, Options: sum.Options, CreatedAt: sum.CreatedAt}
		for _, seat := range sum.Seats {
			if seat == nil {
				continue
			}
			item.Host = hostJSON{Name: seatName(seat.Name, seat.AI, r.lang)}
			if seat.Bound {
				rating, key := seat.Rating, game.RankKey(seat.Rating)
				label := r.lang.RankLabel(key)
				item.Host.PlayerID, item.Host.Rating, item.Host.Rank, item.Host.RankKey = seat.PlayerID, &rating, &label, &key
			}
		}
		out.Items = append(out.Items, item)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type quickJSON struct {
	Matched  bool       `json:"matched"`
	GameID   string     `json:"gameId"`
	PlayerID string     `json:"playerId"`
	Token    string     `json:"token,omitempty"`
	Game     *game.View `json:"game"`
}

func (h *handler) handleQuick(w http.ResponseWriter, r *request) error {
	caller, in, err := playerRequest(w, r, decodeQuick)
	if err != nil {
		return err
	}
	in.Caller = caller
	res, err := h.deps.Games.QuickPair(r.Context(), in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, quickJSON{Matched: res.Matched, GameID: res.GameID, PlayerID: res.PlayerID, Token: res.Token, Game: localize(res.Game, r.lang)})
	return nil
}
