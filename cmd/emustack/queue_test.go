package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"chessapi/infra/rie"
)

// fakeQueue hands out its messages once and records what is deleted.
type fakeQueue struct {
	msgs    []sqstypes.Message
	deleted []string // receipt handles
}

func (q *fakeQueue) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	n := min(int(in.MaxNumberOfMessages), len(q.msgs))
	out := q.msgs[:n]
	q.msgs = q.msgs[n:]
	return &sqs.ReceiveMessageOutput{Messages: out}, nil
}

func (q *fakeQueue) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	for _, e := range in.Entries {
		q.deleted = append(q.deleted, aws.ToString(e.ReceiptHandle))
	}
	return &sqs.DeleteMessageBatchOutput{}, nil
}

// answering is a function that answers every batch with answer (or fails).
type answering struct {
	answer func(ev events.SQSEvent) (rie.Result, error)
	got    []events.SQSEvent
}

func (a *answering) invoke(_ context.Context, payload []byte) (rie.Result, error) {
	var ev events.SQSEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return rie.Result{}, err
	}
	a.got = append(a.got, ev)
	return a.answer(ev)
}

func messages(n int) []sqstypes.Message {
	var out []sqstypes.Message
	for i := range n {
		id := string(rune('a' + i))
		out = append(out, sqstypes.Message{MessageId: aws.String(id), ReceiptHandle: aws.String("rh-" + id), Body: aws.String(`{"gameId":"g` + id + `"}`)})
	}
	return out
}

// TestQueuePollerDeletesWhatSucceeded: the poller hands the function a
// batch as Lambda's SQS event source does, deletes every record the
// partial batch response does not name, and none when the function
// fails or names a record that is not in the batch.
func TestQueuePollerDeletesWhatSucceeded(t *testing.T) {
	partial := func(ids ...string) func(events.SQSEvent) (rie.Result, error) {
		return func(events.SQSEvent) (rie.Result, error) {
			resp := events.SQSEventResponse{}
			for _, id := range ids {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
			}
			body, _ := json.Marshal(resp)
			return rie.Result{Payload: body}, nil
		}
	}
	for _, tc := range []struct {
		name    string
		answer  func(events.SQSEvent) (rie.Result, error)
		deleted []string
		err     bool
	}{
		{"all succeeded", partial(), []string{"rh-a", "rh-b", "rh-c"}, false},
		{"a null answer", func(events.SQSEvent) (rie.Result, error) { return rie.Result{Payload: []byte("null")}, nil }, []string{"rh-a", "rh-b", "rh-c"}, false},
		{"one failed", partial("b"), []string{"rh-a", "rh-c"}, false},
		{"every one failed", partial("a", "b", "c"), nil, false},
		{"a function error", func(events.SQSEvent) (rie.Result, error) {
			return rie.Result{FunctionError: &rie.FunctionError{Type: "Runtime.ExitError", Message: "boom"}}, nil
		}, nil, true},
		{"the invoke failed", func(events.SQSEvent) (rie.Result, error) { return rie.Result{}, errors.New("instance died") }, nil, true},
		{"an id not in the batch", partial("z"), nil, true},
		{"not a response", func(events.SQSEvent) (rie.Result, error) { return rie.Result{Payload: []byte(`"ok"`)}, nil }, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &fakeQueue{msgs: messages(3)}
			fn := &answering{answer: tc.answer}
			counts := newCounters(func() map[string]int { return nil })
			p := newQueuePoller(q, "http://127.0.0.1:1/123456789012/chessapi-deadlines", "arn:aws:sqs:us-east-1:123456789012:chessapi-deadlines",
				queueSource{Function: "TimeoutFunction", BatchSize: 10}, fn, counts, io.Discard, time.Second)
			got, err := p.poll(t.Context())
			if !got {
				t.Error("poll found no batch")
			}
			if (err != nil) != tc.err {
				t.Fatalf("poll: %v; want an error %v", err, tc.err)
			}
			if !slices.Equal(q.deleted, tc.deleted) {
				t.Errorf("deleted %v; want %v", q.deleted, tc.deleted)
			}
			if len(fn.got) != 1 || len(fn.got[0].Records) != 3 {
				t.Fatalf("invocations %+v; want one batch of 3", fn.got)
			}
			r := fn.got[0].Records[1]
			if r.EventSource != "aws:sqs" || r.MessageId != "b" || r.ReceiptHandle != "rh-b" || r.Body != `{"gameId":"gb"}` || r.EventSourceARN == "" {
				t.Errorf("record %+v; want the message as Lambda delivers it", r)
			}
			c := counts.take(false)
			if c.Platform["sqs:ESMReceive"] != 1 || c.Platform["lambda:QueueRecords"] != 3 || c.Platform["lambda:QueueRecordsFailed"] != int64(3-len(tc.deleted)) {
				t.Errorf("counts %v", c.Platform)
			}
			if !p.idle() {
				t.Error("the poller is busy after the batch")
			}
		})
	}
}
