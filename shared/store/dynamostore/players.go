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

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// Players, their sessions and blocks, link codes, counters and pairing
// slots in the data table (one item each, sort key = the kind):
//
//	pk "player#<id>"                       sk "player"  name, rating, ratedGames, createdAt (ms), version, applied (L of S),
//	                                                    ratingHistory (L of M g, at, b, a), recoveryHash
//	pk "ptoken#<hash>"                     sk "ptoken"  playerId, and the session (players_sessions.go)
//	pk "link#<hash>"                       sk "link"    playerId, validUntil (ms), expiresAt (TTL)
//	pk "hit#<key>#<window ns>#<start ns>"  sk "hit"     count, expiresAt (TTL)
//	pk "slot#<key>"                        sk "slot"    holder, claimedAt (ms), expiresAt (TTL)
//
// Every check and its write are one conditional single-item request (no
// transactions: dynalite has none). The items that can be abandoned carry
// expiresAt; until DynamoDB's TTL removes them (which can take days) the
// reads and conditions treat them as absent by validUntil, the counter's
// window in its key and claimedAt.

var _ service.Players = (*Data)(nil)

const (
	playerPrefix = "player#"
	tokenPrefix  = "ptoken#"
	linkPrefix   = "link#"
	hitPrefix    = "hit#"
	slotPrefix   = "slot#"

	playerSK = "player"
	tokenSK  = "ptoken"
	linkSK   = "link"
	hitSK    = "hit"
	slotSK   = "slot"

	attrPlayerID   = "playerId"
	attrName       = "name"
	attrRating     = "rating"
	attrRatedGames = "ratedGames"
	attrPCreated   = "createdAt"
	attrPVersion   = "version"
	attrApplied    = "applied"
	attrValidUntil = "validUntil"
	attrHistory    = "ratingHistory"
	attrRecovery   = "recoveryHash"
	attrCount      = "count"
	attrHolder     = "holder"
	attrClaimedAt  = "claimedAt"
)

// maxSlotAttempts bounds ClaimSlot's retries when the slot changes
// between its conditional write and the read of the holder.
const maxSlotAttempts = 5

// isConditionFailed reports a failed ConditionExpression.
func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

func (d *Data) put(ctx context.Context, item map[string]types.AttributeValue, cond string, names map[string]string, values map[string]types.AttributeValue) error {
	in := &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: item}
	if cond != "" {
		in.ConditionExpression = aws.String(cond)
		in.ExpressionAttributeNames = names
		in.ExpressionAttributeValues = values
	}
	_, err := d.client.PutItem(ctx, in)
	return err
}

// getItem reads one item, strongly consistent (nil when there is none).
func (d *Data) getItem(ctx context.Context, pk, sk string) (map[string]types.AttributeValue, error) {
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.table), Key: key(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

func playerItem(p service.PlayerRecord) map[string]types.AttributeValue {
	item := key(playerPrefix+p.ID, playerSK)
	if p.Name != "" { // an empty string is refused by older DynamoDB implementations
		item[attrName] = s(p.Name)
	}
	item[attrRating] = n(int64(p.Rating))
	item[attrRatedGames] = n(int64(p.RatedGames))
	item[attrPVersion] = n(p.Version)
	if ms, ok := rules.PlayerCreatedAt(p.CreatedAt); ok {
		item[attrPCreated] = n(ms)
	}
	if len(p.Applied) > 0 {
		list := make([]types.AttributeValue, len(p.Applied))
		for i, id := range p.Applied {
			list[i] = s(id)
		}
		item[attrApplied] = &types.AttributeValueMemberL{Value: list}
	}
	if len(p.RatingHistory) > 0 {
		item[attrHistory] = historyList(p.RatingHistory)
	}
	if p.RecoveryHash != "" {
		item[attrRecovery] = s(p.RecoveryHash)
	}
	return item
}

// PlayerItemError reports a data table item that is not a valid player.
type PlayerItemError struct {
	PlayerID, Attribute, Reason string
}

func (e *PlayerItemError) Error() string {
	return fmt.Sprintf("dynamostore: player %q: attribute %s: %s", e.PlayerID, e.Attribute, e.Reason)
}

func decodePlayer(id string, item map[string]types.AttributeValue) (service.PlayerRecord, error) {
	p := service.PlayerRecord{ID: id}
	fail := func(attr, reason string) (service.PlayerRecord, error) {
		return service.PlayerRecord{}, &PlayerItemError{PlayerID: id, Attribute: attr, Reason: reason}
	}
	if v, found := item[attrName]; found {
		name, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return fail(attrName, "not a string")
		}
		p.Name = name.Value
	}
	ints := []struct {
		attr     string
		required bool
		set      func(int64) bool
	}{
		{attrPVersion, true, func(v int64) bool { p.Version = v; return v >= 1 }},
		{attrRating, true, func(v int64) bool { p.Rating = int(v); return int64(p.Rating) == v }},
		{attrRatedGames, true, func(v int64) bool { p.RatedGames = int(v); return v >= 0 && int64(p.RatedGames) == v }},
		{attrPCreated, false, func(v int64) bool { p.CreatedAt = rules.Millis(v); return true }},
	}
	for _, f := range ints {
		v, present, err := intAttr(item, f.attr)
		switch {
		case err != nil:
			return fail(f.attr, err.Error())
		case !present && f.required:
			return fail(f.attr, "missing")
		case present && !f.set(v):
			return fail(f.attr, fmt.Sprintf("%d is out of range", v))
		}
	}
	if v, found := item[attrApplied]; found {
		list, ok := v.(*types.AttributeValueMemberL)
		if !ok {
			return fail(attrApplied, "not a list")
		}
		for i, e := range list.Value {
			id, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				return fail(attrApplied, fmt.Sprintf("element %d is not a string", i))
			}
			p.Applied = append(p.Applied, id.Value)
		}
	}
	if v, found := item[attrHistory]; found {
		history, err := decodeHistory(v)
		if err != nil {
			return fail(attrHistory, err.Error())
		}
		p.RatingHistory = history
	}
	if v, found := item[attrRecovery]; found {
		h, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return fail(attrRecovery, "not a string")
		}
		p.RecoveryHash = h.Value
	}
	return p, nil
}

