package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The data table holds everything that is not a game, one item collection
// per partition key (single-table design): stream connections and their
// subscriptions (push), and the players, tokens, link codes, game index
// and lobby of SPEC §12. Its keys:
//
//	pk        S  partition key, "<kind>#<id>"
//	sk        S  sort key
//	gsi1pk    S  partition key of the index gsi1 (secondary access paths)
//	gsi1sk    S  its sort key
//	expiresAt N  epoch seconds; the table's TTL attribute
const (
	attrPK      = "pk"
	attrSK      = "sk"
	attrGSI1PK  = "gsi1pk"
	attrGSI1SK  = "gsi1sk"
	attrExpires = "expiresAt"
	// IndexGSI1 is the data table's one global secondary index.
	IndexGSI1 = "gsi1"
)

// DataTableKeys are the data table's key attributes (partition, sort) and
// its index's, for the template test and CreateDataTable.
var DataTableKeys = struct{ PK, SK, GSI1PK, GSI1SK, TTL string }{attrPK, attrSK, attrGSI1PK, attrGSI1SK, attrExpires}

// Data is the data table.
type Data struct {
	client *dynamodb.Client
	table  string
	now    func() time.Time
}

// NewData returns the data table named table.
func NewData(client *dynamodb.Client, table string) (*Data, error) {
	if client == nil || table == "" {
		return nil, errors.New("dynamostore: data table needs a client and a name")
	}
	return &Data{client: client, table: table, now: time.Now}, nil
}

// CreateDataTable creates the data table (pk/sk, the gsi1 index, on-demand)
// unless it exists, and waits until it is ACTIVE. In AWS the SAM template
// owns it; this is for local servers and tests.
func CreateDataTable(ctx context.Context, client *dynamodb.Client, table string) error {
	s := types.ScalarAttributeTypeS
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPK), AttributeType: s},
			{AttributeName: aws.String(attrSK), AttributeType: s},
			{AttributeName: aws.String(attrGSI1PK), AttributeType: s},
			{AttributeName: aws.String(attrGSI1SK), AttributeType: s},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrSK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: aws.String(IndexGSI1),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(attrGSI1PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(attrGSI1SK), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}},
		BillingMode: types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("dynamostore: create data table %q: %w", table, err)
	}
	waiter := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 2 * time.Second
	})
	if err := waiter.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)}, tableActiveTimeout); err != nil {
		return fmt.Errorf("dynamostore: wait for data table %q: %w", table, err)
	}
	return nil
}

// EnableStream turns on the games table's change stream (new and old
// images), which feeds the fan-out function. In AWS the template does it.
func EnableStream(ctx context.Context, client *dynamodb.Client, table string) (streamARN string, err error) {
	out, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName: aws.String(table),
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		},
	})
	if err != nil {
		return "", fmt.Errorf("dynamostore: enable stream on %q: %w", table, err)
	}
	return aws.ToString(out.TableDescription.LatestStreamArn), nil
}

// Item helpers.

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func key(pk, sk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPK: s(pk), attrSK: s(sk)}
}

// str reads a string attribute ("" when absent).
func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// num reads a number attribute (0 when absent or malformed).
func num(item map[string]types.AttributeValue, name string) int64 {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		i, _ := strconv.ParseInt(v.Value, 10, 64)
		return i
	}
	return 0
}

// queryAll runs a query to its end (every page).
func (d *Data) queryAll(ctx context.Context, in *dynamodb.QueryInput) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	p := dynamodb.NewQueryPaginator(d.client, in)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Items...)
	}
	return out, nil
}
