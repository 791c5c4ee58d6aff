package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/push"
	"chessapi/shared/service"
)

// The local stream server: GET /v1/stream upgraded to a WebSocket on the
// local server's listener, speaking the one conversation (streamsession.go)
// with its connections and subscriptions in memory, and fed by the
// service's in-process feed of commits (the same after-write path as
// everything else). Each subscription follows one game in version order
// without gaps: a version it missed (the feed does not wait for slow
// readers) is caught up from the game's change log. A client that does not
// read its messages is disconnected instead of holding anyone up; it
// reconnects with afterVersion and loses nothing.

// StreamFeed is what the local stream needs of the service: the
// conversation's reads and writes, and the in-process feed of commits (of
// a game, and of a registered player's games).
type StreamFeed interface {
	StreamGames
	Watch(gameID string, buffer int) (<-chan service.Change, func())
	WatchPlayer(playerID string, buffer int) service.PlayerWatch
}

var _ StreamFeed = (*service.Service)(nil)

// StreamOptions tune the stream server; zero values take the defaults.
type StreamOptions struct {
	// SendBuffer is how many messages may wait for a slow client before it
	// is disconnected (default 64).
	SendBuffer int
	// PingInterval is how long a connection may be silent before the
	// server pings it (default 30 s); a ping unanswered within
	// WriteTimeout closes it.
	PingInterval time.Duration
	// WriteTimeout bounds each write to a client (default 10 s).
	WriteTimeout time.Duration
	Logger       *slog.Logger
}

// Stream serves /v1/stream. Close it on shutdown.
type Stream struct {
	games   StreamFeed
	session *streamSession
	opts    StreamOptions
	log     *slog.Logger

	mu       sync.Mutex
	conns    map[string]*streamConn // by id
	lastID   uint64
	closed   bool
	presence sync.WaitGroup // presence writes of closed connections
}

// NewStream returns the local stream server.
func NewStream(games StreamFeed, opts StreamOptions) *Stream {
	if opts.SendBuffer <= 0 {
		opts.SendBuffer = 64
	}
	if opts.PingInterval <= 0 {
		opts.PingInterval = 30 * time.Second
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Stream{games: games, opts: opts, log: opts.Logger, conns: map[string]*streamConn{}}
	s.session = &streamSession{games: games, subs: memorySubscriptions{s}, send: s.send, follower: s, log: s.log, now: time.Now}
	return s
}

// ServeHTTP upgrades the request and serves the connection until it
// closes. A malformed token is refused before the upgrade (401).
func (s *Stream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	caller, lang, err := StreamCredentials(r.Header.Get("Authorization"), q.Get("token"), r.Header.Get("Accept-Language"), q.Get("lang"))
	if err != nil {
		writeError(w, describe(err, lang))
		return
	}
	// The server's read and write timeouts are for requests; a stream
	// lives for hours. Clear them before the connection is taken over
	// (the hijacked connection keeps them otherwise).
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// Any origin: the stream authenticates with a token the page must
		// hold, never with ambient credentials such as cookies, so a
		// foreign page gains nothing by connecting.
		InsecureSkipVerify: true,
		// permessage-deflate when the client offers it (SPEC §16.1), each
		// message compressed on its own: context takeover would keep a
		// 1.2 MB compressor per connection (coder/websocket's figure),
		// thousands of times over; messages past 512 bytes (a subscribed
		// view, a change with legal moves) compress well on their own.
		CompressionMode: websocket.CompressionNoContextTakeover,
	})
	if err != nil {
		return // Accept has answered the request
	}
	ws.SetReadLimit(MaxStreamMessage)
	c := &streamConn{s: s, ws: ws, send: make(chan []byte, s.opts.SendBuffer), subs: map[string]*streamSub{}, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	s.lastID++
	c.info = StreamConn{ID: strconv.FormatUint(s.lastID, 10), Caller: caller, Lang: lang}
	s.conns[c.info.ID] = c
	s.mu.Unlock()
	c.serve(r.Context())
}

// Close disconnects every client (they reconnect with afterVersion) without
// recording their seats as disconnected: a restart is not the players
// leaving, and must not start their disconnect grace.
func (s *Stream) Close() {
	s.mu.Lock()
	s.closed = true
	conns := make([]*streamConn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.shutdown(websocket.StatusGoingAway, "server shutting down")
	}
	s.presence.Wait()
}

