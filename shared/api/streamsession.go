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

// The stream's conversation (SPEC §16.1), written once for both transports:
// the local WebSocket server (streamws.go) and the API Gateway WebSocket API
// (streamapigw.go). A transport gives it two ports — a way to send a message
// to one connection, and the registry of who follows what (in memory
// locally, the data table on AWS) — and hands it every client message; the
// session answers pings, subscribes (authorize, record, then read: the
// whole view and the missed events), syncs, unsubscribes, disconnects a
// seat when its last subscription ends, and words every committed version
// for a subscriber. Delivering commits differs by transport and stays with
// it: the local server follows each subscription from the in-process feed,
// AWS fans each stored version out from the table's change stream.
//
// Why subscribe records before it reads: every version after the one the
// subscriber is given must reach it. The local server watches the feed
// before reading; on AWS a version is fanned out to the subscriptions the
// table holds after the version is stored, so a subscription recorded
// before the read misses no version after the read. A version fanned out
// meanwhile may also arrive (before or after subscribed): the client keeps
// what is newer than the view it is given and ignores the rest.

// StreamGames is what the stream needs of the service.
type StreamGames interface {
	// Observe reads a game for a caller (a due timeout applied).
	Observe(ctx context.Context, gameID string, c service.Caller) (service.Observation, error)
	// Connect reads it for a subscription: a seat is connected from now.
	Connect(ctx context.Context, gameID string, c service.Caller) (service.Observation, error)
	// Disconnect: the seat's last subscription ended.
	Disconnect(ctx context.Context, gameID string, seat chess.Color) error
	ViewFor(st *game.State, seat *chess.Color) (*game.View, error)
	// Me is the account of a player token.
	Me(ctx context.Context, c service.Caller) (service.Profile, error)
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
// then starts delivery for a subscriber from state st, and abandon
// releases what watch took when the subscription does not start.
// watchPlayer does the same for an account-wide subscription.
type streamFollower interface {
	watch(conn StreamConn, gameID string) (follow func(ctx context.Context, st *game.State, seat *chess.Color), abandon func())
	watchPlayer(conn StreamConn, playerID string) (follow func(ctx context.Context), abandon func())
}

// connectionTTL outlives API Gateway's two-hour limit on a connection: a
// stored connection or subscription whose $disconnect was lost expires
// after it.
const connectionTTL = 3 * time.Hour

// playerTopicPrefix starts the registry key of an account-wide
// subscription (a game id never holds a "/").
const playerTopicPrefix = "player/"

// PlayerTopic is the registry key under which the connections following
// playerID's account are listed.
func PlayerTopic(playerID string) string { return playerTopicPrefix + playerID }

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
	case ActionSync:
		return s.sync(ctx, conn, req.GameID)
	case ActionUnsubscribe:
		key := req.GameID
		if req.Player {
			id, err := s.account(ctx, conn)
			if err != nil {
				return s.send(ctx, conn.ID, StreamError(err, "", conn.Lang))
			}
			key = PlayerTopic(id)
		}
		sub, ok, err := s.subs.Unsubscribe(ctx, conn.ID, key)
		if err != nil {
			return err
		}
		if ok {
			s.left(ctx, sub)
		}
		return nil
	}
	if req.Player {
		return s.subscribePlayer(ctx, conn)
	}
	return s.subscribe(ctx, conn, req.GameID, req.AfterVersion)
}

