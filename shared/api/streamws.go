package api

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The local stream server: GET /v1/stream upgraded to a WebSocket on the
// local server's listener, fed by the service's in-process feed of commits
// (the same after-write path as everything else). Each subscription follows
// one game in version order without gaps: a version it missed (the feed
// does not wait for slow readers) is caught up from the game's change log.
// A client that does not read its messages is disconnected instead of
// holding anyone up; it reconnects with afterVersion and loses nothing.

// StreamGames is what the stream needs of the service.
type StreamGames interface {
	Observe(ctx context.Context, gameID string, c service.Caller) (service.Observation, error)
	ViewFor(st *game.State, seat *chess.Color) (*game.View, error)
	Changes(ctx context.Context, gameID string, c service.Caller, after int64) (service.ChangeLog, error)
	Watch(gameID string, buffer int) (<-chan service.Change, func())
	SetPresence(ctx context.Context, gameID string, c service.Caller, connected bool) (*game.View, error)
}

var _ StreamGames = (*service.Service)(nil)

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
	games StreamGames
	opts  StreamOptions
	log   *slog.Logger

	mu       sync.Mutex
	conns    map[*streamConn]struct{}
	seats    map[seatKey]int // open subscriptions per game seat (presence)
	closed   bool
	presence sync.WaitGroup
}

type seatKey struct {
	gameID string
	color  chess.Color
}

