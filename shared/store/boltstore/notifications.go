package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// Inboxes (service.NotificationStore), each in its own bucket, created by
// the first write that needs it:
//
//	inbox        lp(player id) | notification id → JSON inboxValue
//	inbox.read   player id                       → the read mark (an id)
//	push.claims  lp(player id) | key             → varint claimedAt (ms) | varint sweepAfter (ms) | id
//
// A player's entries are one key range, in id order, so a page is a
// backward cursor walk. DeleteExpiredNotifications (run by the sweeper)
// removes entries past their ExpiresAt and claims past their window, the
// local stand-in for the data table's TTL.
var (
	inboxBucket      = []byte("inbox")
	inboxReadBucket  = []byte("inbox.read")
	pushClaimsBucket = []byte("push.claims")
)

// claimGrace is how long past its window a push claim is kept before the
// sweeper removes it.
const claimGrace = time.Minute

type inboxValue struct {
	At        int64  `json:"atMs"`
	Body      []byte `json:"body"`
	Pushed    bool   `json:"pushed,omitempty"`
	ExpiresAt int64  `json:"expiresAt"` // epoch seconds
}

func inboxKey(playerID, id string) []byte { return lengthPrefixed(playerID, []byte(id)...) }

func encodeInbox(n service.NotificationRecord) []byte {
	b, err := json.Marshal(inboxValue{At: n.At.UnixMilli(), Body: n.Body, Pushed: n.Pushed, ExpiresAt: service.ExpirySeconds(n.ExpiresAt)})
	if err != nil {
		panic(fmt.Sprintf("boltstore: encoding an inbox entry cannot fail: %v", err))
	}
	return b
}

func decodeInbox(playerID, id string, value []byte) (service.NotificationRecord, error) {
	var v inboxValue
	if err := json.Unmarshal(value, &v); err != nil {
		return service.NotificationRecord{}, fmt.Errorf("%w: notification %q of %q: %v", errCorrupt, id, playerID, err)
	}
	return service.NotificationRecord{PlayerID: playerID, ID: id, At: rules.Millis(v.At), Body: v.Body, Pushed: v.Pushed,
		ExpiresAt: time.Unix(v.ExpiresAt, 0).UTC()}, nil
}

// AddNotification stores n unless its player's inbox has its id.
func (s *Store) AddNotification(ctx context.Context, n service.NotificationRecord) (service.NotificationRecord, bool, error) {
	stored, added := rules.StoredNotification(n), false
	err := rules.ValidateNotification(n)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if old := get(tx, inboxBucket, string(inboxKey(n.PlayerID, n.ID))); old != nil {
				var err error
				stored, err = decodeInbox(n.PlayerID, n.ID, old)
				return err, nil
			}
			added = true
			return nil, put(tx, inboxBucket, string(inboxKey(n.PlayerID, n.ID)), encodeInbox(n))
		})
	}
	if err != nil {
		return service.NotificationRecord{}, false, fmt.Errorf("boltstore: add notification for %q: %w", n.PlayerID, err)
	}
	return stored, added, nil
}

// SetPushed marks an entry pushed; service.ErrNotFound if there is none.
func (s *Store) SetPushed(ctx context.Context, playerID, id string) error {
	err := validateEntry(playerID, id)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			k := string(inboxKey(playerID, id))
			old := get(tx, inboxBucket, k)
			if old == nil {
				return service.ErrNotFound, nil
			}
			n, err := decodeInbox(playerID, id, old)
			if err != nil {
				return err, nil
			}
			n.Pushed = true
			return nil, put(tx, inboxBucket, k, encodeInbox(n))
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: mark notification pushed: %w", err)
	}
	return nil
}

func validateEntry(playerID, id string) error {
	if err := rules.ValidateKey("player id", playerID); err != nil {
		return err
	}
	return rules.ValidateKey("notification id", id)
}

// Notification reads one entry; service.ErrNotFound.
func (s *Store) Notification(ctx context.Context, playerID, id string) (service.NotificationRecord, error) {
	var n service.NotificationRecord
	err := validateEntry(playerID, id)
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) error {
			value := get(tx, inboxBucket, string(inboxKey(playerID, id)))
			if value == nil {
				return service.ErrNotFound
			}
			var err error
			n, err = decodeInbox(playerID, id, value)
			return err
		})
	}
	if err != nil {
		return service.NotificationRecord{}, fmt.Errorf("boltstore: get notification: %w", err)
	}
	return n, nil
}

// Notifications lists a player's entries below before, newest first.
func (s *Store) Notifications(ctx context.Context, playerID, before string, limit int) ([]service.NotificationRecord, error) {
	out := []service.NotificationRecord{}
	err := rules.ValidatePage(playerID, before, limit)
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) error {
			b := tx.Bucket(inboxBucket)
			if b == nil {
				return nil
			}
			prefix := lengthPrefixed(playerID)
			c := b.Cursor()
			// The cursor is put past the newest entry wanted, then walked
			// back (the values come with the steps back).
			var k, v []byte
			if before == "" {
				// Past the player's last id: every id is text, below 0xff.
				k, _ = c.Seek(append(bytes.Clone(prefix), 0xff))
			} else {
				k, _ = c.Seek(inboxKey(playerID, before))
			}
			if k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
			for ; k != nil && bytes.HasPrefix(k, prefix) && len(out) < limit; k, v = c.Prev() {
				id := string(k[len(prefix):])
				if before != "" && id >= before {
					continue
				}
				n, err := decodeInbox(playerID, id, v)
				if err != nil {
					return err
				}
				out = append(out, n)
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: notifications of %q: %w", playerID, err)
	}
	return out, nil
}

