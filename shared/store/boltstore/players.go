package boltstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// Players, their sessions, blocks, link codes, counters and pairing slots,
// each in its own bucket, created by the first write that needs it:
//
//	players          player id  → JSON playerValue
//	sessions         token hash → JSON sessionValue (a session, or a deleted player's tombstone)
//	player.sessions  lp(player id) | session id → token hash
//	player.tokens    token hash → player id (tokens issued before sessions, until adopted)
//	blocks           lp(player id) | blocked id → varint createdAt (epoch ms)
//	blocked.by       lp(blocked id) | player id → empty (who blocks a player, for its deletion)
//	link.codes       code hash  → varint validUntil (epoch ms) | player id
//	counters       lp(key) | window ns (8 bytes) | window start (8 bytes) → varint count
//	slots          slot key   → varint claimedAt (epoch ms) | varint sweepAfter (epoch ms) | holder
//
// Every write goes through the group-commit writer (store.go), so each
// check and its write are one atomic step, exactly as a conditional write
// in DynamoDB, and is fsynced before it is acknowledged. Expired link
// codes, ended counter windows and abandoned slots are treated as absent
// by the reads and claims; DeleteExpiredData removes them (the sweeper
// runs it), the local stand-in for the data table's TTL; it removes the
// tombstones of deleted players' tokens after their time too.
var (
	playersBucket  = []byte("players")
	tokensBucket   = []byte("player.tokens")
	linkBucket     = []byte("link.codes")
	countersBucket = []byte("counters")
	slotsBucket    = []byte("slots")
)

var _ service.Players = (*Store)(nil)

// playerValue is a player as stored.
type playerValue struct {
	Name          string        `json:"name"`
	Rating        int           `json:"rating"`
	RatedGames    int           `json:"ratedGames"`
	CreatedAt     *int64        `json:"createdAtMs,omitempty"` // epoch ms; absent when zero
	Version       int64         `json:"version"`
	Applied       []string      `json:"applied,omitempty"`
	RatingHistory []ratingValue `json:"ratingHistory,omitempty"`
	RecoveryHash  string        `json:"recoveryHash,omitempty"`
}

// ratingValue is one rating application as stored.
type ratingValue struct {
	GameID string `json:"g"`
	At     int64  `json:"at"` // epoch ms
	Before int    `json:"b"`
	After  int    `json:"a"`
}

func encodePlayer(p service.PlayerRecord) []byte {
	v := playerValue{Name: p.Name, Rating: p.Rating, RatedGames: p.RatedGames, Version: p.Version, Applied: p.Applied, RecoveryHash: p.RecoveryHash}
	if ms, ok := rules.PlayerCreatedAt(p.CreatedAt); ok {
		v.CreatedAt = &ms
	}
	for _, e := range p.RatingHistory {
		v.RatingHistory = append(v.RatingHistory, ratingValue{GameID: e.GameID, At: e.At.UnixMilli(), Before: e.Before, After: e.After})
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("boltstore: encoding a player cannot fail: %v", err))
	}
	return b
}

func decodePlayer(id string, value []byte) (service.PlayerRecord, error) {
	var v playerValue
	if err := json.Unmarshal(value, &v); err != nil {
		return service.PlayerRecord{}, fmt.Errorf("%w: player %q: %v", errCorrupt, id, err)
	}
	if v.Version < 1 {
		return service.PlayerRecord{}, fmt.Errorf("%w: player %q: version %d", errCorrupt, id, v.Version)
	}
	p := service.PlayerRecord{ID: id, Name: v.Name, Rating: v.Rating, RatedGames: v.RatedGames, Version: v.Version, RecoveryHash: v.RecoveryHash}
	if v.CreatedAt != nil {
		p.CreatedAt = rules.Millis(*v.CreatedAt)
	}
	if len(v.Applied) > 0 {
		p.Applied = v.Applied
	}
	for _, e := range v.RatingHistory {
		p.RatingHistory = append(p.RatingHistory, service.RatingEntry{GameID: e.GameID, At: rules.Millis(e.At), Before: e.Before, After: e.After})
	}
	return p, nil
}

// get reads key from bucket, nil when either is missing. The value is only
// valid inside tx.
func get(tx *bolt.Tx, bucket []byte, key string) []byte {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil
	}
	return b.Get([]byte(key))
}

