package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
)

// Stream connections in the data table:
//
//	pk "conn#<connection>"  sk "conn"           the connection (token hash and kind, language)
//	pk "conn#<connection>"  sk "sub#<game>"     a game it follows (to find them at $disconnect)
//	pk "sub#<game>"         sk "<connection>"   the same subscription, by game (fan-out)
//
// Both subscription items carry the seat, the token hash and kind
// ("tokenKind" = "player" for a player token: its hash alone does not
// say) and the language,
// and every item expires (TTL) after the longest life of a connection, so
// the items of a connection whose $disconnect never came go away. Without
// transactions (dynalite has none) a subscription is two writes; the
// by-game item is written first, so a failure between them costs at most
// a push to a connection that then turns out gone.
//
// The store declares the records it keeps rather than importing the
// stream's ports (shared/push): a storage adapter compiles no part of the
// stream or of the HTTP edge, and the ports package stays free of storage.
// The records have the fields of Connection and Subscription, in
// the same order, so the functions' wiring (shared/lambdafn) converts them
// with a plain type conversion, which stops compiling if either side
// changes alone.

// Connection is one open WebSocket connection of the stream.
type Connection struct {
	ID          string
	TokenHash   string // "" for a spectator-only connection
	PlayerToken bool   // the token is a player token
	Lang        string
	ExpiresAt   time.Time
}

// Subscription is one game (or one player's account: GameID is then the
// stream's topic of that player) followed by one connection.
type Subscription struct {
	GameID      string
	ConnID      string
	Seat        string // "white", "black", or "" for a spectator
	TokenHash   string
	PlayerToken bool
	Lang        string
	ExpiresAt   time.Time
}

// Errors of the connection records.
var (
	// ErrNoConnection: the table holds no such connection.
	ErrNoConnection = errors.New("dynamostore: no such connection")
	// ErrTooManySubscriptions: the connection follows the most games it may.
	ErrTooManySubscriptions = errors.New("dynamostore: too many subscriptions")
)

const (
	connPrefix = "conn#"
	subPrefix  = "sub#"
	connSK     = "conn"
	// attrTokenKind marks a player token's hash (absent: a seat token's).
	attrTokenKind   = "tokenKind"
	tokenKindPlayer = "player"
)

// PutConnection records a new connection.
func (d *Data) PutConnection(ctx context.Context, c Connection) error {
	item := key(connPrefix+c.ID, connSK)
	item["lang"] = s(c.Lang)
	if c.TokenHash != "" {
		item["tokenHash"] = s(c.TokenHash)
	}
	if c.PlayerToken {
		item[attrTokenKind] = s(tokenKindPlayer)
	}
	item[attrExpires] = n(service.ExpirySeconds(c.ExpiresAt))
	if _, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: item}); err != nil {
		return fmt.Errorf("dynamostore: put connection %s: %w", c.ID, err)
	}
	if err := d.putTokenConnection(ctx, c); err != nil { // connections_tokens.go
		return fmt.Errorf("dynamostore: put connection %s: %w", c.ID, err)
	}
	return nil
}

// Connection reads a connection.
func (d *Data) Connection(ctx context.Context, id string) (Connection, error) {
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.table), Key: key(connPrefix+id, connSK), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Connection{}, fmt.Errorf("dynamostore: get connection %s: %w", id, err)
	}
	if out.Item == nil {
		return Connection{}, ErrNoConnection
	}
	return Connection{ID: id, TokenHash: str(out.Item, "tokenHash"), PlayerToken: str(out.Item, attrTokenKind) == tokenKindPlayer,
		Lang: str(out.Item, "lang"), ExpiresAt: time.Unix(num(out.Item, attrExpires), 0)}, nil
}

