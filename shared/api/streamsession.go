package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/push"
	"chessapi/shared/service"
)

// The stream's conversation (SPEC §11), written once for both transports:
// the local WebSocket server (streamws.go) and the API Gateway WebSocket API
// (streamapigw.go). A transport gives it two ports — a way to send a message
// to one connection, and the registry of who follows which game (in memory
// locally, the data table on AWS) — and hands it every client message; the
// session answers pings, subscribes (authorize, record, the current view,
// the catch-up), unsubscribes, marks a seat disconnected when its last
// subscription ends, and words every committed version for a subscriber.
// Delivering commits differs by transport and stays with it: the local
// server follows each subscription from the in-process feed, AWS fans each
// stored version out from the table's change stream.

// StreamGames is what the stream needs of the service.
type StreamGames interface {
	Observe(ctx context.Context, gameID string, c service.Caller) (service.Observation, error)
	ViewFor(st *game.State, seat *chess.Color) (*game.View, error)
	Changes(ctx context.Context, gameID string, c service.Caller, after int64) (service.ChangeLog, error)
	SetPresence(ctx context.Context, gameID string, c service.Caller, connected bool) (*game.View, error)
}

var _ StreamGames = (*service.Service)(nil)

// StreamConn is one client connection as the conversation sees it: its id
// (unique within its transport), who it is and its language.
type StreamConn struct {
	ID     string
	Caller service.Caller
	Lang   Lang
}

// StreamSend sends one message to one connection: locally into its bounded
// queue, on AWS a post to @connections.
type StreamSend func(ctx context.Context, connID string, m StreamMessage) error

// streamFollower is a transport that delivers each subscription's commits
// itself (the local server, from the in-process feed) rather than by a
// fan-out over the registry. watch is called before the game is read, so a
// commit between the read and the start of delivery is not lost; follow
// then starts delivery for a subscriber at version v, and abandon releases
// what watch took when the subscription does not start.
type streamFollower interface {
	watch(conn StreamConn, gameID string) (follow func(ctx context.Context, v int64, seat *chess.Color), abandon func())
}

// connectionTTL outlives API Gateway's two-hour limit on a connection: a
// stored connection or subscription whose $disconnect was lost expires
// after it.
const connectionTTL = 3 * time.Hour

// streamSession is the conversation over one transport.
type streamSession struct {
	games    StreamGames
	subs     push.Subscriptions
	send     StreamSend
	follower streamFollower // nil: the transport fans commits out
	log      *slog.Logger
	now      func() time.Time
}

// handle answers one client message of conn. An error is returned only
// when the work could not be done (a client's mistake is answered).
func (s *streamSession) handle(ctx context.Context, conn StreamConn, body []byte) error {
	req, err := DecodeStreamMessage(body)
	if err != nil {
		return s.send(ctx, conn.ID, StreamError(err, "", conn.Lang))
	}
	switch req.Action {
	case ActionPing:
		return s.send(ctx, conn.ID, StreamMessage{Type: MsgPong})
	case ActionUnsubscribe:
		sub, ok, err := s.subs.Unsubscribe(ctx, conn.ID, req.GameID)
		if err != nil {
			return err
		}
		if ok {
			s.left(ctx, sub, conn.Caller)
		}
		return nil
	}
	return s.subscribe(ctx, conn, req.GameID, req.AfterVersion)
}

// subscribe authorizes conn for the game (a due timeout applied; a seat
// marked disconnected is connected again), records the subscription, sends
// the current view and what changed after afterVersion, then leaves the
// game to the transport's delivery.
func (s *streamSession) subscribe(ctx context.Context, conn StreamConn, gameID string, afterVersion *int64) error {
	var follow func(context.Context, int64, *chess.Color)
	abandon := func() {}
	if s.follower != nil {
		follow, abandon = s.follower.watch(conn, gameID)
	}
	obs, err := s.games.Observe(ctx, gameID, conn.Caller)
	if err != nil {
		abandon()
		return s.send(ctx, conn.ID, StreamError(err, gameID, conn.Lang))
	}
	sub := push.Subscription{GameID: gameID, ConnID: conn.ID, TokenHash: conn.tokenHash(), Lang: conn.Lang.String(), ExpiresAt: s.now().Add(connectionTTL)}
	if obs.Seat != nil {
		sub.Seat = obs.Seat.String()
	}
	if err := s.subs.Subscribe(ctx, sub, MaxSubscriptions); err != nil {
		abandon()
		if errors.Is(err, push.ErrTooManySubscriptions) {
			return s.send(ctx, conn.ID, StreamError(ErrTooManySubscriptions, gameID, conn.Lang))
		}
		return err
	}
	view, err := s.games.ViewFor(obs.State, obs.Seat)
	if err != nil {
		abandon()
		return errors.Join(err, s.send(ctx, conn.ID, StreamError(err, gameID, conn.Lang)))
	}
	if err := s.send(ctx, conn.ID, SubscribedMessage(gameID, view, conn.Lang)); err != nil {
		abandon()
		return err
	}
	at := obs.State.Version
	if afterVersion != nil && *afterVersion < at {
		var ok bool
		if at, ok, err = s.catchUp(ctx, conn, gameID, *afterVersion); !ok {
			abandon()
			return err
		}
	}
	if follow != nil {
		follow(ctx, at, obs.Seat)
	}
	return nil
}

