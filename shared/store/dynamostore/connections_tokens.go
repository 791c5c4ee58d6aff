package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
)

// The stream's connections by the token they were made with, so that a
// session's end (SPEC §16.2: revoked, or its player deleted) reaches its
// open connections:
//
//	pk "tokenconn#<token hash>"  sk "<connection>"  expiresAt (the connection's TTL)
//
// PutConnection writes the entry of a connection made with a token,
// DeleteConnection removes it; DropTokenConnections deletes the
// connections of a token (their records and subscriptions), so the
// fan-out posts nothing more to them and their next message finds no
// connection. The entry has its own partition, apart from the token item
// (ptoken#): the stream functions that write it are never granted the
// token items.
const tokenConnPrefix = "tokenconn#"

// putTokenConnection writes c's entry under its token.
func (d *Data) putTokenConnection(ctx context.Context, c Connection) error {
	if c.TokenHash == "" {
		return nil
	}
	item := key(tokenConnPrefix+c.TokenHash, c.ID)
	item[attrExpires] = n(service.ExpirySeconds(c.ExpiresAt))
	return d.put(ctx, item, "", nil, nil)
}

// deleteTokenConnection removes a connection's entry under its token.
func (d *Data) deleteTokenConnection(ctx context.Context, tokenHash, connID string) error {
	if tokenHash == "" {
		return nil
	}
	return d.deleteItem(ctx, key(tokenConnPrefix+tokenHash, connID), "", nil, nil)
}

// TokenConnections lists the connections made with a token (one query).
func (d *Data) TokenConnections(ctx context.Context, tokenHash string) ([]string, error) {
	if tokenHash == "" {
		return nil, errors.New("dynamostore: connections of a token: empty token hash")
	}
	items, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(tokenConnPrefix + tokenHash)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: connections of a token: %w", err)
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, str(it, attrSK))
	}
	return out, nil
}

// DropTokenConnections deletes every connection made with a token, with
// its subscriptions, and returns how many it deleted.
func (d *Data) DropTokenConnections(ctx context.Context, tokenHash string) (int, error) {
	conns, err := d.TokenConnections(ctx, tokenHash)
	if err != nil {
		return 0, err
	}
	var errs []error
	for _, id := range conns {
		if _, err := d.DeleteConnection(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		// A connection whose record was gone already leaves its entry.
		if err := d.deleteTokenConnection(ctx, tokenHash, id); err != nil {
			errs = append(errs, err)
		}
	}
	return len(conns), errors.Join(errs...)
}
