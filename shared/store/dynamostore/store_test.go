package dynamostore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
	"chessapi/shared/store/storetest"
)

// emulators are the DynamoDB implementations every test runs against. Each
// is started once (moto takes a second or two) and shared by the subtests
// through fresh tables.
var emulators = []emulator.Kind{emulator.Moto, emulator.Dynalite}

func TestAgainstEmulators(t *testing.T) {
	for _, kind := range emulators {
		t.Run(string(kind), func(t *testing.T) {
			endpoint := emulatortest.Start(t, kind)
			t.Run("Conformance", func(t *testing.T) {
				storetest.Run(t, func(t *testing.T) service.Store {
					return newStore(t, endpoint)
				})
			})
			t.Run("Index", func(t *testing.T) {
				storetest.RunIndex(t, func(t *testing.T) (service.Store, service.GameLister) {
					s := newStore(t, endpoint)
					return s, s
				})
			})
			t.Run("Players", func(t *testing.T) {
				storetest.RunPlayers(t, func(t *testing.T) service.Players {
					return newData(t, endpoint)
				})
			})
			t.Run("ItemLayout", func(t *testing.T) { testItemLayout(t, endpoint) })
			if kind == emulator.Dynalite {
				// moto counts sizes its own way (numbers by their decimal
				// text, a 405,000-byte limit); dynalite counts as DynamoDB.
				t.Run("ItemSizeLimit", func(t *testing.T) { testItemSizeLimit(t, endpoint) })
			}
			t.Run("CorruptItem", func(t *testing.T) { testCorruptItem(t, endpoint) })
			t.Run("LostResponse", func(t *testing.T) { testLostResponse(t, endpoint) })
		})
	}
}

func newStore(t *testing.T, endpoint string) *dynamostore.Store {
	t.Helper()
	table := emulatortest.NewGamesTable(t, endpoint)
	s, err := dynamostore.NewFromConfig(emulator.Config(endpoint), table)
	if err != nil {
		t.Fatalf("NewFromConfig: %v", err)
	}
	return s
}

func newData(t *testing.T, endpoint string) *dynamostore.Data {
	t.Helper()
	d, err := dynamostore.NewData(dynamodb.NewFromConfig(emulator.Config(endpoint)), emulatortest.NewDataTable(t, endpoint))
	if err != nil {
		t.Fatalf("NewData: %v", err)
	}
	return d
}

// testItemLayout reads the raw item to pin the attribute names and types
// the SAM template, the TTL setting and any operator query rely on.
func testItemLayout(t *testing.T, endpoint string) {
	s := newStore(t, endpoint)
	ctx := context.Background()
	rec := service.GameRecord{
		GameID:       "layout1",
		Version:      3,
		StateVersion: 2,
		State:        []byte{0, 1, 2},
		Deadline:     time.UnixMilli(1_800_000_000_000).Add(1), // rounds up by 1 ms
		ExpiresAt:    time.Unix(1_900_000_000, 1),              // rounds up by 1 s
	}
	if err := s.Create(ctx, rec); err != nil {
		t.Fatalf("Create: %v", err)
	}
	client := dynamodb.NewFromConfig(emulator.Config(endpoint))
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.Table()),
		Key:       map[string]types.AttributeValue{"gameId": &types.AttributeValueMemberS{Value: rec.GameID}},
	})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	want := map[string]string{
		"gameId":       "S:layout1",
		"version":      "N:3",
		"stateVersion": "N:2",
		"state":        "B:\x00\x01\x02",
		"deadline":     "N:1800000000001",
		"expiresAt":    "N:1900000001",
		"writeToken":   "S:?", // random per write (conditionalPut)
	}
	got := map[string]string{}
	for name, v := range out.Item {
		if _, ok := v.(*types.AttributeValueMemberS); ok && name == "writeToken" {
			got[name] = "S:?"
			continue
		}
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			got[name] = "S:" + v.Value
		case *types.AttributeValueMemberN:
			got[name] = "N:" + v.Value
		case *types.AttributeValueMemberB:
			got[name] = "B:" + string(v.Value)
		default:
			got[name] = "?"
		}
	}
	if len(got) != len(want) {
		t.Errorf("item has %d attributes %v; want %d", len(got), got, len(want))
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("item[%s] = %q; want %q", name, got[name], w)
		}
	}
}

