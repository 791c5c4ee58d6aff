package lambdafn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"chessapi/shared/retry"
	"chessapi/shared/service"
)

// The batch structure of the stream consumers (fanout.go), driven with a
// work function of the test's own.

// recordingQueue is a dead-letter queue that keeps what is sent.
type recordingQueue struct {
	mu     sync.Mutex
	bodies [][]byte
	fail   error
}

func (q *recordingQueue) Send(_ context.Context, body []byte) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.fail != nil {
		return q.fail
	}
	q.bodies = append(q.bodies, body)
	return nil
}

func (q *recordingQueue) take() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.bodies
	q.bodies = nil
	return out
}

// consumerFixture is the effects consumer on the embedded store, with
// sample records of several games.
type consumerFixture struct {
	app *App
	dlq *recordingQueue
	rec events.DynamoDBEventRecord // commit-e4.json's record
}

func newConsumerFixture(t *testing.T) *consumerFixture {
	t.Helper()
	f := newFixture(t, "")
	dlq := &recordingQueue{}
	app, err := NewApp(Config{Function: Effects, StreamRetryWindow: time.Minute},
		Deps{Config: service.Config{Store: f.store, Scheduler: f.sched, AITrigger: f.trigger, Now: f.clock.Now}, DeadLetters: dlq})
	if err != nil {
		t.Fatal(err)
	}
	var batch events.DynamoDBEvent
	if err := json.Unmarshal(loadEvents(t)["fanout/commit-e4.json"].Raw, &batch); err != nil {
		t.Fatal(err)
	}
	return &consumerFixture{app: app, dlq: dlq, rec: batch.Records[0]}
}

// record is the sample record as a record of game g, number n (its event
// id and sequence number), made now.
func (f *consumerFixture) record(g string, n int) events.DynamoDBEventRecord {
	r := f.rec
	r.EventID = fmt.Sprintf("%s-%d", g, n)
	r.Change.SequenceNumber = fmt.Sprintf("%d", 1000+n)
	r.Change.Keys = map[string]events.DynamoDBAttributeValue{"gameId": events.NewStringAttribute(g)}
	// Whole seconds, as the stream gives them (and as a dead letter keeps
	// them).
	r.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: time.Now().Truncate(time.Second)}
	return r
}

func failedIDs(resp events.DynamoDBEventResponse) []string {
	var out []string
	for _, f := range resp.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	return out
}

// withWork runs f's batch with work in place of the role's.
func (f *consumerFixture) handle(ctx context.Context, work func(context.Context, streamRecord) error, records ...events.DynamoDBEventRecord) ([]recordOutcome, events.DynamoDBEventResponse) {
	outcomes := f.app.handleBatch(ctx, records, work)
	var resp events.DynamoDBEventResponse
	for i, o := range outcomes {
		if o == recordFailed || o == notReached {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: records[i].Change.SequenceNumber})
		}
	}
	return outcomes, resp
}

// TestBatchGamesConcurrentInOrder: the games of a batch are handled at
// once (each game's first record waits for every other game's to start),
// a game's records one after the other, in order.
func TestBatchGamesConcurrentInOrder(t *testing.T) {
	f := newConsumerFixture(t)
	games := []string{"a", "b", "c", "d"}
	var records []events.DynamoDBEventRecord
	for n := range 3 {
		for _, g := range games {
			records = append(records, f.record(g, n))
		}
	}
	var mu sync.Mutex
	started := map[string]bool{}
	order := map[string][]string{}
	all := make(chan struct{})
	work := func(ctx context.Context, r streamRecord) error {
		g := recordGame(r.raw)
		mu.Lock()
		order[g] = append(order[g], r.raw.EventID)
		started[g] = true
		if len(started) == len(games) {
			select {
			case <-all:
			default:
				close(all)
			}
		}
		mu.Unlock()
		select {
		case <-all: // every game has started: they run at once
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the other games never started: not concurrent")
		}
	}
	outcomes, resp := f.handle(t.Context(), work, records...)
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v (%v)", failedIDs(resp), outcomes)
	}
	for _, g := range games {
		if want := []string{g + "-0", g + "-1", g + "-2"}; !slices.Equal(order[g], want) {
			t.Errorf("game %s's records ran %v; want %v", g, order[g], want)
		}
	}
}

