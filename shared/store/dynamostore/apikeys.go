package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"chessapi/shared/apikey"
	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// API keys (apikey.Store) in the data table, one item a key:
//
//	pk "apikey#<id>"  sk "apikey"  gsi1pk "apikeys"  gsi1sk "<created ms, 13 digits>#<id>"
//
// with name, hash (hex SHA-256 of the key: never the key), perSecond,
// perDay, inFlight (absent: the default), createdAt and, once revoked,
// revokedAt (epoch milliseconds).
// The checker reads one key by its id (GetItem, strongly consistent, so a
// revocation counts at once); the key command lists them with a Query of
// the one gsi1 partition "apikeys", oldest first, never a Scan. Key items
// have no TTL: a revoked key stays listed, as the record of who held it.
// The AI function needs only GetItem on "apikey#" items (and the
// counters' and leases', below), which the template grants with
// dynamodb:LeadingKeys.
//
// A key's counters are the data table's counters (players.go, "hit#..."),
// counted with HitUnder: one conditional UpdateItem that adds one only
// while the window holds fewer than the limit, so a refused request
// writes nothing. A key's in-flight requests are one item
//
//	pk "lease#apikey-inflight#<id>"  sk "lease"  leases (M: holder → until, epoch ms), v (N), expiresAt (TTL)
//
// AcquireLease reads it (strongly consistent), and when fewer than max
// leases are live writes its own with the expired ones removed, on the
// condition that v is still what it read (and bumping v): two instances
// racing for the last lease cannot both win, a refusal costs one read
// and no write, and a dead instance's lease simply stops counting at its
// until. ReleaseLease removes the holder's entry.
//
// A request the table throttles (ProvisionedThroughputExceeded,
// ThrottlingException, RequestLimitExceeded, after the SDK's retries) is
// a *ThrottledError, which says when to retry: the API answers it 429
// with Retry-After, never 500.

var (
	_ apikey.Store          = (*Data)(nil)
	_ apikey.LimitedCounter = (*Data)(nil)
	_ apikey.Leases         = (*Data)(nil)
)

const (
	apiKeyPrefix        = "apikey#"
	apiKeySK            = "apikey"
	apiKeysGSI1PK       = "apikeys"
	apiKeyAttrName      = "name"
	apiKeyAttrHash      = "hash"
	apiKeyAttrPerSecond = "perSecond"
	apiKeyAttrPerDay    = "perDay"
	apiKeyAttrInFlight  = "inFlight"
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
	if rec.Limits.InFlight != 0 {
		item[apiKeyAttrInFlight] = n(rec.Limits.InFlight)
	}
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
		return apikey.Record{}, fmt.Errorf("dynamostore: get API key %s: %w", id, throttled(err))
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
	rec.Limits = apikey.Limits{PerSecond: number(apiKeyAttrPerSecond, true), PerDay: number(apiKeyAttrPerDay, true), InFlight: number(apiKeyAttrInFlight, false)}
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

// ThrottledError is a request DynamoDB refused for throughput (or the
// SDK gave up retrying such refusals): nothing is wrong with the request,
// it may be retried after RetryAfter.
type ThrottledError struct {
	Err error
}

func (e *ThrottledError) Error() string { return "dynamostore: throttled: " + e.Err.Error() }
func (e *ThrottledError) Unwrap() error { return e.Err }

// RetryAfter is when to try again: a second, DynamoDB's adaptive
// capacity and the SDK's backoff work in that time scale.
func (e *ThrottledError) RetryAfter() time.Duration { return time.Second }

// throttleCodes are the error codes DynamoDB answers for throughput
// (DynamoDB developer guide, "Error handling": the 400 errors
// ProvisionedThroughputExceededException, RequestLimitExceeded and
// ThrottlingException, all "OK to retry? Yes").
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"RequestLimitExceeded":                   true,
	"ThrottlingException":                    true,
}