func put(tx *bolt.Tx, bucket []byte, key string, value []byte) error {
	b, err := tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return fmt.Errorf("bucket %s: %w", bucket, err)
	}
	return b.Put([]byte(key), value)
}

func del(tx *bolt.Tx, bucket []byte, key string) error {
	if b := tx.Bucket(bucket); b != nil {
		return b.Delete([]byte(key))
	}
	return nil
}

// run queues a write that decides (outcome) and writes in the group's
// transaction; see writeOp.run.
func (s *Store) run(ctx context.Context, fn func(tx *bolt.Tx) (outcome, err error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.write(ctx, &writeOp{run: fn})
}

// CreatePlayer stores a new player (Version 1) with its first session;
// service.ErrAlreadyExists if the id, the session or the token hash is
// taken. All of it is written in one transaction.
func (s *Store) CreatePlayer(ctx context.Context, p service.PlayerRecord, first service.Session) error {
	err := validateNewPlayer(&p, first)
	if err == nil {
		value := encodePlayer(p)
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if get(tx, playersBucket, p.ID) != nil {
				return fmt.Errorf("player id: %w", service.ErrAlreadyExists), nil
			}
			if refused := sessionTaken(tx, first); refused != nil {
				return refused, nil
			}
			if err := put(tx, playersBucket, p.ID, value); err != nil {
				return nil, err
			}
			return nil, putSession(tx, first)
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: create player %q: %w", p.ID, err)
	}
	return nil
}

// validateNewPlayer checks CreatePlayer's arguments and sets Version 1.
func validateNewPlayer(p *service.PlayerRecord, first service.Session) error {
	if p.Version != 0 && p.Version != 1 {
		return fmt.Errorf("a new player's Version is 1, not %d", p.Version)
	}
	p.Version = 1
	if err := rules.ValidatePlayer(*p); err != nil {
		return err
	}
	if first.PlayerID != p.ID {
		return fmt.Errorf("the first session is of player %q, not %q", first.PlayerID, p.ID)
	}
	return rules.ValidateSession(first)
}

// Player reads a player; service.ErrNotFound if there is none.
func (s *Store) Player(ctx context.Context, id string) (service.PlayerRecord, error) {
	var p service.PlayerRecord
	err := rules.ValidateKey("player id", id)
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) (err error) {
			p, err = readPlayer(tx, id)
			return err
		})
	}
	if err != nil {
		return service.PlayerRecord{}, fmt.Errorf("boltstore: get player %q: %w", id, err)
	}
	return p, nil
}

func readPlayer(tx *bolt.Tx, id string) (service.PlayerRecord, error) {
	value := get(tx, playersBucket, id)
	if value == nil {
		return service.PlayerRecord{}, service.ErrNotFound
	}
	return decodePlayer(id, value)
}

func (s *Store) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(fn)
}

// UpdatePlayer replaces the player if its stored Version is
// expectedVersion; service.ErrVersionConflict otherwise, also when there
// is no such player.
func (s *Store) UpdatePlayer(ctx context.Context, p service.PlayerRecord, expectedVersion int64) error {
	err := rules.ValidatePlayer(p)
	if err == nil {
		value := encodePlayer(p)
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			old := get(tx, playersBucket, p.ID)
			if old == nil {
				return service.ErrVersionConflict, nil
			}
			cur, err := decodePlayer(p.ID, old)
			if err != nil {
				return err, nil
			}
			if cur.Version != expectedVersion {
				return service.ErrVersionConflict, nil
			}
			return nil, put(tx, playersBucket, p.ID, value)
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: update player %q from version %d: %w", p.ID, expectedVersion, err)
	}
	return nil
}

func encodeLinkCode(validUntil int64, playerID string) []byte {
	return append(binary.AppendVarint(nil, validUntil), playerID...)
}

func decodeLinkCode(value []byte) (validUntil int64, playerID string, err error) {
	validUntil, n := binary.Varint(value)
	if n <= 0 || n == len(value) {
		return 0, "", fmt.Errorf("%w: link code value %x", errCorrupt, value)
	}
	return validUntil, string(value[n:]), nil
}

