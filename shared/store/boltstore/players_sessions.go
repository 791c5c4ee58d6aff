package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// Sessions, blocks and the deletion of a player (SPEC §16.2). A session is
// its token's entry in the sessions bucket (keyed by the token's hash, so
// that authenticating a request is one read); player.sessions lists a
// player's sessions by id. A deleted player's tokens stay in the sessions
// bucket as tombstones until their time (DeleteExpiredData removes them),
// so that a retried deletion is told apart from any other request.
var (
	sessionsBucket       = []byte("sessions")
	playerSessionsBucket = []byte("player.sessions")
	blocksBucket         = []byte("blocks")
	blockedByBucket      = []byte("blocked.by")
)

// sessionValue is a token's entry: a session, or (DeletedUntil set) the
// tombstone of a deleted player's token.
type sessionValue struct {
	Player       string `json:"player"`
	ID           string `json:"id,omitempty"`
	Label        string `json:"label,omitempty"`
	CreatedAt    int64  `json:"createdAtMs,omitempty"`
	LastUsedAt   int64  `json:"lastUsedAtMs,omitempty"`
	DeletedUntil int64  `json:"deletedUntilMs,omitempty"`
}

func encodeSession(s service.Session) []byte {
	return mustJSON(sessionValue{Player: s.PlayerID, ID: s.ID, Label: s.Label,
		CreatedAt: rules.MillisOf(s.CreatedAt), LastUsedAt: rules.MillisOf(s.LastUsedAt)})
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("boltstore: encoding %T cannot fail: %v", v, err))
	}
	return b
}

func decodeSession(tokenHash string, value []byte) (sessionValue, service.Session, error) {
	var v sessionValue
	if err := json.Unmarshal(value, &v); err != nil || v.Player == "" || (v.ID == "") == (v.DeletedUntil == 0) {
		return sessionValue{}, service.Session{}, fmt.Errorf("%w: session of token %q: %s", errCorrupt, tokenHash, value)
	}
	return v, service.Session{ID: v.ID, PlayerID: v.Player, TokenHash: tokenHash, Label: v.Label,
		CreatedAt: rules.TimeOf(v.CreatedAt), LastUsedAt: rules.TimeOf(v.LastUsedAt)}, nil
}

func playerSessionKey(playerID, sessionID string) string {
	return string(lengthPrefixed(playerID, []byte(sessionID)...))
}

// sessionTaken is the refusal of a new session whose token hash or id is
// taken (nil when both are free).
func sessionTaken(tx *bolt.Tx, s service.Session) error {
	if get(tx, sessionsBucket, s.TokenHash) != nil || get(tx, tokensBucket, s.TokenHash) != nil {
		return fmt.Errorf("token hash: %w", service.ErrAlreadyExists)
	}
	if get(tx, playerSessionsBucket, playerSessionKey(s.PlayerID, s.ID)) != nil {
		return fmt.Errorf("session id: %w", service.ErrAlreadyExists)
	}
	return nil
}

func putSession(tx *bolt.Tx, s service.Session) error {
	if err := put(tx, sessionsBucket, s.TokenHash, encodeSession(s)); err != nil {
		return err
	}
	return put(tx, playerSessionsBucket, playerSessionKey(s.PlayerID, s.ID), []byte(s.TokenHash))
}

// PlayerByToken reads the player a token hash belongs to and its session
// (a token issued before sessions comes with a session without an id);
// service.ErrNotFound if the hash is unknown, a *service.DeletedError for
// the tombstone of a deleted player's token.
func (s *Store) PlayerByToken(ctx context.Context, tokenHash string) (service.PlayerRecord, service.Session, error) {
	var (
		p    service.PlayerRecord
		sess service.Session
	)
	err := rules.ValidateKey("token hash", tokenHash)
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) error {
			var err error
			if value := get(tx, sessionsBucket, tokenHash); value != nil {
				var v sessionValue
				if v, sess, err = decodeSession(tokenHash, value); err != nil {
					return err
				}
				if v.DeletedUntil != 0 {
					return &service.DeletedError{PlayerID: v.Player}
				}
			} else if id := get(tx, tokensBucket, tokenHash); id != nil {
				sess = service.Session{PlayerID: string(id), TokenHash: tokenHash}
			} else {
				return service.ErrNotFound
			}
			p, err = readPlayer(tx, sess.PlayerID)
			return err
		})
	}
	if err != nil {
		return service.PlayerRecord{}, service.Session{}, fmt.Errorf("boltstore: player of a token: %w", err)
	}
	return p, sess, nil
}

