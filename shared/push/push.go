// Package push holds the ports of the stream (SPEC §11): who is connected,
// who follows which game, and how a message reaches a connection. It
// declares them and imports nothing of this module, so that every side can
// depend on it without compiling another: the transports at the HTTP edge
// (shared/api: the local WebSocket server and the API Gateway WebSocket
// API) use these ports, and adapters implement them (the @connections
// poster in push/apigwpost; the data table's records are kept by
// shared/store/dynamostore and adapted to these ports by the functions'
// wiring, shared/lambdafn). The protocol itself — messages, codes, texts,
// the subscribe / catch-up / presence sequence — is the edge's.
package push

import (
	"context"
	"errors"
	"time"
)

// Connection is one open WebSocket connection.
type Connection struct {
	ID string
	// TokenHash is the hash of the token the client connected with (""
	// for a spectator-only connection): the service authorizes with it, so
	// the token itself is never stored.
	TokenHash string
	// PlayerToken says the token is a player token (the hash does not
	// tell): the service authorizes the hash as one.
	PlayerToken bool
	Lang        string
	// ExpiresAt is when the record may be deleted (TTL): after API
	// Gateway's two-hour connection limit, for connections whose
	// $disconnect was lost.
	ExpiresAt time.Time
}

// Subscription is one game, or one player's account (GameID is then the
// edge's topic of that player), followed by one connection.
type Subscription struct {
	GameID      string
	ConnID      string
	Seat        string // "white", "black", or "" for a spectator
	TokenHash   string
	PlayerToken bool
	Lang        string
	ExpiresAt   time.Time
}

// Errors of the ports.
var (
	// ErrGone: the connection no longer exists (the management API's 410).
	ErrGone = errors.New("push: connection gone")
	// ErrNoConnection: there is no such connection.
	ErrNoConnection = errors.New("push: no such connection")
	// ErrTooManySubscriptions: the connection already follows as many
	// games as it may.
	ErrTooManySubscriptions = errors.New("push: too many subscriptions")
)

// Subscriptions keeps who follows which game: the local transport in
// memory, the API Gateway one in the data table.
type Subscriptions interface {
	// Subscribe records s, unless the connection already follows max other
	// games (ErrTooManySubscriptions); subscribing again replaces.
	Subscribe(ctx context.Context, s Subscription, max int) error
	// Unsubscribe removes the subscription and returns it (false: none).
	Unsubscribe(ctx context.Context, connID, gameID string) (Subscription, bool, error)
	// Subscribers lists a game's subscriptions.
	Subscribers(ctx context.Context, gameID string) ([]Subscription, error)
}

// Connections keeps the connections themselves and their subscriptions,
// for a transport whose connections outlive the process serving them (API
// Gateway holds the sockets; each message is a separate invocation).
type Connections interface {
	Subscriptions
	PutConnection(ctx context.Context, c Connection) error
	// Connection reads a connection (ErrNoConnection: none).
	Connection(ctx context.Context, id string) (Connection, error)
	// DeleteConnection removes the connection and its subscriptions and
	// returns the subscriptions it had.
	DeleteConnection(ctx context.Context, id string) ([]Subscription, error)
}

// Poster sends a message to a connection (the @connections API); a
// connection that is gone is ErrGone.
type Poster interface {
	Post(ctx context.Context, connID string, data []byte) error
}

// Closer closes a connection from the server's side (the @connections
// API's DELETE); a connection that is gone already is ErrGone.
type Closer interface {
	Close(ctx context.Context, connID string) error
}
