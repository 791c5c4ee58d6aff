package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// The game index: two buckets of keys with empty values, written in the
// transaction that writes the record (apply), so a query never sees the
// index disagree with a committed record.
//
//	index.players  lp(player) | status ('a' or 'f') | sortKey(listedAt, game)
//	index.lobby    lp(room) | sortKey(createdAt, game)
//
// lp(s) is s prefixed with its length as a uvarint, so one player's (or
// room's) keys form a contiguous range no other player's can enter, and
// sortKey (rules.SortKey) orders a range by time, then game id. A player on
// both seats of a game has one key for it. An entry's times and summary
// are read from the record itself, in the same read transaction.
var (
	playersIndexBucket = []byte("index.players")
	lobbyIndexBucket   = []byte("index.lobby")
)

var _ service.GameLister = (*Store)(nil)

// indexKey is one key of the game index.
type indexKey struct {
	bucket []byte
	key    string
}

// lengthPrefixed is lp(s) followed by rest.
func lengthPrefixed(s string, rest ...byte) []byte {
	b := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(s)+len(rest)), uint64(len(s)))
	return append(append(b, s...), rest...)
}

func playerPrefix(player string, finished bool) []byte {
	return lengthPrefixed(player, rules.Status(finished))
}

func lobbyPrefix(room string) []byte { return lengthPrefixed(room) }

// indexKeys are the keys a record's index puts in the index buckets.
func indexKeys(gameID string, ix service.GameIndex) []indexKey {
	if !rules.Indexed(ix) {
		return nil
	}
	var keys []indexKey
	listed := rules.SortKey(ix.ListedAt, gameID)
	for i, p := range ix.Players {
		if p == "" || (i == 1 && p == ix.Players[0]) {
			continue
		}
		keys = append(keys, indexKey{playersIndexBucket, string(playerPrefix(p, ix.Finished)) + listed})
	}
	if ix.LobbyRoom != "" {
		keys = append(keys, indexKey{lobbyIndexBucket, string(lobbyPrefix(ix.LobbyRoom)) + rules.SortKey(ix.CreatedAt, gameID)})
	}
	return keys
}

// moveIndex replaces the index keys of the record's previous version (old)
// by those of the version being written (next), leaving the keys both
// share alone.
func moveIndex(tx *bolt.Tx, gameID string, old, next service.GameIndex) error {
	oldKeys, newKeys := indexKeys(gameID, old), indexKeys(gameID, next)
	in := func(k indexKey, set []indexKey) bool {
		for _, o := range set {
			if bytes.Equal(o.bucket, k.bucket) && o.key == k.key {
				return true
			}
		}
		return false
	}
	var gone []indexKey
	for _, k := range oldKeys {
		if !in(k, newKeys) {
			gone = append(gone, k)
		}
	}
	if err := deleteIndexKeys(tx, gone); err != nil {
		return err
	}
	for _, k := range newKeys {
		if in(k, oldKeys) {
			continue
		}
		b, err := tx.CreateBucketIfNotExists(k.bucket)
		if err != nil {
			return fmt.Errorf("index bucket %s: %w", k.bucket, err)
		}
		if err := b.Put([]byte(k.key), nil); err != nil {
			return fmt.Errorf("index key in %s: %w", k.bucket, err)
		}
	}
	return nil
}

func deleteIndexKeys(tx *bolt.Tx, keys []indexKey) error {
	for _, k := range keys {
		b := tx.Bucket(k.bucket)
		if b == nil {
			continue // never created: nothing was indexed there
		}
		if err := b.Delete([]byte(k.key)); err != nil {
			return fmt.Errorf("index key in %s: %w", k.bucket, err)
		}
	}
	return nil
}

