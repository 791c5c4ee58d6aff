package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// queueAPI is the part of *sqs.Client the queue poller uses.
type queueAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// queuePoller does what Lambda's SQS event source mapping does with the
// deadline queue (moto's SQS, which honours DelaySeconds: a message is
// received only once its delay has passed): it long-polls the queue,
// invokes the function synchronously with each batch as an SQS event,
// and deletes the records that succeeded — all of them, or all but the
// partial batch response's batchItemFailures; a function error or a
// failed invoke deletes none. What it does not delete comes back after
// the queue's visibility timeout, and after the redrive policy's receives
// moto moves it to the dead-letter queue, as SQS does.
//
// One batch at a time, so the function's instances are never handed
// overlapping invokes by the poller (the emulator misbehaves on them);
// Lambda runs up to the mapping's MaximumConcurrency batches at once,
// which changes how soon a batch runs under load, not what it costs.
//
// Its requests go to moto directly, not through the counting proxy: they
// are Lambda's own, counted as platform units ("sqs:ESMReceive" and
// "sqs:ESMDelete" requests, billed as SQS requests, "sqs:ESMReceiveEmpty"
// the receives that found nothing; "lambda:QueueBatches"
// and "lambda:QueueRecords" invoked, "lambda:QueueRecordsFailed" left for
// redelivery).
type queuePoller struct {
	client queueAPI
	url    string
	arn    string
	src    queueSource
	fn     invoker
	counts *counters
	log    io.Writer
	// interval is the pause after a receive that found nothing. The
	// poller short-polls (WaitTimeSeconds 0): moto_server answers one
	// request at a time, so a long poll would hold every other call of
	// the stack (Lambda's pollers long-poll, up to 20 s).
	interval time.Duration

	mu   sync.Mutex
	busy bool // a batch received and not yet done
}

func newQueuePoller(client queueAPI, url, arn string, src queueSource, fn invoker, counts *counters, log io.Writer, interval time.Duration) *queuePoller {
	return &queuePoller{client: client, url: url, arn: arn, src: src, fn: fn, counts: counts, log: log, interval: interval}
}

func (q *queuePoller) run(ctx context.Context) {
	for ctx.Err() == nil {
		got, err := q.poll(ctx)
		if err != nil && ctx.Err() == nil {
			fmt.Fprintf(q.log, "emustack: deadline queue: %v\n", err)
		}
		if got && err == nil {
			continue // more may be visible already
		}
		select {
		case <-time.After(q.interval):
		case <-ctx.Done():
		}
	}
}

// poll receives one batch, if any is visible, and delivers it; got says
// whether there was one.
func (q *queuePoller) poll(ctx context.Context) (got bool, err error) {
	out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(q.url),
		MaxNumberOfMessages:         int32(q.src.BatchSize),
		WaitTimeSeconds:             0,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	q.counts.event("sqs:ESMReceive", 1)
	if err != nil {
		return false, fmt.Errorf("ReceiveMessage: %w", err)
	}
	if len(out.Messages) == 0 {
		// Lambda's pollers poll an idle queue too (billed; 20 s long
		// polls on AWS, a short poll every q.interval here).
		q.counts.event("sqs:ESMReceiveEmpty", 1)
		return false, nil
	}
	q.setBusy(true)
	defer q.setBusy(false)
	return true, q.deliver(ctx, out.Messages)
}

func (q *queuePoller) setBusy(b bool) {
	q.mu.Lock()
	q.busy = b
	q.mu.Unlock()
}

// idle reports whether no batch is being delivered.
func (q *queuePoller) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.busy
}

// deliver invokes the function with msgs and deletes what succeeded.
func (q *queuePoller) deliver(ctx context.Context, msgs []sqstypes.Message) error {
	ev := events.SQSEvent{}
	for _, m := range msgs {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
			Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: q.arn, AWSRegion: region,
		})
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	q.counts.event("lambda:QueueBatches", 1)
	q.counts.event("lambda:QueueRecords", int64(len(msgs)))
	res, err := q.fn.invoke(ctx, payload)
	if err != nil || res.FunctionError != nil {
		// The whole batch comes back after the visibility timeout.
		q.counts.event("lambda:QueueRecordsFailed", int64(len(msgs)))
		why := fmt.Sprint(err)
		if res.FunctionError != nil {
			why = res.FunctionError.Error()
		}
		return fmt.Errorf("%s failed a batch of %d (%s): it is delivered again after %v", q.src.Function, len(msgs), why, q.src.Visibility)
	}
	failed, err := batchItemFailures(res.Payload, ev)
	if err != nil {
		q.counts.event("lambda:QueueRecordsFailed", int64(len(msgs)))
		return fmt.Errorf("%s's answer to a batch: %w (Lambda then counts every record failed)", q.src.Function, err)
	}
	q.counts.event("lambda:QueueRecordsFailed", int64(len(failed)))
	var del []sqstypes.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if !failed[aws.ToString(m.MessageId)] {
			del = append(del, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
		}
	}
	if len(del) == 0 {
		return nil
	}
	q.counts.event("sqs:ESMDelete", 1)
	out, err := q.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q.url), Entries: del})
	if err != nil {
		return fmt.Errorf("DeleteMessageBatch: %w", err)
	}
	if len(out.Failed) > 0 {
		return fmt.Errorf("DeleteMessageBatch: %d of %d not deleted (%s)", len(out.Failed), len(del), aws.ToString(out.Failed[0].Message))
	}
	return nil
}

// batchItemFailures reads a partial batch response: the ids of the
// records it names. An empty or null answer fails nothing; an answer
// naming a record that is not in the batch is an error (Lambda then
// fails the whole batch).
func batchItemFailures(payload []byte, ev events.SQSEvent) (map[string]bool, error) {
	failed := map[string]bool{}
	if len(payload) == 0 || string(payload) == "null" {
		return failed, nil
	}
	var resp events.SQSEventResponse
	if err := json.Unmarshal(payload, &resp); err != nil {
		return nil, fmt.Errorf("not a partial batch response: %w", err)
	}
	in := map[string]bool{}
	for _, r := range ev.Records {
		in[r.MessageId] = true
	}
	for _, f := range resp.BatchItemFailures {
		if !in[f.ItemIdentifier] {
			return nil, errors.New("batchItemFailures names " + strconv.Quote(f.ItemIdentifier) + ", which is not in the batch")
		}
		failed[f.ItemIdentifier] = true
	}
	return failed, nil
}
