package boltstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

func listedRecord(id, player, room string, finished bool, at time.Time, expires time.Time) service.GameRecord {
	return service.GameRecord{GameID: id, Version: 1, StateVersion: 1, ExpiresAt: expires, Index: service.GameIndex{
		Players: [2]string{player, ""}, Finished: finished, LobbyRoom: room, CreatedAt: at, UpdatedAt: at, ListedAt: at, Summary: []byte(id),
	}}
}

func gameIDs(entries []service.IndexEntry) []string {
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.GameID)
	}
	return ids
}

// TestDeleteExpiredDropsIndexKeys: a game deleted at its expiry leaves no
// index key behind (a list would otherwise name a game that is gone, and
// fail reading it).
func TestDeleteExpiredDropsIndexKeys(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "games.db"))
	ctx := context.Background()
	now := time.Now()
	for _, rec := range []service.GameRecord{
		listedRecord("gone", "p", "", true, now.Add(-2*time.Hour), now.Add(-time.Hour)),
		listedRecord("kept", "p", "", true, now.Add(-3*time.Hour), now.Add(time.Hour)),
		listedRecord("lobby-gone", "p", "free", false, now, now.Add(-time.Hour)),
	} {
		if err := s.Create(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DeleteExpired(ctx, now); err != nil || n != 2 {
		t.Fatalf("DeleteExpired = %d, %v; want 2", n, err)
	}
	finished, _, err := s.PlayerGames(ctx, "p", true, 10, "")
	if err != nil || len(finished) != 1 || finished[0].GameID != "kept" {
		t.Errorf("finished games after the expiry = %q, %v; want only kept", gameIDs(finished), err)
	}
	active, _, err := s.PlayerGames(ctx, "p", false, 10, "")
	if err != nil || len(active) != 0 {
		t.Errorf("active games after the expiry = %q, %v; want none", gameIDs(active), err)
	}
	if lobby, _, err := s.Lobby(ctx, "free", 10, ""); err != nil || len(lobby) != 0 {
		t.Errorf("lobby after the expiry = %q, %v; want empty", gameIDs(lobby), err)
	}
}

// TestIndexAndPlayersSurviveReopen: everything is in the file.
func TestIndexAndPlayersSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "games.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	if err := s.Create(ctx, listedRecord("g", "p", "free", false, now, time.Time{})); err != nil {
		t.Fatal(err)
	}
	if err := s.CreatePlayer(ctx, service.PlayerRecord{ID: "p", Name: "n"}, service.Session{ID: "se_1", PlayerID: "p", TokenHash: "h"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Hit(ctx, "k", time.Hour, now); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	if lobby, _, err := s.Lobby(ctx, "free", 10, ""); err != nil || len(lobby) != 1 {
		t.Errorf("lobby after reopening = %q, %v", gameIDs(lobby), err)
	}
	if p, _, err := s.PlayerByToken(ctx, "h"); err != nil || p.Name != "n" {
		t.Errorf("PlayerByToken after reopening = %+v, %v", p, err)
	}
	if c, _, err := s.Hit(ctx, "k", time.Hour, now); err != nil || c != 2 {
		t.Errorf("Hit after reopening = %d, %v; want 2", c, err)
	}
}

// TestDeleteExpiredData: the sweep removes expired link codes, counters of
// ended windows and abandoned slots, and nothing that still counts.
func TestDeleteExpiredData(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "games.db"))
	ctx := context.Background()
	now := time.Now()
	if err := s.PutLinkCode(ctx, "old", "p", now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutLinkCode(ctx, "live", "p", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{now.Add(-time.Hour), now} {
		if _, _, err := s.Hit(ctx, "k", time.Minute, at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ClaimSlot(ctx, "abandoned", "v", time.Second, now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ClaimSlot(ctx, "held", "v", time.Minute, now); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteExpiredData(ctx, now)
	if err != nil || n != 3 {
		t.Fatalf("DeleteExpiredData = %d, %v; want 3 (a code, a counter, a slot)", n, err)
	}
	if p, err := s.ClaimLinkCode(ctx, "live", now); err != nil || p != "p" {
		t.Errorf("the live code after the sweep: %q, %v", p, err)
	}
	if _, err := s.ClaimLinkCode(ctx, "old", now.Add(-time.Hour)); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("the expired code is still there (a claim dated before its expiry got %v)", err)
	}
	if c, _, err := s.Count(ctx, "k", time.Minute, now); err != nil || c != 1 {
		t.Errorf("the current counter after the sweep = %d, %v; want 1", c, err)
	}
	if c, _, err := s.Count(ctx, "k", time.Minute, now.Add(-time.Hour)); err != nil || c != 0 {
		t.Errorf("the ended window's counter after the sweep = %d, %v; want 0 (deleted)", c, err)
	}
	if h, err := s.ClaimSlot(ctx, "held", "w", time.Minute, now); !errors.Is(err, service.ErrSlotTaken) || h != "v" {
		t.Errorf("the held slot after the sweep: %q, %v; want v, ErrSlotTaken", h, err)
	}
	if h, err := s.ClaimSlot(ctx, "abandoned", "w", 24*time.Hour, now); err != nil || h != "w" {
		t.Errorf("the abandoned slot after the sweep: %q, %v; want free", h, err)
	}
}

// TestDeleteExpiredTombstones: a deleted player's token tombstones stay
// until their time and the sweep removes them after it, leaving live
// sessions alone.
func TestDeleteExpiredTombstones(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "games.db"))
	ctx := context.Background()
	now := time.Now()
	for _, p := range []struct{ id, hash string }{{"gone", "h-gone"}, {"stays", "h-stays"}, {"live", "h-live"}} {
		if err := s.CreatePlayer(ctx, service.PlayerRecord{ID: p.id}, service.Session{ID: "se_" + p.id, PlayerID: p.id, TokenHash: p.hash}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.EndSessions(ctx, "gone", now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndSessions(ctx, "stays", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteExpiredData(ctx, now); err != nil || n != 1 {
		t.Fatalf("DeleteExpiredData = %d, %v; want 1 (the tombstone past its time)", n, err)
	}
	if _, _, err := s.PlayerByToken(ctx, "h-gone"); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("the swept tombstone's token: %v; want ErrNotFound", err)
	}
	var deleted *service.DeletedError
	if _, _, err := s.PlayerByToken(ctx, "h-stays"); !errors.As(err, &deleted) || deleted.PlayerID != "stays" {
		t.Errorf("the kept tombstone's token: %v; want DeletedError", err)
	}
	if p, _, err := s.PlayerByToken(ctx, "h-live"); err != nil || p.ID != "live" {
		t.Errorf("a live token after the sweep: %+v, %v", p, err)
	}
}