// AddSession adds a session for an existing player.
func (s *Store) AddSession(ctx context.Context, sess service.Session) error {
	err := rules.ValidateSession(sess)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if get(tx, playersBucket, sess.PlayerID) == nil {
				return service.ErrNotFound, nil
			}
			if refused := sessionTaken(tx, sess); refused != nil {
				return refused, nil
			}
			return nil, putSession(tx, sess)
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: add session for player %q: %w", sess.PlayerID, err)
	}
	return nil
}

// AdoptToken moves a token issued before sessions into the sessions
// bucket as sess (or returns the session it already has).
func (s *Store) AdoptToken(ctx context.Context, sess service.Session) (service.Session, error) {
	out := rules.StoredSession(sess)
	err := rules.ValidateSession(sess)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if value := get(tx, sessionsBucket, sess.TokenHash); value != nil {
				v, stored, err := decodeSession(sess.TokenHash, value)
				if err != nil {
					return err, nil
				}
				if v.DeletedUntil != 0 || stored.PlayerID != sess.PlayerID {
					return service.ErrNotFound, nil
				}
				out = stored
				return nil, nil
			}
			if id := get(tx, tokensBucket, sess.TokenHash); id == nil || string(id) != sess.PlayerID {
				return service.ErrNotFound, nil
			}
			if get(tx, playerSessionsBucket, playerSessionKey(sess.PlayerID, sess.ID)) != nil {
				return fmt.Errorf("session id: %w", service.ErrAlreadyExists), nil
			}
			if err := del(tx, tokensBucket, sess.TokenHash); err != nil {
				return nil, err
			}
			return nil, putSession(tx, sess)
		})
	}
	if err != nil {
		return service.Session{}, fmt.Errorf("boltstore: adopt a token of player %q: %w", sess.PlayerID, err)
	}
	return out, nil
}