// MarkRead moves the player's read mark forward to upTo.
func (s *Store) MarkRead(ctx context.Context, playerID, upTo string) error {
	err := validateEntry(playerID, upTo)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if cur := get(tx, inboxReadBucket, playerID); string(cur) >= upTo {
				return nil, nil
			}
			return nil, put(tx, inboxReadBucket, playerID, []byte(upTo))
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: mark notifications read: %w", err)
	}
	return nil
}

// ReadUpTo is the player's read mark.
func (s *Store) ReadUpTo(ctx context.Context, playerID string) (string, error) {
	var mark string
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) error {
			mark = string(get(tx, inboxReadBucket, playerID))
			return nil
		})
	}
	if err != nil {
		return "", fmt.Errorf("boltstore: read mark: %w", err)
	}
	return mark, nil
}

func encodeClaim(claimedAt, sweepAfter int64, id string) []byte {
	b := binary.AppendVarint(nil, claimedAt)
	b = binary.AppendVarint(b, sweepAfter)
	return append(b, id...)
}

func decodeClaim(v []byte) (claimedAt, sweepAfter int64, id string, err error) {
	claimedAt, n := binary.Varint(v)
	if n <= 0 {
		return 0, 0, "", fmt.Errorf("%w: push claim %x", errCorrupt, v)
	}
	sweepAfter, m := binary.Varint(v[n:])
	if m <= 0 {
		return 0, 0, "", fmt.Errorf("%w: push claim %x", errCorrupt, v)
	}
	return claimedAt, sweepAfter, string(v[n+m:]), nil
}

// ClaimPush grants the claim of key to id when it is free, id's, or older
// than window.
func (s *Store) ClaimPush(ctx context.Context, playerID, key, id string, window time.Duration, now time.Time) (bool, error) {
	granted := false
	err := rules.ValidatePushClaim(playerID, key, id, window)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			k := string(lengthPrefixed(playerID, []byte(key)...))
			holder, claimedAt := "", int64(0)
			if v := get(tx, pushClaimsBucket, k); v != nil {
				at, _, h, err := decodeClaim(v)
				if err != nil {
					return err, nil
				}
				holder, claimedAt = h, at
			}
			if !rules.PushClaimed(holder, claimedAt, id, window, now) {
				return nil, nil
			}
			granted = true // renewed when id holds it already, as the data table does
			return nil, put(tx, pushClaimsBucket, k, encodeClaim(now.UnixMilli(), now.Add(window+claimGrace).UnixMilli(), id))
		})
	}
	if err != nil {
		return false, fmt.Errorf("boltstore: claim push: %w", err)
	}
	return granted, nil
}

// DeleteInbox removes the player's entries, read mark and claims.
func (s *Store) DeleteInbox(ctx context.Context, playerID string) error {
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			prefix := lengthPrefixed(playerID)
			for _, bucket := range [][]byte{inboxBucket, pushClaimsBucket} {
				if err := deletePrefix(tx, bucket, prefix); err != nil {
					return nil, err
				}
			}
			return nil, del(tx, inboxReadBucket, playerID)
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: delete inbox of %q: %w", playerID, err)
	}
	return nil
}

// deletePrefix removes every key of bucket that starts with prefix.
func deletePrefix(tx *bolt.Tx, bucket, prefix []byte) error {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	var gone [][]byte
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		gone = append(gone, bytes.Clone(k))
	}
	for _, k := range gone {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// DeleteExpiredNotifications removes inbox entries past their ExpiresAt
// and push claims past their window at now, and returns how many.
func (s *Store) DeleteExpiredNotifications(ctx context.Context, now time.Time) (int, error) {
	deleted := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		sweeps := []struct {
			bucket  []byte
			expired func(v []byte) (bool, error)
		}{
			{inboxBucket, func(v []byte) (bool, error) {
				var iv inboxValue
				if err := json.Unmarshal(v, &iv); err != nil {
					return false, fmt.Errorf("%w: inbox entry: %v", errCorrupt, err)
				}
				return now.Unix() >= iv.ExpiresAt, nil
			}},
			{pushClaimsBucket, func(v []byte) (bool, error) {
				_, sweepAfter, _, err := decodeClaim(v)
				return err == nil && now.UnixMilli() >= sweepAfter, err
			}},
		}
		for _, sw := range sweeps {
			b := tx.Bucket(sw.bucket)
			if b == nil {
				continue
			}
			var gone [][]byte
			err := b.ForEach(func(k, v []byte) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				expired, err := sw.expired(v)
				if err != nil {
					return err
				}
				if expired {
					gone = append(gone, bytes.Clone(k))
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("%s: %w", sw.bucket, err)
			}
			for _, k := range gone {
				if err := b.Delete(k); err != nil {
					return err
				}
			}
			deleted += len(gone)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("boltstore: expire notifications: %w", err)
	}
	return deleted, nil
}
