package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"chessapi/infra/rie"
)

// fakeStream hands out the records it is given, once.
type fakeStream struct {
	mu      sync.Mutex
	records []events.DynamoDBEventRecord
}

func (s *fakeStream) add(seqs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, seq := range seqs {
		s.records = append(s.records, events.DynamoDBEventRecord{EventName: "MODIFY", Change: events.DynamoDBStreamRecord{SequenceNumber: seq}})
	}
}

func (s *fakeStream) Next(context.Context) (events.DynamoDBEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := events.DynamoDBEvent{Records: s.records}
	s.records = nil
	return ev, nil
}

// fakeFanout records the sequence numbers of each batch and answers with
// answer(batch).
type fakeFanout struct {
	mu      sync.Mutex
	batches [][]string
	answer  func(batch []string) (rie.Result, error)
}

func (f *fakeFanout) invoke(_ context.Context, payload []byte) (rie.Result, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return rie.Result{}, err
	}
	var seqs []string
	for _, r := range ev.Records {
		seqs = append(seqs, r.Change.SequenceNumber)
	}
	f.mu.Lock()
	f.batches = append(f.batches, seqs)
	f.mu.Unlock()
	return f.answer(seqs)
}

func ok(_ []string) (rie.Result, error) {
	return rie.Result{Payload: []byte(`{"batchItemFailures":[]}`)}, nil
}

func failing(seqs ...string) rie.Result {
	var items []string
	for _, s := range seqs {
		items = append(items, fmt.Sprintf(`{"itemIdentifier":%q}`, s))
	}
	return rie.Result{Payload: []byte(`{"batchItemFailures":[` + strings.Join(items, ",") + `]}`)}
}

func testPump(stream *fakeStream, fanout *fakeFanout, src streamSource, log io.Writer) (*streamPump, *counters) {
	counts := newCounters(func() map[string]int { return nil })
	return newStreamPump(stream, counts, log, time.Hour, newMapping(fanout, src, counts, log, time.Millisecond, nil)), counts
}

func TestPumpBatchesInOrder(t *testing.T) {
	stream, fanout := &fakeStream{}, &fakeFanout{answer: ok}
	p, counts := testPump(stream, fanout, streamSource{Function: "F", BatchSize: 2, MaxRetries: 3, MaxAge: -1}, io.Discard)
	stream.add("1", "2", "3", "4", "5")
	if n := p.cycle(context.Background()); n != 5 {
		t.Errorf("cycle = %d; want 5 records", n)
	}
	if want := [][]string{{"1", "2"}, {"3", "4"}, {"5"}}; !slices.EqualFunc(fanout.batches, want, slices.Equal) {
		t.Errorf("batches %v; want %v", fanout.batches, want)
	}
	if n := p.cycle(context.Background()); n != 0 || len(fanout.batches) != 3 {
		t.Errorf("an empty cycle read %d records and made %d batches", n, len(fanout.batches))
	}
	if c := counts.take(false); c.Platform["dynamodb-streams:Records"] != 5 {
		t.Errorf("counts %v", c.Platform)
	}
}

// A reported item failure: the records before it are done, the batch is
// retried from it (ReportBatchItemFailures).
func TestPumpRetriesFromTheFirstFailedItem(t *testing.T) {
	stream := &fakeStream{}
	failedOnce := false
	fanout := &fakeFanout{answer: func(batch []string) (rie.Result, error) {
		if !failedOnce && slices.Contains(batch, "3") {
			failedOnce = true
			return failing("4", "3"), nil
		}
		return ok(batch)
	}}
	p, counts := testPump(stream, fanout, streamSource{Function: "F", BatchSize: 10, MaxRetries: 3, MaxAge: -1}, io.Discard)
	stream.add("1", "2", "3", "4", "5")
	p.cycle(context.Background())
	if want := [][]string{{"1", "2", "3", "4", "5"}, {"3", "4", "5"}}; !slices.EqualFunc(fanout.batches, want, slices.Equal) {
		t.Errorf("batches %v; want %v", fanout.batches, want)
	}
	if c := counts.take(false); c.Platform["lambda:StreamRetries"] != 1 {
		t.Errorf("counts %v; want one retry", c.Platform)
	}
}