// Subscribe records s (both items), unless the connection already follows
// max other games.
func (d *Data) Subscribe(ctx context.Context, sub Subscription, max int) error {
	mine, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :sub)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(connPrefix + sub.ConnID), ":sub": s(subPrefix)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("dynamostore: subscriptions of %s: %w", sub.ConnID, err)
	}
	already := false
	for _, it := range mine {
		if str(it, attrSK) == subPrefix+sub.GameID {
			already = true
		}
	}
	if !already && len(mine) >= max {
		return ErrTooManySubscriptions
	}
	fill := func(item map[string]types.AttributeValue) map[string]types.AttributeValue {
		item["seat"] = s(sub.Seat)
		item["lang"] = s(sub.Lang)
		item["gameId"] = s(sub.GameID)
		item["connectionId"] = s(sub.ConnID)
		if sub.TokenHash != "" {
			item["tokenHash"] = s(sub.TokenHash)
		}
		if sub.PlayerToken {
			item[attrTokenKind] = s(tokenKindPlayer)
		}
		item[attrExpires] = n(service.ExpirySeconds(sub.ExpiresAt))
		return item
	}
	for _, item := range []map[string]types.AttributeValue{
		fill(key(subPrefix+sub.GameID, sub.ConnID)),
		fill(key(connPrefix+sub.ConnID, subPrefix+sub.GameID)),
	} {
		if _, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: item}); err != nil {
			return fmt.Errorf("dynamostore: subscribe %s to %s: %w", sub.ConnID, sub.GameID, err)
		}
	}
	return nil
}

func subscriptionOf(item map[string]types.AttributeValue) Subscription {
	return Subscription{
		GameID: str(item, "gameId"), ConnID: str(item, "connectionId"), Seat: str(item, "seat"),
		TokenHash: str(item, "tokenHash"), PlayerToken: str(item, attrTokenKind) == tokenKindPlayer,
		Lang: str(item, "lang"), ExpiresAt: time.Unix(num(item, attrExpires), 0),
	}
}

// Unsubscribe removes a subscription (both items).
func (d *Data) Unsubscribe(ctx context.Context, connID, gameID string) (Subscription, bool, error) {
	out, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(d.table), Key: key(subPrefix+gameID, connID), ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return Subscription{}, false, fmt.Errorf("dynamostore: unsubscribe %s from %s: %w", connID, gameID, err)
	}
	if _, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(d.table), Key: key(connPrefix+connID, subPrefix+gameID)}); err != nil {
		return Subscription{}, false, fmt.Errorf("dynamostore: unsubscribe %s from %s: %w", connID, gameID, err)
	}
	if out.Attributes == nil {
		return Subscription{}, false, nil
	}
	return subscriptionOf(out.Attributes), true, nil
}

// DeleteConnection removes the connection and its subscriptions.
func (d *Data) DeleteConnection(ctx context.Context, id string) ([]Subscription, error) {
	items, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(connPrefix + id)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: items of connection %s: %w", id, err)
	}
	var subs []Subscription
	var errs []error
	for _, it := range items {
		sk := str(it, attrSK)
		if sk == connSK {
			if err := d.deleteTokenConnection(ctx, str(it, "tokenHash"), id); err != nil { // connections_tokens.go
				errs = append(errs, err)
			}
		}
		if game, ok := strings.CutPrefix(sk, subPrefix); ok {
			subs = append(subs, subscriptionOf(it))
			if _, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(d.table), Key: key(subPrefix+game, id)}); err != nil {
				errs = append(errs, err)
			}
		}
		if _, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(d.table), Key: key(connPrefix+id, sk)}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return subs, fmt.Errorf("dynamostore: delete connection %s: %w", id, err)
	}
	return subs, nil
}

// Subscribers lists the subscriptions of a game (strongly consistent).
func (d *Data) Subscribers(ctx context.Context, gameID string) ([]Subscription, error) {
	items, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(subPrefix + gameID)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: subscribers of %s: %w", gameID, err)
	}
	out := make([]Subscription, 0, len(items))
	for _, it := range items {
		out = append(out, subscriptionOf(it))
	}
	return out, nil
}
