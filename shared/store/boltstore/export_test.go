package boltstore

import bolt "go.etcd.io/bbolt"

// Test-only access to the bbolt handle, for the durability tests
// (durability_test.go). Nothing here is compiled into the package itself.

// SetNoSync switches bbolt's fsync off (or back on), the defect the
// durability test must catch: commits then return, and writes are
// acknowledged, before anything reached the disk. Call it before the first
// write.
func SetNoSync(s *Store, noSync bool) { s.db.NoSync = noSync }

// PageSize is the database file's page size: bbolt writes its meta pages,
// the commit records, at offsets 0 and PageSize.
func PageSize(s *Store) int { return s.db.Info().PageSize }

// PutLegacyToken stores a token the way the store kept them before
// sessions (its hash mapped to the player id), for the conformance
// suite's adoption tests.
func (s *Store) PutLegacyToken(playerID, tokenHash string) error {
	return s.db.Update(func(tx *bolt.Tx) error { return put(tx, tokensBucket, tokenHash, []byte(playerID)) })
}
