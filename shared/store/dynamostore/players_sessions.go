package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// Sessions, blocks and the deletion of a player in the data table:
//
//	pk "ptoken#<hash>"   sk "ptoken"               playerId, sessionId, label, createdAt, lastUsedAt (ms)
//	                                               (a token issued before sessions: playerId only;
//	                                               a deleted player's tombstone: playerId, deletedUntil (ms), expiresAt)
//	pk "player#<id>"     sk "session#<sessionId>"  tokenHash: the player's sessions, for the list and the deletion
//	pk "player#<id>"     sk "block#<other>"        createdAt (ms): id blocks other
//	pk "player#<id>"     sk "blockedby#<other>"    createdAt (ms): other blocks id (found at id's deletion)
//
// The token item is the session: a request is authenticated with one read
// of it (and one of the player), and a session's last use and label are
// one update of it. A player's sessions are listed from the entries in
// the player's partition (one query, then one batch read of the tokens).
// Without transactions (dynalite has none) every change is a sequence of
// single-item writes ordered so that a crash in between leaves nothing
// that grants access: the player's entry is written before the token
// item and removed after it; a revoked token is removed before its entry.
//
// A deletion leaves only items with a TTL: the tokens' tombstones and the
// link codes (10 minutes; they no longer work, their player being gone).
// Tokens issued before sessions that were never used since are not in the
// player's partition and cannot be found: they stay, pointing at a player
// that is gone, and authenticate nobody.

// Sort keys in a player's partition start with these.
const (
	sessionSKStart   = "session#"
	blockSKStart     = "block#"
	blockedBySKStart = "blockedby#"

	attrSessionID    = "sessionId"
	attrLabel        = "label"
	attrLastUsed     = "lastUsedAt"
	attrTokenHash    = "tokenHash"
	attrDeletedUntil = "deletedUntil"
	attrBlockedAt    = "createdAt"
)

// historyList is a rating history as an attribute: a list of maps.
func historyList(h []service.RatingEntry) types.AttributeValue {
	list := make([]types.AttributeValue, len(h))
	for i, e := range h {
		list[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
			"g": s(e.GameID), "at": n(e.At.UnixMilli()), "b": n(int64(e.Before)), "a": n(int64(e.After)),
		}}
	}
	return &types.AttributeValueMemberL{Value: list}
}

func decodeHistory(v types.AttributeValue) ([]service.RatingEntry, error) {
	list, ok := v.(*types.AttributeValueMemberL)
	if !ok {
		return nil, errors.New("not a list")
	}
	out := make([]service.RatingEntry, 0, len(list.Value))
	for i, e := range list.Value {
		m, ok := e.(*types.AttributeValueMemberM)
		if !ok {
			return nil, fmt.Errorf("element %d is not a map", i)
		}
		g := str(m.Value, "g")
		at, okAt, errAt := intAttr(m.Value, "at")
		b, okB, errB := intAttr(m.Value, "b")
		a, okA, errA := intAttr(m.Value, "a")
		if g == "" || !okAt || !okB || !okA || errAt != nil || errB != nil || errA != nil {
			return nil, fmt.Errorf("element %d is not a rating entry", i)
		}
		out = append(out, service.RatingEntry{GameID: g, At: rules.Millis(at), Before: int(b), After: int(a)})
	}
	return out, nil
}

func tokenKey(hash string) map[string]types.AttributeValue { return key(tokenPrefix+hash, tokenSK) }

func sessionEntryKey(playerID, sessionID string) map[string]types.AttributeValue {
	return key(playerPrefix+playerID, sessionSKStart+sessionID)
}

// sessionItem is a session's token item.
func sessionItem(sess service.Session) map[string]types.AttributeValue {
	item := tokenKey(sess.TokenHash)
	item[attrPlayerID] = s(sess.PlayerID)
	item[attrSessionID] = s(sess.ID)
	if sess.Label != "" {
		item[attrLabel] = s(sess.Label)
	}
	if !sess.CreatedAt.IsZero() {
		item[attrPCreated] = n(sess.CreatedAt.UnixMilli())
	}
	if !sess.LastUsedAt.IsZero() {
		item[attrLastUsed] = n(sess.LastUsedAt.UnixMilli())
	}
	return item
}

