package emulator

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"chessapi/shared/store/dynamostore"
)

// ChangeStream reads a table's DynamoDB Stream on moto the way Lambda's
// event source mapping does, and hands out what it read as the
// events.DynamoDBEvent Lambda would deliver to the fan-out function. Tests
// call Next where Lambda would poll; nothing runs in the background, so a
// test decides exactly when the fan-out sees a commit (and can leave it
// unseen, as when the writer dies before any fan-out).
type ChangeStream struct {
	client    *dynamodbstreams.Client
	streamARN string
	iterators map[string]*string // shard id -> next iterator
	done      map[string]bool    // closed shards read to their end
}

// EnableChangeStream turns on the games table's stream (new and old
// images, as the template does) on moto at endpoint and returns a reader
// positioned at its start.
func EnableChangeStream(ctx context.Context, endpoint, table string) (*ChangeStream, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cfg := Config(endpoint)
	arn, err := dynamostore.EnableStream(ctx, dynamodb.NewFromConfig(cfg), table)
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	if arn == "" {
		return nil, fmt.Errorf("emulator: enabling the stream of %s returned no stream ARN", table)
	}
	return &ChangeStream{
		client:    dynamodbstreams.NewFromConfig(cfg),
		streamARN: arn,
		iterators: map[string]*string{},
		done:      map[string]bool{},
	}, nil
}

// Rewind makes the next Next read the stream from its start again: every
// record is delivered once more, as Lambda does after a failed batch or
// when a mapping is recreated (at-least-once delivery).
func (c *ChangeStream) Rewind() {
	clear(c.iterators)
	clear(c.done)
}

// ARN is the stream's ARN (the event source of the records).
func (c *ChangeStream) ARN() string { return c.streamARN }

// Next returns every record written since the last call, in stream order
// per shard, as Lambda's event; an empty event when there is none.
func (c *ChangeStream) Next(ctx context.Context) (events.DynamoDBEvent, error) {
	var ev events.DynamoDBEvent
	desc, err := c.client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(c.streamARN)})
	if err != nil {
		return ev, fmt.Errorf("emulator: DescribeStream: %w", err)
	}
	for _, shard := range desc.StreamDescription.Shards {
		id := aws.ToString(shard.ShardId)
		if c.done[id] {
			continue
		}
		it, ok := c.iterators[id]
		if !ok {
			out, err := c.client.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
				StreamArn: aws.String(c.streamARN), ShardId: shard.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon,
			})
			if err != nil {
				return ev, fmt.Errorf("emulator: GetShardIterator(%s): %w", id, err)
			}
			it = out.ShardIterator
		}
		for it != nil {
			out, err := c.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
			if err != nil {
				return ev, fmt.Errorf("emulator: GetRecords(%s): %w", id, err)
			}
			for _, r := range out.Records {
				rec, err := lambdaRecord(r, c.streamARN)
				if err != nil {
					return ev, err
				}
				ev.Records = append(ev.Records, rec)
			}
			next := out.NextShardIterator
			if next == nil {
				c.done[id] = true
			}
			if len(out.Records) == 0 || next == nil {
				it = next
				break
			}
			it = next
		}
		c.iterators[id] = it
	}
	return ev, nil
}

// lambdaRecord turns a Streams API record into the record Lambda delivers.
func lambdaRecord(r stypes.Record, arn string) (events.DynamoDBEventRecord, error) {
	out := events.DynamoDBEventRecord{
		AWSRegion:      Region,
		EventID:        aws.ToString(r.EventID),
		EventName:      string(r.EventName),
		EventSource:    "aws:dynamodb",
		EventVersion:   aws.ToString(r.EventVersion),
		EventSourceArn: arn,
	}
	if r.Dynamodb == nil {
		return out, fmt.Errorf("emulator: stream record %s has no dynamodb part", out.EventID)
	}
	d := r.Dynamodb
	var err error
	out.Change = events.DynamoDBStreamRecord{
		SequenceNumber: aws.ToString(d.SequenceNumber),
		SizeBytes:      aws.ToInt64(d.SizeBytes),
		StreamViewType: string(d.StreamViewType),
	}
	if d.ApproximateCreationDateTime != nil {
		out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
	}
	if out.Change.Keys, err = lambdaImage(d.Keys); err != nil {
		return out, err
	}
	if out.Change.NewImage, err = lambdaImage(d.NewImage); err != nil {
		return out, err
	}
	if out.Change.OldImage, err = lambdaImage(d.OldImage); err != nil {
		return out, err
	}
	return out, nil
}

func lambdaImage(image map[string]stypes.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if len(image) == 0 {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(image))
	for name, v := range image {
		av, err := lambdaValue(v)
		if err != nil {
			return nil, fmt.Errorf("emulator: attribute %s: %w", name, err)
		}
		out[name] = av
	}
	return out, nil
}

func lambdaValue(v stypes.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch v := v.(type) {
	case *stypes.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *stypes.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *stypes.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), nil
	case *stypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *stypes.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *stypes.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), nil
	case *stypes.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), nil
	case *stypes.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), nil
	case *stypes.AttributeValueMemberL:
		list := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			av, err := lambdaValue(e)
			if err != nil {
				return av, err
			}
			list[i] = av
		}
		return events.NewListAttribute(list), nil
	case *stypes.AttributeValueMemberM:
		m, err := lambdaImage(v.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		if m == nil {
			m = map[string]events.DynamoDBAttributeValue{}
		}
		return events.NewMapAttribute(m), nil
	}
	return events.DynamoDBAttributeValue{}, fmt.Errorf("unknown attribute value type %T", v)
}
