package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// Inboxes in the data table (service.NotificationStore), one item
// collection per player:
//
//	pk "ntf#<player>"  sk "n#<id>"      at (ms), body (B), pushed (BOOL)?, expiresAt (TTL)
//	pk "ntf#<player>"  sk "read"        upTo
//	pk "ntf#<player>"  sk "push#<key>"  holder, claimedAt (ms), expiresAt (TTL)
//
// An entry is one PutItem conditioned on its absence (1 write unit), a page
// one Query of the collection newest first, a push claim one conditional
// PutItem. Entries and claims expire by the table's TTL.

const (
	inboxPrefix  = "ntf#"
	entrySKPre   = "n#"
	readSK       = "read"
	pushClaimPre = "push#"

	attrAt     = "at"
	attrBody   = "body"
	attrPushed = "pushed"
	attrUpTo   = "upTo"
)

// InboxKeyPrefix is the data table's key prefix of inboxes, for the
// template's LeadingKeys grants (and its test).
const InboxKeyPrefix = inboxPrefix

// claimGrace is how long past its window a push claim is kept before the
// TTL may remove it.
const claimGrace = time.Minute

// DataItemError reports an item of devices or inboxes the store cannot
// read.
type DataItemError struct {
	PK, SK string
	Reason string
}

func (e *DataItemError) Error() string {
	return fmt.Sprintf("dynamostore: item %s / %s: %s", e.PK, e.SK, e.Reason)
}

func entryItem(nr service.NotificationRecord) map[string]types.AttributeValue {
	item := key(inboxPrefix+nr.PlayerID, entrySKPre+nr.ID)
	item[attrAt] = n(nr.At.UnixMilli())
	item[attrBody] = &types.AttributeValueMemberB{Value: nr.Body}
	if nr.Pushed {
		item[attrPushed] = &types.AttributeValueMemberBOOL{Value: true}
	}
	item[attrExpires] = n(service.ExpirySeconds(nr.ExpiresAt))
	return item
}

func decodeInboxEntry(playerID string, item map[string]types.AttributeValue) (service.NotificationRecord, error) {
	sk := str(item, attrSK)
	body, ok := item[attrBody].(*types.AttributeValueMemberB)
	if !ok || len(sk) <= len(entrySKPre) {
		return service.NotificationRecord{}, &DataItemError{PK: inboxPrefix + playerID, SK: sk, Reason: "not an inbox entry"}
	}
	pushed, _ := item[attrPushed].(*types.AttributeValueMemberBOOL)
	return service.NotificationRecord{
		PlayerID: playerID, ID: sk[len(entrySKPre):], At: rules.Millis(num(item, attrAt)), Body: body.Value,
		Pushed: pushed != nil && pushed.Value, ExpiresAt: time.Unix(num(item, attrExpires), 0).UTC(),
	}, nil
}

// AddNotification stores entry n unless its player's inbox has its id.
func (d *Data) AddNotification(ctx context.Context, nr service.NotificationRecord) (service.NotificationRecord, bool, error) {
	err := rules.ValidateNotification(nr)
	if err == nil {
		err = d.put(ctx, entryItem(nr), "attribute_not_exists(#pk)", map[string]string{"#pk": attrPK}, nil)
		if err == nil {
			return rules.StoredNotification(nr), true, nil
		}
		if isConditionFailed(err) {
			var stored service.NotificationRecord
			stored, err = d.notification(ctx, nr.PlayerID, nr.ID)
			if err == nil {
				return stored, false, nil
			}
		}
	}
	return service.NotificationRecord{}, false, fmt.Errorf("dynamostore: add notification for %q: %w", nr.PlayerID, err)
}

func (d *Data) notification(ctx context.Context, playerID, id string) (service.NotificationRecord, error) {
	if err := validateEntry(playerID, id); err != nil {
		return service.NotificationRecord{}, err
	}
	item, err := d.getItem(ctx, inboxPrefix+playerID, entrySKPre+id)
	if err != nil {
		return service.NotificationRecord{}, err
	}
	if item == nil {
		return service.NotificationRecord{}, service.ErrNotFound
	}
	return decodeInboxEntry(playerID, item)
}

func validateEntry(playerID, id string) error {
	if err := rules.ValidateKey("player id", playerID); err != nil {
		return err
	}
	return rules.ValidateKey("notification id", id)
}

// Notification reads one entry; service.ErrNotFound.
func (d *Data) Notification(ctx context.Context, playerID, id string) (service.NotificationRecord, error) {
	nr, err := d.notification(ctx, playerID, id)
	if err != nil {
		return service.NotificationRecord{}, fmt.Errorf("dynamostore: get notification: %w", err)
	}
	return nr, nil
}

// SetPushed marks an entry pushed; service.ErrNotFound if there is none.
func (d *Data) SetPushed(ctx context.Context, playerID, id string) error {
	err := validateEntry(playerID, id)
	if err == nil {
		_, err = d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(d.table), Key: key(inboxPrefix+playerID, entrySKPre+id),
			UpdateExpression:          aws.String("SET #p = :t"),
			ConditionExpression:       aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames:  map[string]string{"#p": attrPushed, "#pk": attrPK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":t": &types.AttributeValueMemberBOOL{Value: true}},
		})
		if isConditionFailed(err) {
			err = service.ErrNotFound
		}
	}
	if err != nil {
		return fmt.Errorf("dynamostore: mark notification pushed: %w", err)
	}
	return nil
}