// decodeToken reads a token item: the session (ID "" for a token issued
// before sessions) and the tombstone's time (0: none).
func decodeToken(hash string, item map[string]types.AttributeValue) (service.Session, int64, error) {
	sess := service.Session{PlayerID: str(item, attrPlayerID), TokenHash: hash, ID: str(item, attrSessionID), Label: str(item, attrLabel)}
	if sess.PlayerID == "" {
		return service.Session{}, 0, &PlayerItemError{Attribute: attrPlayerID, Reason: "token item without a player id"}
	}
	for _, t := range []struct {
		attr string
		dst  *time.Time
	}{{attrPCreated, &sess.CreatedAt}, {attrLastUsed, &sess.LastUsedAt}} {
		v, present, err := intAttr(item, t.attr)
		if err != nil {
			return service.Session{}, 0, &PlayerItemError{PlayerID: sess.PlayerID, Attribute: t.attr, Reason: err.Error()}
		}
		if present {
			*t.dst = rules.Millis(v)
		}
	}
	until, _, err := intAttr(item, attrDeletedUntil)
	if err != nil {
		return service.Session{}, 0, &PlayerItemError{PlayerID: sess.PlayerID, Attribute: attrDeletedUntil, Reason: err.Error()}
	}
	return sess, until, nil
}

// putSession writes a new session: its entry under the player, then its
// token item, each conditioned on not existing; a taken token hash undoes
// the entry.
func (d *Data) putSession(ctx context.Context, sess service.Session) error {
	notExists := "attribute_not_exists(#pk)"
	pkName := map[string]string{"#pk": attrPK}
	entry := sessionEntryKey(sess.PlayerID, sess.ID)
	entry[attrTokenHash] = s(sess.TokenHash)
	err := d.put(ctx, entry, notExists, pkName, nil)
	if isConditionFailed(err) {
		return fmt.Errorf("session id: %w", service.ErrAlreadyExists)
	}
	if err != nil {
		return err
	}
	err = d.put(ctx, sessionItem(sess), notExists, pkName, nil)
	if err == nil {
		return nil
	}
	if isConditionFailed(err) {
		err = fmt.Errorf("token hash: %w", service.ErrAlreadyExists)
	}
	if _, undoErr := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(d.table), Key: sessionEntryKey(sess.PlayerID, sess.ID)}); undoErr != nil {
		return errors.Join(err, fmt.Errorf("undo the session entry: %w", undoErr))
	}
	return err
}

// PlayerByToken reads the player a token hash belongs to and its session:
// the token item, then the player (two strongly consistent reads).
func (d *Data) PlayerByToken(ctx context.Context, tokenHash string) (service.PlayerRecord, service.Session, error) {
	p, sess, err := d.playerByToken(ctx, tokenHash)
	if err != nil {
		return service.PlayerRecord{}, service.Session{}, fmt.Errorf("dynamostore: player of a token: %w", err)
	}
	return p, sess, nil
}

func (d *Data) playerByToken(ctx context.Context, tokenHash string) (service.PlayerRecord, service.Session, error) {
	if err := rules.ValidateKey("token hash", tokenHash); err != nil {
		return service.PlayerRecord{}, service.Session{}, err
	}
	item, err := d.getItem(ctx, tokenPrefix+tokenHash, tokenSK)
	if err != nil {
		return service.PlayerRecord{}, service.Session{}, err
	}
	if item == nil {
		return service.PlayerRecord{}, service.Session{}, service.ErrNotFound
	}
	sess, until, err := decodeToken(tokenHash, item)
	if err != nil {
		return service.PlayerRecord{}, service.Session{}, err
	}
	if until != 0 {
		return service.PlayerRecord{}, service.Session{}, &service.DeletedError{PlayerID: sess.PlayerID}
	}
	p, err := d.player(ctx, sess.PlayerID)
	if err != nil {
		return service.PlayerRecord{}, service.Session{}, err
	}
	return p, sess, nil
}