// Connections is the number of open connections.
func (s *Stream) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Stream) conn(id string) *streamConn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns[id]
}

// send is the conversation's StreamSend: into the connection's queue (a
// connection that has closed takes nothing).
func (s *Stream) send(_ context.Context, connID string, m StreamMessage) error {
	if c := s.conn(connID); c != nil {
		c.enqueue(m)
	}
	return nil
}

// leftLater runs the presence rule for a subscription that ended without
// its client asking (the connection closed, delivery failed), off the
// connection's goroutines; not while the server shuts down.
func (s *Stream) leftLater(sub push.Subscription) {
	s.mu.Lock()
	closing := s.closed
	if !closing {
		s.presence.Add(1)
	}
	s.mu.Unlock()
	if closing {
		return
	}
	go func() {
		defer s.presence.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.session.left(ctx, sub)
	}()
}

// watch is the streamFollower of the conversation: the game's feed is
// watched before the game is read; a subscription that replaces one of the
// same game on the connection stops the old one first.
func (s *Stream) watch(conn StreamConn, gameID string) (follow func(context.Context, *game.State, *chess.Color), abandon func()) {
	changes, unwatch := s.games.Watch(gameID, 16)
	sub, abandon := s.follow(conn, gameID, changes, unwatch)
	if sub == nil {
		return func(context.Context, *game.State, *chess.Color) {}, abandon
	}
	return func(ctx context.Context, st *game.State, seat *chess.Color) {
		go sub.run(ctx, st.Version, seat)
	}, abandon
}

// watchPlayer is watch for an account-wide subscription: the player's
// feed, watched before the subscription is confirmed.
func (s *Stream) watchPlayer(conn StreamConn, playerID string) (follow func(context.Context), abandon func()) {
	w := s.games.WatchPlayer(playerID, 64)
	sub, abandon := s.follow(conn, PlayerTopic(playerID), w.Changes, w.Stop)
	if sub == nil {
		return func(context.Context) {}, abandon
	}
	return func(context.Context) {
		go sub.runPlayer(playerID, w.Lost)
	}, abandon
}

// follow adds the subscription of key on conn's connection (nil when the
// connection has gone or is closing), replacing one of the same key.
func (s *Stream) follow(conn StreamConn, key string, changes <-chan service.Change, unwatch func()) (*streamSub, func()) {
	c := s.conn(conn.ID)
	if c == nil {
		unwatch()
		return nil, func() {}
	}
	sub := &streamSub{c: c, gameID: key, changes: changes, unwatch: unwatch, quit: make(chan struct{}), done: make(chan struct{})}
	c.mu.Lock()
	select {
	case <-c.done:
		// Closing: shutdown has taken (or is taking) the subscriptions it
		// stops; one added now would outlive the connection.
		c.mu.Unlock()
		unwatch()
		return nil, func() {}
	default:
	}
	old := c.subs[key]
	c.subs[key] = sub
	c.mu.Unlock()
	if old != nil {
		old.stop() // a new subscribe restarts from its afterVersion
	}
	abandon := func() {
		record, registered, _ := c.forget(sub)
		sub.unwatch()
		close(sub.done)
		// The connection follows the game no more: as an unsubscribe.
		if !registered && old != nil {
			c.mu.Lock()
			record, registered = old.record, old.registered
			c.mu.Unlock()
		}
		if registered {
			s.leftLater(record)
		}
	}
	return sub, abandon
}

// memorySubscriptions is the registry of the local transport: the
// subscriptions of the open connections, in memory.
type memorySubscriptions struct{ s *Stream }

var _ push.Subscriptions = memorySubscriptions{}

