package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// tableActiveTimeout bounds the wait for a new table to become ACTIVE.
// Emulators are instant; real DynamoDB usually takes seconds.
const tableActiveTimeout = 2 * time.Minute

// CreateTable creates the games table (partition key gameId of type S,
// on-demand billing) unless a table of that name exists, and waits until it
// is ACTIVE. An existing table with another key schema is an error. In AWS
// the SAM template owns the table; this is for local servers and tests.
func CreateTable(ctx context.Context, client *dynamodb.Client, table string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(KeyAttribute), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(KeyAttribute), KeyType: types.KeyTypeHash},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamostore: create table %q: %w", table, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, tableActiveTimeout); err != nil {
		return fmt.Errorf("dynamostore: wait for table %q to become active: %w", table, err)
	}
	return checkKeySchema(ctx, client, table)
}

// checkKeySchema verifies that an existing table is keyed by gameId alone.
func checkKeySchema(ctx context.Context, client *dynamodb.Client, table string) error {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("dynamostore: describe table %q: %w", table, err)
	}
	keys := out.Table.KeySchema
	if len(keys) != 1 || aws.ToString(keys[0].AttributeName) != KeyAttribute || keys[0].KeyType != types.KeyTypeHash {
		return fmt.Errorf("dynamostore: table %q exists with another key schema (want partition key %q only)", table, KeyAttribute)
	}
	return nil
}

// EnableTTL turns on time-to-live on TTLAttribute, so DynamoDB deletes
// finished games some time after their expiresAt. It is idempotent.
// dynalite does not implement it (the call fails); callers that target
// dynalite skip it.
func EnableTTL(ctx context.Context, client *dynamodb.Client, table string) error {
	desc, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("dynamostore: describe time to live of %q: %w", table, err)
	}
	if d := desc.TimeToLiveDescription; d != nil && aws.ToString(d.AttributeName) == TTLAttribute &&
		(d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(TTLAttribute),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("dynamostore: enable time to live on %q.%s: %w", table, TTLAttribute, err)
	}
	return nil
}