// AddSession adds a session for an existing player: a read of the player,
// then putSession.
func (d *Data) AddSession(ctx context.Context, sess service.Session) error {
	err := rules.ValidateSession(sess)
	if err == nil {
		_, err = d.player(ctx, sess.PlayerID)
	}
	if err == nil {
		err = d.putSession(ctx, sess)
	}
	if err != nil {
		return fmt.Errorf("dynamostore: add session for player %q: %w", sess.PlayerID, err)
	}
	return nil
}

// AdoptToken gives a token issued before sessions its session: the entry
// under the player first (so the session is listed before it exists),
// then the token item's update, conditioned on the token still being the
// player's and without a session. When the condition fails the token is
// read: a session it has already is returned (and its entry made sure
// of); a token that is gone is service.ErrNotFound (and the entry undone).
func (d *Data) AdoptToken(ctx context.Context, sess service.Session) (service.Session, error) {
	out, err := d.adoptToken(ctx, sess)
	if err != nil {
		return service.Session{}, fmt.Errorf("dynamostore: adopt a token of player %q: %w", sess.PlayerID, err)
	}
	return out, nil
}

func (d *Data) adoptToken(ctx context.Context, sess service.Session) (service.Session, error) {
	if err := rules.ValidateSession(sess); err != nil {
		return service.Session{}, err
	}
	putEntry := func(id string) error {
		entry := sessionEntryKey(sess.PlayerID, id)
		entry[attrTokenHash] = s(sess.TokenHash)
		return d.put(ctx, entry, "", nil, nil)
	}
	if err := putEntry(sess.ID); err != nil {
		return service.Session{}, err
	}
	set := "SET #sid = :sid, #created = :created, #used = :used"
	values := map[string]types.AttributeValue{
		":p": s(sess.PlayerID), ":sid": s(sess.ID),
		":created": n(sess.CreatedAt.UnixMilli()), ":used": n(sess.LastUsedAt.UnixMilli()),
	}
	_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:           aws.String(d.table),
		Key:                 tokenKey(sess.TokenHash),
		UpdateExpression:    aws.String(set),
		ConditionExpression: aws.String("#player = :p AND attribute_not_exists(#sid) AND attribute_not_exists(#until)"),
		ExpressionAttributeNames: map[string]string{
			"#player": attrPlayerID, "#sid": attrSessionID, "#created": attrPCreated, "#used": attrLastUsed, "#until": attrDeletedUntil,
		},
		ExpressionAttributeValues: values,
	})
	if err == nil {
		return rules.StoredSession(sess), nil
	}
	if !isConditionFailed(err) {
		return service.Session{}, err
	}
	item, err := d.getItem(ctx, tokenPrefix+sess.TokenHash, tokenSK)
	if err != nil {
		return service.Session{}, err
	}
	if item != nil {
		stored, until, err := decodeToken(sess.TokenHash, item)
		if err != nil {
			return service.Session{}, err
		}
		if until == 0 && stored.PlayerID == sess.PlayerID && stored.ID != "" {
			// Adopted already (by a concurrent request): that session
			// stands, listed under its own id.
			if stored.ID == sess.ID {
				return stored, nil
			}
			if err := putEntry(stored.ID); err != nil {
				return service.Session{}, err
			}
			return stored, d.deleteItem(ctx, sessionEntryKey(sess.PlayerID, sess.ID), "", nil, nil)
		}
	}
	if err := d.deleteItem(ctx, sessionEntryKey(sess.PlayerID, sess.ID), "", nil, nil); err != nil {
		return service.Session{}, err
	}
	return service.Session{}, service.ErrNotFound
}