// Subscribe records sub on the connection's watched game, unless the
// connection already follows max other games.
func (m memorySubscriptions) Subscribe(_ context.Context, sub push.Subscription, max int) error {
	c := m.s.conn(sub.ConnID)
	if c == nil {
		return push.ErrNoConnection
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.subs[sub.GameID]
	if f == nil {
		return push.ErrNoConnection // closed while subscribing
	}
	others := 0
	for id, o := range c.subs {
		if id != sub.GameID && o.registered {
			others++
		}
	}
	if others >= max {
		return push.ErrTooManySubscriptions
	}
	f.record, f.registered = sub, true
	return nil
}

// Unsubscribe stops the connection's following of the game.
func (m memorySubscriptions) Unsubscribe(_ context.Context, connID, gameID string) (push.Subscription, bool, error) {
	c := m.s.conn(connID)
	if c == nil {
		return push.Subscription{}, false, nil
	}
	c.mu.Lock()
	sub := c.subs[gameID]
	delete(c.subs, gameID)
	var record push.Subscription
	registered := false
	if sub != nil {
		record, registered = sub.record, sub.registered
	}
	c.mu.Unlock()
	if sub == nil {
		return push.Subscription{}, false, nil
	}
	sub.stop()
	return record, registered, nil
}

// Subscribers lists the open connections' subscriptions to the game.
func (m memorySubscriptions) Subscribers(_ context.Context, gameID string) ([]push.Subscription, error) {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	var out []push.Subscription
	for _, c := range m.s.conns {
		c.mu.Lock()
		if sub := c.subs[gameID]; sub != nil && sub.registered {
			out = append(out, sub.record)
		}
		c.mu.Unlock()
	}
	return out, nil
}

// streamConn is one client connection.
type streamConn struct {
	s    *Stream
	ws   *websocket.Conn
	info StreamConn
	send chan []byte // bounded: a client that does not read is dropped

	mu        sync.Mutex
	subs      map[string]*streamSub // by game
	done      chan struct{}
	closeOnce sync.Once
}

// serve runs the connection: a writer draining send, the reader handing
// client messages to the conversation, and pings when idle.
func (c *streamConn) serve(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.writeLoop(ctx)
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			break
		}
		// A connection closed meanwhile (by the writer, a slow-client drop
		// or the server's shutdown) is no failure to report.
		if err := c.s.session.handle(ctx, c.info, data); err != nil && !errors.Is(err, push.ErrNoConnection) {
			c.s.log.Warn("stream message failed", "err", err)
		}
	}
	c.shutdown(websocket.StatusNormalClosure, "")
}

func (c *streamConn) writeLoop(ctx context.Context) {
	ping := time.NewTicker(c.s.opts.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-c.done:
			return
		case msg := <-c.send:
			wctx, cancel := context.WithTimeout(ctx, c.s.opts.WriteTimeout)
			err := c.ws.Write(wctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				c.shutdown(websocket.StatusGoingAway, "write failed")
				return
			}
			ping.Reset(c.s.opts.PingInterval)
		case <-ping.C:
			pctx, cancel := context.WithTimeout(ctx, c.s.opts.WriteTimeout)
			err := c.ws.Ping(pctx)
			cancel()
			if err != nil {
				c.shutdown(websocket.StatusGoingAway, "ping unanswered")
				return
			}
		}
	}
}

// enqueue queues a message; a full queue means the client does not read,
// and it is disconnected.
func (c *streamConn) enqueue(m StreamMessage) {
	select {
	case <-c.done:
		return
	default:
	}
	select {
	case c.send <- m.Encode():
	default:
		c.s.log.Info("stream client too slow, disconnected", "buffered", cap(c.send))
		go c.shutdown(websocket.StatusPolicyViolation, "too slow: reconnect with afterVersion")
	}
}

// ErrTooManySubscriptions refuses an 11th game on one connection.
var ErrTooManySubscriptions error = &apiError{Status: http.StatusTooManyRequests, Code: "too_many_subscriptions"}

// shutdown closes the connection once and ends its subscriptions; the
// seats it held are then disconnected where no other connection holds
// them (not while the server shuts down).
func (c *streamConn) shutdown(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		close(c.done)
		c.mu.Lock()
		subs := make([]*streamSub, 0, len(c.subs))
		var left []push.Subscription
		for _, sub := range c.subs {
			subs = append(subs, sub)
			if sub.registered {
				left = append(left, sub.record)
			}
		}
		c.subs = map[string]*streamSub{}
		c.mu.Unlock()
		c.s.mu.Lock()
		delete(c.s.conns, c.info.ID)
		c.s.mu.Unlock()
		for _, sub := range subs {
			sub.stop()
		}
		for _, record := range left {
			c.s.leftLater(record)
		}
		// Last: the close handshake waits (bounded) for a client that may
		// not be reading at all.
		c.ws.Close(code, reason)
	})
}

// forget removes sub from the connection if it is still the game's, and
// returns what the registry had listed for it.
func (c *streamConn) forget(sub *streamSub) (record push.Subscription, registered, removed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.subs[sub.gameID] != sub {
		return push.Subscription{}, false, false
	}
	delete(c.subs, sub.gameID)
	return sub.record, sub.registered, true
}

