package dynamostore_test

import (
	"bytes"
	"testing"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/store/dynamostore"
)

// TestLongGameOnDynalite stores the 1,000-ply fixture game's record (see
// longgame_size_test.go) in a table on dynalite, which enforces DynamoDB's
// item limit, and reads it back byte for byte: the measured item is one a
// DynamoDB table accepts.
func TestLongGameOnDynalite(t *testing.T) {
	if testing.Short() {
		t.Skip("emulator-backed")
	}
	rec := dynamostore.LongGameRecord(t)
	endpoint := emulatortest.Start(t, emulator.Dynalite)
	store, err := dynamostore.NewFromConfig(emulator.Config(endpoint), emulatortest.NewGamesTable(t, endpoint))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(t.Context(), rec); err != nil {
		t.Fatalf("store the 1,000-ply record: %v", err)
	}
	got, err := store.Get(t.Context(), rec.GameID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != rec.Version || !bytes.Equal(got.State, rec.State) || !got.Deadline.Equal(rec.Deadline) {
		t.Errorf("read back version %d, %d state bytes, deadline %v; want %d, %d, %v", got.Version, len(got.State), got.Deadline, rec.Version, len(rec.State), rec.Deadline)
	}
}
