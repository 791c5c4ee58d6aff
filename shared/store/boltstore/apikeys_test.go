package boltstore_test

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chessapi/shared/apikey"
	"chessapi/shared/apikey/apikeytest"
)

func TestAPIKeysConformance(t *testing.T) {
	apikeytest.Run(t, func(t *testing.T) apikey.Store {
		return openStore(t, filepath.Join(t.TempDir(), "games.db"))
	})
}

// TestAPIKeysSurviveReopen: keys and revocations are in the file; the file
// holds the key's hash, never its secret.
func TestAPIKeysSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "games.db")
	s := openStore(t, path)
	k, rec, err := apikey.NewRecord(rand.Reader, "partner", apikey.DefaultLimits, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.PutAPIKey(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.RevokeAPIKey(ctx, rec.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if secret := k.String()[len("ak_")+apikey.IDLen+1:]; strings.Contains(string(raw), secret) {
		t.Error("the database file contains the key's secret")
	}
	s = openStore(t, path)
	got, err := s.APIKey(ctx, rec.ID)
	if err != nil || !got.Revoked() || got.Hash != rec.Hash {
		t.Errorf("after reopening: %+v, %v; want the revoked record", got, err)
	}
}