// streamSub is one game (or one player's account) followed by one
// connection: watched from before the game was read, recorded once
// authorized, followed once caught up.
type streamSub struct {
	c       *streamConn
	gameID  string
	changes <-chan service.Change
	unwatch func()
	quit    chan struct{}
	done    chan struct{} // closed when it stops: run returned, or abandoned
	once    sync.Once

	// record is the subscription as the registry lists it, once
	// registered (guarded by c.mu).
	record     push.Subscription
	registered bool
}

// stop ends the subscription and waits until it has.
func (sub *streamSub) stop() {
	sub.once.Do(func() { close(sub.quit) })
	<-sub.done
}

// run delivers every commit after version at, in version order: the next
// one as a change, a gap from the change log. A subscription that cannot
// go on ends as if unsubscribed.
func (sub *streamSub) run(ctx context.Context, at int64, seat *chess.Color) {
	defer close(sub.done)
	defer sub.unwatch()
	c := sub.c
	for {
		select {
		case <-sub.quit:
			return
		case ch, ok := <-sub.changes:
			if !ok {
				return
			}
			v := ch.State.Version
			switch {
			case v <= at: // already sent (a catch-up went past it)
			case v == at+1:
				m, err := newChangeMessages(ch.Prev, ch.State).forSeat(seat, c.info.Lang)
				switch {
				case err == nil:
					c.enqueue(m)
					at = v
					continue
				case !errors.Is(err, game.ErrNoDelta):
					c.enqueue(StreamError(err, sub.gameID, c.info.Lang))
					sub.ended()
					return
				}
				// A version without its delta: the whole view again.
				fallthrough
			default: // versions were skipped: the log has them
				var ok bool
				if at, ok = sub.catchUp(ctx, at, seat); !ok {
					sub.ended()
					return
				}
			}
		}
	}
}

// catchUp sends what changed after version at — each logged version as a
// change, or, when the log no longer holds their deltas, the whole view
// again (a subscribed with the missed events) — and returns the version
// the subscriber is now at. ok is false when the game could not be read
// (the client is told).
func (sub *streamSub) catchUp(ctx context.Context, at int64, seat *chess.Color) (int64, bool) {
	c := sub.c
	session := c.s.session
	obs, err := session.games.Observe(ctx, sub.gameID, c.info.Caller)
	if err == nil {
		var changes []game.Change
		var deltas []game.Delta
		switch changes, deltas, err = service.DeltasAfter(obs.State, seat, at); {
		case err == nil:
			for i, ch := range changes {
				m, err := ChangeMessage(sub.gameID, ch, deltas[i], c.info.Lang)
				if err != nil {
					c.enqueue(StreamError(err, sub.gameID, c.info.Lang))
					return at, false
				}
				c.enqueue(m)
			}
			return max(at, obs.State.Version), true
		case errors.Is(err, game.ErrNoDelta):
			var view *game.View
			if view, err = session.games.ViewFor(obs.State, seat); err == nil {
				c.enqueue(SubscribedMessage(obs.State, view, &at, c.info.Lang))
				return obs.State.Version, true
			}
		}
	}
	c.enqueue(StreamError(err, sub.gameID, c.info.Lang))
	return at, false
}

// runPlayer delivers the player events of every commit of the player's
// games. Commits it could not keep up with cannot be told apart, so the
// connection is then dropped like a client that does not read: it
// reconnects and reads its list of games again.
func (sub *streamSub) runPlayer(playerID string, lost <-chan struct{}) {
	defer close(sub.done)
	defer sub.unwatch()
	c := sub.c
	for {
		select {
		case <-sub.quit:
			return
		case <-lost:
			go c.shutdown(websocket.StatusPolicyViolation, "too slow: reconnect")
			return
		case ch, ok := <-sub.changes:
			if !ok {
				return
			}
			for _, e := range service.PlayerEvents(ch.Prev, ch.State) {
				if e.PlayerID == playerID {
					c.enqueue(PlayerEventMessage(e, c.info.Lang))
				}
			}
		}
	}
}

// ended removes a subscription that stopped on its own from its
// connection, with the presence rule of an unsubscribe.
func (sub *streamSub) ended() {
	if record, registered, _ := sub.c.forget(sub); registered {
		sub.c.s.leftLater(record)
	}
}