// subscribe authorizes conn for the game, records the subscription, then
// reads the game (a due timeout applied; a seat connected from now) and
// sends its whole view at version V with the events of every version after
// afterVersion, and leaves the versions after V to the transport.
func (s *streamSession) subscribe(ctx context.Context, conn StreamConn, gameID string, afterVersion *int64) error {
	authorized, err := s.games.Observe(ctx, gameID, conn.Caller)
	if err != nil {
		return s.send(ctx, conn.ID, StreamError(err, gameID, conn.Lang))
	}
	var follow func(context.Context, *game.State, *chess.Color)
	abandon := func() {}
	if s.follower != nil {
		follow, abandon = s.follower.watch(conn, gameID)
	}
	sub := conn.subscription(gameID, s.now())
	if authorized.Seat != nil {
		sub.Seat = authorized.Seat.String()
	}
	if err := s.subs.Subscribe(ctx, sub, MaxSubscriptions); err != nil {
		abandon()
		if errors.Is(err, push.ErrTooManySubscriptions) {
			return s.send(ctx, conn.ID, StreamError(ErrTooManySubscriptions, gameID, conn.Lang))
		}
		return err
	}
	failed := func() {
		if s.follower != nil {
			abandon()
			return
		}
		if sub, ok, err := s.subs.Unsubscribe(ctx, conn.ID, gameID); err == nil && ok {
			s.left(ctx, sub)
		}
	}
	obs, err := s.games.Connect(ctx, gameID, conn.Caller)
	if err != nil {
		failed()
		return s.send(ctx, conn.ID, StreamError(err, gameID, conn.Lang))
	}
	view, err := s.games.ViewFor(obs.State, obs.Seat)
	if err != nil {
		failed()
		return errors.Join(err, s.send(ctx, conn.ID, StreamError(err, gameID, conn.Lang)))
	}
	if err := s.send(ctx, conn.ID, SubscribedMessage(obs.State, view, afterVersion, conn.Lang)); err != nil {
		failed()
		return err
	}
	if follow != nil {
		follow(ctx, obs.State, obs.Seat)
	}
	return nil
}

// sync sends the caller's whole view of the game as it is now (a
// subscribed with no missed events).
func (s *streamSession) sync(ctx context.Context, conn StreamConn, gameID string) error {
	obs, err := s.games.Observe(ctx, gameID, conn.Caller)
	if err != nil {
		return s.send(ctx, conn.ID, StreamError(err, gameID, conn.Lang))
	}
	view, err := s.games.ViewFor(obs.State, obs.Seat)
	if err != nil {
		return errors.Join(err, s.send(ctx, conn.ID, StreamError(err, gameID, conn.Lang)))
	}
	return s.send(ctx, conn.ID, SubscribedMessage(obs.State, view, nil, conn.Lang))
}

// account is the player of conn's player token: no token or a seat token
// is 401 player_required (as the HTTP player routes answer), an unknown
// player token 401.
func (s *streamSession) account(ctx context.Context, conn StreamConn) (string, error) {
	c := conn.Caller
	if !isPlayerCredential(c) {
		return "", service.ErrPlayerRequired
	}
	p, err := s.games.Me(ctx, c)
	if err != nil {
		return "", err
	}
	return p.PlayerID, nil
}

// isPlayerCredential reports whether the caller holds a player token (or
// the hash of one, recorded with its kind).
func isPlayerCredential(c service.Caller) bool {
	if c.Token != "" {
		return isPlayerToken(c.Token)
	}
	return c.TokenHash != "" && c.PlayerToken
}

// subscribePlayer starts the account-wide subscription of conn's player:
// recorded (one of the connection's subscriptions), confirmed, then every
// player event of the player's games follows.
func (s *streamSession) subscribePlayer(ctx context.Context, conn StreamConn) error {
	id, err := s.account(ctx, conn)
	if err != nil {
		return s.send(ctx, conn.ID, StreamError(err, "", conn.Lang))
	}
	var follow func(context.Context)
	abandon := func() {}
	if s.follower != nil {
		follow, abandon = s.follower.watchPlayer(conn, id)
	}
	if err := s.subs.Subscribe(ctx, conn.subscription(PlayerTopic(id), s.now()), MaxSubscriptions); err != nil {
		abandon()
		if errors.Is(err, push.ErrTooManySubscriptions) {
			return s.send(ctx, conn.ID, StreamError(ErrTooManySubscriptions, "", conn.Lang))
		}
		return err
	}
	if err := s.send(ctx, conn.ID, PlayerSubscribedMessage(id)); err != nil {
		abandon()
		return err
	}
	if follow != nil {
		follow(ctx)
	}
	return nil
}