// TestBatchFailureHoldsItsGameOnly: a record that fails stops its game's
// later records of the batch, reported with it; the other games' records
// are all done.
func TestBatchFailureHoldsItsGameOnly(t *testing.T) {
	f := newConsumerFixture(t)
	records := []events.DynamoDBEventRecord{f.record("a", 0), f.record("b", 1), f.record("a", 2), f.record("b", 3), f.record("a", 4), f.record("b", 5)}
	var mu sync.Mutex
	var done []string
	work := func(ctx context.Context, r streamRecord) error {
		if r.raw.EventID == "a-2" {
			return errors.New("throttled")
		}
		mu.Lock()
		done = append(done, r.raw.EventID)
		mu.Unlock()
		return nil
	}
	_, resp := f.handle(t.Context(), work, records...)
	if got := failedIDs(resp); !slices.Equal(got, []string{"1002", "1004"}) {
		t.Errorf("reported %v; want a's failed record and a's later one", got)
	}
	slices.Sort(done)
	if !slices.Equal(done, []string{"a-0", "b-1", "b-3", "b-5"}) {
		t.Errorf("done %v; want a's first record and all of b's", done)
	}
	if n := len(f.dlq.take()); n != 0 {
		t.Errorf("%d dead letters for a fresh transient failure; want none", n)
	}
	// Delivered again from the failed record: what was done is not done
	// again.
	done = nil
	_, resp = f.handle(t.Context(), func(context.Context, streamRecord) error {
		mu.Lock()
		defer mu.Unlock()
		done = append(done, "x")
		return nil
	}, records[2:]...)
	if len(resp.BatchItemFailures) != 0 || len(done) != 2 {
		t.Errorf("redelivery: reported %v, did %d records; want a's two only", failedIDs(resp), len(done))
	}
}

// TestBatchAnswersBeforeTheDeadline: work that would outlast the
// function is cut at the deadline less the margin; what was not done is
// reported, the answer comes in time, nothing is dead-lettered.
func TestBatchAnswersBeforeTheDeadline(t *testing.T) {
	f := newConsumerFixture(t)
	var records []events.DynamoDBEventRecord
	for n := range 40 {
		records = append(records, f.record(fmt.Sprintf("g%d", n), n))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	work := func(ctx context.Context, r streamRecord) error {
		if r.raw.EventID == "g0-0" {
			return nil
		}
		<-ctx.Done() // a call that hangs until its context ends
		return ctx.Err()
	}
	outcomes, resp := f.handle(ctx, work, records...)
	if time.Now().After(deadline) {
		t.Errorf("answered %v after the function's deadline", time.Since(deadline))
	}
	if len(resp.BatchItemFailures) != len(records)-1 || outcomes[0] != recordDone {
		t.Errorf("reported %d of %d records (%v); want all but the one done", len(resp.BatchItemFailures), len(records), outcomes)
	}
	if n := len(f.dlq.take()); n != 0 {
		t.Errorf("%d dead letters for records cut by the deadline; want none", n)
	}
}

// TestBatchGivesUp: a record whose failure is permanent (it does not
// decode, the work says so, it panics, the service refuses it as
// invalid) goes whole to the dead-letter queue at once and its game goes
// on; a transient one goes there only once it is older than the retry
// window; a redriven one is never queued again; a failed queue write
// leaves the record to be delivered again.
func TestBatchGivesUp(t *testing.T) {
	f := newConsumerFixture(t)
	undecodable := f.record("u", 0)
	undecodable.Change.NewImage = map[string]events.DynamoDBAttributeValue{"gameId": events.NewStringAttribute("u")}
	old := f.record("o", 1)
	old.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: time.Now().Add(-2 * time.Minute).Truncate(time.Second)}
	redriven := f.record("r", 2)
	redriven.Change.ApproximateCreationDateTime = old.Change.ApproximateCreationDateTime
	redriven.EventSource = RedriveEventSource
	records := []events.DynamoDBEventRecord{undecodable, f.record("u", 3), old, f.record("p", 4), f.record("i", 5), f.record("x", 6), redriven, f.record("f", 7)}
	work := func(ctx context.Context, r streamRecord) error {
		switch r.raw.EventID {
		case "o-1", "f-7", "r-2":
			return errors.New("503 service unavailable")
		case "p-4":
			panic("a bug")
		case "i-5":
			return fmt.Errorf("scheduler: %w", &smithy.GenericAPIError{Code: "ValidationException", Message: "bad expression", Fault: smithy.FaultClient})
		case "x-6":
			return retry.Permanent(errors.New("never"))
		}
		return nil
	}
	outcomes, resp := f.handle(t.Context(), work, records...)
	want := []recordOutcome{deadLettered, recordDone, deadLettered, deadLettered, deadLettered, deadLettered, recordFailed, recordFailed}
	if !slices.Equal(outcomes, want) {
		t.Errorf("outcomes %v; want %v", outcomes, want)
	}
	if got := failedIDs(resp); !slices.Equal(got, []string{"1002", "1007"}) {
		t.Errorf("reported %v; want the redriven record and the fresh transient failure", got)
	}
	letters := f.dlq.take()
	var ids []string
	for _, body := range letters {
		d, err := DecodeDeadLetter(body)
		if err != nil {
			t.Fatalf("dead letter %s: %v", body, err)
		}
		ids = append(ids, d.Record.EventID)
		if d.Role != string(Effects) || d.Error == "" {
			t.Errorf("dead letter %+v; want the effects role and the reason", d)
		}
		for _, r := range records {
			if r.EventID == d.Record.EventID && !reflect.DeepEqual(r, d.Record) {
				t.Errorf("dead letter of %s is not the record whole:\n%+v\nwant\n%+v", r.EventID, d.Record, r)
			}
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"i-5", "o-1", "p-4", "u-0", "x-6"}) {
		t.Errorf("dead-lettered %v; want the permanent failures and the one past its window", ids)
	}
	// A redrive of a record this instance dead-lettered is tried again
	// (and, failing again, answered failed, not queued a second time).
	again := undecodable
	again.EventSource = RedriveEventSource
	if outcomes, _ := f.handle(t.Context(), work, again); outcomes[0] != recordFailed || len(f.dlq.take()) != 0 {
		t.Errorf("the redrive of a dead-lettered record: %v; want it tried again and failed, nothing queued", outcomes[0])
	}
	// The queue is down: nothing is lost, the record comes again.
	f.dlq.fail = errors.New("sqs down")
	again = f.record("q", 8)
	again.Change.NewImage = undecodable.Change.NewImage
	if outcomes, _ := f.handle(t.Context(), work, again); outcomes[0] != recordFailed {
		t.Errorf("a record that cannot be dead-lettered: %v; want it delivered again", outcomes[0])
	}
}