// deleteItem deletes one item, conditioned when cond is set (a failed
// condition is no error).
func (d *Data) deleteItem(ctx context.Context, k map[string]types.AttributeValue, cond string, names map[string]string, values map[string]types.AttributeValue) error {
	in := &dynamodb.DeleteItemInput{TableName: aws.String(d.table), Key: k}
	if cond != "" {
		in.ConditionExpression = aws.String(cond)
		in.ExpressionAttributeNames = names
		in.ExpressionAttributeValues = values
	}
	_, err := d.client.DeleteItem(ctx, in)
	if isConditionFailed(err) {
		return nil
	}
	return err
}

// sessionEntries lists the token hashes of a player's session entries,
// by session id.
func (d *Data) sessionEntries(ctx context.Context, playerID string) (map[string]string, error) {
	items, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(playerPrefix + playerID), ":prefix": s(sessionSKStart)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(items))
	for _, it := range items {
		out[strings.TrimPrefix(str(it, attrSK), sessionSKStart)] = str(it, attrTokenHash)
	}
	return out, nil
}

// batchGet reads items by key (strongly consistent), in batches of 100,
// retrying what DynamoDB leaves unprocessed; missing items are left out.
func (d *Data) batchGet(ctx context.Context, keys []map[string]types.AttributeValue) ([]map[string]types.AttributeValue, error) {
	return batchGetItems(ctx, d.client, d.table, keys, true)
}

// Sessions lists a player's sessions: a query of the entries, then one
// batch read of their tokens. An entry whose token is gone (a revocation
// or a deletion cut short) is left out.
func (d *Data) Sessions(ctx context.Context, playerID string) ([]service.Session, error) {
	out, err := d.sessions(ctx, playerID)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: sessions of player %q: %w", playerID, err)
	}
	return out, nil
}

func (d *Data) sessions(ctx context.Context, playerID string) ([]service.Session, error) {
	if err := rules.ValidateKey("player id", playerID); err != nil {
		return nil, err
	}
	entries, err := d.sessionEntries(ctx, playerID)
	if err != nil {
		return nil, err
	}
	keys := make([]map[string]types.AttributeValue, 0, len(entries))
	for _, hash := range entries {
		keys = append(keys, tokenKey(hash))
	}
	items, err := d.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	var out []service.Session
	for _, it := range items {
		hash := strings.TrimPrefix(str(it, attrPK), tokenPrefix)
		sess, until, err := decodeToken(hash, it)
		if err != nil {
			return nil, err
		}
		if until != 0 || sess.PlayerID != playerID || sess.ID == "" || entries[sess.ID] != hash {
			continue
		}
		out = append(out, sess)
	}
	slices.SortFunc(out, func(a, b service.Session) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// updateSession runs one UpdateItem on the session's token item,
// conditioned on it being that session (and extra); a failed condition is
// checked with a read: a session that is there is no error.
func (d *Data) updateSession(ctx context.Context, sess service.Session, set, extra string, names map[string]string, values map[string]types.AttributeValue) error {
	names["#player"], names["#sid"] = attrPlayerID, attrSessionID
	values[":p"], values[":sid"] = s(sess.PlayerID), s(sess.ID)
	cond := "#player = :p AND #sid = :sid"
	if extra != "" {
		cond += " AND (" + extra + ")"
	}
	_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(d.table), Key: tokenKey(sess.TokenHash), UpdateExpression: aws.String(set),
		ConditionExpression: aws.String(cond), ExpressionAttributeNames: names, ExpressionAttributeValues: values,
	})
	if !isConditionFailed(err) {
		return err
	}
	item, err := d.getItem(ctx, tokenPrefix+sess.TokenHash, tokenSK)
	if err != nil {
		return err
	}
	if item == nil {
		return service.ErrNotFound
	}
	stored, until, err := decodeToken(sess.TokenHash, item)
	if err != nil {
		return err
	}
	if until != 0 || stored.PlayerID != sess.PlayerID || stored.ID != sess.ID {
		return service.ErrNotFound
	}
	return nil // the extra condition held the change back (a later use)
}