// PutLinkCode stores a link code's hash for a player until expiresAt;
// service.ErrAlreadyExists if the hash is held by a code that has not
// expired (now: the wall clock).
func (s *Store) PutLinkCode(ctx context.Context, codeHash, playerID string, expiresAt time.Time) error {
	err := rules.ValidateLinkCode(codeHash, playerID, expiresAt)
	if err == nil {
		value := encodeLinkCode(rules.ValidUntil(expiresAt), playerID)
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if old := get(tx, linkBucket, codeHash); old != nil {
				validUntil, _, err := decodeLinkCode(old)
				if err != nil {
					return err, nil
				}
				if !rules.Expired(validUntil, time.Now()) {
					return service.ErrAlreadyExists, nil
				}
			}
			return nil, put(tx, linkBucket, codeHash, value)
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: put link code for player %q: %w", playerID, err)
	}
	return nil
}

// ClaimLinkCode uses a link code: it deletes the code and returns its
// player if the code exists and has not expired at now;
// service.ErrNotFound otherwise. Claims are applied one at a time, so of
// concurrent claims exactly one finds the code.
func (s *Store) ClaimLinkCode(ctx context.Context, codeHash string, now time.Time) (string, error) {
	var playerID string
	err := rules.ValidateKey("link code hash", codeHash)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			value := get(tx, linkBucket, codeHash)
			if value == nil {
				return service.ErrNotFound, nil
			}
			validUntil, player, err := decodeLinkCode(value)
			if err != nil {
				return err, nil
			}
			if rules.Expired(validUntil, now) {
				// Left to DeleteExpiredData, as DynamoDB leaves it to TTL.
				return service.ErrNotFound, nil
			}
			playerID = player
			return nil, del(tx, linkBucket, codeHash)
		})
	}
	if err != nil {
		return "", fmt.Errorf("boltstore: claim link code: %w", err)
	}
	return playerID, nil
}

// counterKey is lp(key) | window length | window start, both as 8-byte
// big-endian integers (the start with its sign bit flipped, so keys sort
// by time): windows of different lengths never share a counter.
func counterKey(key string, w rules.Window) string {
	b := lengthPrefixed(key)
	b = binary.BigEndian.AppendUint64(b, uint64(w.Length))
	b = binary.BigEndian.AppendUint64(b, uint64(w.Start)^(1<<63))
	return string(b)
}

// counterWindow reads the window back from a counter key.
func counterWindow(k []byte) (rules.Window, bool) {
	n, size := binary.Uvarint(k)
	if size <= 0 || n > uint64(len(k)) || uint64(len(k)-size) != n+16 {
		return rules.Window{}, false
	}
	rest := k[size+int(n):]
	return rules.Window{
		Length: time.Duration(binary.BigEndian.Uint64(rest)),
		Start:  int64(binary.BigEndian.Uint64(rest[8:]) ^ (1 << 63)),
	}, true
}

// Hit counts one event for key in the fixed window of the given length
// that contains now and returns the window's count and end.
func (s *Store) Hit(ctx context.Context, key string, window time.Duration, now time.Time) (int64, time.Time, error) {
	var count int64
	w, err := rules.WindowAt(window, now)
	if err == nil {
		err = rules.ValidateKey("counter key", key)
	}
	if err == nil {
		k := counterKey(key, w)
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			cur, err := decodeCount(get(tx, countersBucket, k))
			if err != nil {
				return err, nil
			}
			count = cur + 1
			return nil, put(tx, countersBucket, k, binary.AppendVarint(nil, count))
		})
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("boltstore: count %q: %w", key, err)
	}
	return count, w.End(), nil
}

// Count returns the count Hit would have reached for key in the window
// of the given length containing now, without counting (0 when nothing
// was counted there), and when the window ends.
func (s *Store) Count(ctx context.Context, key string, window time.Duration, now time.Time) (int64, time.Time, error) {
	var count int64
	w, err := rules.WindowAt(window, now)
	if err == nil {
		err = rules.ValidateKey("counter key", key)
	}
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) error {
			var err error
			count, err = decodeCount(get(tx, countersBucket, counterKey(key, w)))
			return err
		})
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("boltstore: count of %q: %w", key, err)
	}
	return count, w.End(), nil
}

// decodeCount reads a counter's value (0 when there is none).
func decodeCount(value []byte) (int64, error) {
	if value == nil {
		return 0, nil
	}
	count, n := binary.Varint(value)
	if n != len(value) || count < 1 || count == math.MaxInt64 {
		return 0, fmt.Errorf("%w: counter value %x", errCorrupt, value)
	}
	return count, nil
}

func encodeSlot(claimedAt, sweepAfter int64, holder string) []byte {
	b := binary.AppendVarint(nil, claimedAt)
	b = binary.AppendVarint(b, sweepAfter)
	return append(b, holder...)
}

