package dynamostore_test

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/apikey"
	"chessapi/shared/apikey/apikeytest"
	"chessapi/shared/store/dynamostore"
)

// TestAPIKeysAgainstEmulators: the data table's API keys hold to the
// apikey.Store conformance tests on moto and dynalite (a fresh table per
// test), and the items are what the template's IAM condition expects.
func TestAPIKeysAgainstEmulators(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the emulators; skipped with -short")
	}
	for _, kind := range emulators {
		t.Run(string(kind), func(t *testing.T) {
			endpoint := emulatortest.Start(t, kind)
			client := dynamodb.NewFromConfig(emulator.Config(endpoint))
			newData := func(t *testing.T) (*dynamostore.Data, string) {
				table := emulatortest.NewDataTable(t, endpoint)
				d, err := dynamostore.NewData(client, table)
				if err != nil {
					t.Fatal(err)
				}
				return d, table
			}
			apikeytest.Run(t, func(t *testing.T) apikey.Store { d, _ := newData(t); return d })

			t.Run("ItemLayout", func(t *testing.T) {
				d, table := newData(t)
				k, rec, err := apikey.NewRecord(rand.Reader, "partner", apikey.DefaultLimits, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if err := d.PutAPIKey(t.Context(), rec); err != nil {
					t.Fatal(err)
				}
				out, err := client.GetItem(t.Context(), &dynamodb.GetItemInput{
					TableName: aws.String(table),
					Key: map[string]types.AttributeValue{
						"pk": &types.AttributeValueMemberS{Value: dynamostore.APIKeyPartitionPrefix + rec.ID},
						"sk": &types.AttributeValueMemberS{Value: "apikey"},
					},
				})
				if err != nil || out.Item == nil {
					t.Fatalf("the key's item is not at pk %s%s: %v", dynamostore.APIKeyPartitionPrefix, rec.ID, err)
				}
				for name, v := range out.Item {
					if s, ok := v.(*types.AttributeValueMemberS); ok && strings.Contains(s.Value, k.String()[len("ak_")+apikey.IDLen+1:]) {
						t.Errorf("attribute %s holds the key's secret", name)
					}
				}
				if _, ok := out.Item["expiresAt"]; ok {
					t.Error("a key item has a TTL; keys stay until revoked and listed after")
				}
			})

			// Two checkers on two clients of one table (two processes, in
			// effect), racing on one key: exactly the day's quota passes,
			// and the rest are refused with the wait to UTC midnight.
			t.Run("QuotaAcrossCheckers", func(t *testing.T) {
				table := emulatortest.NewDataTable(t, endpoint)
				now := time.Date(2026, 11, 29, 23, 0, 0, 0, time.UTC)
				var checkers []*apikey.Checker
				var first *dynamostore.Data
				for range 2 {
					d, err := dynamostore.NewData(dynamodb.NewFromConfig(emulator.Config(endpoint)), table)
					if err != nil {
						t.Fatal(err)
					}
					first = cmp.Or(first, d)
					c, err := apikey.NewChecker(apikey.Options{Store: d, Counter: d, Now: func() time.Time { return now }})
					if err != nil {
						t.Fatal(err)
					}
					checkers = append(checkers, c)
				}
				const quota = 7
				k, rec, _ := apikey.NewRecord(rand.Reader, "partner", apikey.Limits{PerSecond: 100, PerDay: quota, InFlight: 4}, now)
				if err := first.PutAPIKey(t.Context(), rec); err != nil {
					t.Fatal(err)
				}
				var passed, limited atomic.Int64
				var wg sync.WaitGroup
				for i := range 4 {
					wg.Go(func() {
						for range 5 {
							a, err := checkers[i%2].Admit(context.Background(), k.String())
							if err == nil {
								err = a.Release(context.Background())
							}
							var le *apikey.LimitError
							switch {
							case err == nil:
								passed.Add(1)
							case errors.As(err, &le) && le.Limit == "perDay" && le.Wait == time.Hour:
								limited.Add(1)
							default:
								t.Errorf("Admit: %v", err)
							}
						}
					})
				}
				wg.Wait()
				if passed.Load() != quota || limited.Load() != 20-quota {
					t.Errorf("passed %d, limited %d; want %d and %d", passed.Load(), limited.Load(), quota, 20-quota)
				}
			})

			t.Run("CorruptItemIsAnError", func(t *testing.T) {
				d, table := newData(t)
				_, rec, _ := apikey.NewRecord(rand.Reader, "partner", apikey.DefaultLimits, time.Now())
				if err := d.PutAPIKey(t.Context(), rec); err != nil {
					t.Fatal(err)
				}
				_, err := client.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{
					TableName: aws.String(table),
					Key: map[string]types.AttributeValue{
						"pk": &types.AttributeValueMemberS{Value: dynamostore.APIKeyPartitionPrefix + rec.ID},
						"sk": &types.AttributeValueMemberS{Value: "apikey"},
					},
					UpdateExpression:          aws.String("SET perDay = :s"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "lots"}},
				})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d.APIKey(t.Context(), rec.ID); err == nil || !strings.Contains(err.Error(), "perDay") || errors.Is(err, apikey.ErrNotFound) {
					t.Errorf("APIKey of a corrupt item = %v; want an error naming perDay", err)
				}
				if _, err := d.APIKeys(t.Context()); err == nil {
					t.Error("APIKeys listed a corrupt item without an error")
				}
			})
		})
	}
}
