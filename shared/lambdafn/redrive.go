package lambdafn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Redrive replays the dead-letter queue's records through the functions
// that gave up on them (cmd/ops redrive): each message's record is handed
// to its consumer function as a batch of one, synchronously, exactly as
// the stream would deliver it but marked RedriveEventSource; a record the
// function then does is deleted from the queue, one it fails again stays
// (and is said to). The effects are idempotent, so a record replayed
// twice, or replayed after a later version of its game, does no harm: the
// timer it claims is armed (a superseded one fires once into a no-op), an
// AI task for a ply that is past is a no-op, a rated result is applied
// once.
//
// A message of another kind — the event source mapping's own description
// of a batch, written when a consumer could not even reach the queue — is
// left in the queue and described (its shard and sequence range): its
// records, if still in the stream (24 hours), are read from there.

// LambdaInvokeAPI is the part of *lambda.Client the redrive uses.
type LambdaInvokeAPI interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// RedriveOptions say what to redrive and where.
type RedriveOptions struct {
	Queue  SQSQueue
	Lambda LambdaInvokeAPI
	// Function replays the messages that name no function.
	Function string
	// Max stops after that many messages (0: until the queue is empty).
	Max int
	// DryRun lists what would be replayed and changes nothing.
	DryRun bool
	// Visibility is how long a message read is hidden from other readers
	// (SQS's visibility timeout): longer than one replay takes.
	Visibility time.Duration
	Log        io.Writer
}

// RedriveStats is what a redrive did.
type RedriveStats struct {
	Read, Replayed, Failed, Other int
}

// Redrive replays the queue's records until it is empty (or o.Max).
func Redrive(ctx context.Context, o RedriveOptions) (RedriveStats, error) {
	var st RedriveStats
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Visibility <= 0 {
		o.Visibility = time.Minute
	}
	seen := map[string]bool{}
	for o.Max == 0 || st.Read < o.Max {
		batch := int32(10)
		if o.Max > 0 {
			batch = int32(min(10, o.Max-st.Read))
		}
		out, err := o.Queue.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(o.Queue.URL), MaxNumberOfMessages: batch, WaitTimeSeconds: 1,
			VisibilityTimeout: int32(o.Visibility / time.Second),
		})
		if err != nil {
			return st, fmt.Errorf("lambdafn: redrive: read %s: %w", o.Queue.URL, err)
		}
		fresh := 0
		for _, m := range out.Messages {
			id := aws.ToString(m.MessageId)
			if seen[id] {
				continue // failed earlier in this run and visible again
			}
			seen[id] = true
			fresh++
			st.Read++
			replayed, err := redriveOne(ctx, o, aws.ToString(m.Body))
			switch {
			case errors.As(err, new(*DeadLetterError)):
				st.Other++
				fmt.Fprintf(o.Log, "redrive: message %s left in the queue: %v%s\n", id, err, describeBatchInfo(aws.ToString(m.Body)))
				continue
			case err != nil:
				st.Failed++
				fmt.Fprintf(o.Log, "redrive: message %s left in the queue: %v\n", id, err)
				continue
			case !replayed:
				continue // dry run
			}
			if _, err := o.Queue.Client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(o.Queue.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
				return st, fmt.Errorf("lambdafn: redrive: message %s replayed, not deleted (it will be replayed again, harmlessly): %w", id, err)
			}
			st.Replayed++
		}
		if fresh == 0 {
			break
		}
	}
	return st, nil
}

// redriveOne replays one message; false with a nil error is a dry run.
func redriveOne(ctx context.Context, o RedriveOptions, body string) (bool, error) {
	d, err := DecodeDeadLetter([]byte(body))
	if err != nil {
		return false, err
	}
	fn := d.Function
	if fn == "" {
		fn = o.Function
	}
	if fn == "" {
		return false, fmt.Errorf("record %s of role %s names no function: give -function", d.Record.EventID, d.Role)
	}
	game := recordGame(d.Record)
	if o.DryRun {
		fmt.Fprintf(o.Log, "redrive: would replay %s record %s (game %s, %s) through %s; it failed: %s\n", d.Role, d.Record.EventID, game, d.Record.EventName, fn, d.Error)
		return false, nil
	}
	r := d.Record
	r.EventSource = RedriveEventSource
	payload, err := json.Marshal(events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{r}})
	if err != nil {
		return false, err
	}
	res, err := o.Lambda.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(fn), Payload: payload, InvocationType: lambdatypes.InvocationTypeRequestResponse})
	if err != nil {
		return false, fmt.Errorf("invoke %s: %w", fn, err)
	}
	if res.FunctionError != nil {
		return false, fmt.Errorf("%s failed on record %s (game %s): %s %s", fn, r.EventID, game, aws.ToString(res.FunctionError), res.Payload)
	}
	var resp events.DynamoDBEventResponse
	if err := json.Unmarshal(res.Payload, &resp); err != nil {
		return false, fmt.Errorf("%s answered %q: %w", fn, res.Payload, err)
	}
	if len(resp.BatchItemFailures) > 0 {
		return false, fmt.Errorf("%s failed record %s (game %s) again (its log says why)", fn, r.EventID, game)
	}
	fmt.Fprintf(o.Log, "redrive: replayed %s record %s (game %s) through %s\n", d.Role, r.EventID, game, fn)
	return true, nil
}

// describeBatchInfo describes the event source mapping's own on-failure
// message (a batch's shard and sequence range), "" for anything else.
func describeBatchInfo(body string) string {
	var m struct {
		Info *struct {
			ShardID string `json:"shardId"`
			Start   string `json:"startSequenceNumber"`
			End     string `json:"endSequenceNumber"`
			Size    int    `json:"batchSize"`
			Stream  string `json:"streamArn"`
		} `json:"DDBStreamBatchInfo"`
		Context struct {
			FunctionARN string `json:"functionArn"`
			Condition   string `json:"condition"`
		} `json:"requestContext"`
	}
	if json.Unmarshal([]byte(body), &m) != nil || m.Info == nil {
		return ""
	}
	return fmt.Sprintf(" (Lambda's description of a batch %s gave up on (%s): %d records of shard %s, sequence numbers %s to %s, in %s: read them from the stream while it keeps them, 24 hours)",
		m.Context.FunctionARN, m.Context.Condition, m.Info.Size, m.Info.ShardID, m.Info.Start, m.Info.End, m.Info.Stream)
}
