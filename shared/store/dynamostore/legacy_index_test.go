package dynamostore_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// TestLegacyIndexItemsList: games written before listedAt and writtenAt
// (their sort key made of the time of their last write, kept in the
// projected updatedAt) list among new ones by that time, on both
// emulators; a move carries their ListedAt over (as the service does), so
// they keep their place and only updatedAt goes; their end moves them to
// the finished list by the time they ended.
func TestLegacyIndexItemsList(t *testing.T) {
	for _, kind := range emulators {
		t.Run(string(kind), func(t *testing.T) {
			endpoint := emulatortest.Start(t, kind)
			client := dynamodb.NewFromConfig(emulator.Config(endpoint))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			table := "legacy-games-" + string(kind)
			if err := dynamostore.CreateTable(ctx, client, table); err != nil {
				t.Fatal(err)
			}
			s, err := dynamostore.New(client, table)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.UnixMilli(1_777_000_000_000).UTC()
			str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
			num := func(ms int64) types.AttributeValue {
				return &types.AttributeValueMemberN{Value: strconv.FormatInt(ms, 10)}
			}
			for _, legacy := range []struct {
				id      string
				updated time.Time
			}{{"old-a", t0.Add(10 * time.Minute)}, {"old-b", t0.Add(20 * time.Minute)}} {
				key := strconv.FormatInt(legacy.updated.UnixMilli(), 10) + "#" + legacy.id
				_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
					"gameId": str(legacy.id), "version": num(1), "stateVersion": num(1), "state": &types.AttributeValueMemberB{Value: []byte("s")},
					"idxW": str("me#a"), "idxB": str("them#a"), "idxUpdated": str(key),
					"createdAt": num(t0.UnixMilli()), "updatedAt": num(legacy.updated.UnixMilli()), "summary": &types.AttributeValueMemberB{Value: []byte("{}")},
				}})
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, fresh := range []struct {
				id     string
				listed time.Time
			}{{"new-5", t0.Add(5 * time.Minute)}, {"new-15", t0.Add(15 * time.Minute)}, {"new-25", t0.Add(25 * time.Minute)}} {
				rec := service.GameRecord{GameID: fresh.id, Version: 1, StateVersion: 1, State: []byte("s"), Index: service.GameIndex{
					Players: [2]string{"them", "me"}, CreatedAt: t0, UpdatedAt: fresh.listed.Add(time.Hour), ListedAt: fresh.listed, Summary: []byte("{}"),
				}}
				if err := s.Create(ctx, rec); err != nil {
					t.Fatal(err)
				}
			}
			list := func(player string, finished bool) []string {
				t.Helper()
				var ids []string
				cursor := ""
				for {
					page, next, err := s.PlayerGames(ctx, player, finished, 2, cursor)
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
			want := []string{"new-25", "old-b", "new-15", "old-a", "new-5"}
			for _, player := range []string{"me", "them"} {
				if got := list(player, false); !slices.Equal(got, want) {
					t.Fatalf("%s's active games with legacy items = %q; want %q", player, got, want)
				}
			}
			rec, err := s.Get(ctx, "old-a")
			if err != nil {
				t.Fatal(err)
			}
			if !rec.Index.ListedAt.Equal(t0.Add(10*time.Minute)) || !rec.Index.UpdatedAt.Equal(t0.Add(10*time.Minute)) {
				t.Fatalf("legacy item's index = %+v; want ListedAt = UpdatedAt = its updatedAt", rec.Index)
			}
			moved := rec
			moved.Version = 2
			moved.Index.UpdatedAt = t0.Add(2 * time.Hour)
			if err := s.Update(ctx, moved, 1); err != nil {
				t.Fatal(err)
			}
			if got := list("me", false); !slices.Equal(got, want) {
				t.Fatalf("active games after a move of a legacy game = %q; want %q", got, want)
			}
			out, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{"gameId": str("old-a")}, ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatal(err)
			}
			if _, found := out.Item["updatedAt"]; found {
				t.Error("the moved legacy item still has updatedAt")
			}
			ended := moved
			ended.Version = 3
			ended.Index.Finished = true
			ended.Index.ListedAt = t0.Add(3 * time.Hour)
			if err := s.Update(ctx, ended, 2); err != nil {
				t.Fatal(err)
			}
			if got, want := list("me", false), []string{"new-25", "old-b", "new-15", "new-5"}; !slices.Equal(got, want) {
				t.Errorf("active games after the legacy game ended = %q; want %q", got, want)
			}
			if got, want := list("them", true), []string{"old-a"}; !slices.Equal(got, want) {
				t.Errorf("finished games = %q; want %q", got, want)
			}
		})
	}
}
