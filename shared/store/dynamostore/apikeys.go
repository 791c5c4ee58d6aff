package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/apikey"
)

// API keys (apikey.Store) in the data table, one item a key:
//
//	pk "apikey#<id>"  sk "apikey"  gsi1pk "apikeys"  gsi1sk "<created ms, 13 digits>#<id>"
//
// with name, hash (hex SHA-256 of the key: never the key), perSecond,
// perDay, createdAt and, once revoked, revokedAt (epoch milliseconds).
// The checker reads one key by its id (GetItem, strongly consistent, so a
// revocation counts at once); the key command lists them with a Query of
// the one gsi1 partition "apikeys", oldest first, never a Scan. Key items
// have no TTL: a revoked key stays listed, as the record of who held it.
// The AI function needs only GetItem on "apikey#" items (and the
// counters'), which the template grants with dynamodb:LeadingKeys.

var _ apikey.Store = (*Data)(nil)

const (
	apiKeyPrefix        = "apikey#"
	apiKeySK            = "apikey"
	apiKeysGSI1PK       = "apikeys"
	apiKeyAttrName      = "name"
	apiKeyAttrHash      = "hash"
	apiKeyAttrPerSecond = "perSecond"
	apiKeyAttrPerDay    = "perDay"
	apiKeyAttrCreated   = "createdAt"
	apiKeyAttrRevoked   = "revokedAt"
	apiKeyListPage      = 100
)

// APIKeyPartitionPrefix is the partition key prefix of the key items, for
// the template's least-privilege condition.
const APIKeyPartitionPrefix = apiKeyPrefix

func apiKeyItemKey(id string) map[string]types.AttributeValue { return key(apiKeyPrefix+id, apiKeySK) }

// PutAPIKey stores a new key record; apikey.ErrExists if the id is taken.
func (d *Data) PutAPIKey(ctx context.Context, rec apikey.Record) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	created := rec.CreatedAt.UnixMilli()
	item := apiKeyItemKey(rec.ID)
	item[attrGSI1PK] = s(apiKeysGSI1PK)
	// Zero-padded so the index's string order is the creation order.
	item[attrGSI1SK] = s(fmt.Sprintf("%013d#%s", created, rec.ID))
	item[apiKeyAttrName] = s(rec.Name)
	item[apiKeyAttrHash] = s(rec.Hash)
	item[apiKeyAttrPerSecond] = n(rec.Limits.PerSecond)
	item[apiKeyAttrPerDay] = n(rec.Limits.PerDay)
	item[apiKeyAttrCreated] = n(created)
	if rec.Revoked() {
		item[apiKeyAttrRevoked] = n(rec.RevokedAt.UnixMilli())
	}
	_, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           aws.String(d.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("dynamostore: put API key %s: %w", rec.ID, apikey.ErrExists)
	}
	if err != nil {
		return fmt.Errorf("dynamostore: put API key %s: %w", rec.ID, err)
	}
	return nil
}

// APIKey reads a key record (strongly consistent); apikey.ErrNotFound.
func (d *Data) APIKey(ctx context.Context, id string) (apikey.Record, error) {
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(d.table), Key: apiKeyItemKey(id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return apikey.Record{}, fmt.Errorf("dynamostore: get API key %s: %w", id, err)
	}
	if out.Item == nil {
		return apikey.Record{}, fmt.Errorf("dynamostore: get API key %s: %w", id, apikey.ErrNotFound)
	}
	return apiKeyRecord(out.Item)
}

// APIKeys lists every key record, oldest first (the gsi1 partition
// "apikeys"; it may trail the latest write by a moment, as any GSI).
func (d *Data) APIKeys(ctx context.Context) ([]apikey.Record, error) {
	items, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		IndexName:                 aws.String(IndexGSI1),
		KeyConditionExpression:    aws.String("gsi1pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(apiKeysGSI1PK)},
		Limit:                     aws.Int32(apiKeyListPage),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: list API keys: %w", err)
	}
	out := make([]apikey.Record, 0, len(items))
	for _, it := range items {
		rec, err := apiKeyRecord(it)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	// The index orders by creation time and id already; sorting again
	// keeps the order the port promises even for items written by hand.
	apikey.SortRecords(out)
	return out, nil
}

// RevokeAPIKey marks a key revoked at at (the first revocation's time
// stays; revoked says whether this call revoked it); apikey.ErrNotFound if
// there is no such key. One conditional update: of concurrent revocations
// one writes, the others read its time.
func (d *Data) RevokeAPIKey(ctx context.Context, id string, at time.Time) (apikey.Record, bool, error) {
	out, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.table),
		Key:                       apiKeyItemKey(id),
		UpdateExpression:          aws.String("SET #revoked = :at"),
		ConditionExpression:       aws.String("attribute_exists(pk) AND attribute_not_exists(#revoked)"),
		ExpressionAttributeNames:  map[string]string{"#revoked": apiKeyAttrRevoked},
		ExpressionAttributeValues: map[string]types.AttributeValue{":at": n(at.UnixMilli())},
		ReturnValues:              types.ReturnValueAllNew,
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		// Either no such key or already revoked: the read tells which
		// (without ReturnValuesOnConditionCheckFailure, which dynalite
		// lacks).
		rec, err := d.APIKey(ctx, id)
		return rec, false, err
	case err != nil:
		return apikey.Record{}, false, fmt.Errorf("dynamostore: revoke API key %s: %w", id, err)
	}
	rec, err := apiKeyRecord(out.Attributes)
	return rec, err == nil, err
}

// apiKeyRecord decodes a key item; a malformed one is an error naming the
// attribute (a record that cannot be read must not authenticate anyone).
func apiKeyRecord(item map[string]types.AttributeValue) (apikey.Record, error) {
	pk := str(item, attrPK)
	id := pk[min(len(pk), len(apiKeyPrefix)):]
	rec := apikey.Record{ID: id, Name: str(item, apiKeyAttrName), Hash: str(item, apiKeyAttrHash)}
	var problems []string
	number := func(name string, required bool) int64 {
		v, ok := item[name].(*types.AttributeValueMemberN)
		if !ok {
			if required || item[name] != nil {
				problems = append(problems, name)
			}
			return 0
		}
		i, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			problems = append(problems, name)
		}
		return i
	}
	rec.Limits = apikey.Limits{PerSecond: number(apiKeyAttrPerSecond, true), PerDay: number(apiKeyAttrPerDay, true)}
	rec.CreatedAt = time.UnixMilli(number(apiKeyAttrCreated, true)).UTC()
	if ms := number(apiKeyAttrRevoked, false); item[apiKeyAttrRevoked] != nil {
		rec.RevokedAt = time.UnixMilli(ms).UTC()
	}
	if len(problems) > 0 {
		return apikey.Record{}, fmt.Errorf("dynamostore: API key item %q: attributes %v missing or not numbers", pk, problems)
	}
	if err := rec.Validate(); err != nil {
		return apikey.Record{}, fmt.Errorf("dynamostore: API key item %q: %w", pk, err)
	}
	return rec, nil
}
