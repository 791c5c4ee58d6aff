package emulator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"chessapi/shared/store/dynamostore"
)

// tableSeq makes table names unique within a test binary; each binary has
// its own emulator, so that is enough.
var tableSeq atomic.Int64

// NewGamesTable creates a games table with a fresh name on the DynamoDB
// emulator at endpoint and returns the name. Tests that each take a new
// table stay independent while sharing one emulator.
func NewGamesTable(t testing.TB, endpoint string) string {
	t.Helper()
	table := fmt.Sprintf("games-%d", tableSeq.Add(1))
	if err := CreateGamesTable(context.Background(), endpoint, table); err != nil {
		t.Fatalf("emulator: %v", err)
	}
	return table
}

// CreateGamesTable creates the games table exactly as the local server does
// (dynamostore.CreateTable: partition key gameId of type S, on-demand) on
// the emulator at endpoint, and turns on TTL where the emulator implements
// it (moto does, dynalite does not).
func CreateGamesTable(ctx context.Context, endpoint, table string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := dynamodb.NewFromConfig(Config(endpoint))
	if err := dynamostore.CreateTable(ctx, client, table); err != nil {
		return err
	}
	if err := dynamostore.EnableTTL(ctx, client, table); err != nil && !notImplemented(err) {
		return err
	}
	return nil
}

// notImplemented reports an emulator's answer to an operation it lacks.
func notImplemented(err error) bool {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	code := apiErr.ErrorCode()
	return code == "UnknownOperationException" || strings.Contains(code, "NotImplemented")
}

// NewDataTable creates a data table (dynamostore.CreateDataTable: pk/sk and
// the gsi1 index) with a fresh name on the emulator at endpoint.
func NewDataTable(t testing.TB, endpoint string) string {
	t.Helper()
	table := fmt.Sprintf("data-%d", tableSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := dynamostore.CreateDataTable(ctx, dynamodb.NewFromConfig(Config(endpoint)), table); err != nil {
		t.Fatalf("emulator: %v", err)
	}
	return table
}
