package boltstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"chessapi/shared/service"
	"chessapi/shared/store/storetest"
)

func TestNotificationsConformance(t *testing.T) {
	storetest.RunNotifications(t, func(t *testing.T) service.NotificationStore {
		return openStore(t, filepath.Join(t.TempDir(), "games.db"))
	})
}

// TestNotificationsExpire: the sweeper's pass removes entries past their
// ExpiresAt and push claims past their window, nothing else.
func TestNotificationsExpire(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "games.db"))
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for i, exp := range []time.Duration{time.Hour, 48 * time.Hour} {
		n := service.NotificationRecord{PlayerID: "p1", ID: []string{"a", "b"}[i], At: t0, Body: []byte("x"), ExpiresAt: t0.Add(exp)}
		if _, _, err := s.AddNotification(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ClaimPush(ctx, "p1", "g#k", "a", time.Minute, t0); err != nil {
		t.Fatal(err)
	}
	n, err := s.DeleteExpiredNotifications(ctx, t0.Add(2*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("DeleteExpiredNotifications = %d, %v; want the hour-old entry and the claim", n, err)
	}
	items, err := s.Notifications(ctx, "p1", "", 10)
	if err != nil || len(items) != 1 || items[0].ID != "b" {
		t.Errorf("Notifications after the sweep = %+v, %v; want only b", items, err)
	}
	if ok, err := s.ClaimPush(ctx, "p1", "g#k", "c", 24*time.Hour, t0.Add(2*time.Hour)); err != nil || !ok {
		t.Errorf("ClaimPush after the sweep = %v, %v; want granted", ok, err)
	}
}