// CreatePlayer stores a new player (Version 1) with its first session;
// service.ErrAlreadyExists if the id, the session or the token hash is
// taken. The player item is written first, then the session's entry under
// the player, then the token item, each conditioned on not existing: a
// crash in between leaves a player no token reaches (unusable, never
// half-usable), and a taken hash undoes the others.
func (d *Data) CreatePlayer(ctx context.Context, p service.PlayerRecord, first service.Session) error {
	if err := d.createPlayer(ctx, p, first); err != nil {
		return fmt.Errorf("dynamostore: create player %q: %w", p.ID, err)
	}
	return nil
}

func (d *Data) createPlayer(ctx context.Context, p service.PlayerRecord, first service.Session) error {
	if p.Version != 0 && p.Version != 1 {
		return fmt.Errorf("a new player's Version is 1, not %d", p.Version)
	}
	p.Version = 1
	if err := rules.ValidatePlayer(p); err != nil {
		return err
	}
	if first.PlayerID != p.ID {
		return fmt.Errorf("the first session is of player %q, not %q", first.PlayerID, p.ID)
	}
	if err := rules.ValidateSession(first); err != nil {
		return err
	}
	err := d.put(ctx, playerItem(p), "attribute_not_exists(#pk)", map[string]string{"#pk": attrPK}, nil)
	if isConditionFailed(err) {
		return fmt.Errorf("player id: %w", service.ErrAlreadyExists)
	}
	if err != nil {
		return err
	}
	err = d.putSession(ctx, first)
	if err == nil {
		return nil
	}
	// Undo the player, only as this call wrote it (version 1).
	_, undoErr := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(d.table),
		Key:                       key(playerPrefix+p.ID, playerSK),
		ConditionExpression:       aws.String("#v = :one"),
		ExpressionAttributeNames:  map[string]string{"#v": attrPVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": n(1)},
	})
	if undoErr != nil && !isConditionFailed(undoErr) {
		return errors.Join(err, fmt.Errorf("undo the player: %w", undoErr))
	}
	return err
}

// Player reads a player (strongly consistent); service.ErrNotFound.
func (d *Data) Player(ctx context.Context, id string) (service.PlayerRecord, error) {
	p, err := d.player(ctx, id)
	if err != nil {
		return service.PlayerRecord{}, fmt.Errorf("dynamostore: get player %q: %w", id, err)
	}
	return p, nil
}

func (d *Data) player(ctx context.Context, id string) (service.PlayerRecord, error) {
	if err := rules.ValidateKey("player id", id); err != nil {
		return service.PlayerRecord{}, err
	}
	item, err := d.getItem(ctx, playerPrefix+id, playerSK)
	if err != nil {
		return service.PlayerRecord{}, err
	}
	if item == nil {
		return service.PlayerRecord{}, service.ErrNotFound
	}
	return decodePlayer(id, item)
}