func decodeSlot(value []byte) (claimedAt, sweepAfter int64, holder string, err error) {
	claimedAt, n := binary.Varint(value)
	if n > 0 {
		var m int
		sweepAfter, m = binary.Varint(value[n:])
		if m > 0 && n+m < len(value) {
			return claimedAt, sweepAfter, string(value[n+m:]), nil
		}
	}
	return 0, 0, "", fmt.Errorf("%w: slot value %x", errCorrupt, value)
}

// ClaimSlot makes value the holder of slot key if the slot is free, its
// holder's claim is more than ttl old at now, or value already holds it
// (the claim is renewed: a retried claim must not lose to itself);
// otherwise it returns the holder and service.ErrSlotTaken.
func (s *Store) ClaimSlot(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (string, error) {
	var holder string // the other holder, on ErrSlotTaken
	err := rules.ValidateSlot(key, value, ttl)
	if err == nil {
		claimed := now.UnixMilli()
		slot := encodeSlot(claimed, claimed+(ttl+rules.SlotGrace).Milliseconds(), value)
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if old := get(tx, slotsBucket, key); old != nil {
				claimedAt, _, cur, err := decodeSlot(old)
				if err != nil {
					return err, nil
				}
				if cur != value && claimedAt >= rules.StaleBefore(ttl, now) {
					holder = cur
					return service.ErrSlotTaken, nil
				}
			}
			return nil, put(tx, slotsBucket, key, slot)
		})
	}
	if err != nil {
		return holder, fmt.Errorf("boltstore: claim slot %q: %w", key, err)
	}
	return value, nil
}

// ReleaseSlot frees slot key if value holds it; otherwise it does nothing.
func (s *Store) ReleaseSlot(ctx context.Context, key, value string) error {
	err := rules.ValidateSlot(key, value, 0)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			old := get(tx, slotsBucket, key)
			if old == nil {
				return nil, nil
			}
			_, _, cur, err := decodeSlot(old)
			if err != nil {
				return err, nil
			}
			if cur != value {
				return nil, nil
			}
			return nil, del(tx, slotsBucket, key)
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: release slot %q: %w", key, err)
	}
	return nil
}

// DeleteExpiredData removes the link codes expired at now, the counters
// whose window ended more than rules.CounterGrace before now, the slots
// abandoned longer than their holder's ttl plus rules.SlotGrace and the
// tombstones of deleted players' tokens past their time, and
// returns how many it removed. Nothing it removes could still change an
// answer: reads and claims already treat all of it as absent.
func (s *Store) DeleteExpiredData(ctx context.Context, now time.Time) (int, error) {
	deleted := 0
	err := s.db.Update(func(tx *bolt.Tx) error {
		sweeps := []struct {
			bucket  []byte
			expired func(k, v []byte) (bool, error)
		}{
			{linkBucket, func(_, v []byte) (bool, error) {
				validUntil, _, err := decodeLinkCode(v)
				return err == nil && rules.Expired(validUntil, now), err
			}},
			{countersBucket, func(k, _ []byte) (bool, error) {
				w, ok := counterWindow(k)
				if !ok {
					return false, fmt.Errorf("%w: counter key %x", errCorrupt, k)
				}
				return !w.End().Add(rules.CounterGrace).After(now), nil
			}},
			{slotsBucket, func(_, v []byte) (bool, error) {
				_, sweepAfter, _, err := decodeSlot(v)
				return err == nil && now.UnixMilli() >= sweepAfter, err
			}},
			{sessionsBucket, func(_, v []byte) (bool, error) { return expiredTombstone(v, now) }},
		}
		for _, sw := range sweeps {
			b := tx.Bucket(sw.bucket)
			if b == nil {
				continue
			}
			// Collect first: deleting under a moving cursor skips items.
			var gone [][]byte
			err := b.ForEach(func(k, v []byte) error {
				if err := ctx.Err(); err != nil {
					return err
				}
				expired, err := sw.expired(k, v)
				if err != nil {
					return fmt.Errorf("%s: %w", sw.bucket, err)
				}
				if expired {
					gone = append(gone, append([]byte(nil), k...))
				}
				return nil
			})
			if err != nil {
				return err
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
		return 0, fmt.Errorf("boltstore: delete expired data: %w", err)
	}
	return deleted, nil
}
