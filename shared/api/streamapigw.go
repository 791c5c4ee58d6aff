package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/obs"
	"chessapi/shared/push"
	"chessapi/shared/service"
)

// The stream as deployed on AWS: an API Gateway WebSocket API whose routes
// invoke the stream function (Connect, Disconnect, Message), and the
// fan-out function fed by the games table's DynamoDB Stream (Deliver),
// which posts every committed version to the game's subscribers through
// the @connections management API. Fan-out is driven by the table's change
// stream, not by the writer, so a committed change is pushed even if the
// process that wrote it dies right after the write. Connections and
// subscriptions live in the data table with a TTL; a connection that is
// gone (410) is deleted on the first failed post.
//
// It sits beside the local transport in this package, not in a package of
// its own, because both speak the one conversation (streamsession.go) with
// the edge's messages, codes and texts; the AWS parts it needs are ports
// (shared/push), so the local server compiles no AWS client for it.

// MaxMessageBytes is the largest message API Gateway posts to a WebSocket
// connection (its 128 KB message payload quota, which cannot be raised). A
// subscribed whose view is past it is sent without the view
// (gameOmitted), which the client then reads over HTTP; only games of many
// hundreds of moves come near it. Changes carry deltas, whose size does
// not depend on the game's length (a few KB at most).
const MaxMessageBytes = 128 * 1024

// encodeForGateway returns m's JSON, without its view when the whole would
// not fit in one message.
func encodeForGateway(m StreamMessage) []byte {
	data := m.Encode()
	if len(data) > MaxMessageBytes && m.Game != nil {
		m.Game, m.GameOmitted = nil, true
		data = m.Encode()
	}
	return data
}

// GatewayStream serves the WebSocket API's routes and fans out commits.
type GatewayStream struct {
	session *streamSession
	conns   push.Connections
	poster  push.Poster
	log     *slog.Logger
	metrics *obs.Metrics
}

// NewGatewayStream returns the stream over API Gateway: connections and
// subscriptions in conns, messages posted with poster.
func NewGatewayStream(games StreamGames, conns push.Connections, poster push.Poster, log *slog.Logger) *GatewayStream {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &GatewayStream{conns: conns, poster: poster, log: log}
	g.session = &streamSession{games: games, subs: conns, send: g.post, log: log, now: time.Now}
	return g
}

// WithMetrics makes the stream count stale connections (nil: none).
func (g *GatewayStream) WithMetrics(m *obs.Metrics) *GatewayStream {
	g.metrics = m
	return g
}

// GatewayConnect is what the $connect route carries.
type GatewayConnect struct {
	ConnID         string
	Authorization  string // the Authorization header
	QueryToken     string // ?token=
	AcceptLanguage string
	QueryLang      string // ?lang=
}

// Connect admits a connection: a malformed token is refused (the error's
// status is the answer to $connect); a well-formed one is kept, hashed, for
// its subscriptions.
func (g *GatewayStream) Connect(ctx context.Context, req GatewayConnect) error {
	caller, lang, err := StreamCredentials(req.Authorization, req.QueryToken, req.AcceptLanguage, req.QueryLang)
	if err != nil {
		return err
	}
	c := push.Connection{ID: req.ConnID, Lang: lang.String(), ExpiresAt: g.session.now().Add(connectionTTL)}
	if caller.Token != "" {
		// The hash is kept with the token's kind: a player token's hash
		// is authorized as one (its seats, its account).
		c.TokenHash, c.PlayerToken = service.HashToken(caller.Token), isPlayerCredential(caller)
	}
	return g.conns.PutConnection(ctx, c)
}

// Disconnect forgets a connection; a seat whose last connection to a game
// this was is marked disconnected there (its grace starts).
func (g *GatewayStream) Disconnect(ctx context.Context, connID string) error {
	subs, err := g.conns.DeleteConnection(ctx, connID)
	if err != nil {
		return err
	}
	for _, s := range subs {
		g.session.left(ctx, s)
	}
	return nil
}

