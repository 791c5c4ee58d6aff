package boltstore

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/service"
)

var _ service.GameBatchReader = (*Store)(nil)

// GetGames reads the records of ids in one read transaction; ids without
// a record are left out.
func (s *Store) GetGames(ctx context.Context, ids []string) (map[string]service.GameRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("boltstore: get %d games: %w", len(ids), err)
	}
	out := make(map[string]service.GameRecord, len(ids))
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(gamesBucket)
		for _, id := range ids {
			if id == "" {
				return errEmptyID
			}
			value := b.Get([]byte(id))
			if value == nil {
				continue
			}
			rec, err := decodeRecord(id, value)
			if err != nil {
				return err
			}
			out[id] = rec
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: get %d games: %w", len(ids), err)
	}
	return out, nil
}
