package boltstore

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