// EndConnection ends a connection from the server's side, as a session's
// end does (SPEC §16.2: revoked, or its player deleted): its records and
// subscriptions go with the presence rule for its seats (as $disconnect
// would do), then the socket is closed through the management API
// (DELETE @connections/{id}; one gone already is no error). API Gateway
// then runs $disconnect, best-effort, which finds nothing left. A poster
// that cannot close connections is an error, after the records went.
func (g *GatewayStream) EndConnection(ctx context.Context, connID string) error {
	if err := g.Disconnect(ctx, connID); err != nil {
		return err
	}
	closer, ok := g.poster.(push.Closer)
	if !ok {
		return fmt.Errorf("api: end connection %s: the poster cannot close connections", connID)
	}
	if err := closer.Close(ctx, connID); err != nil && !errors.Is(err, push.ErrGone) {
		return fmt.Errorf("api: end connection %s: %w", connID, err)
	}
	return nil
}

// Message handles a client message on a stored connection; answers are
// posted to it. An error is returned only when the work could not be done
// (push.ErrNoConnection for a connection that is not stored).
func (g *GatewayStream) Message(ctx context.Context, connID string, body []byte) error {
	c, err := g.conns.Connection(ctx, connID)
	if err != nil {
		return err
	}
	lang, _ := ParseLang(c.Lang)
	return g.session.handle(ctx, StreamConn{ID: connID, Caller: service.Caller{TokenHash: c.TokenHash, PlayerToken: c.PlayerToken}, Lang: lang}, body)
}

// Deliver posts committed version next (after prev, nil for a new game):
// its change to every subscriber of the game, each with its own delta,
// and its player events to the connections following those players'
// accounts. A connection that is gone is deleted; any other failure is
// returned, so the stream delivers the record again (a subscriber may
// then get a version or a player event twice: versions are ignored by the
// client's rule, player events carry the version that made them).
func (g *GatewayStream) Deliver(ctx context.Context, prev, next *game.State) (sent int, err error) {
	var errs []error
	post := func(s push.Subscription, data []byte) {
		switch err := g.poster.Post(ctx, s.ConnID, data); {
		case errors.Is(err, push.ErrGone):
			g.metrics.Count(obs.MetricStaleConnections, 1)
			g.log.InfoContext(ctx, "connection gone, deleted", "connection", s.ConnID)
			if err := g.Disconnect(ctx, s.ConnID); err != nil {
				errs = append(errs, err)
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("post to %s: %w", s.ConnID, err))
		default:
			sent++
		}
	}
	// A game's first version has no delta: nobody can follow a game
	// before it exists. A version stored without one (by a writer older
	// than deltas) gets one from the record's old image.
	if messages := newChangeMessages(prev, next); messages.hasDelta() {
		subs, err := g.conns.Subscribers(ctx, next.GameID)
		if err != nil {
			return 0, err
		}
		for _, s := range subs {
			m, err := messages.forSub(s)
			if err != nil {
				return sent, err
			}
			post(s, encodeForGateway(m))
		}
	}
	for _, e := range service.PlayerEvents(prev, next) {
		subs, err := g.conns.Subscribers(ctx, PlayerTopic(e.PlayerID))
		if err != nil {
			return sent, errors.Join(append(errs, err)...)
		}
		byLang := map[string][]byte{}
		for _, s := range subs {
			data, ok := byLang[s.Lang]
			if !ok {
				lang, _ := ParseLang(s.Lang)
				data = PlayerEventMessage(e, lang).Encode()
				byLang[s.Lang] = data
			}
			post(s, data)
		}
	}
	return sent, errors.Join(errs...)
}

// post sends one answer; a gone connection is forgotten (not an error).
func (g *GatewayStream) post(ctx context.Context, connID string, m StreamMessage) error {
	err := g.poster.Post(ctx, connID, encodeForGateway(m))
	if errors.Is(err, push.ErrGone) {
		return g.Disconnect(ctx, connID)
	}
	return err
}
