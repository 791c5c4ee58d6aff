package sqsdelay

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"chessapi/internal/fakeclock"
	"chessapi/shared/service"
)

// recordingSQS keeps what was sent (or fails every send with err).
type recordingSQS struct {
	sent []*sqs.SendMessageInput
	err  error
}

func (r *recordingSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if r.err != nil {
		return nil, r.err
	}
	r.sent = append(r.sent, in)
	return &sqs.SendMessageOutput{MessageId: aws.String("m")}, nil
}

// recordingFar is the far scheduler: it keeps the tasks it was given.
type recordingFar struct{ tasks []service.TimeoutTask }

func (r *recordingFar) ScheduleTimeout(_ context.Context, task service.TimeoutTask) error {
	r.tasks = append(r.tasks, task)
	return nil
}

const queueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/chessapi-deadlines"

var start = time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)

// TestRouting: a timer due within 900 s (the boundary included, the time
// left rounded up to the second) is a message delayed until it, never
// sooner; one already past is a message without delay; one beyond is the
// far scheduler's, unchanged.
func TestRouting(t *testing.T) {
	for _, tc := range []struct {
		name  string
		in    time.Duration // deadline - now
		delay int32         // -1: the far scheduler
	}{
		{"already past", -5 * time.Second, 0},
		{"now", 0, 0},
		{"a millisecond ahead", time.Millisecond, 1},
		{"30 s per move", 30 * time.Second, 30},
		{"a fraction rounds up", 29*time.Second + 1*time.Millisecond, 30},
		{"exactly 900 s", MaxDelay, 900},
		{"899.5 s rounds up to 900", MaxDelay - 500*time.Millisecond, 900},
		{"900.001 s is beyond", MaxDelay + time.Millisecond, -1},
		{"a 10+0 clock", 10 * time.Minute, 600},
		{"a correspondence turn", 3 * 24 * time.Hour, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := fakeclock.New(start)
			q, far := &recordingSQS{}, &recordingFar{}
			s, err := New(q, queueURL, far, clock.Now)
			if err != nil {
				t.Fatal(err)
			}
			task := service.TimeoutTask{GameID: "g1", Version: 7, Deadline: start.Add(tc.in)}
			if err := s.ScheduleTimeout(t.Context(), task); err != nil {
				t.Fatal(err)
			}
			if tc.delay < 0 {
				if len(q.sent) != 0 || len(far.tasks) != 1 || far.tasks[0] != task {
					t.Fatalf("sent %d messages, far got %+v; want the task to the far scheduler only", len(q.sent), far.tasks)
				}
				return
			}
			if len(far.tasks) != 0 || len(q.sent) != 1 {
				t.Fatalf("sent %d messages, far got %+v; want one message", len(q.sent), far.tasks)
			}
			m := q.sent[0]
			if aws.ToString(m.QueueUrl) != queueURL || m.DelaySeconds != tc.delay {
				t.Errorf("sent to %s with DelaySeconds %d; want %s, %d", aws.ToString(m.QueueUrl), m.DelaySeconds, queueURL, tc.delay)
			}
			if visible := start.Add(time.Duration(m.DelaySeconds) * time.Second); visible.Before(task.Deadline) {
				t.Errorf("visible at %v, before the deadline %v", visible, task.Deadline)
			}
			var got service.TimeoutTask
			if err := json.Unmarshal([]byte(aws.ToString(m.MessageBody)), &got); err != nil || got.GameID != task.GameID || got.Version != task.Version || !got.Deadline.Equal(task.Deadline) {
				t.Errorf("body %s (%v); want the task %+v", aws.ToString(m.MessageBody), err, task)
			}
		})
	}
}

// TestBodyIsTheScheduleInput: the message body is the same JSON as the
// EventBridge schedule's input (json.Marshal of the task), so the deadline
// function reads both alike.
func TestBodyIsTheScheduleInput(t *testing.T) {
	q := &recordingSQS{}
	s, err := New(q, queueURL, &recordingFar{}, fakeclock.New(start).Now)
	if err != nil {
		t.Fatal(err)
	}
	task := service.TimeoutTask{GameID: "abc", Version: 3, Deadline: start.Add(1500 * time.Millisecond)}
	if err := s.ScheduleTimeout(t.Context(), task); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(task)
	if got := aws.ToString(q.sent[0].MessageBody); got != string(want) {
		t.Errorf("body %s; want %s", got, want)
	}
}

func TestErrors(t *testing.T) {
	far := &recordingFar{}
	for _, tc := range []struct {
		name   string
		client API
		url    string
		far    service.Scheduler
		want   string
	}{
		{"no client", nil, queueURL, far, "nil SQS client"},
		{"no far scheduler", &recordingSQS{}, queueURL, nil, "beyond the queue"},
		{"no URL", &recordingSQS{}, " ", far, EnvQueueURL + " is not set"},
		{"not a URL", &recordingSQS{}, "chessapi-deadlines", far, "is not a queue URL"},
	} {
		if _, err := New(tc.client, tc.url, tc.far, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error containing %q", tc.name, err, tc.want)
		}
	}

	outage := errors.New("ServiceUnavailable")
	s, err := New(&recordingSQS{err: outage}, queueURL, far, fakeclock.New(start).Now)
	if err != nil {
		t.Fatal(err)
	}
	err = s.ScheduleTimeout(t.Context(), service.TimeoutTask{GameID: "g", Version: 2, Deadline: start.Add(time.Minute)})
	if !errors.Is(err, outage) || !strings.Contains(err.Error(), `game "g" version 2 in 60 s`) {
		t.Errorf("a failed send: %v; want it wrapped, naming the game, version and delay", err)
	}
	for _, bad := range []service.TimeoutTask{
		{Version: 1, Deadline: start},
		{GameID: "g", Deadline: start},
		{GameID: "g", Version: 1},
	} {
		if err := s.ScheduleTimeout(t.Context(), bad); err == nil || !strings.HasPrefix(err.Error(), "sqsdelay: ") {
			t.Errorf("task %+v: %v; want a sqsdelay error", bad, err)
		}
	}
	if len(far.tasks) != 0 {
		t.Errorf("far got %+v from bad tasks", far.tasks)
	}
}

// FuzzDelay: whatever the distance, a delay is in SQS's range and never
// makes the message visible before the deadline, and a timer goes far
// only when no delay in range could carry it.
func FuzzDelay(f *testing.F) {
	for _, ms := range []int64{-1, 0, 1, 999, 1000, 1001, 900_000, 900_001, 1 << 40, -(1 << 40)} {
		f.Add(ms)
	}
	f.Fuzz(func(t *testing.T, ms int64) {
		deadline := start.Add(time.Duration(ms) * time.Millisecond)
		secs, ok := Delay(deadline, start)
		if !ok {
			if !deadline.After(start.Add(MaxDelay)) {
				t.Fatalf("%d ms: sent far, but within %v", ms, MaxDelay)
			}
			return
		}
		if secs < 0 || secs > 900 {
			t.Fatalf("%d ms: DelaySeconds %d outside 0..900", ms, secs)
		}
		if start.Add(time.Duration(secs) * time.Second).Before(deadline) {
			t.Fatalf("%d ms: a delay of %d s is visible before the deadline", ms, secs)
		}
		if secs > 0 && !start.Add(time.Duration(secs-1)*time.Second).Before(deadline) {
			t.Fatalf("%d ms: a delay of %d s is a second longer than it needs", ms, secs)
		}
	})
}