// testItemSizeLimit writes items of exactly the limit and one byte over it.
// The store's own count must accept the first and refuse the second, and
// dynalite, which enforces DynamoDB's limit byte for byte, must agree: a
// direct PutItem of the oversize item is refused by the server too.
func testItemSizeLimit(t *testing.T, endpoint string) {
	s := newStore(t, endpoint)
	ctx := context.Background()

	// Attribute overhead of this record besides the state bytes:
	// gameId(6)+"limit1"(6) + version(7)+N 1(2) + stateVersion(12)+N 1(2)
	// + deadline(8)+N 1800000000000(3) + state(5)
	// + writeToken(10)+16 hex digits(16) = 77.
	const overhead = 77
	rec := service.GameRecord{
		GameID:       "limit1",
		Version:      1,
		StateVersion: 1,
		Deadline:     time.UnixMilli(1_800_000_000_000),
		State:        incompressible(dynamostore.MaxItemSize - overhead),
	}
	if err := s.Create(ctx, rec); err != nil {
		t.Fatalf("Create of an item of exactly %d bytes = %v; want nil", dynamostore.MaxItemSize, err)
	}

	over := rec
	over.GameID = "limit2" // same length, one state byte more
	over.State = incompressible(dynamostore.MaxItemSize - overhead + 1)
	err := s.Create(ctx, over)
	var tooLarge *dynamostore.TooLargeError
	if !errors.As(err, &tooLarge) || !errors.Is(err, service.ErrTooLarge) {
		t.Fatalf("Create of a %d-byte item = %v; want *TooLargeError wrapping ErrTooLarge", dynamostore.MaxItemSize+1, err)
	}
	if tooLarge.Size != dynamostore.MaxItemSize+1 {
		t.Errorf("TooLargeError.Size = %d; want %d", tooLarge.Size, dynamostore.MaxItemSize+1)
	}

	client := dynamodb.NewFromConfig(emulator.Config(endpoint))
	_, err = client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.Table()),
		Item: map[string]types.AttributeValue{
			"gameId":       &types.AttributeValueMemberS{Value: over.GameID},
			"version":      &types.AttributeValueMemberN{Value: "1"},
			"stateVersion": &types.AttributeValueMemberN{Value: "1"},
			"deadline":     &types.AttributeValueMemberN{Value: "1800000000000"},
			"state":        &types.AttributeValueMemberB{Value: over.State},
			"writeToken":   &types.AttributeValueMemberS{Value: "0123456789abcdef"},
		},
	})
	if err == nil || !strings.Contains(err.Error(), "Item size has exceeded") {
		t.Fatalf("direct PutItem of a %d-byte item = %v; want dynalite's size error", dynamostore.MaxItemSize+1, err)
	}
}

// testCorruptItem plants items this code never writes and checks Get names
// the bad attribute instead of returning garbage.
func testCorruptItem(t *testing.T, endpoint string) {
	s := newStore(t, endpoint)
	client := dynamodb.NewFromConfig(emulator.Config(endpoint))
	ctx := context.Background()
	tests := []struct {
		id       string
		item     map[string]types.AttributeValue
		wantAttr string
	}{
		{"noversion", map[string]types.AttributeValue{
			"stateVersion": &types.AttributeValueMemberN{Value: "1"},
		}, "version"},
		{"textversion", map[string]types.AttributeValue{
			"version":      &types.AttributeValueMemberS{Value: "1"},
			"stateVersion": &types.AttributeValueMemberN{Value: "1"},
		}, "version"},
		{"fraction", map[string]types.AttributeValue{
			"version":      &types.AttributeValueMemberN{Value: "1.5"},
			"stateVersion": &types.AttributeValueMemberN{Value: "1"},
		}, "version"},
		{"textstate", map[string]types.AttributeValue{
			"version":      &types.AttributeValueMemberN{Value: "1"},
			"stateVersion": &types.AttributeValueMemberN{Value: "1"},
			"state":        &types.AttributeValueMemberS{Value: "x"},
		}, "state"},
		{"hugedeadline", map[string]types.AttributeValue{
			"version":      &types.AttributeValueMemberN{Value: "1"},
			"stateVersion": &types.AttributeValueMemberN{Value: "1"},
			"deadline":     &types.AttributeValueMemberN{Value: "1e30"},
		}, "deadline"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			tt.item["gameId"] = &types.AttributeValueMemberS{Value: tt.id}
			if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Table()), Item: tt.item}); err != nil {
				t.Fatalf("PutItem: %v", err)
			}
			got, err := s.Get(ctx, tt.id)
			var itemErr *dynamostore.ItemError
			if !errors.As(err, &itemErr) || itemErr.Attribute != tt.wantAttr || itemErr.GameID != tt.id {
				t.Fatalf("Get(%q) = %+v, %v; want *ItemError on attribute %s", tt.id, got, err, tt.wantAttr)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	client := dynamodb.NewFromConfig(emulator.Config("http://127.0.0.1:1"))
	if _, err := dynamostore.New(client, ""); err == nil {
		t.Errorf("New(client, \"\") = nil error; want an error naming the table")
	}
	if _, err := dynamostore.New(nil, "games"); err == nil {
		t.Errorf("New(nil, \"games\") = nil error; want an error")
	}
}

// TestEndpointFromEnvironment checks the documented way of pointing the
// store at an emulator: AWS_ENDPOINT_URL_DYNAMODB read by the SDK's own
// config loader.
func TestEndpointFromEnvironment(t *testing.T) {
	endpoint := emulatortest.StartDynalite(t)
	table := emulatortest.NewGamesTable(t, endpoint)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", "emulator")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "emulator")
	t.Setenv("AWS_REGION", emulator.Region)
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatalf("LoadDefaultConfig: %v", err)
	}
	s, err := dynamostore.NewFromConfig(cfg, table)
	if err != nil {
		t.Fatalf("NewFromConfig: %v", err)
	}
	rec := service.GameRecord{GameID: "env1", Version: 1, StateVersion: 1, State: []byte("s")}
	if err := s.Create(context.Background(), rec); err != nil {
		t.Fatalf("Create through AWS_ENDPOINT_URL_DYNAMODB = %v; want nil", err)
	}
	if _, err := s.Get(context.Background(), "env1"); err != nil {
		t.Fatalf("Get through AWS_ENDPOINT_URL_DYNAMODB = %v; want nil", err)
	}
}

// incompressible returns n random bytes (seeded): the adapter stores them
// as they are, so the item has exactly the size the test computes.
func incompressible(n int) []byte {
	b := make([]byte, n)
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