// throttled wraps err in a *ThrottledError when DynamoDB throttled the
// request (or the SDK's retry quota, spent on throttles, ran out); other
// errors are returned as they are.
func throttled(err error) error {
	if err == nil {
		return nil
	}
	var apiErr smithy.APIError
	var quota *ratelimit.QuotaExceededError
	if (errors.As(err, &apiErr) && throttleCodes[apiErr.ErrorCode()]) || errors.As(err, &quota) {
		return &ThrottledError{Err: err}
	}
	return err
}

// HitUnder counts one event for key in the window containing now unless
// max were counted in it: one UpdateItem on the counter's item (the
// same item Hit counts on), conditional on the count, so a refused event
// writes nothing.
func (d *Data) HitUnder(ctx context.Context, k string, window time.Duration, max int64, now time.Time) (int64, time.Time, bool, error) {
	w, err := rules.WindowAt(window, now)
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("dynamostore: count %q: %w", k, err)
	}
	if err := rules.ValidateKey("counter key", k); err != nil {
		return 0, time.Time{}, false, fmt.Errorf("dynamostore: count %q: %w", k, err)
	}
	out, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      key(hitKey(k, w), hitSK),
		UpdateExpression:         aws.String("ADD #c :one SET #exp = :exp"),
		ConditionExpression:      aws.String("attribute_not_exists(#c) OR #c < :max"),
		ExpressionAttributeNames: map[string]string{"#c": attrCount, "#exp": attrExpires},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": n(1),
			":max": n(max),
			":exp": n(service.ExpirySeconds(w.End().Add(rules.CounterGrace))),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if isConditionFailed(err) {
		return max, w.End(), false, nil
	}
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("dynamostore: count %q: %w", k, throttled(err))
	}
	count, present, err := intAttr(out.Attributes, attrCount)
	if err != nil || !present || count < 1 {
		return 0, time.Time{}, false, fmt.Errorf("dynamostore: count %q: UpdateItem returned count %v", k, out.Attributes[attrCount])
	}
	return count, w.End(), true, nil
}

// The in-flight leases' item.
const (
	leasePrefix     = "lease#"
	leaseSK         = "lease"
	leaseAttrLeases = "leases"
	leaseAttrVer    = "v"
	// maxLeaseAttempts bounds AcquireLease's rounds when other instances
	// change the item between its read and its write; between rounds it
	// waits a random pause of up to leaseBackoff, doubling, so that
	// racers spread out (each round has one winner).
	maxLeaseAttempts = 8
	leaseBackoff     = 10 * time.Millisecond
)

// errLeaseContended is a lease item that kept changing under
// AcquireLease: as good as throttled (retry in a moment).
var errLeaseContended = errors.New("the lease item changed under every attempt")

// AcquireLease takes a lease on key for holder until until, unless max
// live leases are held at now (apikey.ErrLeasesTaken).
func (d *Data) AcquireLease(ctx context.Context, k, holder string, max int64, until, now time.Time) error {
	if err := rules.ValidateKey("lease key", k); err != nil {
		return fmt.Errorf("dynamostore: lease %q: %w", k, err)
	}
	if holder == "" || max < 1 || !until.After(now) {
		return fmt.Errorf("dynamostore: lease %q: holder %q, max %d, until %s after %s: want a holder, max ≥ 1, until after now", k, holder, max, until, now)
	}
	pause := leaseBackoff
	for attempt := range maxLeaseAttempts {
		if attempt > 0 {
			if err := sleepCtx(ctx, rand.N(pause)+time.Millisecond); err != nil {
				return fmt.Errorf("dynamostore: lease %q: %w", k, err)
			}
			pause *= 2
		}
		out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.table), Key: key(leasePrefix+k, leaseSK), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("dynamostore: lease %q: %w", k, throttled(err))
		}
		leases, version, err := decodeLeases(out.Item)
		if err != nil {
			return fmt.Errorf("dynamostore: lease item %q: %w", k, err)
		}
		last := until
		var expired []string
		for h, u := range leases {
			if u.After(now) {
				last = maxTime(last, u)
			} else {
				expired = append(expired, h)
			}
		}
		if int64(len(leases)-len(expired)) >= max {
			return apikey.ErrLeasesTaken
		}
		err = d.writeLease(ctx, k, holder, until, last, out.Item == nil, version, expired)
		if isConditionFailed(err) {
			continue // another instance took or ended a lease meanwhile
		}
		if err != nil {
			return fmt.Errorf("dynamostore: lease %q: %w", k, throttled(err))
		}
		return nil
	}
	return fmt.Errorf("dynamostore: lease %q: %w", k, &ThrottledError{Err: errLeaseContended})
}