// Notifications lists a player's entries below before, newest first: one
// Query of the collection's entries (sk from "n#" up to "n#<before>").
func (d *Data) Notifications(ctx context.Context, playerID, before string, limit int) ([]service.NotificationRecord, error) {
	if err := rules.ValidatePage(playerID, before, limit); err != nil {
		return nil, fmt.Errorf("dynamostore: notifications of %q: %w", playerID, err)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :pre)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(inboxPrefix + playerID), ":pre": s(entrySKPre)},
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(limit)),
	}
	if before != "" {
		// BETWEEN is inclusive: the entry before names, if any, is skipped
		// below, so one more is asked for.
		in.KeyConditionExpression = aws.String("pk = :pk AND sk BETWEEN :pre AND :before")
		in.ExpressionAttributeValues[":before"] = s(entrySKPre + before)
		in.Limit = aws.Int32(int32(limit + 1))
	}
	out := []service.NotificationRecord{}
	p := dynamodb.NewQueryPaginator(d.client, in)
	for p.HasMorePages() && len(out) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("dynamostore: notifications of %q: %w", playerID, err)
		}
		for _, item := range page.Items {
			nr, err := decodeInboxEntry(playerID, item)
			if err != nil {
				return nil, fmt.Errorf("dynamostore: notifications of %q: %w", playerID, err)
			}
			if (before == "" || nr.ID < before) && len(out) < limit {
				out = append(out, nr)
			}
		}
	}
	return out, nil
}

// MarkRead moves the player's read mark forward to upTo (a conditional
// update; an older upTo fails the condition and changes nothing).
func (d *Data) MarkRead(ctx context.Context, playerID, upTo string) error {
	err := validateEntry(playerID, upTo)
	if err == nil {
		_, err = d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: aws.String(d.table), Key: key(inboxPrefix+playerID, readSK),
			UpdateExpression:          aws.String("SET #u = :u"),
			ConditionExpression:       aws.String("attribute_not_exists(#u) OR #u < :u"),
			ExpressionAttributeNames:  map[string]string{"#u": attrUpTo},
			ExpressionAttributeValues: map[string]types.AttributeValue{":u": s(upTo)},
		})
		if isConditionFailed(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("dynamostore: mark notifications read: %w", err)
	}
	return nil
}

// ReadUpTo is the player's read mark.
func (d *Data) ReadUpTo(ctx context.Context, playerID string) (string, error) {
	err := rules.ValidateKey("player id", playerID)
	var item map[string]types.AttributeValue
	if err == nil {
		item, err = d.getItem(ctx, inboxPrefix+playerID, readSK)
	}
	if err != nil {
		return "", fmt.Errorf("dynamostore: read mark: %w", err)
	}
	return str(item, attrUpTo), nil
}

// ClaimPush grants the claim of key to id when it is free, id's (renewed),
// or older than window: one conditional PutItem.
func (d *Data) ClaimPush(ctx context.Context, playerID, k, id string, window time.Duration, now time.Time) (bool, error) {
	err := rules.ValidatePushClaim(playerID, k, id, window)
	if err == nil {
		item := key(inboxPrefix+playerID, pushClaimPre+k)
		item[attrHolder] = s(id)
		item[attrClaimedAt] = n(now.UnixMilli())
		item[attrExpires] = n(service.ExpirySeconds(now.Add(window + claimGrace)))
		err = d.put(ctx, item, "attribute_not_exists(#pk) OR #h = :id OR #at <= :stale",
			map[string]string{"#pk": attrPK, "#h": attrHolder, "#at": attrClaimedAt},
			map[string]types.AttributeValue{":id": s(id), ":stale": n(now.Add(-window).UnixMilli())})
		if err == nil {
			return true, nil
		}
		if isConditionFailed(err) {
			return false, nil
		}
	}
	return false, fmt.Errorf("dynamostore: claim push: %w", err)
}

// DeleteInbox removes the player's whole collection: entries, read mark
// and claims (a Query of its keys, then one DeleteItem each, a few at a
// time: the grants allow single items only, every request held to the
// player's partition by dynamodb:LeadingKeys).
func (d *Data) DeleteInbox(ctx context.Context, playerID string) error {
	if err := rules.ValidateKey("player id", playerID); err != nil {
		return fmt.Errorf("dynamostore: delete inbox: %w", err)
	}
	items, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(inboxPrefix + playerID)},
		ProjectionExpression:      aws.String("pk, sk"),
		ConsistentRead:            aws.Bool(true),
	})
	if err == nil {
		err = d.deleteItems(ctx, items)
	}
	if err != nil {
		return fmt.Errorf("dynamostore: delete inbox of %q: %w", playerID, err)
	}
	return nil
}

// deleteParallel bounds the deletes in flight of deleteItems.
const deleteParallel = 8

// deleteItems deletes the items (their keys), deleteParallel at a time.
func (d *Data) deleteItems(ctx context.Context, keys []map[string]types.AttributeValue) error {
	sem := make(chan struct{}, deleteParallel)
	errs := make(chan error, len(keys))
	for _, k := range keys {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(d.table), Key: key(str(k, attrPK), str(k, attrSK))})
			errs <- err
		}()
	}
	for range deleteParallel {
		sem <- struct{}{}
	}
	close(errs)
	var all []error
	for err := range errs {
		if err != nil {
			all = append(all, err)
		}
	}
	return errors.Join(all...)
}
