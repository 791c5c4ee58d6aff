package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// The stream consumers' dead-letter queue (fanout.go): a record a consumer
// gives up on is written to an SQS queue whole — both images, as Lambda
// delivered it — with the function to replay it through. Lambda's own
// on-failure destination for a stream event source records only the
// batch's description (shard, first and last sequence numbers), not the
// records: "Each record sent to the destination is a JSON document
// containing metadata about the failed invocation"
// (https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html);
// the stream itself keeps them 24 hours. So the consumer writes the record
// itself, before Lambda would give up on it (the retry window is shorter
// than the mapping's MaximumRecordAgeInSeconds), and the mapping's
// destination stays the backstop for a consumer that cannot even reach
// the queue.

// DeadLetterKind names the message format (the "kind" of every message a
// consumer writes); another kind in the queue is not one of these.
const DeadLetterKind = "chessapi.streamRecord/v1"

// RedriveEventSource is the eventSource of a record replayed by cmd/ops
// redrive: a consumer that fails it again answers the failure instead of
// writing it to the queue once more, so the redrive leaves the message
// where it is and says so.
const RedriveEventSource = "chessapi:redrive"

// MaxDeadLetterBytes is the largest message SQS accepts (1 MiB, the
// SendMessage body limit; the queue's MaximumMessageSize is set to it in
// template.yaml). A record too large for it stays on the stream.
const MaxDeadLetterBytes = 1 << 20

// DeadLetter is one record a stream consumer gave up on: the body of its
// message in the dead-letter queue.
type DeadLetter struct {
	Kind string `json:"kind"` // DeadLetterKind
	// Function is the consumer's function name: the redrive invokes it
	// (empty when the consumer did not know its name: cmd/ops redrive
	// then needs -function).
	Function string `json:"function,omitempty"`
	// Role is the consumer's role (fanout or effects).
	Role string `json:"role"`
	// Error is why the consumer gave up (its last failure).
	Error    string                     `json:"error"`
	FailedAt time.Time                  `json:"failedAt"`
	Record   events.DynamoDBEventRecord `json:"record"`
}

// DeadLetterError reports a queue message that is not a DeadLetter this
// code can replay.
type DeadLetterError struct {
	Field  string // the field at fault; "" when the message is not JSON at all
	Reason string
}

func (e *DeadLetterError) Error() string {
	if e.Field == "" {
		return "lambdafn: dead letter: " + e.Reason
	}
	return fmt.Sprintf("lambdafn: dead letter: %s: %s", e.Field, e.Reason)
}

// EncodeDeadLetter is the message body of d.
func EncodeDeadLetter(d DeadLetter) ([]byte, error) {
	d.Kind = DeadLetterKind
	body, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: dead letter of %s: %w", d.Record.EventID, err)
	}
	if len(body) > MaxDeadLetterBytes {
		return nil, fmt.Errorf("lambdafn: dead letter of %s: %d bytes, over SQS's %d", d.Record.EventID, len(body), MaxDeadLetterBytes)
	}
	return body, nil
}

// DecodeDeadLetter reads a message body written by EncodeDeadLetter. A
// message of another kind (the event source mapping's own description of
// a batch, say) or with a record that cannot be replayed is a
// *DeadLetterError naming the field.
func DecodeDeadLetter(body []byte) (DeadLetter, error) {
	var d DeadLetter
	if !utf8.Valid(body) {
		return d, &DeadLetterError{Reason: "not UTF-8 text"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&d); err != nil {
		return DeadLetter{}, &DeadLetterError{Reason: "not a JSON object: " + err.Error()}
	}
	if _, err := dec.Token(); err != io.EOF {
		return DeadLetter{}, &DeadLetterError{Reason: "more than one JSON value"}
	}
	r := d.Record
	switch {
	case d.Kind != DeadLetterKind:
		return DeadLetter{}, &DeadLetterError{Field: "kind", Reason: fmt.Sprintf("%q is not %q", d.Kind, DeadLetterKind)}
	case d.Role != string(Fanout) && d.Role != string(Effects):
		return DeadLetter{}, &DeadLetterError{Field: "role", Reason: fmt.Sprintf("%q is not %s or %s", d.Role, Fanout, Effects)}
	case r.EventID == "":
		return DeadLetter{}, &DeadLetterError{Field: "record.eventID", Reason: "missing"}
	case r.EventName != "INSERT" && r.EventName != "MODIFY":
		return DeadLetter{}, &DeadLetterError{Field: "record.eventName", Reason: fmt.Sprintf("%q is not INSERT or MODIFY", r.EventName)}
	case r.Change.SequenceNumber == "":
		return DeadLetter{}, &DeadLetterError{Field: "record.dynamodb.SequenceNumber", Reason: "missing"}
	case len(r.Change.NewImage) == 0:
		return DeadLetter{}, &DeadLetterError{Field: "record.dynamodb.NewImage", Reason: "missing"}
	case strings.ContainsAny(d.Function, " \t\n/"):
		return DeadLetter{}, &DeadLetterError{Field: "function", Reason: fmt.Sprintf("%q is not a function name", d.Function)}
	}
	return d, nil
}

// DeadLetterQueue is where a stream consumer writes what it gives up on.
type DeadLetterQueue interface {
	Send(ctx context.Context, body []byte) error
}

// deadLetter writes r, whole, to the function's dead-letter queue.
func (a *App) deadLetter(ctx context.Context, r events.DynamoDBEventRecord, cause error) error {
	if a.deadLetters == nil {
		return errors.New("no dead-letter queue")
	}
	body, err := EncodeDeadLetter(DeadLetter{Function: a.functionName, Role: string(a.fn), Error: cause.Error(), FailedAt: time.Now().UTC(), Record: r})
	if err != nil {
		return err
	}
	return a.deadLetters.Send(ctx, body)
}

// SQSAPI is the part of *sqs.Client the dead-letter queue and the redrive
// use.
type SQSAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

// SQSQueue is an SQS queue, by URL.
type SQSQueue struct {
	Client SQSAPI
	URL    string
}

var _ DeadLetterQueue = SQSQueue{}

// Send puts one message in the queue.
func (q SQSQueue) Send(ctx context.Context, body []byte) error {
	_, err := q.Client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q.URL), MessageBody: aws.String(string(body))})
	if err != nil {
		return fmt.Errorf("lambdafn: dead-letter queue: %w", err)
	}
	return nil
}
