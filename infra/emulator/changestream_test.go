package emulator

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// TestChangeStreamDeliversCommitsInOrder: every write of the games table
// comes out of moto's stream once, in order, with both images, decodable
// as the fan-out decodes them.
func TestChangeStreamDeliversCommitsInOrder(t *testing.T) {
	endpoint := startForTest(t, Moto).URL
	ctx := context.Background()
	const table = "games"
	if err := CreateGamesTable(ctx, endpoint, table); err != nil {
		t.Fatal(err)
	}
	stream, err := EnableChangeStream(ctx, endpoint, table)
	if err != nil {
		t.Fatal(err)
	}
	store, err := dynamostore.New(dynamodb.NewFromConfig(Config(endpoint)), table)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := stream.Next(ctx)
	if err != nil || len(ev.Records) != 0 {
		t.Fatalf("Next before any write = %d records, %v; want none", len(ev.Records), err)
	}
	rec := service.GameRecord{GameID: "g1", Version: 1, StateVersion: 1, State: []byte("state-1"), Deadline: time.Unix(1700000000, 0)}
	if err := store.Create(ctx, rec); err != nil {
		t.Fatal(err)
	}
	for v := int64(2); v <= 3; v++ {
		next := rec
		next.Version, next.State = v, []byte("state-"+string(rune('0'+v)))
		if err := store.Update(ctx, next, v-1); err != nil {
			t.Fatal(err)
		}
		rec = next
	}
	ev, err = stream.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Records) != 3 {
		t.Fatalf("records = %d; want 3 (one per write)", len(ev.Records))
	}
	for i, r := range ev.Records {
		want := "MODIFY"
		if i == 0 {
			want = "INSERT"
		}
		if r.EventName != want || r.EventSource != "aws:dynamodb" {
			t.Errorf("record %d: %s from %s; want %s from aws:dynamodb", i, r.EventName, r.EventSource, want)
		}
		item, err := dynamostore.DecodeStreamImage(r.Change.NewImage)
		if err != nil || item.Version != int64(i+1) {
			t.Errorf("record %d new image: version %d, %v; want %d", i, item.Version, err, i+1)
		}
		if (i == 0) != (len(r.Change.OldImage) == 0) {
			t.Errorf("record %d: old image %v; want one on every MODIFY", i, r.Change.OldImage)
		}
	}
	if ev, err := stream.Next(ctx); err != nil || len(ev.Records) != 0 {
		t.Errorf("Next again = %d records, %v; want none (each record once)", len(ev.Records), err)
	}
}
