package boltstore

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// legacyIndexedValue is a record as written before ListedAt existed: the
// index without hasListed and listedAt, its player keys sorted by
// updatedAt.
func legacyIndexedValue(version int64, created, updated time.Time, white, black, state string) []byte {
	buf := []byte{formatV1}
	buf = binary.AppendVarint(buf, version)
	buf = binary.AppendVarint(buf, 1)
	buf = append(buf, hasIndex, 0) // flags; not finished
	buf = binary.AppendVarint(buf, created.UnixMilli())
	buf = binary.AppendVarint(buf, updated.UnixMilli())
	for _, field := range []string{white, black, "", "summary"} {
		buf = binary.AppendUvarint(buf, uint64(len(field)))
		buf = append(buf, field...)
	}
	return append(buf, state...)
}

func TestLegacyRecordReadsItsSortTimeAsListedAt(t *testing.T) {
	created, updated := time.UnixMilli(1_777_000_000_000).UTC(), time.UnixMilli(1_777_000_060_000).UTC()
	rec, err := decodeRecord("g", legacyIndexedValue(3, created, updated, "w", "", "s"))
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Index.ListedAt.Equal(updated) || !rec.Index.UpdatedAt.Equal(updated) || !rec.Index.CreatedAt.Equal(created) {
		t.Fatalf("legacy index = %+v; want ListedAt = UpdatedAt = %v", rec.Index, updated)
	}
	// Re-encoded, it says so explicitly and reads the same.
	again, err := decodeRecord("g", encodeValue(rec))
	if err != nil || !indexEqual(again.Index, rec.Index) {
		t.Fatalf("re-encoded legacy record = %+v, %v; want %+v", again.Index, err, rec.Index)
	}
	if _, err := decodeRecord("g", []byte{formatV1, 2, 2, hasListed}); err == nil {
		t.Error("a record with hasListed but no index decoded; want errCorrupt")
	}
}

// TestLegacyIndexKeysListAndStay: a game stored before ListedAt (its key
// made of its updatedAt) lists among new ones by that time; a write that
// carries its ListedAt over (what the service does on a move) leaves its
// key where it was, and its end moves it to the finished list.
func TestLegacyIndexKeysListAndStay(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	t0 := time.UnixMilli(1_777_000_000_000).UTC()
	oldUpdated := t0.Add(10 * time.Minute)
	if err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(gamesBucket).Put([]byte("old"), legacyIndexedValue(1, t0, oldUpdated, "p", "", "s")); err != nil {
			return err
		}
		b, err := tx.CreateBucketIfNotExists(playersIndexBucket)
		if err != nil {
			return err
		}
		return b.Put(append(playerPrefix("p", false), rules.SortKey(oldUpdated, "old")...), nil)
	}); err != nil {
		t.Fatal(err)
	}
	for i, listed := range []time.Time{t0.Add(5 * time.Minute), t0.Add(15 * time.Minute)} {
		id := []string{"older", "newer"}[i]
		rec := service.GameRecord{GameID: id, Version: 1, StateVersion: 1, State: []byte("s"), Index: service.GameIndex{
			Players: [2]string{"p", ""}, CreatedAt: t0, UpdatedAt: listed, ListedAt: listed, Summary: []byte("summary"),
		}}
		if err := s.Create(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	list := func(finished bool) []string {
		t.Helper()
		var ids []string
		cursor := ""
		for {
			page, next, err := s.PlayerGames(ctx, "p", finished, 1, cursor)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range page {
				ids = append(ids, e.GameID)
			}
			if next == "" {
				return ids
			}
			cursor = next
		}
	}
	if got, want := list(false), []string{"newer", "old", "older"}; !slices.Equal(got, want) {
		t.Fatalf("active list with a legacy record = %q; want %q", got, want)
	}
	got, err := s.Get(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	moved := got
	moved.Version = 2
	moved.Index.UpdatedAt = t0.Add(time.Hour)
	if err := s.Update(ctx, moved, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := list(false), []string{"newer", "old", "older"}; !slices.Equal(got, want) {
		t.Fatalf("active list after a move of the legacy record = %q; want %q", got, want)
	}
	keys := 0
	if err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(playersIndexBucket).ForEach(func(k, _ []byte) error { keys++; return nil })
	}); err != nil || keys != 3 {
		t.Fatalf("%d index keys, %v; want 3 (one a game)", keys, err)
	}
	ended := moved
	ended.Version = 3
	ended.Index.Finished = true
	ended.Index.ListedAt = t0.Add(2 * time.Hour)
	if err := s.Update(ctx, ended, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := list(false), []string{"newer", "older"}; !slices.Equal(got, want) {
		t.Errorf("active list after the legacy game ended = %q; want %q", got, want)
	}
	if got, want := list(true), []string{"old"}; !slices.Equal(got, want) {
		t.Errorf("finished list = %q; want %q", got, want)
	}
}
