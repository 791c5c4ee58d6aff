// Package dynamostore keeps games in a DynamoDB table, one item per game,
// with optimistic concurrency on a numeric version attribute.
//
// Create is a PutItem conditioned on attribute_not_exists(gameId); Update is
// a PutItem of the whole item conditioned on version = :expected; Get is a
// strongly consistent GetItem. The game index rides on the same item and
// is read with Query on its global secondary indexes (index.go). Only
// these operations are used (no transactions, no UpdateItem, no
// ReturnValuesOnConditionCheckFailure) so the store also runs against
// dynalite. Every write carries a random write token, so that a
// conditional write retried by the SDK after it had been applied is
// recognised as the writer's own (conditionalPut), not reported as a conflict.
//
// The endpoint comes from the AWS SDK configuration: AWS_ENDPOINT_URL_DYNAMODB
// (honoured by config.LoadDefaultConfig) points it at an emulator.
package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// API is the part of *dynamodb.Client the store uses.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	// Query reads the game index (index.go).
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
}

// Store is a service.Store on one DynamoDB table.
type Store struct {
	client API
	table  string
}

var _ service.Store = (*Store)(nil)

// New returns a store on table through client.
func New(client API, table string) (*Store, error) {
	if client == nil {
		return nil, errors.New("dynamostore: nil DynamoDB client")
	}
	if table == "" {
		return nil, errors.New("dynamostore: empty table name (set GAMES_TABLE)")
	}
	return &Store{client: client, table: table}, nil
}

// NewFromConfig returns a store on table with a DynamoDB client made from
// cfg (as returned by config.LoadDefaultConfig, which applies
// AWS_ENDPOINT_URL_DYNAMODB).
func NewFromConfig(cfg aws.Config, table string) (*Store, error) {
	return New(dynamodb.NewFromConfig(cfg), table)
}

// Table is the table name the store writes to.
func (s *Store) Table() string { return s.table }

// Create stores a new record; service.ErrAlreadyExists if the id is taken.
func (s *Store) Create(ctx context.Context, rec service.GameRecord) error {
	token := newWriteToken()
	item, err := s.item(rec, token)
	if err != nil {
		return fmt.Errorf("dynamostore: create game %q: %w", rec.GameID, err)
	}
	err = s.conditionalPut(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#id)"),
		ExpressionAttributeNames: map[string]string{"#id": attrGameID},
	}, rec.GameID, token)
	if err != nil {
		return fmt.Errorf("dynamostore: create game %q: %w", rec.GameID, mapError(err, service.ErrAlreadyExists))
	}
	return nil
}

// Get reads the record with a strongly consistent read;
// service.ErrNotFound if there is none.
func (s *Store) Get(ctx context.Context, gameID string) (service.GameRecord, error) {
	if gameID == "" {
		return service.GameRecord{}, fmt.Errorf("dynamostore: get game: %w", errEmptyID)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            map[string]types.AttributeValue{attrGameID: &types.AttributeValueMemberS{Value: gameID}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return service.GameRecord{}, fmt.Errorf("dynamostore: get game %q: %w", gameID, err)
	}
	if out.Item == nil {
		return service.GameRecord{}, fmt.Errorf("dynamostore: get game %q: %w", gameID, service.ErrNotFound)
	}
	rec, err := decodeItem(out.Item)
	if err != nil {
		return service.GameRecord{}, err
	}
	if rec.GameID != gameID {
		return service.GameRecord{}, &ItemError{GameID: gameID, Attribute: attrGameID, Reason: fmt.Sprintf("item holds id %q", rec.GameID)}
	}
	return rec, nil
}

// Update replaces the whole item if its version is still expectedVersion;
// service.ErrVersionConflict otherwise, also when there is no item.
func (s *Store) Update(ctx context.Context, rec service.GameRecord, expectedVersion int64) error {
	token := newWriteToken()
	item, err := s.item(rec, token)
	if err != nil {
		return fmt.Errorf("dynamostore: update game %q: %w", rec.GameID, err)
	}
	err = s.conditionalPut(ctx, &dynamodb.PutItemInput{
		TableName:                 aws.String(s.table),
		Item:                      item,
		ConditionExpression:       aws.String("#v = :expected"),
		ExpressionAttributeNames:  map[string]string{"#v": attrVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{":expected": number(expectedVersion)},
	}, rec.GameID, token)
	if err != nil {
		return fmt.Errorf("dynamostore: update game %q from version %d: %w", rec.GameID, expectedVersion, mapError(err, service.ErrVersionConflict))
	}
	return nil
}

var errEmptyID = errors.New("empty game id")

// TooLargeError is returned (wrapping service.ErrTooLarge) for a record
// whose item would pass DynamoDB's item size limit. Nothing is sent then.
type TooLargeError struct {
	Size, Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("item would be %d bytes, over DynamoDB's %d-byte item limit", e.Size, e.Limit)
}

func (e *TooLargeError) Unwrap() error { return service.ErrTooLarge }

// newWriteToken is a fresh attrWriteToken value: 64 random bits are
// plenty, as it only has to differ from the other writes of one version.
// Always 16 characters, so an item's size does not depend on it.
func newWriteToken() string { return fmt.Sprintf("%016x", rand.Uint64()) }

// countAttempts counts the attempts the SDK's retryer makes of one call
// (the middleware sits after the "Retry" step, so it runs once per
// attempt): a condition failed on the first attempt is a plain conflict,
// and only one failed on a retry needs conditionalPut's read.
func countAttempts(n *atomic.Int32) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Finalize.Insert(middleware.FinalizeMiddlewareFunc("chessapiCountAttempts",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					n.Add(1)
					return next.HandleFinalize(ctx, in)
				}), "Retry", middleware.After)
		})
	}
}