// playerSessions reads every session of a player, oldest first.
func playerSessions(tx *bolt.Tx, playerID string) ([]service.Session, error) {
	var out []service.Session
	b := tx.Bucket(playerSessionsBucket)
	if b == nil {
		return nil, nil
	}
	prefix := lengthPrefixed(playerID)
	c := b.Cursor()
	for k, hash := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, hash = c.Next() {
		value := get(tx, sessionsBucket, string(hash))
		if value == nil {
			return nil, fmt.Errorf("%w: session %q of player %q has no token", errCorrupt, k[len(prefix):], playerID)
		}
		_, sess, err := decodeSession(string(hash), value)
		if err != nil {
			return nil, err
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

// Sessions lists a player's sessions, oldest first.
func (s *Store) Sessions(ctx context.Context, playerID string) ([]service.Session, error) {
	var out []service.Session
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) (err error) {
			out, err = playerSessions(tx, playerID)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: sessions of player %q: %w", playerID, err)
	}
	return out, nil
}

// changeSession applies edit to a stored session (found by its token, and
// still of that player and id) in one write; service.ErrNotFound if there
// is no such session. edit reports whether it changed anything.
func (s *Store) changeSession(ctx context.Context, want service.Session, edit func(*service.Session) bool) error {
	return s.run(ctx, func(tx *bolt.Tx) (error, error) {
		value := get(tx, sessionsBucket, want.TokenHash)
		if value == nil {
			return service.ErrNotFound, nil
		}
		v, sess, err := decodeSession(want.TokenHash, value)
		if err != nil {
			return err, nil
		}
		if v.DeletedUntil != 0 || sess.PlayerID != want.PlayerID || sess.ID != want.ID {
			return service.ErrNotFound, nil
		}
		if !edit(&sess) {
			return nil, nil
		}
		return nil, put(tx, sessionsBucket, sess.TokenHash, encodeSession(sess))
	})
}

// TouchSession moves a session's LastUsedAt forward to at.
func (s *Store) TouchSession(ctx context.Context, sess service.Session, at time.Time) error {
	check := sess
	check.LastUsedAt = at
	err := rules.ValidateSession(check)
	if err == nil {
		err = s.changeSession(ctx, sess, func(stored *service.Session) bool {
			if !at.After(stored.LastUsedAt) {
				return false
			}
			stored.LastUsedAt = at
			return true
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: touch session %q: %w", sess.ID, err)
	}
	return nil
}

// LabelSession sets a session's label.
func (s *Store) LabelSession(ctx context.Context, sess service.Session, label string) error {
	check := sess
	check.Label = label
	err := rules.ValidateSession(check)
	if err == nil {
		err = s.changeSession(ctx, sess, func(stored *service.Session) bool {
			stored.Label = label
			return true
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: label session %q: %w", sess.ID, err)
	}
	return nil
}

// DeleteSession revokes a session: its token and its entry go in one
// transaction.
func (s *Store) DeleteSession(ctx context.Context, playerID, sessionID string) (service.Session, error) {
	var out service.Session
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = rules.ValidateKey("session id", sessionID)
	}
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			key := playerSessionKey(playerID, sessionID)
			hash := get(tx, playerSessionsBucket, key)
			if hash == nil {
				return service.ErrNotFound, nil
			}
			value := get(tx, sessionsBucket, string(hash))
			if value == nil {
				return fmt.Errorf("%w: session %q has no token", errCorrupt, sessionID), nil
			}
			_, sess, err := decodeSession(string(hash), value)
			if err != nil {
				return err, nil
			}
			out = sess
			if err := del(tx, sessionsBucket, string(hash)); err != nil {
				return nil, err
			}
			return nil, del(tx, playerSessionsBucket, key)
		})
	}
	if err != nil {
		return service.Session{}, fmt.Errorf("boltstore: delete session %q: %w", sessionID, err)
	}
	return out, nil
}

// EndSessions turns every token of the player (sessions, and tokens issued
// before sessions) into a tombstone until until, in one transaction.
func (s *Store) EndSessions(ctx context.Context, playerID string, until time.Time) ([]service.Session, error) {
	var ended []service.Session
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = rules.ValidateTombstone(until)
	}
	if err == nil {
		tomb := mustJSON(sessionValue{Player: playerID, DeletedUntil: rules.ValidUntil(until)})
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			ended = nil
			sessions, err := playerSessions(tx, playerID)
			if err != nil {
				return err, nil
			}
			legacy, err := legacyTokens(tx, playerID)
			if err != nil {
				return err, nil
			}
			for _, sess := range sessions {
				if err := put(tx, sessionsBucket, sess.TokenHash, tomb); err != nil {
					return nil, err
				}
				if err := del(tx, playerSessionsBucket, playerSessionKey(playerID, sess.ID)); err != nil {
					return nil, err
				}
			}
			for _, hash := range legacy {
				if err := del(tx, tokensBucket, hash); err != nil {
					return nil, err
				}
				if err := put(tx, sessionsBucket, hash, tomb); err != nil {
					return nil, err
				}
				sessions = append(sessions, service.Session{PlayerID: playerID, TokenHash: hash})
			}
			ended = sessions
			return nil, nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: end the sessions of player %q: %w", playerID, err)
	}
	return ended, nil
}

// legacyTokens lists the hashes of the player's tokens issued before
// sessions (a scan of their bucket, which only shrinks).
func legacyTokens(tx *bolt.Tx, playerID string) ([]string, error) {
	var out []string
	b := tx.Bucket(tokensBucket)
	if b == nil {
		return nil, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		if string(v) == playerID {
			out = append(out, string(k))
		}
		return nil
	})
	return out, err
}

// DeletePlayer removes the player, its sessions (tokens not yet ended are
// deleted outright), its blocks both ways and its link codes, in one
// transaction. Tombstones stay until their time.
func (s *Store) DeletePlayer(ctx context.Context, playerID string) error {
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			sessions, err := playerSessions(tx, playerID)
			if err != nil {
				return err, nil
			}
			legacy, err := legacyTokens(tx, playerID)
			if err != nil {
				return err, nil
			}
			codes, err := linkCodesOf(tx, playerID)
			if err != nil {
				return err, nil
			}
			for _, sess := range sessions {
				if err := del(tx, sessionsBucket, sess.TokenHash); err != nil {
					return nil, err
				}
				if err := del(tx, playerSessionsBucket, playerSessionKey(playerID, sess.ID)); err != nil {
					return nil, err
				}
			}
			for _, hash := range legacy {
				if err := del(tx, tokensBucket, hash); err != nil {
					return nil, err
				}
			}
			for _, hash := range codes {
				if err := del(tx, linkBucket, hash); err != nil {
					return nil, err
				}
			}
			// Blocks both ways: the player's own, and every block of it.
			for _, pair := range []struct{ mine, theirs []byte }{{blocksBucket, blockedByBucket}, {blockedByBucket, blocksBucket}} {
				others, err := keysUnder(tx, pair.mine, playerID)
				if err != nil {
					return nil, err
				}
				for _, other := range others {
					if err := del(tx, pair.mine, string(lengthPrefixed(playerID, []byte(other)...))); err != nil {
						return nil, err
					}
					if err := del(tx, pair.theirs, string(lengthPrefixed(other, []byte(playerID)...))); err != nil {
						return nil, err
					}
				}
			}
			return nil, del(tx, playersBucket, playerID)
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: delete player %q: %w", playerID, err)
	}
	return nil
}