// left is the presence rule (SPEC §16.1, seeds/000 §8.5): when sub ends and
// its seat has no other subscription to the game on any connection, the
// seat is disconnected (its grace starts): the seat the subscription was
// authorized as, whatever its token is worth now (a session that ended
// closes its connections, and its seat goes off too). Failures are logged: the grace is enforced
// from the stored game, and the seat's next request ends it anyway.
func (s *streamSession) left(ctx context.Context, sub push.Subscription) {
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
	var seat chess.Color
	if err := seat.UnmarshalText([]byte(sub.Seat)); err != nil {
		s.log.Warn("presence: subscription's seat", "game", sub.GameID, "seat", sub.Seat, "err", err)
		return
	}
	if err := s.games.Disconnect(ctx, sub.GameID, seat); err != nil && !errors.Is(err, service.ErrNotFound) {
		s.log.Warn("presence: disconnect", "game", sub.GameID, "seat", sub.Seat, "err", err)
	}
}

// changeMessages words one committed state for many subscribers: one
// message per seat kind and language, however many connections share it.
// prev, the version before (nil: unknown), makes the deltas of a version
// stored without its own (by a writer older than deltas).
type changeMessages struct {
	prev, st *game.State
	c        game.Change
	ok       bool
	byKey    map[changeKey]StreamMessage
}

// changeKey is what a change's message depends on: the seat (legal moves)
// and the language (AI names, result summaries).
type changeKey struct{ seat, lang string }

func newChangeMessages(prev, st *game.State) *changeMessages {
	c, ok := st.LastChange()
	return &changeMessages{prev: prev, st: st, c: c, ok: ok, byKey: map[changeKey]StreamMessage{}}
}

// hasDelta reports whether the version has a delta to send: its own
// (every version but a game's first), or one made from the version before.
func (c *changeMessages) hasDelta() bool {
	return c.ok && (len(c.c.Delta) > 0 || c.prev != nil && c.prev.Version == c.st.Version-1)
}

// forSub is the message for subscription sub. A state without its delta
// (only a game's first version has none) is game.ErrNoDelta.
func (c *changeMessages) forSub(sub push.Subscription) (StreamMessage, error) {
	k := changeKey{sub.Seat, sub.Lang}
	if m, ok := c.byKey[k]; ok {
		return m, nil
	}
	seat, err := subscriptionSeat(sub)
	if err != nil {
		return StreamMessage{}, err
	}
	lang, _ := ParseLang(sub.Lang)
	m, err := c.forSeat(seat, lang)
	if err != nil {
		return StreamMessage{}, err
	}
	c.byKey[k] = m
	return m, nil
}

// forSeat is the message for a subscriber in seat (nil: a spectator)
// reading lang.
func (c *changeMessages) forSeat(seat *chess.Color, lang Lang) (StreamMessage, error) {
	if !c.ok {
		return StreamMessage{}, game.ErrNoDelta
	}
	d, err := c.st.DeltaFor(c.c, seat)
	if errors.Is(err, game.ErrNoDelta) {
		d, err = game.DeltaBetween(c.prev, c.st, seat, time.UnixMilli(c.c.At))
	}
	if err != nil {
		return StreamMessage{}, err
	}
	return ChangeMessage(c.st.GameID, c.c, d, lang)
}

// subscriptionSeat reads a subscription's seat (nil: a spectator).
func subscriptionSeat(sub push.Subscription) (*chess.Color, error) {
	if sub.Seat == "" {
		return nil, nil
	}
	var col chess.Color
	if err := col.UnmarshalText([]byte(sub.Seat)); err != nil {
		return nil, fmt.Errorf("subscription of %s to %s: seat %q: %w", sub.ConnID, sub.GameID, sub.Seat, err)
	}
	return &col, nil
}

// subscription is the record of conn following key (a game id, or a
// player's topic).
func (c StreamConn) subscription(key string, now time.Time) push.Subscription {
	return push.Subscription{GameID: key, ConnID: c.ID, TokenHash: c.tokenHash(), PlayerToken: isPlayerCredential(c.Caller),
		Lang: c.Lang.String(), ExpiresAt: now.Add(connectionTTL)}
}

// tokenHash is the hash the subscription records for the connection's
// token ("" for a spectator).
func (c StreamConn) tokenHash() string {
	if c.Caller.Token != "" {
		return service.HashToken(c.Caller.Token)
	}
	return c.Caller.TokenHash
}