// PlayerGames lists playerID's finished or active games, newest ListedAt
// first (ties: greater game id first), at most limit, after cursor.
func (s *Store) PlayerGames(ctx context.Context, playerID string, finished bool, limit int, cursor string) ([]service.IndexEntry, string, error) {
	if err := rules.ValidateQuery("player id", playerID, limit); err != nil {
		return nil, "", fmt.Errorf("boltstore: games of player %q: %w", playerID, err)
	}
	entries, next, err := s.listIndex(ctx, playersIndexBucket, playerPrefix(playerID, finished), rules.CursorPlayerGames, true, limit, cursor)
	if err != nil {
		return nil, "", fmt.Errorf("boltstore: games of player %q: %w", playerID, err)
	}
	return entries, next, nil
}

// Lobby lists the games listed in room, oldest CreatedAt first (ties:
// smaller game id first), at most limit, after cursor.
func (s *Store) Lobby(ctx context.Context, room string, limit int, cursor string) ([]service.IndexEntry, string, error) {
	if err := rules.ValidateQuery("room", room, limit); err != nil {
		return nil, "", fmt.Errorf("boltstore: lobby %q: %w", room, err)
	}
	entries, next, err := s.listIndex(ctx, lobbyIndexBucket, lobbyPrefix(room), rules.CursorLobby, false, limit, cursor)
	if err != nil {
		return nil, "", fmt.Errorf("boltstore: lobby %q: %w", room, err)
	}
	return entries, next, nil
}

// listIndex reads one page of the keys under prefix in bucket (greatest
// first when descending), strictly after the cursor's sort key. The next
// cursor is the sort key of the page's last entry, given only when another
// key follows it.
func (s *Store) listIndex(ctx context.Context, bucket, prefix []byte, kind byte, descending bool, limit int, cursor string) ([]service.IndexEntry, string, error) {
	var after string
	if cursor != "" {
		var err error
		if after, err = rules.DecodeCursor(kind, cursor); err != nil {
			return nil, "", err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	var entries []service.IndexEntry
	var next, lastSortKey string
	err := s.db.View(func(tx *bolt.Tx) error {
		idx := tx.Bucket(bucket)
		if idx == nil {
			return nil // nothing was ever indexed
		}
		games := tx.Bucket(gamesBucket)
		c := idx.Cursor()
		var k []byte
		switch {
		case descending && after == "":
			// Sort keys start with a digit, so every key of the range is
			// below prefix+0xff.
			k = seekBefore(c, append(bytes.Clone(prefix), 0xff))
		case descending:
			k = seekBefore(c, append(bytes.Clone(prefix), after...))
		case after == "":
			k, _ = c.Seek(prefix)
		default:
			start := append(bytes.Clone(prefix), after...)
			if k, _ = c.Seek(start); bytes.Equal(k, start) {
				k, _ = c.Next()
			}
		}
		step := c.Next
		if descending {
			step = c.Prev
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = step() {
			sortKey := string(k[len(prefix):])
			if len(entries) == limit {
				next = rules.EncodeCursor(kind, lastSortKey)
				break
			}
			sorted, gameID, err := rules.ParseSortKey(sortKey)
			if err != nil {
				return fmt.Errorf("%w: index key: %v", errCorrupt, err)
			}
			value := games.Get([]byte(gameID))
			if value == nil {
				return fmt.Errorf("%w: index lists game %q, which has no record", errCorrupt, gameID)
			}
			h, err := decodeHeader(value)
			if err != nil {
				return fmt.Errorf("game %q: %w", gameID, err)
			}
			entries = append(entries, service.IndexEntry{
				GameID:    gameID,
				CreatedAt: h.index.CreatedAt,
				SortedAt:  rules.Millis(sorted),
				Summary:   bytes.Clone(h.index.Summary),
			})
			lastSortKey = sortKey
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	return entries, next, nil
}

// seekBefore positions c on the greatest key below target (nil if none).
func seekBefore(c *bolt.Cursor, target []byte) []byte {
	k, _ := c.Seek(target) // the least key at or above target
	if k == nil {
		k, _ = c.Last()
		return k
	}
	k, _ = c.Prev()
	return k
}
