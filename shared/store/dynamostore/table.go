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
// the game index's global secondary indexes GamesIndexes, on-demand
// billing) unless a table of that name exists, and waits until it is
// ACTIVE. An existing table with another key schema is an error; one
// without some of the indexes (made before the game index existed) gets
// them added, one at a time as DynamoDB requires. In AWS the SAM template
// owns the table; this is for local servers and tests.
func CreateTable(ctx context.Context, client *dynamodb.Client, table string) error {
	var defs []types.AttributeDefinition
	for _, name := range GamesTableAttributes() {
		defs = append(defs, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS})
	}
	var gsis []types.GlobalSecondaryIndex
	for _, idx := range GamesIndexes() {
		gsis = append(gsis, globalIndex(idx))
	}
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: defs,
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(KeyAttribute), KeyType: types.KeyTypeHash},
		},
		GlobalSecondaryIndexes: gsis,
		BillingMode:            types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamostore: create table %q: %w", table, err)
	}
	if err := waitActive(ctx, client, table); err != nil {
		return err
	}
	missing, err := checkSchema(ctx, client, table)
	if err != nil {
		return err
	}
	for _, idx := range missing {
		if err := addIndex(ctx, client, table, idx); err != nil {
			return err
		}
	}
	return nil
}

// globalIndex is the CreateTable form of idx.
func globalIndex(idx GamesIndex) types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(idx.Name),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(idx.PartitionKey), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(idx.SortKey), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: idx.NonKeyAttributes},
	}
}

// waitActive waits until the table and all its indexes are ACTIVE.
func waitActive(ctx context.Context, client *dynamodb.Client, table string) error {
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, tableActiveTimeout); err != nil {
		return fmt.Errorf("dynamostore: wait for table %q to become active: %w", table, err)
	}
	ctx, cancel := context.WithTimeout(ctx, tableActiveTimeout)
	defer cancel()
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("dynamostore: describe table %q: %w", table, err)
		}
		pending := ""
		for _, g := range out.Table.GlobalSecondaryIndexes {
			if g.IndexStatus != "" && g.IndexStatus != types.IndexStatusActive {
				pending = aws.ToString(g.IndexName)
			}
		}
		if pending == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dynamostore: wait for index %s of %q to become active: %w", pending, table, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// checkSchema verifies that an existing table is keyed by gameId alone and
// that the game indexes it has are the ones GamesIndexes describes; it
// returns the ones it lacks.
func checkSchema(ctx context.Context, client *dynamodb.Client, table string) (missing []GamesIndex, err error) {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: describe table %q: %w", table, err)
	}
	keys := out.Table.KeySchema
	if len(keys) != 1 || aws.ToString(keys[0].AttributeName) != KeyAttribute || keys[0].KeyType != types.KeyTypeHash {
		return nil, fmt.Errorf("dynamostore: table %q exists with another key schema (want partition key %q only)", table, KeyAttribute)
	}
	have := map[string]types.GlobalSecondaryIndexDescription{}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		have[aws.ToString(g.IndexName)] = g
	}
	for _, want := range GamesIndexes() {
		g, ok := have[want.Name]
		if !ok {
			missing = append(missing, want)
			continue
		}
		ks := g.KeySchema
		if len(ks) != 2 || aws.ToString(ks[0].AttributeName) != want.PartitionKey || ks[0].KeyType != types.KeyTypeHash ||
			aws.ToString(ks[1].AttributeName) != want.SortKey || ks[1].KeyType != types.KeyTypeRange {
			return nil, fmt.Errorf("dynamostore: table %q has an index %s with another key schema (want %s, %s)", table, want.Name, want.PartitionKey, want.SortKey)
		}
	}
	return missing, nil
}

// addIndex adds one game index to an existing table and waits for it.
func addIndex(ctx context.Context, client *dynamodb.Client, table string, idx GamesIndex) error {
	gsi := globalIndex(idx)
	_, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(idx.PartitionKey), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(idx.SortKey), AttributeType: types.ScalarAttributeTypeS},
		},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
			IndexName: gsi.IndexName, KeySchema: gsi.KeySchema, Projection: gsi.Projection,
		}}},
	})
	if err != nil {
		return fmt.Errorf("dynamostore: table %q lacks the game index %s and adding it failed (recreate the table): %w", table, idx.Name, err)
	}
	return waitActive(ctx, client, table)
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
