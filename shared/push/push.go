// Package push is the stream (SPEC §11) as deployed on AWS: an API Gateway
// WebSocket API whose routes invoke the stream function (Connect,
// Disconnect, Message), and the fan-out function fed by the games table's
// DynamoDB Stream (Fanout), which posts every committed version to the
// game's subscribers through the @connections management API. Fan-out is
// driven by the table's change stream, not by the writer, so a committed
// change is pushed even if the process that wrote it dies right after the
// write. Connections and subscriptions live in the data table with a TTL;
// a connection that is gone (410) is deleted on the first failed post.
//
// The protocol (messages, codes, texts) is the one of the local stream,
// from shared/api.
package push

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"chessapi/shared/api"
	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/obs"
	"chessapi/shared/service"
)

// Connection is one open WebSocket connection.
type Connection struct {
	ID string
	// TokenHash is the hash of the token the client connected with (""
	// for a spectator-only connection): the service authorizes with it, so
	// the token itself is never stored.
	TokenHash string
	Lang      string
	// ExpiresAt is when the item may be deleted (TTL): after API Gateway's
	// two-hour connection limit, for connections whose $disconnect was lost.
	ExpiresAt time.Time
}

// Subscription is one game followed by one connection.
type Subscription struct {
	GameID    string
	ConnID    string
	Seat      string // "white", "black", or "" for a spectator
	TokenHash string
	Lang      string
	ExpiresAt time.Time
}

// Errors of the ports.
var (
	// ErrGone: the connection no longer exists (the management API's 410).
	ErrGone = errors.New("push: connection gone")
	// ErrNoConnection: the store has no such connection.
	ErrNoConnection = errors.New("push: no such connection")
	// ErrTooManySubscriptions: the connection follows MaxSubscriptions games.
	ErrTooManySubscriptions = errors.New("push: too many subscriptions")
)

// Connections keeps connections and subscriptions (the data table).
type Connections interface {
	PutConnection(ctx context.Context, c Connection) error
	Connection(ctx context.Context, id string) (Connection, error)
	// DeleteConnection removes the connection and its subscriptions and
	// returns the subscriptions it had.
	DeleteConnection(ctx context.Context, id string) ([]Subscription, error)
	// Subscribe records s, unless the connection already follows max other
	// games (ErrTooManySubscriptions); subscribing again replaces.
	Subscribe(ctx context.Context, s Subscription, max int) error
	// Unsubscribe removes the subscription and returns it (false: none).
	Unsubscribe(ctx context.Context, connID, gameID string) (Subscription, bool, error)
	// Subscribers lists a game's subscriptions.
	Subscribers(ctx context.Context, gameID string) ([]Subscription, error)
}

// Poster sends a message to a connection (the @connections API).
type Poster interface {
	Post(ctx context.Context, connID string, data []byte) error
}

// Games is what push needs of the service.
type Games interface {
	Observe(ctx context.Context, gameID string, c service.Caller) (service.Observation, error)
	ViewFor(st *game.State, seat *chess.Color) (*game.View, error)
	Changes(ctx context.Context, gameID string, c service.Caller, after int64) (service.ChangeLog, error)
	SetPresence(ctx context.Context, gameID string, c service.Caller, connected bool) (*game.View, error)
	Decode(rec service.GameRecord) (*game.State, error)
}

// MaxMessageBytes is the largest message API Gateway posts to a WebSocket
// connection (its 128 KB message payload quota, which cannot be raised). A
// message with a view past it is sent without the view (gameOmitted), which
// the client then reads over HTTP; only games of many hundreds of moves
// come near it.
const MaxMessageBytes = 128 * 1024

// encode returns m's JSON, without its view when the whole would not fit
// in one message.
func encode(m api.StreamMessage) []byte {
	data := m.Encode()
	if len(data) > MaxMessageBytes && m.Game != nil {
		m.Game, m.GameOmitted = nil, true
		data = m.Encode()
	}
	return data
}