// linkCodesOf lists the hashes of the player's link codes.
func linkCodesOf(tx *bolt.Tx, playerID string) ([]string, error) {
	var out []string
	b := tx.Bucket(linkBucket)
	if b == nil {
		return nil, nil
	}
	err := b.ForEach(func(k, v []byte) error {
		_, player, err := decodeLinkCode(v)
		if err != nil {
			return err
		}
		if player == playerID {
			out = append(out, string(k))
		}
		return nil
	})
	return out, err
}

// keysUnder lists what follows lp(owner) in the keys of bucket.
func keysUnder(tx *bolt.Tx, bucket []byte, owner string) ([]string, error) {
	b := tx.Bucket(bucket)
	if b == nil {
		return nil, nil
	}
	var out []string
	prefix := lengthPrefixed(owner)
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		out = append(out, string(k[len(prefix):]))
	}
	return out, nil
}

// Block records that playerID blocks blockedID (the first time is kept).
func (s *Store) Block(ctx context.Context, playerID, blockedID string, at time.Time) error {
	err := rules.ValidateBlock(playerID, blockedID, at)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			key := string(lengthPrefixed(playerID, []byte(blockedID)...))
			if get(tx, blocksBucket, key) != nil {
				return nil, nil
			}
			if err := put(tx, blocksBucket, key, binary.AppendVarint(nil, at.UnixMilli())); err != nil {
				return nil, err
			}
			return nil, put(tx, blockedByBucket, string(lengthPrefixed(blockedID, []byte(playerID)...)), []byte{})
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: block %q for %q: %w", blockedID, playerID, err)
	}
	return nil
}

// Unblock removes a block.
func (s *Store) Unblock(ctx context.Context, playerID, blockedID string) error {
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = rules.ValidateKey("blocked id", blockedID)
	}
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if err := del(tx, blocksBucket, string(lengthPrefixed(playerID, []byte(blockedID)...))); err != nil {
				return nil, err
			}
			return nil, del(tx, blockedByBucket, string(lengthPrefixed(blockedID, []byte(playerID)...)))
		})
	}
	if err != nil {
		return fmt.Errorf("boltstore: unblock %q for %q: %w", blockedID, playerID, err)
	}
	return nil
}

// Blocks lists the players playerID blocks, oldest first.
func (s *Store) Blocks(ctx context.Context, playerID string) ([]service.Block, error) {
	var out []service.Block
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) error {
			others, err := keysUnder(tx, blocksBucket, playerID)
			if err != nil {
				return err
			}
			for _, other := range others {
				value := get(tx, blocksBucket, string(lengthPrefixed(playerID, []byte(other)...)))
				ms, n := binary.Varint(value)
				if n != len(value) || n == 0 {
					return fmt.Errorf("%w: block value %x", errCorrupt, value)
				}
				out = append(out, service.Block{PlayerID: other, CreatedAt: rules.Millis(ms)})
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: blocks of %q: %w", playerID, err)
	}
	slices.SortFunc(out, func(a, b service.Block) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.PlayerID, b.PlayerID)
	})
	return out, nil
}

// Blocked reports whether either player blocks the other.
func (s *Store) Blocked(ctx context.Context, a, b string) (bool, error) {
	var blocked bool
	err := rules.ValidateKey("player id", a)
	if err == nil {
		err = rules.ValidateKey("player id", b)
	}
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) error {
			blocked = get(tx, blocksBucket, string(lengthPrefixed(a, []byte(b)...))) != nil ||
				get(tx, blocksBucket, string(lengthPrefixed(b, []byte(a)...))) != nil
			return nil
		})
	}
	if err != nil {
		return false, fmt.Errorf("boltstore: blocked %q, %q: %w", a, b, err)
	}
	return blocked, nil
}

// expiredTombstone reports a sessions bucket value that is a tombstone
// past its time.
func expiredTombstone(value []byte, now time.Time) (bool, error) {
	var v sessionValue
	if err := json.Unmarshal(value, &v); err != nil {
		return false, fmt.Errorf("%w: session value %q", errCorrupt, value)
	}
	return v.DeletedUntil != 0 && rules.Expired(v.DeletedUntil, now), nil
}