// A function error splits the batch (BisectBatchOnFunctionError); a record
// failing every retry goes to the on-failure destination and the stream
// moves on past it.
func TestPumpBisectsAndDiscards(t *testing.T) {
	stream := &fakeStream{}
	fanout := &fakeFanout{answer: func(batch []string) (rie.Result, error) {
		if slices.Contains(batch, "2") {
			return rie.Result{FunctionError: &rie.FunctionError{Type: "Error", Message: "poisoned"}}, nil
		}
		return ok(batch)
	}}
	var log bytes.Buffer
	p, counts := testPump(stream, fanout, streamSource{Function: "F", BatchSize: 4, MaxRetries: 2, MaxAge: -1, Bisect: true, OnFailure: "DLQ"}, &log)
	var described [][]byte
	p.mappings[0].onFailure = func(_ context.Context, body []byte) error { described = append(described, body); return nil }
	stream.add("1", "2", "3", "4")
	p.cycle(context.Background())
	want := [][]string{{"1", "2", "3", "4"}, {"1", "2"}, {"1"}, {"2"}, {"2"}, {"2"}, {"3", "4"}}
	if !slices.EqualFunc(fanout.batches, want, slices.Equal) {
		t.Errorf("batches %v; want %v", fanout.batches, want)
	}
	c := counts.take(false)
	if c.Platform["lambda:StreamRecordsDiscarded"] != 1 || c.Platform["sqs:SendMessage:DLQ"] != 1 {
		t.Errorf("counts %v; want record 2 discarded to DLQ", c.Platform)
	}
	if !strings.Contains(log.String(), "stream record 2") {
		t.Errorf("log %q; want the discarded record named", log.String())
	}
	// The destination gets the batch's description, not the record.
	if len(described) != 1 || !strings.Contains(string(described[0]), `"startSequenceNumber":"2"`) ||
		!strings.Contains(string(described[0]), `"condition":"RetryAttemptsExhausted"`) || strings.Contains(string(described[0]), "NewImage") {
		t.Errorf("on-failure destination got %q; want one description of the batch of record 2, no image", described)
	}
	if len(p.mappings[0].pending) != 0 {
		t.Errorf("pending %v after the cycle", p.mappings[0].pending)
	}
}