// UpdatePlayer replaces the player if its stored version is still
// expectedVersion (a PutItem conditioned on it);
// service.ErrVersionConflict otherwise, also when there is no player.
func (d *Data) UpdatePlayer(ctx context.Context, p service.PlayerRecord, expectedVersion int64) error {
	err := rules.ValidatePlayer(p)
	if err == nil {
		err = d.put(ctx, playerItem(p), "#v = :expected",
			map[string]string{"#v": attrPVersion}, map[string]types.AttributeValue{":expected": n(expectedVersion)})
		if isConditionFailed(err) {
			err = service.ErrVersionConflict
		}
	}
	if err != nil {
		return fmt.Errorf("dynamostore: update player %q from version %d: %w", p.ID, expectedVersion, err)
	}
	return nil
}

// PutLinkCode stores a link code's hash for a player until expiresAt: a
// PutItem conditioned on no code, or an expired one (now: the Data's
// clock), holding the hash; service.ErrAlreadyExists otherwise.
func (d *Data) PutLinkCode(ctx context.Context, codeHash, playerID string, expiresAt time.Time) error {
	err := rules.ValidateLinkCode(codeHash, playerID, expiresAt)
	if err == nil {
		item := key(linkPrefix+codeHash, linkSK)
		item[attrPlayerID] = s(playerID)
		item[attrValidUntil] = n(rules.ValidUntil(expiresAt))
		item[attrExpires] = n(service.ExpirySeconds(expiresAt))
		err = d.put(ctx, item, "attribute_not_exists(#pk) OR #until <= :now",
			map[string]string{"#pk": attrPK, "#until": attrValidUntil},
			map[string]types.AttributeValue{":now": n(d.now().UnixMilli())})
		if isConditionFailed(err) {
			err = service.ErrAlreadyExists
		}
	}
	if err != nil {
		return fmt.Errorf("dynamostore: put link code for player %q: %w", playerID, err)
	}
	return nil
}

// ClaimLinkCode uses a link code: one DeleteItem conditioned on the code
// not having expired at now, returning the deleted item. DynamoDB applies
// conditional deletes of one item one at a time, so of concurrent claims
// exactly one gets the item; the others, and claims of unknown, used or
// expired codes, get service.ErrNotFound.
func (d *Data) ClaimLinkCode(ctx context.Context, codeHash string, now time.Time) (string, error) {
	playerID, err := d.claimLinkCode(ctx, codeHash, now)
	if err != nil {
		return "", fmt.Errorf("dynamostore: claim link code: %w", err)
	}
	return playerID, nil
}

func (d *Data) claimLinkCode(ctx context.Context, codeHash string, now time.Time) (string, error) {
	if err := rules.ValidateKey("link code hash", codeHash); err != nil {
		return "", err
	}
	out, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(d.table),
		Key:       key(linkPrefix+codeHash, linkSK),
		// A missing item fails the comparison too.
		ConditionExpression:       aws.String("#until > :now"),
		ExpressionAttributeNames:  map[string]string{"#until": attrValidUntil},
		ExpressionAttributeValues: map[string]types.AttributeValue{":now": n(now.UnixMilli())},
		ReturnValues:              types.ReturnValueAllOld,
	})
	if isConditionFailed(err) {
		return "", service.ErrNotFound
	}
	if err != nil {
		return "", err
	}
	playerID := str(out.Attributes, attrPlayerID)
	if playerID == "" {
		return "", &PlayerItemError{Attribute: attrPlayerID, Reason: "link code item without a player id"}
	}
	return playerID, nil
}

// hitKey is a counter's partition key: the window's length is part of it,
// so windows of different lengths that start together never share a
// count. Reading from the right, the last two fields are numbers, so keys
// holding '#' cannot collide.
func hitKey(key string, w rules.Window) string {
	return hitPrefix + key + "#" + strconv.FormatInt(int64(w.Length), 10) + "#" + strconv.FormatInt(w.Start, 10)
}

// Hit counts one event for key in the fixed window containing now: one
// UpdateItem that adds 1 (atomic in DynamoDB, whoever calls) and returns
// the new count. The item expires rules.CounterGrace after the window.
func (d *Data) Hit(ctx context.Context, key string, window time.Duration, now time.Time) (int64, time.Time, error) {
	count, end, err := d.hit(ctx, key, window, now)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("dynamostore: count %q: %w", key, err)
	}
	return count, end, nil
}