// connectionTTL outlives API Gateway's two-hour limit on a connection.
const connectionTTL = 3 * time.Hour

// Hub serves the stream's routes and fans out commits.
type Hub struct {
	games   Games
	conns   Connections
	poster  Poster
	log     *slog.Logger
	now     func() time.Time
	metrics *obs.Metrics
}

// WithMetrics makes the hub count stale connections (nil: none).
func (h *Hub) WithMetrics(m *obs.Metrics) *Hub {
	h.metrics = m
	return h
}

// New returns a Hub.
func New(games Games, conns Connections, poster Poster, log *slog.Logger) *Hub {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hub{games: games, conns: conns, poster: poster, log: log, now: time.Now}
}

// ConnectRequest is what the $connect route carries.
type ConnectRequest struct {
	ConnID         string
	Authorization  string // the Authorization header
	QueryToken     string // ?token=
	AcceptLanguage string
	QueryLang      string // ?lang=
}

// Connect admits a connection: a malformed token is refused (the error's
// status is the answer to $connect); a well-formed one is kept, hashed, for
// its subscriptions.
func (h *Hub) Connect(ctx context.Context, req ConnectRequest) error {
	caller, lang, err := api.StreamCredentials(req.Authorization, req.QueryToken, req.AcceptLanguage, req.QueryLang)
	if err != nil {
		return err
	}
	c := Connection{ID: req.ConnID, Lang: lang.String(), ExpiresAt: h.now().Add(connectionTTL)}
	if caller.Token != "" {
		c.TokenHash = service.HashToken(caller.Token)
	}
	return h.conns.PutConnection(ctx, c)
}

// Disconnect forgets a connection; a seat whose last connection to a game
// this was is marked disconnected there (its grace starts).
func (h *Hub) Disconnect(ctx context.Context, connID string) error {
	subs, err := h.conns.DeleteConnection(ctx, connID)
	if err != nil {
		return err
	}
	for _, s := range subs {
		h.seatLeft(ctx, s)
	}
	return nil
}

// Message handles a client message on a connection; answers are posted to
// it. An error is returned only when the work could not be done.
func (h *Hub) Message(ctx context.Context, connID string, body []byte) error {
	conn, err := h.conns.Connection(ctx, connID)
	if err != nil {
		return err
	}
	lang, _ := api.ParseLang(conn.Lang)
	req, err := api.DecodeStreamMessage(body)
	if err != nil {
		return h.post(ctx, connID, api.StreamError(err, "", lang))
	}
	caller := service.Caller{TokenHash: conn.TokenHash}
	switch req.Action {
	case api.ActionPing:
		return h.post(ctx, connID, api.StreamMessage{Type: api.MsgPong})
	case api.ActionUnsubscribe:
		s, ok, err := h.conns.Unsubscribe(ctx, connID, req.GameID)
		if err != nil {
			return err
		}
		if ok {
			h.seatLeft(ctx, s)
		}
		return nil
	}
	// Subscribe: authorize, record, then the current view and the
	// catch-up. A commit fanned out between the record and the read is
	// sent twice at worst (clients ignore versions they have).
	obs, err := h.games.Observe(ctx, req.GameID, caller)
	if err != nil {
		return h.post(ctx, connID, api.StreamError(err, req.GameID, lang))
	}
	sub := Subscription{GameID: req.GameID, ConnID: connID, TokenHash: conn.TokenHash, Lang: conn.Lang, ExpiresAt: h.now().Add(connectionTTL)}
	if obs.Seat != nil {
		sub.Seat = obs.Seat.String()
	}
	if err := h.conns.Subscribe(ctx, sub, api.MaxSubscriptions); err != nil {
		if errors.Is(err, ErrTooManySubscriptions) {
			return h.post(ctx, connID, api.StreamError(api.ErrTooManySubscriptions, req.GameID, lang))
		}
		return err
	}
	view, err := h.games.ViewFor(obs.State, obs.Seat)
	if err != nil {
		return err
	}
	if err := h.post(ctx, connID, api.SubscribedMessage(req.GameID, view, lang)); err != nil {
		return err
	}
	if req.AfterVersion != nil && *req.AfterVersion < obs.State.Version {
		log, err := h.games.Changes(ctx, req.GameID, caller, *req.AfterVersion)
		if err != nil {
			return h.post(ctx, connID, api.StreamError(err, req.GameID, lang))
		}
		for _, m := range api.CatchUp(req.GameID, log, lang) {
			if err := h.post(ctx, connID, m); err != nil {
				return err
			}
		}
	}
	return nil
}