// TouchSession sets the token item's lastUsedAt, unless it is later
// already.
func (d *Data) TouchSession(ctx context.Context, sess service.Session, at time.Time) error {
	check := sess
	check.LastUsedAt = at
	err := rules.ValidateSession(check)
	if err == nil {
		err = d.updateSession(ctx, sess, "SET #used = :at", "attribute_not_exists(#used) OR #used < :at",
			map[string]string{"#used": attrLastUsed}, map[string]types.AttributeValue{":at": n(at.UnixMilli())})
	}
	if err != nil {
		return fmt.Errorf("dynamostore: touch session %q: %w", sess.ID, err)
	}
	return nil
}

// LabelSession sets (or, with "", removes) the token item's label.
func (d *Data) LabelSession(ctx context.Context, sess service.Session, label string) error {
	check := sess
	check.Label = label
	err := rules.ValidateSession(check)
	if err == nil {
		names := map[string]string{"#label": attrLabel}
		values := map[string]types.AttributeValue{}
		set := "REMOVE #label"
		if label != "" {
			set, values[":label"] = "SET #label = :label", s(label)
		}
		err = d.updateSession(ctx, sess, set, "", names, values)
	}
	if err != nil {
		return fmt.Errorf("dynamostore: label session %q: %w", sess.ID, err)
	}
	return nil
}

// DeleteSession revokes a session: the entry is read for the token's
// hash, the token item is deleted (returning it, conditioned on being this
// session), then the entry.
func (d *Data) DeleteSession(ctx context.Context, playerID, sessionID string) (service.Session, error) {
	sess, err := d.deleteSession(ctx, playerID, sessionID)
	if err != nil {
		return service.Session{}, fmt.Errorf("dynamostore: delete session %q: %w", sessionID, err)
	}
	return sess, nil
}

func (d *Data) deleteSession(ctx context.Context, playerID, sessionID string) (service.Session, error) {
	if err := rules.ValidateKey("player id", playerID); err != nil {
		return service.Session{}, err
	}
	if err := rules.ValidateKey("session id", sessionID); err != nil {
		return service.Session{}, err
	}
	entry, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.table), Key: sessionEntryKey(playerID, sessionID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return service.Session{}, err
	}
	if entry.Item == nil {
		return service.Session{}, service.ErrNotFound
	}
	hash := str(entry.Item, attrTokenHash)
	out, err := d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(d.table),
		Key:                       tokenKey(hash),
		ConditionExpression:       aws.String("#player = :p AND #sid = :sid"),
		ExpressionAttributeNames:  map[string]string{"#player": attrPlayerID, "#sid": attrSessionID},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(playerID), ":sid": s(sessionID)},
		ReturnValues:              types.ReturnValueAllOld,
	})
	gone := isConditionFailed(err)
	if err != nil && !gone {
		return service.Session{}, err
	}
	if err := d.deleteItem(ctx, sessionEntryKey(playerID, sessionID), "", nil, nil); err != nil {
		return service.Session{}, err
	}
	if gone {
		return service.Session{}, service.ErrNotFound // an entry left by a revocation cut short
	}
	sess, _, err := decodeToken(hash, out.Attributes)
	return sess, err
}

// EndSessions turns the token of every session of the player into a
// tombstone (a PutItem conditioned on the token still being the player's)
// and removes the session's entry, one session at a time.
func (d *Data) EndSessions(ctx context.Context, playerID string, until time.Time) ([]service.Session, error) {
	ended, err := d.endSessions(ctx, playerID, until)
	if err != nil {
		return ended, fmt.Errorf("dynamostore: end the sessions of player %q: %w", playerID, err)
	}
	return ended, nil
}