// TestRolesOnAnArmedInstantWrite: a record that writes only the armed
// instant (the same version) pushes nothing; the effects consumer backs
// the claim it makes and runs no other effect.
func TestRolesOnAnArmedInstantWrite(t *testing.T) {
	f := newFixture(t, "")
	var batch events.DynamoDBEvent
	if err := json.Unmarshal(loadEvents(t)["fanout/commit-e4.json"].Raw, &batch); err != nil {
		t.Fatal(err)
	}
	rec := batch.Records[0]
	// The armed instant alone: the old image is the new one with an
	// earlier claim.
	rec.Change.OldImage = map[string]events.DynamoDBAttributeValue{}
	for k, v := range rec.Change.NewImage {
		rec.Change.OldImage[k] = v
	}
	rec.Change.NewImage = map[string]events.DynamoDBAttributeValue{}
	for k, v := range rec.Change.OldImage {
		rec.Change.NewImage[k] = v
	}
	rec.Change.NewImage["armedAt"] = events.NewNumberAttribute("1795960850000")
	poster := newRecordingPoster()
	push, err := NewApp(Config{Function: Fanout, StreamEndpoint: "https://x.example/v1"},
		Deps{Config: service.Config{Store: f.store, Now: f.clock.Now}, Connections: noConnections{}, NewPoster: poster.poster, DeadLetters: &recordingQueue{}})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := push.HandleStreamRecords(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("push of an armed-instant write: %+v, %v; want done (nothing to push: no subscriber was even looked up)", resp, err)
	}
	effects, err := NewApp(Config{Function: Effects}, Deps{Config: service.Config{Store: f.store, Scheduler: f.sched, AITrigger: f.trigger, Now: f.clock.Now}, DeadLetters: &recordingQueue{}})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := effects.HandleStreamRecords(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("effects of an armed-instant write: %+v, %v", resp, err)
	}
	tasks := f.sched.Tasks()
	if len(tasks) != 1 || tasks[0].Version != 3 || !tasks[0].Deadline.Equal(time.UnixMilli(1795960850000)) || len(f.trigger.Tasks()) != 0 {
		t.Errorf("scheduled %+v, triggered %+v; want the new claim's timer only", tasks, f.trigger.Tasks())
	}
}