// seatLeft marks a seat disconnected when it has no subscription to the
// game left on any connection.
func (h *Hub) seatLeft(ctx context.Context, s Subscription) {
	if s.Seat == "" {
		return
	}
	left, err := h.conns.Subscribers(ctx, s.GameID)
	if err != nil {
		h.log.Warn("presence: subscribers", "game", s.GameID, "err", err)
		return
	}
	for _, o := range left {
		if o.Seat == s.Seat {
			return // still connected elsewhere
		}
	}
	if _, err := h.games.SetPresence(ctx, s.GameID, service.Caller{TokenHash: s.TokenHash}, false); err != nil && !errors.Is(err, service.ErrNotFound) {
		h.log.Warn("presence: disconnect", "game", s.GameID, "seat", s.Seat, "err", err)
	}
}

// Fanout posts the version in next (the record after prev) to every
// subscriber of the game, each with its own view. A connection that is
// gone is deleted; any other failure is returned, so the stream delivers
// the record again (a subscriber may then get a version twice, and ignores
// it).
func (h *Hub) Fanout(ctx context.Context, next service.GameRecord) (sent int, err error) {
	subs, err := h.conns.Subscribers(ctx, next.GameID)
	if err != nil || len(subs) == 0 {
		return 0, err
	}
	st, err := h.games.Decode(next)
	if err != nil {
		return 0, err
	}
	var events []byte
	if n := len(st.Changes); n > 0 && st.Changes[n-1].Version == st.Version {
		events = st.Changes[n-1].Events
	}
	// One view per seat kind and language, however many connections.
	type key struct{ seat, lang string }
	messages := map[key][]byte{}
	var errs []error
	for _, s := range subs {
		k := key{s.Seat, s.Lang}
		msg, ok := messages[k]
		if !ok {
			var seat *chess.Color
			if s.Seat != "" {
				var c chess.Color
				if err := c.UnmarshalText([]byte(s.Seat)); err != nil {
					return sent, fmt.Errorf("subscription of %s to %s: seat %q: %w", s.ConnID, s.GameID, s.Seat, err)
				}
				seat = &c
			}
			view, err := h.games.ViewFor(st, seat)
			if err != nil {
				return sent, err
			}
			lang, _ := api.ParseLang(s.Lang)
			msg = encode(api.ChangeMessage(st.GameID, st.Version, events, view, lang))
			messages[k] = msg
		}
		switch err := h.poster.Post(ctx, s.ConnID, msg); {
		case errors.Is(err, ErrGone):
			h.metrics.Count(obs.MetricStaleConnections, 1)
			h.log.InfoContext(ctx, "connection gone, deleted", "connection", s.ConnID)
			if err := h.Disconnect(ctx, s.ConnID); err != nil {
				errs = append(errs, err)
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("post to %s: %w", s.ConnID, err))
		default:
			sent++
		}
	}
	return sent, errors.Join(errs...)
}

// post sends one message; a gone connection is forgotten (not an error).
func (h *Hub) post(ctx context.Context, connID string, m api.StreamMessage) error {
	err := h.poster.Post(ctx, connID, encode(m))
	if errors.Is(err, ErrGone) {
		return h.Disconnect(ctx, connID)
	}
	return err
}