// TestPumpMappingsAreIndependent: two mappings on one stream each get
// every record; one retrying a failing batch does not hold the other back.
func TestPumpMappingsAreIndependent(t *testing.T) {
	stream := &fakeStream{}
	counts := newCounters(func() map[string]int { return nil })
	release := make(chan struct{})
	stuck := &fakeFanout{answer: func(batch []string) (rie.Result, error) {
		select {
		case <-release:
			return ok(batch)
		default:
			return failing(batch[0]), nil
		}
	}}
	free := &fakeFanout{answer: ok}
	src := streamSource{BatchSize: 10, MaxRetries: -1, MaxAge: -1}
	a, b := src, src
	a.Function, b.Function = "Stuck", "Free"
	p := newStreamPump(stream, counts, io.Discard, 5*time.Millisecond,
		newMapping(stuck, a, counts, io.Discard, 5*time.Millisecond, nil), newMapping(free, b, counts, io.Discard, 5*time.Millisecond, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	stream.add("1", "2")
	deadline := time.After(10 * time.Second)
	for {
		free.mu.Lock()
		n := len(free.batches)
		free.mu.Unlock()
		if n > 0 {
			break
		}
		select {
		case <-deadline:
			t.Fatal("the free mapping never got its batch while the other retried")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if p.idle() {
		t.Error("idle while a mapping is still retrying")
	}
	close(release)
	for !p.idle() {
		select {
		case <-deadline:
			t.Fatal("the stuck mapping never finished once its function recovered")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if want := [][]string{{"1", "2"}}; !slices.EqualFunc(free.batches, want, slices.Equal) {
		t.Errorf("free mapping's batches %v; want %v (once)", free.batches, want)
	}
}

// An identifier that is not in the batch fails the whole batch, as on
// Lambda.
func TestPumpUnknownItemFailsTheBatch(t *testing.T) {
	stream := &fakeStream{}
	calls := 0
	fanout := &fakeFanout{answer: func(batch []string) (rie.Result, error) {
		calls++
		if calls == 1 {
			return failing("nope"), nil
		}
		return ok(batch)
	}}
	p, _ := testPump(stream, fanout, streamSource{Function: "F", BatchSize: 4, MaxRetries: 2, MaxAge: -1}, io.Discard)
	stream.add("1", "2")
	p.cycle(context.Background())
	if want := [][]string{{"1", "2"}, {"1", "2"}}; !slices.EqualFunc(fanout.batches, want, slices.Equal) {
		t.Errorf("batches %v; want %v", fanout.batches, want)
	}
}

// fakeFunction fails its first failures invocations.
type fakeFunction struct {
	mu       sync.Mutex
	calls    int
	failures int
}

func (f *fakeFunction) invoke(context.Context, []byte) (rie.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.calls <= f.failures {
		return rie.Result{}, errors.New("instance died")
	}
	return rie.Result{Payload: []byte("null")}, nil
}

func TestAsyncRetriesThenDestination(t *testing.T) {
	for _, c := range []struct {
		failures, retries int
		wantCalls         int
		wantFailed        bool
	}{
		{failures: 0, retries: 2, wantCalls: 1},
		{failures: 2, retries: 2, wantCalls: 3},
		{failures: 3, retries: 2, wantCalls: 3, wantFailed: true},
		{failures: 1, retries: 0, wantCalls: 1, wantFailed: true},
	} {
		f := &fakeFunction{failures: c.failures}
		counts := newCounters(func() map[string]int { return nil })
		var log bytes.Buffer
		a := newAsyncInvoker(context.Background(), map[string]invoker{"Seat": f}, counts, &log, time.Millisecond)
		a.enqueue(fnSpec{LogicalID: "Seat", AsyncRetries: c.retries, AsyncMaxAge: time.Hour, AsyncFailures: "SeatDLQ"}, []byte(`{"gameId":"g"}`), time.Now())
		a.wait()
		got := counts.take(false).Platform
		if f.calls != c.wantCalls || (got["sqs:SendMessage:SeatDLQ"] == 1) != c.wantFailed || !a.idle() {
			t.Errorf("%+v: calls %d, counts %v, idle %v", c, f.calls, got, a.idle())
		}
		if c.wantFailed && !strings.Contains(log.String(), `{"gameId":"g"}`) {
			t.Errorf("%+v: log %q; want the failed payload", c, log.String())
		}
	}
}

// fakeScheduler holds schedules as moto does.
type fakeScheduler struct {
	schedules map[string]*scheduler.GetScheduleOutput
	deleted   []string
}

func (s *fakeScheduler) ListSchedules(context.Context, *scheduler.ListSchedulesInput, ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error) {
	out := &scheduler.ListSchedulesOutput{}
	for name := range s.schedules {
		out.Schedules = append(out.Schedules, types.ScheduleSummary{Name: aws.String(name)})
	}
	return out, nil
}

func (s *fakeScheduler) GetSchedule(_ context.Context, in *scheduler.GetScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error) {
	out, ok := s.schedules[aws.ToString(in.Name)]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("gone")}
	}
	return out, nil
}

func (s *fakeScheduler) DeleteSchedule(_ context.Context, in *scheduler.DeleteScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error) {
	s.deleted = append(s.deleted, aws.ToString(in.Name))
	delete(s.schedules, aws.ToString(in.Name))
	return &scheduler.DeleteScheduleOutput{}, nil
}

// recordingFunction records the payloads it is invoked with.
type recordingFunction struct {
	mu       sync.Mutex
	payloads []string
}

func (f *recordingFunction) invoke(_ context.Context, payload []byte) (rie.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.payloads = append(f.payloads, string(payload))
	return rie.Result{Payload: []byte("null")}, nil
}

func TestSchedulesFireWhenDue(t *testing.T) {
	spec := repoSpec(t)
	target := "arn:aws:lambda:us-east-1:123456789012:function:chessapi-timeout"
	at := func(expr, input string, tz *string) *scheduler.GetScheduleOutput {
		return &scheduler.GetScheduleOutput{ScheduleExpression: aws.String(expr), ScheduleExpressionTimezone: tz,
			ActionAfterCompletion: types.ActionAfterCompletionDelete, Target: &types.Target{Arn: aws.String(target), Input: aws.String(input)}}
	}
	sched := &fakeScheduler{schedules: map[string]*scheduler.GetScheduleOutput{
		"t-g1.1": at("at(2026-11-29T14:00:00)", `{"gameId":"g1"}`, aws.String("UTC")),
		"t-g2.1": at("at(2026-11-29T14:00:05)", `{"gameId":"g2"}`, nil),
		"t-g3.1": at("at(2026-11-29T23:00:00)", `{"gameId":"g3"}`, aws.String("Asia/Seoul")), // 14:00 UTC
		"rate":   at("rate(5 minutes)", `{}`, nil),
	}}
	timeout := &recordingFunction{}
	counts := newCounters(func() map[string]int { return nil })
	var log bytes.Buffer
	async := newAsyncInvoker(context.Background(), map[string]invoker{"TimeoutFunction": timeout}, counts, &log, time.Millisecond)
	r := newScheduleRunner(sched, "chessapi-deadlines", spec, async, counts, &log, time.Hour)
	now := time.Date(2026, 11, 29, 14, 0, 1, 0, time.UTC)
	if err := r.tick(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	async.wait()
	slices.Sort(timeout.payloads)
	slices.Sort(sched.deleted)
	if want := []string{`{"gameId":"g1"}`, `{"gameId":"g3"}`}; !slices.Equal(timeout.payloads, want) {
		t.Errorf("fired %v; want %v", timeout.payloads, want)
	}
	if want := []string{"t-g1.1", "t-g3.1"}; !slices.Equal(sched.deleted, want) {
		t.Errorf("deleted %v; want %v (ActionAfterCompletion DELETE)", sched.deleted, want)
	}
	if !strings.Contains(log.String(), "rate(5 minutes)") {
		t.Errorf("log %q; want the recurring schedule reported", log.String())
	}
	// Later: g2 fires, nothing fires twice.
	if err := r.tick(context.Background(), now.Add(10*time.Second)); err != nil {
		t.Fatal(err)
	}
	async.wait()
	if len(timeout.payloads) != 3 || timeout.payloads[2] != `{"gameId":"g2"}` {
		t.Errorf("after the second tick fired %v; want g2 added once", timeout.payloads)
	}
	if c := counts.take(false); c.Platform["scheduler:Invocations"] != 3 {
		t.Errorf("counts %v; want 3 invocations", c.Platform)
	}
}