func (d *Data) endSessions(ctx context.Context, playerID string, until time.Time) ([]service.Session, error) {
	if err := rules.ValidateKey("player id", playerID); err != nil {
		return nil, err
	}
	if err := rules.ValidateTombstone(until); err != nil {
		return nil, err
	}
	entries, err := d.sessionEntries(ctx, playerID)
	if err != nil {
		return nil, err
	}
	var ended []service.Session
	for id, hash := range entries {
		tomb := tokenKey(hash)
		tomb[attrPlayerID] = s(playerID)
		tomb[attrDeletedUntil] = n(rules.ValidUntil(until))
		tomb[attrExpires] = n(service.ExpirySeconds(until))
		err := d.put(ctx, tomb, "#player = :p", map[string]string{"#player": attrPlayerID}, map[string]types.AttributeValue{":p": s(playerID)})
		if err != nil && !isConditionFailed(err) {
			return ended, err
		}
		if err == nil {
			ended = append(ended, service.Session{ID: id, PlayerID: playerID, TokenHash: hash})
		}
		if err := d.deleteItem(ctx, sessionEntryKey(playerID, id), "", nil, nil); err != nil {
			return ended, err
		}
	}
	return ended, nil
}

// DeletePlayer removes everything in the player's partition: each block
// with its twin in the other player's partition, any session left with
// its token, and the player item last.
func (d *Data) DeletePlayer(ctx context.Context, playerID string) error {
	if err := d.deletePlayer(ctx, playerID); err != nil {
		return fmt.Errorf("dynamostore: delete player %q: %w", playerID, err)
	}
	return nil
}

func (d *Data) deletePlayer(ctx context.Context, playerID string) error {
	if err := rules.ValidateKey("player id", playerID); err != nil {
		return err
	}
	items, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(playerPrefix + playerID)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return err
	}
	hasPlayer := false
	for _, it := range items {
		sk := str(it, attrSK)
		switch {
		case sk == playerSK:
			hasPlayer = true
			continue
		case strings.HasPrefix(sk, sessionSKStart):
			err = d.deleteItem(ctx, tokenKey(str(it, attrTokenHash)), "#player = :p AND attribute_not_exists(#until)",
				map[string]string{"#player": attrPlayerID, "#until": attrDeletedUntil}, map[string]types.AttributeValue{":p": s(playerID)})
		case strings.HasPrefix(sk, blockedBySKStart):
			err = d.deleteItem(ctx, key(playerPrefix+strings.TrimPrefix(sk, blockedBySKStart), blockSKStart+playerID), "", nil, nil)
		case strings.HasPrefix(sk, blockSKStart):
			err = d.deleteItem(ctx, key(playerPrefix+strings.TrimPrefix(sk, blockSKStart), blockedBySKStart+playerID), "", nil, nil)
		}
		if err != nil {
			return err
		}
		if err := d.deleteItem(ctx, key(playerPrefix+playerID, sk), "", nil, nil); err != nil {
			return err
		}
	}
	if !hasPlayer {
		return nil
	}
	return d.deleteItem(ctx, key(playerPrefix+playerID, playerSK), "", nil, nil)
}

// Block records the block (kept from its first time: conditioned on not
// existing), then its twin under the blocked player.
func (d *Data) Block(ctx context.Context, playerID, blockedID string, at time.Time) error {
	err := rules.ValidateBlock(playerID, blockedID, at)
	if err == nil {
		item := key(playerPrefix+playerID, blockSKStart+blockedID)
		item[attrBlockedAt] = n(at.UnixMilli())
		err = d.put(ctx, item, "attribute_not_exists(#pk)", map[string]string{"#pk": attrPK}, nil)
		if isConditionFailed(err) {
			err = nil
		}
	}
	if err == nil {
		twin := key(playerPrefix+blockedID, blockedBySKStart+playerID)
		twin[attrBlockedAt] = n(at.UnixMilli())
		err = d.put(ctx, twin, "", nil, nil)
	}
	if err != nil {
		return fmt.Errorf("dynamostore: block %q for %q: %w", blockedID, playerID, err)
	}
	return nil
}