func TestDeadLetterRoundTrip(t *testing.T) {
	f := newConsumerFixture(t)
	d := DeadLetter{Function: "chessapi-effects", Role: string(Effects), Error: "throttled", FailedAt: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Record: f.record("a", 1)}
	body, err := EncodeDeadLetter(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDeadLetter(body)
	d.Kind = DeadLetterKind
	if err != nil || !reflect.DeepEqual(got, d) {
		t.Errorf("DecodeDeadLetter(EncodeDeadLetter(d)) = %+v, %v; want %+v", got, err, d)
	}
	huge := d
	huge.Error = strings.Repeat("x", MaxDeadLetterBytes)
	if _, err := EncodeDeadLetter(huge); err == nil {
		t.Error("EncodeDeadLetter of a message over SQS's limit = nil error")
	}
	for _, tc := range []struct{ body, field string }{
		{`{"kind":"other"}`, "kind"},
		{strings.Replace(string(body), `"role":"effects"`, `"role":"billing"`, 1), "role"},
		{strings.Replace(string(body), `"eventName":"MODIFY"`, `"eventName":"REMOVE"`, 1), "record.eventName"},
		{strings.Replace(string(body), `"function":"chessapi-effects"`, `"function":"a b"`, 1), "function"},
		{`{"requestContext":{"condition":"RetryAttemptsExhausted"},"DDBStreamBatchInfo":{"shardId":"s"}}`, "kind"},
		{`[`, ""},
		{string(body) + `{}`, ""},
		{"\xff", ""},
	} {
		_, err := DecodeDeadLetter([]byte(tc.body))
		var de *DeadLetterError
		if !errors.As(err, &de) || de.Field != tc.field {
			t.Errorf("DecodeDeadLetter(%.60q) = %v; want a *DeadLetterError on %q", tc.body, err, tc.field)
		}
	}
}

func FuzzDecodeDeadLetter(f *testing.F) {
	f.Add([]byte(`{"kind":"chessapi.streamRecord/v1","role":"fanout","record":{"eventID":"1","eventName":"INSERT","dynamodb":{"SequenceNumber":"1","NewImage":{"gameId":{"S":"g"}}}}}`))
	f.Add([]byte(`{"DDBStreamBatchInfo":{}}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := DecodeDeadLetter(body)
		if err != nil {
			var de *DeadLetterError
			if !errors.As(err, &de) {
				t.Fatalf("DecodeDeadLetter error %T %v; want a *DeadLetterError", err, err)
			}
			return
		}
		if d.Kind != DeadLetterKind || d.Record.EventID == "" || len(d.Record.Change.NewImage) == 0 {
			t.Fatalf("accepted %+v", d)
		}
		if _, err := EncodeDeadLetter(d); err != nil && len(body) < MaxDeadLetterBytes/2 {
			t.Fatalf("a decoded letter does not encode: %v", err)
		}
	})
}

// fakeSQS is a queue with the receive/delete semantics the redrive uses:
// a message received is hidden until deleted (visibility past the test).
type fakeSQS struct {
	mu      sync.Mutex
	msgs    map[string]string // id → body
	hidden  map[string]bool
	deleted []string
}

func (q *fakeSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	id := fmt.Sprintf("m%d", len(q.msgs))
	q.msgs[id] = aws.ToString(in.MessageBody)
	return &sqs.SendMessageOutput{MessageId: aws.String(id)}, nil
}

func (q *fakeSQS) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out sqs.ReceiveMessageOutput
	ids := make([]string, 0, len(q.msgs))
	for id := range q.msgs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if q.hidden[id] || len(out.Messages) == int(in.MaxNumberOfMessages) {
			continue
		}
		q.hidden[id] = true
		out.Messages = append(out.Messages, sqstypes.Message{MessageId: aws.String(id), ReceiptHandle: aws.String("rh-" + id), Body: aws.String(q.msgs[id])})
	}
	return &out, nil
}

func (q *fakeSQS) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	id := strings.TrimPrefix(aws.ToString(in.ReceiptHandle), "rh-")
	delete(q.msgs, id)
	q.deleted = append(q.deleted, id)
	return &sqs.DeleteMessageOutput{}, nil
}

// invokeApps runs an invocation through one of the test's consumers.
type invokeApps map[string]*App

func (a invokeApps) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	app, ok := a[aws.ToString(in.FunctionName)]
	if !ok {
		return nil, fmt.Errorf("no function %s", aws.ToString(in.FunctionName))
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(in.Payload, &ev); err != nil {
		return nil, err
	}
	resp, err := app.HandleStreamRecords(ctx, ev)
	if err != nil {
		return &lambda.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorMessage":"` + err.Error() + `"}`)}, nil
	}
	payload, _ := json.Marshal(resp)
	return &lambda.InvokeOutput{Payload: payload}, nil
}