// NewStream returns the local stream server.
func NewStream(games StreamGames, opts StreamOptions) *Stream {
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
	return &Stream{games: games, opts: opts, log: opts.Logger, conns: map[*streamConn]struct{}{}, seats: map[seatKey]int{}}
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
	})
	if err != nil {
		return // Accept has answered the request
	}
	ws.SetReadLimit(MaxStreamMessage)
	c := &streamConn{s: s, ws: ws, caller: caller, lang: lang, send: make(chan []byte, s.opts.SendBuffer), subs: map[string]*streamSub{}, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	s.conns[c] = struct{}{}
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
	for c := range s.conns {
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

// seatOpened and seatClosed count a seat's subscriptions across
// connections; the first one opening marks the seat connected, the last
// one closing disconnected (which starts its grace, seeds/000 §8.5).
func (s *Stream) seatOpened(k seatKey, caller service.Caller) {
	s.mu.Lock()
	s.seats[k]++
	first := s.seats[k] == 1
	s.mu.Unlock()
	if first {
		s.setPresence(k, caller, true)
	}
}

func (s *Stream) seatClosed(k seatKey, caller service.Caller) {
	s.mu.Lock()
	s.seats[k]--
	last := s.seats[k] == 0
	if last {
		delete(s.seats, k)
	}
	closing := s.closed
	s.mu.Unlock()
	if last && !closing {
		s.setPresence(k, caller, false)
	}
}

func (s *Stream) setPresence(k seatKey, caller service.Caller, connected bool) {
	s.presence.Add(1)
	go func() {
		defer s.presence.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := s.games.SetPresence(ctx, k.gameID, caller, connected); err != nil && !errors.Is(err, service.ErrNotFound) {
			s.log.Warn("stream presence", "game", k.gameID, "color", k.color.String(), "connected", connected, "err", err)
		}
	}()
}

// streamConn is one client connection.
type streamConn struct {
	s      *Stream
	ws     *websocket.Conn
	caller service.Caller
	lang   Lang
	send   chan []byte // bounded: a client that does not read is dropped

	mu        sync.Mutex
	subs      map[string]*streamSub
	done      chan struct{}
	closeOnce sync.Once
}

// serve runs the connection: a writer draining send, the reader handling
// client messages, and pings when idle.
func (c *streamConn) serve(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.writeLoop(ctx)
	for {
		_, data, err := c.ws.Read(ctx)
		if err != nil {
			break
		}
		c.handle(ctx, data)
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

func (c *streamConn) handle(ctx context.Context, data []byte) {
	req, err := DecodeStreamMessage(data)
	if err != nil {
		c.enqueue(StreamError(err, "", c.lang))
		return
	}
	switch req.Action {
	case ActionPing:
		c.enqueue(StreamMessage{Type: MsgPong})
	case ActionUnsubscribe:
		c.mu.Lock()
		sub := c.subs[req.GameID]
		delete(c.subs, req.GameID)
		c.mu.Unlock()
		if sub != nil {
			sub.stop()
		}
	case ActionSubscribe:
		c.mu.Lock()
		old := c.subs[req.GameID]
		if old == nil && len(c.subs) >= MaxSubscriptions {
			c.mu.Unlock()
			c.enqueue(StreamError(ErrTooManySubscriptions, req.GameID, c.lang))
			return
		}
		sub := &streamSub{c: c, gameID: req.GameID, quit: make(chan struct{}), done: make(chan struct{})}
		c.subs[req.GameID] = sub
		c.mu.Unlock()
		if old != nil {
			old.stop() // a new subscribe restarts from its afterVersion
		}
		go sub.run(ctx, req.AfterVersion)
	}
}

// ErrTooManySubscriptions refuses an 11th game on one connection.
var ErrTooManySubscriptions error = &apiError{Status: http.StatusTooManyRequests, Code: "too_many_subscriptions"}

// shutdown closes the connection once and ends its subscriptions.
func (c *streamConn) shutdown(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		close(c.done)
		c.mu.Lock()
		subs := make([]*streamSub, 0, len(c.subs))
		for _, sub := range c.subs {
			subs = append(subs, sub)
		}
		c.subs = map[string]*streamSub{}
		c.mu.Unlock()
		for _, sub := range subs {
			sub.stop()
		}
		c.s.mu.Lock()
		delete(c.s.conns, c)
		c.s.mu.Unlock()
		// Last: the close handshake waits (bounded) for a client that may
		// not be reading at all.
		c.ws.Close(code, reason)
	})
}

// streamSub is one game followed by one connection.
type streamSub struct {
	c      *streamConn
	gameID string
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
}

func (sub *streamSub) stop() {
	sub.once.Do(func() { close(sub.quit) })
	<-sub.done
}

// run follows the game: the current view, the catch-up from afterVersion,
// then every commit in version order.
func (sub *streamSub) run(ctx context.Context, afterVersion *int64) {
	defer close(sub.done)
	c := sub.c
	// Watch before reading, so a commit between the read and the watch is
	// not missed.
	changes, unwatch := c.s.games.Watch(sub.gameID, 16)
	defer unwatch()
	obs, err := c.s.games.Observe(ctx, sub.gameID, c.caller)
	if err != nil {
		c.enqueue(StreamError(err, sub.gameID, c.lang))
		sub.forget()
		return
	}
	if obs.Seat != nil {
		k := seatKey{sub.gameID, *obs.Seat}
		c.s.seatOpened(k, c.caller)
		defer c.s.seatClosed(k, c.caller)
	}
	view, err := c.s.games.ViewFor(obs.State, obs.Seat)
	if err != nil {
		c.enqueue(StreamError(err, sub.gameID, c.lang))
		return
	}
	c.enqueue(SubscribedMessage(sub.gameID, view, c.lang))
	last := obs.State.Version
	if afterVersion != nil && *afterVersion < last {
		if last, err = sub.catchUp(ctx, *afterVersion); err != nil {
			return
		}
	}
	for {
		select {
		case <-sub.quit:
			return
		case ch, ok := <-changes:
			if !ok {
				return
			}
			v := ch.State.Version
			switch {
			case v <= last: // already sent (a catch-up went past it)
			case v == last+1:
				view, err := c.s.games.ViewFor(ch.State, obs.Seat)
				if err != nil {
					c.enqueue(StreamError(err, sub.gameID, c.lang))
					return
				}
				c.enqueue(ChangeMessage(sub.gameID, v, lastEvents(ch.State, v), view, c.lang))
				last = v
			default: // versions were skipped: the log has them
				if last, err = sub.catchUp(ctx, last); err != nil {
					return
				}
			}
		}
	}
}

// catchUp sends what changed after version after and returns the version
// the subscriber is now at.
func (sub *streamSub) catchUp(ctx context.Context, after int64) (int64, error) {
	c := sub.c
	log, err := c.s.games.Changes(ctx, sub.gameID, c.caller, after)
	if err != nil {
		c.enqueue(StreamError(err, sub.gameID, c.lang))
		return 0, err
	}
	for _, m := range CatchUp(sub.gameID, log, c.lang) {
		c.enqueue(m)
	}
	return log.Version, nil
}

// forget removes a subscription that could not start.
func (sub *streamSub) forget() {
	c := sub.c
	c.mu.Lock()
	if c.subs[sub.gameID] == sub {
		delete(c.subs, sub.gameID)
	}
	c.mu.Unlock()
}

// lastEvents is the JSON of the events of version v, kept in the state's
// change log.
func lastEvents(st *game.State, v int64) []byte {
	if n := len(st.Changes); n > 0 && st.Changes[n-1].Version == v {
		return st.Changes[n-1].Events
	}
	return nil
}