// Unblock removes the block, then its twin.
func (d *Data) Unblock(ctx context.Context, playerID, blockedID string) error {
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = rules.ValidateKey("blocked id", blockedID)
	}
	if err == nil {
		err = d.deleteItem(ctx, key(playerPrefix+playerID, blockSKStart+blockedID), "", nil, nil)
	}
	if err == nil {
		err = d.deleteItem(ctx, key(playerPrefix+blockedID, blockedBySKStart+playerID), "", nil, nil)
	}
	if err != nil {
		return fmt.Errorf("dynamostore: unblock %q for %q: %w", blockedID, playerID, err)
	}
	return nil
}

// Blocks lists the player's blocks: one query of the player's partition.
func (d *Data) Blocks(ctx context.Context, playerID string) ([]service.Block, error) {
	out, err := d.blocks(ctx, playerID)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: blocks of %q: %w", playerID, err)
	}
	return out, nil
}

func (d *Data) blocks(ctx context.Context, playerID string) ([]service.Block, error) {
	if err := rules.ValidateKey("player id", playerID); err != nil {
		return nil, err
	}
	items, err := d.queryAll(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(d.table),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(playerPrefix + playerID), ":prefix": s(blockSKStart)},
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return nil, err
	}
	out := make([]service.Block, 0, len(items))
	for _, it := range items {
		at, ok, err := intAttr(it, attrBlockedAt)
		if err != nil || !ok {
			return nil, &PlayerItemError{PlayerID: playerID, Attribute: attrBlockedAt, Reason: "block without a time"}
		}
		out = append(out, service.Block{PlayerID: strings.TrimPrefix(str(it, attrSK), blockSKStart), CreatedAt: rules.Millis(at)})
	}
	slices.SortFunc(out, func(a, b service.Block) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.PlayerID, b.PlayerID)
	})
	return out, nil
}

// Blocked reads both directions' block items in one batch.
func (d *Data) Blocked(ctx context.Context, a, b string) (bool, error) {
	err := rules.ValidateKey("player id", a)
	if err == nil {
		err = rules.ValidateKey("player id", b)
	}
	var items []map[string]types.AttributeValue
	if err == nil {
		items, err = d.batchGet(ctx, []map[string]types.AttributeValue{
			key(playerPrefix+a, blockSKStart+b), key(playerPrefix+b, blockSKStart+a),
		})
	}
	if err != nil {
		return false, fmt.Errorf("dynamostore: blocked %q, %q: %w", a, b, err)
	}
	return len(items) > 0, nil
}

// maxBatchGet is BatchGetItem's limit of keys per request.
const maxBatchGet = 100

// maxUnprocessedRounds bounds the re-requests of keys BatchGetItem left
// unprocessed (it does so under throttling).
const maxUnprocessedRounds = 8

// batchGetter is the DynamoDB call batchGetItems makes.
type batchGetter interface {
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// batchGetItems reads items of one table by key (strongly consistent or
// not), in batches of maxBatchGet.
func batchGetItems(ctx context.Context, client batchGetter, table string, keys []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	for start := 0; start < len(keys); start += maxBatchGet {
		pending := keys[start:min(start+maxBatchGet, len(keys))]
		for round := 0; len(pending) > 0; round++ {
			if round == maxUnprocessedRounds {
				return nil, fmt.Errorf("BatchGetItem left %d keys unprocessed %d times", len(pending), round)
			}
			if round > 0 {
				select {
				case <-time.After(time.Duration(10<<round) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			res, err := client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				table: {Keys: pending, ConsistentRead: aws.Bool(consistent)},
			}})
			if err != nil {
				return nil, err
			}
			out = append(out, res.Responses[table]...)
			pending = res.UnprocessedKeys[table].Keys
		}
	}
	return out, nil
}