// catchUp sends what changed after version after — the logged changes, or
// a reset when the log no longer reaches back — and returns the version the
// subscriber is now at. ok is false when the subscriber could not be
// brought up to date: a failed read (answered to the client, err nil) or a
// failed send (err).
func (s *streamSession) catchUp(ctx context.Context, conn StreamConn, gameID string, after int64) (at int64, ok bool, err error) {
	log, err := s.games.Changes(ctx, gameID, conn.Caller, after)
	if err != nil {
		return 0, false, s.send(ctx, conn.ID, StreamError(err, gameID, conn.Lang))
	}
	for _, m := range CatchUp(gameID, log, conn.Lang) {
		if err := s.send(ctx, conn.ID, m); err != nil {
			return 0, false, err
		}
	}
	return log.Version, true, nil
}

// left is the presence rule (seeds/000 §8.5): when sub ends and its seat
// has no other subscription to the game on any connection, the seat is
// disconnected (its grace starts). caller is the one the subscription was
// made with. Failures are logged: the seat's next request reconnects it
// anyway, and the grace is enforced from the stored game.
func (s *streamSession) left(ctx context.Context, sub push.Subscription, caller service.Caller) {
	if sub.Seat == "" {
		return
	}
	others, err := s.subs.Subscribers(ctx, sub.GameID)
	if err != nil {
		s.log.Warn("presence: subscribers", "game", sub.GameID, "err", err)
		return
	}
	for _, o := range others {
		if o.Seat == sub.Seat {
			return // still connected elsewhere
		}
	}
	if _, err := s.games.SetPresence(ctx, sub.GameID, caller, false); err != nil && !errors.Is(err, service.ErrNotFound) {
		s.log.Warn("presence: disconnect", "game", sub.GameID, "seat", sub.Seat, "err", err)
	}
}

// change is the message of committed state st for a subscriber in seat
// (nil: a spectator) reading lang.
func (s *streamSession) change(st *game.State, seat *chess.Color, lang Lang) (StreamMessage, error) {
	view, err := s.games.ViewFor(st, seat)
	if err != nil {
		return StreamMessage{}, err
	}
	var events []byte
	if c, ok := st.LastChange(); ok {
		events = c.Events
	}
	return ChangeMessage(st.GameID, st.Version, events, view, lang), nil
}

// changeMessages words one committed state for many subscribers: one
// message per seat kind and language, however many connections share it.
type changeMessages struct {
	s     *streamSession
	st    *game.State
	byKey map[changeKey]StreamMessage
}

type changeKey struct{ seat, lang string }

func (s *streamSession) changes(st *game.State) *changeMessages {
	return &changeMessages{s: s, st: st, byKey: map[changeKey]StreamMessage{}}
}

// forSub is the message for subscription sub.
func (c *changeMessages) forSub(sub push.Subscription) (StreamMessage, error) {
	k := changeKey{sub.Seat, sub.Lang}
	if m, ok := c.byKey[k]; ok {
		return m, nil
	}
	var seat *chess.Color
	if sub.Seat != "" {
		var col chess.Color
		if err := col.UnmarshalText([]byte(sub.Seat)); err != nil {
			return StreamMessage{}, fmt.Errorf("subscription of %s to %s: seat %q: %w", sub.ConnID, sub.GameID, sub.Seat, err)
		}
		seat = &col
	}
	lang, _ := ParseLang(sub.Lang)
	m, err := c.s.change(c.st, seat, lang)
	if err != nil {
		return StreamMessage{}, err
	}
	c.byKey[k] = m
	return m, nil
}

// tokenHash is the hash the subscription records for the connection's
// token ("" for a spectator).
func (c StreamConn) tokenHash() string {
	if c.Caller.Token != "" {
		return service.HashToken(c.Caller.Token)
	}
	return c.Caller.TokenHash
}
