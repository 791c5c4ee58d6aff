package lambdafn

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/deploy"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// sqsEvent is the deadline queue's event source mapping's event for the
// given message bodies (message ids m0, m1, ...), as JSON.
func sqsEvent(t *testing.T, bodies ...string) json.RawMessage {
	t.Helper()
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: "m" + string(rune('0'+i)), ReceiptHandle: "r", Body: b, EventSource: "aws:sqs",
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:chessapi-deadlines", AWSRegion: "us-east-1",
		})
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestDeadlineQueueEvent: the deadline function takes the queue's SQS
// batches as well as the Scheduler's tasks. A batch holding the due timer
// twice (SQS delivers at least once) ends the game once; a message that is
// not a task is the one failure the partial batch response names (it
// reaches the dead-letter queue after the redrive policy's receives); the
// same batch delivered again changes nothing.
func TestDeadlineQueueEvent(t *testing.T) {
	f, task, raw := sampleGameBeforeDeadline(t)
	handler, ok := f.timeout.Handler().(func(context.Context, json.RawMessage) (any, error))
	if !ok {
		t.Fatalf("the timeout function's handler is %T", f.timeout.Handler())
	}
	body := string(raw)

	// Early (the deadline moved, or a clock runs ahead): nothing due,
	// nothing failed.
	f.clock.Set(task.Deadline.Add(-time.Second))
	out, err := handler(t.Context(), sqsEvent(t, body))
	if err != nil || len(out.(events.SQSEventResponse).BatchItemFailures) != 0 {
		t.Fatalf("early batch: %+v, %v; want no failures", out, err)
	}
	if st := stored(t, f.store, deploy.SampleGameID); st.Phase != game.PhasePlaying {
		t.Fatalf("after an early delivery: %s; want playing", st.Phase)
	}

	f.clock.Set(task.Deadline.Add(time.Second))
	batch := sqsEvent(t, body, body, `{"not":"a task"`)
	for round := range 2 {
		out, err := handler(t.Context(), batch)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		resp := out.(events.SQSEventResponse)
		if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m2" {
			t.Errorf("round %d: failures %+v; want only m2, the body that is not a task", round, resp.BatchItemFailures)
		}
		st := stored(t, f.store, deploy.SampleGameID)
		if st.Phase != game.PhaseFinished || st.Version != task.Version+1 {
			t.Errorf("round %d: version %d %s; want the timeout applied once (version %d, finished)", round, st.Version, st.Phase, task.Version+1)
		}
	}

	// The Scheduler's shape (the task itself) still works through the
	// same handler, and a leftover finds the game finished.
	if out, err := handler(t.Context(), raw); err != nil || out != nil {
		t.Errorf("a schedule's task: %v, %v; want nil, nil", out, err)
	}
	if _, err := handler(t.Context(), json.RawMessage(`[1,2]`)); err == nil {
		t.Error("an event that is neither: nil error; want ErrBadTask")
	}
}

func TestIsSQSEvent(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"Records":[{"eventSource":"aws:sqs","body":"{}"}]}`:               true,
		`{"Records":[{"eventSource":"aws:sqs"},{"eventSource":"aws:sqs"}]}`: true,
		`{"Records":[]}`: false,
		`{"Records":[{"eventSource":"aws:dynamodb"}]}`:                 false,
		`{"gameId":"g","version":1,"deadline":"2026-01-01T00:00:00Z"}`: false,
		`not json`: false,
	} {
		if got := isSQSEvent([]byte(raw)); got != want {
			t.Errorf("isSQSEvent(%s) = %v; want %v", raw, got, want)
		}
	}
}

// TestDeadlineQueueStopsBeforeTheFunctionsDeadline: records still to run
// within a second of the invocation's deadline are answered failed
// (delivered again after the visibility timeout), so the batch's answer
// gets out before Lambda would time the whole batch out.
func TestDeadlineQueueStopsBeforeTheFunctionsDeadline(t *testing.T) {
	f := newFixture(t, "")
	seedSample(t, f, true)
	task := service.TimeoutTask{GameID: deploy.SampleGameID, Version: 1, Deadline: f.clock.Now().Add(-time.Second)}
	body, _ := json.Marshal(task)
	var ev events.SQSEvent
	if err := json.Unmarshal(sqsEvent(t, string(body), string(body)), &ev); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), deadlineQueueMargin/2)
	defer cancel()
	resp := f.timeout.HandleDeadlineQueue(ctx, ev)
	if len(resp.BatchItemFailures) != 2 {
		t.Errorf("failures %+v with less than the margin left; want both records", resp.BatchItemFailures)
	}
}

// FuzzHandleDeadline: whatever the deadline function is handed, it
// answers a partial batch response naming only the batch's records, or
// an error; it never panics.
func FuzzHandleDeadline(f *testing.F) {
	fx := newFixture(f, "")
	handler := fx.timeout.Handler().(func(context.Context, json.RawMessage) (any, error))
	for _, seed := range []string{
		`{"gameId":"g","version":1,"deadline":"2026-01-01T00:00:00Z"}`,
		`{"Records":[{"eventSource":"aws:sqs","messageId":"m0","body":"{\"gameId\":\"g\",\"version\":1,\"deadline\":\"2026-01-01T00:00:00Z\"}"}]}`,
		`{"Records":[{"eventSource":"aws:sqs","messageId":"m0","body":"not json"}]}`,
		`{"Records":[{"eventSource":"aws:sqs"}]}`, `{"Records":null}`, `[]`, `null`, `7`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := handler(t.Context(), raw)
		resp, isBatch := out.(events.SQSEventResponse)
		if !isBatch {
			return // a task: nil, or its error
		}
		if err != nil {
			t.Fatalf("a batch's answer with an error %v", err)
		}
		var ev events.SQSEvent
		if json.Unmarshal(raw, &ev) != nil {
			t.Fatalf("answered a batch for %q, which is not one", raw)
		}
		ids := map[string]bool{}
		for _, r := range ev.Records {
			ids[r.MessageId] = true
		}
		for _, f := range resp.BatchItemFailures {
			if !ids[f.ItemIdentifier] {
				t.Fatalf("failure %q is not a record of the batch", f.ItemIdentifier)
			}
		}
	})
}
