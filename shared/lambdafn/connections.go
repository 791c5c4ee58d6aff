package lambdafn

import (
	"context"
	"errors"
	"fmt"

	"chessapi/shared/push"
	"chessapi/shared/store/dynamostore"
)

// StreamConnections is the data table's connection records as the stream's
// ports. The store keeps records of its own (it compiles none of the
// stream); this wiring is the one place that knows both sides, and converts
// between records that have the same fields.
func StreamConnections(d *dynamostore.Data) push.Connections { return dataConnections{d} }

type dataConnections struct{ d *dynamostore.Data }

var _ push.Connections = dataConnections{}

func (c dataConnections) PutConnection(ctx context.Context, conn push.Connection) error {
	return portError(c.d.PutConnection(ctx, dynamostore.Connection(conn)))
}

func (c dataConnections) Connection(ctx context.Context, id string) (push.Connection, error) {
	conn, err := c.d.Connection(ctx, id)
	return push.Connection(conn), portError(err)
}

func (c dataConnections) DeleteConnection(ctx context.Context, id string) ([]push.Subscription, error) {
	subs, err := c.d.DeleteConnection(ctx, id)
	return portSubscriptions(subs), portError(err)
}

func (c dataConnections) Subscribe(ctx context.Context, s push.Subscription, max int) error {
	return portError(c.d.Subscribe(ctx, dynamostore.Subscription(s), max))
}

func (c dataConnections) Unsubscribe(ctx context.Context, connID, gameID string) (push.Subscription, bool, error) {
	s, ok, err := c.d.Unsubscribe(ctx, connID, gameID)
	return push.Subscription(s), ok, portError(err)
}

func (c dataConnections) Subscribers(ctx context.Context, gameID string) ([]push.Subscription, error) {
	subs, err := c.d.Subscribers(ctx, gameID)
	return portSubscriptions(subs), portError(err)
}

func portSubscriptions(subs []dynamostore.Subscription) []push.Subscription {
	if subs == nil {
		return nil
	}
	out := make([]push.Subscription, len(subs))
	for i, s := range subs {
		out[i] = push.Subscription(s)
	}
	return out
}

// portError is err in the ports' terms: the store's sentinels become the
// ports' (the store's error stays in the chain for the log).
func portError(err error) error {
	switch {
	case errors.Is(err, dynamostore.ErrNoConnection):
		return fmt.Errorf("%w (%w)", push.ErrNoConnection, err)
	case errors.Is(err, dynamostore.ErrTooManySubscriptions):
		return fmt.Errorf("%w (%w)", push.ErrTooManySubscriptions, err)
	}
	return err
}