// writeLease writes holder's lease into the item read at version (a new
// item when there was none), removing the expired entries; last is the
// latest until of the live leases, mine included (the item's TTL).
func (d *Data) writeLease(ctx context.Context, k, holder string, until, last time.Time, create bool, version int64, expired []string) error {
	exp := n(service.ExpirySeconds(last.Add(rules.CounterGrace)))
	if create {
		item := key(leasePrefix+k, leaseSK)
		item[leaseAttrLeases] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{holder: n(until.UnixMilli())}}
		item[leaseAttrVer] = n(1)
		item[attrExpires] = exp
		return d.put(ctx, item, "attribute_not_exists(#pk)", map[string]string{"#pk": attrPK}, nil)
	}
	names := map[string]string{"#l": leaseAttrLeases, "#v": leaseAttrVer, "#exp": attrExpires, "#h": holder}
	update := "SET #l.#h = :until, #v = :next, #exp = :exp"
	if len(expired) > 0 {
		update += " REMOVE "
		for i, h := range expired {
			name := "#e" + strconv.Itoa(i)
			names[name] = h
			if i > 0 {
				update += ", "
			}
			update += "#l." + name
		}
	}
	_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      key(leasePrefix+k, leaseSK),
		UpdateExpression:         aws.String(update),
		ConditionExpression:      aws.String("#v = :version"),
		ExpressionAttributeNames: names,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":until": n(until.UnixMilli()), ":next": n(version + 1), ":version": n(version), ":exp": exp,
		},
	})
	return err
}

// ReleaseLease removes holder's lease of key (nothing to do when there
// is none).
func (d *Data) ReleaseLease(ctx context.Context, k, holder string) error {
	if err := rules.ValidateKey("lease key", k); err != nil {
		return fmt.Errorf("dynamostore: release lease %q: %w", k, err)
	}
	if holder == "" {
		return fmt.Errorf("dynamostore: release lease %q: empty holder", k)
	}
	_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      key(leasePrefix+k, leaseSK),
		UpdateExpression:         aws.String("REMOVE #l.#h"),
		ConditionExpression:      aws.String("attribute_exists(#l)"), // never create an item to remove from
		ExpressionAttributeNames: map[string]string{"#l": leaseAttrLeases, "#h": holder},
	})
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("dynamostore: release lease %q: %w", k, throttled(err))
	}
	return nil
}

// decodeLeases reads a lease item (nil: no item, no leases, version 0).
func decodeLeases(item map[string]types.AttributeValue) (map[string]time.Time, int64, error) {
	if item == nil {
		return nil, 0, nil
	}
	m, ok := item[leaseAttrLeases].(*types.AttributeValueMemberM)
	if !ok {
		return nil, 0, fmt.Errorf("attribute %s is not a map", leaseAttrLeases)
	}
	version, present, err := intAttr(item, leaseAttrVer)
	if err != nil || !present {
		return nil, 0, fmt.Errorf("attribute %s missing or not a number", leaseAttrVer)
	}
	out := make(map[string]time.Time, len(m.Value))
	for h, v := range m.Value {
		ms, ok := v.(*types.AttributeValueMemberN)
		if !ok {
			return nil, 0, fmt.Errorf("lease %q is not a number", h)
		}
		i, err := strconv.ParseInt(ms.Value, 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("lease %q: %w", h, err)
		}
		out[h] = time.UnixMilli(i)
	}
	return out, version, nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
