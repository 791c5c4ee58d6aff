package boltstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/apikey"
)

// API keys (apikey.Store) in the bucket "apikeys", created by the first
// key written: id → the record as JSON (the hash of the key, never the
// key). Key writes are rare (the key command, while the server is
// stopped), so they run in transactions of their own rather than through
// the games' group commit; bbolt orders them with it, and each commits
// with fsync before returning, as every write here does.

var _ apikey.Store = (*Store)(nil)

var apiKeysBucket = []byte("apikeys")

// apiKeyJSON is a record as stored. Times are epoch milliseconds, as in
// the data table.
type apiKeyJSON struct {
	Name      string `json:"name"`
	Hash      string `json:"hash"`
	PerSecond int64  `json:"perSecond"`
	PerDay    int64  `json:"perDay"`
	InFlight  int64  `json:"inFlight,omitempty"`
	CreatedAt int64  `json:"createdAt"`
	RevokedAt int64  `json:"revokedAt,omitempty"`
}

func encodeAPIKey(rec apikey.Record) ([]byte, error) {
	v := apiKeyJSON{Name: rec.Name, Hash: rec.Hash, PerSecond: rec.Limits.PerSecond, PerDay: rec.Limits.PerDay, InFlight: rec.Limits.InFlight, CreatedAt: rec.CreatedAt.UnixMilli()}
	if rec.Revoked() {
		v.RevokedAt = rec.RevokedAt.UnixMilli()
	}
	return json.Marshal(v)
}

// decodeAPIKey reads a stored record; a value that does not decode to a
// valid record is an error (it must not authenticate anyone).
func decodeAPIKey(id string, value []byte) (apikey.Record, error) {
	var v apiKeyJSON
	if err := json.Unmarshal(value, &v); err != nil {
		return apikey.Record{}, fmt.Errorf("API key %s: stored value: %w", id, err)
	}
	rec := apikey.Record{
		ID: id, Name: v.Name, Hash: v.Hash,
		Limits:    apikey.Limits{PerSecond: v.PerSecond, PerDay: v.PerDay, InFlight: v.InFlight},
		CreatedAt: time.UnixMilli(v.CreatedAt).UTC(),
	}
	if v.RevokedAt != 0 {
		rec.RevokedAt = time.UnixMilli(v.RevokedAt).UTC()
	}
	if err := rec.Validate(); err != nil {
		return apikey.Record{}, fmt.Errorf("API key %s: stored value: %w", id, err)
	}
	return rec, nil
}

// PutAPIKey stores a new key record; apikey.ErrExists if the id is taken.
func (s *Store) PutAPIKey(ctx context.Context, rec apikey.Record) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	value, err := encodeAPIKey(rec)
	if err != nil {
		return fmt.Errorf("boltstore: put API key %s: %w", rec.ID, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("boltstore: put API key %s: %w", rec.ID, err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(apiKeysBucket)
		if err != nil {
			return err
		}
		if b.Get([]byte(rec.ID)) != nil {
			return apikey.ErrExists
		}
		return b.Put([]byte(rec.ID), value)
	})
	if err != nil {
		return fmt.Errorf("boltstore: put API key %s: %w", rec.ID, err)
	}
	return nil
}

// APIKey reads a key record; apikey.ErrNotFound.
func (s *Store) APIKey(ctx context.Context, id string) (apikey.Record, error) {
	if err := ctx.Err(); err != nil {
		return apikey.Record{}, fmt.Errorf("boltstore: get API key %s: %w", id, err)
	}
	var rec apikey.Record
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(apiKeysBucket)
		var value []byte
		if b != nil && id != "" {
			value = b.Get([]byte(id))
		}
		if value == nil {
			return apikey.ErrNotFound
		}
		var err error
		rec, err = decodeAPIKey(id, value)
		return err
	})
	if err != nil {
		return apikey.Record{}, fmt.Errorf("boltstore: get API key %s: %w", id, err)
	}
	return rec, nil
}

// APIKeys lists every key record, oldest first.
func (s *Store) APIKeys(ctx context.Context) ([]apikey.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("boltstore: list API keys: %w", err)
	}
	out := []apikey.Record{}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(apiKeysBucket)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			rec, err := decodeAPIKey(string(k), v)
			if err != nil {
				return err
			}
			out = append(out, rec)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: list API keys: %w", err)
	}
	apikey.SortRecords(out)
	return out, nil
}

// RevokeAPIKey marks a key revoked at at (the first revocation's time
// stays; revoked says whether this call revoked it); apikey.ErrNotFound if
// there is no such key.
func (s *Store) RevokeAPIKey(ctx context.Context, id string, at time.Time) (rec apikey.Record, revoked bool, err error) {
	if err := ctx.Err(); err != nil {
		return apikey.Record{}, false, fmt.Errorf("boltstore: revoke API key %s: %w", id, err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(apiKeysBucket)
		var value []byte
		if b != nil && id != "" {
			value = b.Get([]byte(id))
		}
		if value == nil {
			return apikey.ErrNotFound
		}
		var err error
		if rec, err = decodeAPIKey(id, value); err != nil {
			return err
		}
		if rec.Revoked() {
			return errAlreadyRevoked // nothing to write
		}
		rec.RevokedAt = apikey.StoredTime(at)
		if value, err = encodeAPIKey(rec); err != nil {
			return err
		}
		return b.Put([]byte(id), value)
	})
	switch {
	case errors.Is(err, errAlreadyRevoked):
		return rec, false, nil
	case err != nil:
		return apikey.Record{}, false, fmt.Errorf("boltstore: revoke API key %s: %w", id, err)
	}
	return rec, true, nil
}

// errAlreadyRevoked rolls back the revocation's transaction: there is
// nothing to change.
var errAlreadyRevoked = errors.New("already revoked")