// TestRedrive: the queue's records are replayed through the functions that
// wrote them; one done is deleted, one that fails again stays (and is not
// written to the queue a second time), one of another kind stays, told
// apart.
func TestRedrive(t *testing.T) {
	f := newFixture(t, "")
	var batch events.DynamoDBEvent
	if err := json.Unmarshal(loadEvents(t)["fanout/commit-e4.json"].Raw, &batch); err != nil {
		t.Fatal(err)
	}
	q := &fakeSQS{msgs: map[string]string{}, hidden: map[string]bool{}}
	queue := SQSQueue{Client: q, URL: "https://sqs.example/dlq"}
	effects, err := NewApp(Config{Function: Effects, FunctionName: "chessapi-effects"}, Deps{Config: service.Config{Store: f.store, Scheduler: f.sched, AITrigger: f.trigger, Now: f.clock.Now}, DeadLetters: queue})
	if err != nil {
		t.Fatal(err)
	}
	good := batch.Records[0]
	good.Change.NewImage["armedAt"] = events.NewNumberAttribute("1795960850000") // a claim to back
	bad := good
	bad.EventID = "undecodable"
	bad.Change.NewImage = map[string]events.DynamoDBAttributeValue{"gameId": events.NewStringAttribute("x"), "version": events.NewNumberAttribute("1")}
	for _, r := range []events.DynamoDBEventRecord{good, bad} {
		if err := effects.deadLetter(t.Context(), r, errors.New("scheduler throttled")); err != nil {
			t.Fatal(err)
		}
	}
	queue.Send(t.Context(), []byte(`{"requestContext":{"functionArn":"arn:aws:lambda:us-east-1:123456789012:function:chessapi-effects","condition":"RecordAgeExceeded"},"DDBStreamBatchInfo":{"shardId":"shardId-1","startSequenceNumber":"10","endSequenceNumber":"20","batchSize":3,"streamArn":"arn:stream"}}`))
	var log strings.Builder
	dry, err := Redrive(t.Context(), RedriveOptions{Queue: queue, Lambda: invokeApps{"chessapi-effects": effects}, DryRun: true, Log: &log})
	if err != nil || dry.Read != 3 || dry.Replayed != 0 || len(f.sched.Tasks()) != 0 {
		t.Fatalf("dry run: %+v, %v, %d timers; want 3 read, nothing done", dry, err, len(f.sched.Tasks()))
	}
	clear(q.hidden)
	log.Reset()
	st, err := Redrive(t.Context(), RedriveOptions{Queue: queue, Lambda: invokeApps{"chessapi-effects": effects}, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if st.Read != 3 || st.Replayed != 1 || st.Failed != 1 || st.Other != 1 {
		t.Errorf("redrive = %+v; want 3 read: 1 replayed, 1 failed again, 1 of another kind\n%s", st, log.String())
	}
	if tasks := f.sched.Tasks(); len(tasks) != 1 || !tasks[0].Deadline.Equal(time.UnixMilli(1795960850000)) {
		t.Errorf("timers after the redrive: %+v; want the replayed record's claim backed", tasks)
	}
	if len(q.msgs) != 2 || len(q.deleted) != 1 {
		t.Errorf("queue after the redrive: %d messages, deleted %v; want the failed and the other left, nothing added", len(q.msgs), q.deleted)
	}
	if out := log.String(); !strings.Contains(out, "shardId-1") || !strings.Contains(out, "undecodable") {
		t.Errorf("redrive log %q; want the batch description's shard and the failed record named", out)
	}
}
