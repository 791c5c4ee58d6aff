package emulator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"chessapi/shared/store/dynamostore"
)

// CreateGamesTable creates the games table exactly as the local server does
// (dynamostore.CreateTable: partition key gameId of type S, on-demand) on
// the emulator at endpoint, and turns on TTL where the emulator implements
// it (moto does, dynalite does not).
func CreateGamesTable(ctx context.Context, endpoint, table string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := dynamodb.NewFromConfig(Config(endpoint))
	if err := dynamostore.CreateTable(ctx, client, table); err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	if err := dynamostore.EnableTTL(ctx, client, table); err != nil && !notImplemented(err) {
		return fmt.Errorf("emulator: %w", err)
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

// CreateDataTable creates a data table exactly as the local server does
// (dynamostore.CreateDataTable: pk/sk and the gsi1 index) on the emulator
// at endpoint.
func CreateDataTable(ctx context.Context, endpoint, table string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := dynamostore.CreateDataTable(ctx, dynamodb.NewFromConfig(Config(endpoint)), table); err != nil {
		return fmt.Errorf("emulator: %w", err)
	}
	return nil
}