// conditionalPut sends in, the conditional PutItem of game gameID's item
// carrying token, and answers nil also when its condition failed only
// because the write had already been applied: the AWS SDK retries a
// request after a connection reset, a timeout or a 5xx (aws-sdk-go-v2
// retry.Standard, DefaultRetryables; DynamoDB's error handling guide), and
// a retry of a conditional write that DynamoDB had applied fails its own
// condition. Only a condition failed on a retry costs a strongly
// consistent read of the item's token; any doubt (another token, a failed
// read) is the conflict the write reported, which the caller resolves from
// a fresh read.
func (s *Store) conditionalPut(ctx context.Context, in *dynamodb.PutItemInput, gameID, token string) error {
	var attempts atomic.Int32
	_, err := s.client.PutItem(ctx, in, countAttempts(&attempts))
	if err == nil || attempts.Load() < 2 || !isConditionFailed(err) {
		return err
	}
	out, getErr := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(s.table),
		Key:                      map[string]types.AttributeValue{attrGameID: &types.AttributeValueMemberS{Value: gameID}},
		ConsistentRead:           aws.Bool(true),
		ProjectionExpression:     aws.String("#w"),
		ExpressionAttributeNames: map[string]string{"#w": attrWriteToken},
	})
	if getErr != nil || out.Item == nil {
		return err
	}
	// The token is this write's alone, so it also stands for the version.
	if stored, ok := out.Item[attrWriteToken].(*types.AttributeValueMemberS); ok && stored.Value == token {
		return nil
	}
	return err
}

// item validates rec and encodes it with its write token, refusing
// oversize items before they reach the network.
func (s *Store) item(rec service.GameRecord, token string) (map[string]types.AttributeValue, error) {
	switch {
	case rec.GameID == "":
		return nil, errEmptyID
	case rec.Version < 1:
		return nil, fmt.Errorf("version %d is not positive", rec.Version)
	case rec.StateVersion < 0:
		return nil, fmt.Errorf("state version %d is negative", rec.StateVersion)
	}
	if err := rules.ValidateIndex(rec.GameID, rec.Index); err != nil {
		return nil, err
	}
	item := encodeItem(rec)
	item[attrWriteToken] = &types.AttributeValueMemberS{Value: token}
	if size := itemSize(item); size > MaxItemSize {
		return nil, &TooLargeError{Size: size, Limit: MaxItemSize}
	}
	return item, nil
}

// mapError turns a failed condition into the given sentinel and a size
// rejection by the server into service.ErrTooLarge, keeping the SDK error
// in the chain for the logs.
func mapError(err error, onConditionFailed error) error {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("%w (%v)", onConditionFailed, err)
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode() == "ValidationException" &&
		strings.Contains(apiErr.ErrorMessage(), "Item size has exceeded") {
		return fmt.Errorf("%w (%v)", service.ErrTooLarge, err)
	}
	return err
}