func (d *Data) hit(ctx context.Context, k string, window time.Duration, now time.Time) (int64, time.Time, error) {
	w, err := rules.WindowAt(window, now)
	if err != nil {
		return 0, time.Time{}, err
	}
	if err := rules.ValidateKey("counter key", k); err != nil {
		return 0, time.Time{}, err
	}
	out, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      key(hitKey(k, w), hitSK),
		UpdateExpression:         aws.String("ADD #c :one SET #exp = :exp"),
		ExpressionAttributeNames: map[string]string{"#c": attrCount, "#exp": attrExpires},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": n(1),
			":exp": n(service.ExpirySeconds(w.End().Add(rules.CounterGrace))),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, time.Time{}, err
	}
	count, present, err := intAttr(out.Attributes, attrCount)
	if err != nil || !present || count < 1 {
		return 0, time.Time{}, fmt.Errorf("UpdateItem returned count %v", out.Attributes[attrCount])
	}
	return count, w.End(), nil
}

// Count reads the count of key in the window containing now (a strongly
// consistent GetItem; 0 when nothing was counted) without counting.
func (d *Data) Count(ctx context.Context, key string, window time.Duration, now time.Time) (int64, time.Time, error) {
	count, end, err := d.count(ctx, key, window, now)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("dynamostore: count of %q: %w", key, err)
	}
	return count, end, nil
}

func (d *Data) count(ctx context.Context, k string, window time.Duration, now time.Time) (int64, time.Time, error) {
	w, err := rules.WindowAt(window, now)
	if err != nil {
		return 0, time.Time{}, err
	}
	if err := rules.ValidateKey("counter key", k); err != nil {
		return 0, time.Time{}, err
	}
	item, err := d.getItem(ctx, hitKey(k, w), hitSK)
	if err != nil {
		return 0, time.Time{}, err
	}
	count, _, err := intAttr(item, attrCount)
	if err != nil || count < 0 {
		return 0, time.Time{}, fmt.Errorf("counter item: count %v", item[attrCount])
	}
	return count, w.End(), nil
}

// ClaimSlot makes value the holder of slot key: a PutItem conditioned on
// the slot being free, held by value already (the claim is renewed, so a
// claim retried after a lost answer does not lose to itself) or claimed
// more than ttl before now. When the condition fails, a strongly
// consistent read names the holder for service.ErrSlotTaken; if the slot
// changed in between, the claim is tried again (at most maxSlotAttempts).
func (d *Data) ClaimSlot(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error) {
	holder, err := d.claimSlot(ctx, key, value, ttl, now)
	if err != nil {
		return holder, fmt.Errorf("dynamostore: claim slot %q: %w", key, err)
	}
	return holder, nil
}

func (d *Data) claimSlot(ctx context.Context, k, value string, ttl time.Duration, now time.Time) (string, error) {
	if err := rules.ValidateSlot(k, value, ttl); err != nil {
		return "", err
	}
	staleBefore := rules.StaleBefore(ttl, now)
	item := key(slotPrefix+k, slotSK)
	item[attrHolder] = s(value)
	item[attrClaimedAt] = n(now.UnixMilli())
	item[attrExpires] = n(service.ExpirySeconds(now.Add(ttl + rules.SlotGrace)))
	for range maxSlotAttempts {
		err := d.put(ctx, item, "attribute_not_exists(#pk) OR #h = :v OR #at < :stale",
			map[string]string{"#pk": attrPK, "#h": attrHolder, "#at": attrClaimedAt},
			map[string]types.AttributeValue{":v": s(value), ":stale": n(staleBefore)})
		if err == nil {
			return value, nil
		}
		if !isConditionFailed(err) {
			return "", err
		}
		cur, err := d.getItem(ctx, slotPrefix+k, slotSK)
		if err != nil {
			return "", err
		}
		if cur == nil {
			continue // released meanwhile
		}
		holder := str(cur, attrHolder)
		if claimedAt := num(cur, attrClaimedAt); holder != value && claimedAt >= staleBefore {
			return holder, service.ErrSlotTaken
		}
		// Stale or ours by now: the slot changed in between; try again.
	}
	return "", fmt.Errorf("the slot changed %d times while claiming it", maxSlotAttempts)
}

// ReleaseSlot frees slot key if value holds it: a DeleteItem conditioned
// on the holder (a failed condition is no error).
func (d *Data) ReleaseSlot(ctx context.Context, slotKey, value string) error {
	err := rules.ValidateSlot(slotKey, value, 0)
	if err == nil {
		_, err = d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName:                 aws.String(d.table),
			Key:                       key(slotPrefix+slotKey, slotSK),
			ConditionExpression:       aws.String("#h = :v"),
			ExpressionAttributeNames:  map[string]string{"#h": attrHolder},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s(value)},
		})
		if isConditionFailed(err) {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("dynamostore: release slot %q: %w", slotKey, err)
	}
	return nil
}
