package dynamostore_test

import (
	"context"
	"slices"
	"strings"
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

// TestCreateTableAddsIndexes: a games table made before the game index
// (partition key only) gets the missing indexes from CreateTable, and its
// existing games are listed once rewritten. moto implements adding an
// index to a table; dynalite does not, and CreateTable must then say what
// to do instead of failing later at the first query.
func TestCreateTableAddsIndexes(t *testing.T) {
	for _, kind := range emulators {
		t.Run(string(kind), func(t *testing.T) {
			endpoint := emulatortest.Start(t, kind)
			client := dynamodb.NewFromConfig(emulator.Config(endpoint))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			table := "old-games-" + string(kind)
			_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
				TableName:            aws.String(table),
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("gameId"), AttributeType: types.ScalarAttributeTypeS}},
				KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("gameId"), KeyType: types.KeyTypeHash}},
				BillingMode:          types.BillingModePayPerRequest,
			})
			if err != nil {
				t.Fatal(err)
			}
			err = dynamostore.CreateTable(ctx, client, table)
			if kind == emulator.Dynalite {
				if err == nil || !strings.Contains(err.Error(), "lacks the game index") {
					t.Fatalf("CreateTable on a table without indexes, on dynalite = %v; want an error naming the missing index", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CreateTable on a table without indexes = %v; want the indexes added", err)
			}
			out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range out.Table.GlobalSecondaryIndexes {
				names = append(names, aws.ToString(g.IndexName))
			}
			slices.Sort(names)
			if want := []string{dynamostore.IndexByBlack, dynamostore.IndexByWhite, dynamostore.IndexLobby}; !slices.Equal(names, want) {
				t.Fatalf("indexes after CreateTable = %q; want %q", names, want)
			}
			// Idempotent: a second call finds everything in place.
			if err := dynamostore.CreateTable(ctx, client, table); err != nil {
				t.Fatalf("second CreateTable = %v", err)
			}
			s, err := dynamostore.New(client, table)
			if err != nil {
				t.Fatal(err)
			}
			at := time.Now()
			rec := service.GameRecord{GameID: "upgraded", Version: 1, StateVersion: 1, Index: service.GameIndex{
				Players: [2]string{"p", ""}, LobbyRoom: "free", CreatedAt: at, UpdatedAt: at, ListedAt: at,
			}}
			if err := s.Create(ctx, rec); err != nil {
				t.Fatal(err)
			}
			for _, list := range []func() ([]service.IndexEntry, string, error){
				func() ([]service.IndexEntry, string, error) { return s.PlayerGames(ctx, "p", false, 10, "") },
				func() ([]service.IndexEntry, string, error) { return s.Lobby(ctx, "free", 10, "") },
			} {
				got, _, err := list()
				if err != nil || len(got) != 1 || got[0].GameID != "upgraded" {
					t.Errorf("list on the upgraded table = %+v, %v; want the game", got, err)
				}
			}
		})
	}
}

// TestCreateTableRefusesOtherIndexKeys: an index of the same name keyed
// otherwise is an error, not silently used.
func TestCreateTableRefusesOtherIndexKeys(t *testing.T) {
	endpoint := emulatortest.Start(t, emulator.Dynalite)
	client := dynamodb.NewFromConfig(emulator.Config(endpoint))
	ctx := context.Background()
	s := types.ScalarAttributeTypeS
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String("odd"),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("gameId"), AttributeType: s},
			{AttributeName: aws.String("other"), AttributeType: s},
		},
		KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("gameId"), KeyType: types.KeyTypeHash}},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String(dynamostore.IndexLobby),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("other"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamostore.CreateTable(ctx, client, "odd"); err == nil || !strings.Contains(err.Error(), "another key schema") {
		t.Fatalf("CreateTable over an index keyed otherwise = %v; want a key schema error", err)
	}
}
