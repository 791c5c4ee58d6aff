package service_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"chessapi/internal/fakeclock"
	"chessapi/shared/game"
	"chessapi/shared/schedule/eventbridge"
	"chessapi/shared/schedule/sqsdelay"
	"chessapi/shared/service"
)

// The two transports of the AWS deployment (shared/schedule/sqsdelay):
// a timer due within 15 minutes is an SQS message delayed until it, a
// later one an EventBridge Scheduler schedule. Both are modelled over the
// fixture's kept timers: a message fires once per send (SQS makes a
// message of every send: a retried arm is a duplicate delivery) at the
// send instant plus its whole-second delay; a schedule fires at the
// second it is set for.

// delayQueue is the deadline queue: SendMessage keeps a timer firing
// DelaySeconds after the send.
type delayQueue struct {
	timers *keptTimers
	clock  *fakeclock.Clock

	mu    sync.Mutex
	sends int
}

func (q *delayQueue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	var task service.TimeoutTask
	if err := json.Unmarshal([]byte(aws.ToString(in.MessageBody)), &task); err != nil {
		return nil, err
	}
	q.mu.Lock()
	q.sends++
	q.mu.Unlock()
	q.timers.keep(task, q.clock.Now().Add(time.Duration(in.DelaySeconds)*time.Second))
	return &sqs.SendMessageOutput{}, nil
}

func (q *delayQueue) sent() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sends
}

// oneTimeSchedules is EventBridge Scheduler: a schedule fires at its
// second (eventbridge.FireTime).
type oneTimeSchedules struct {
	timers *keptTimers
	clock  *fakeclock.Clock

	mu    sync.Mutex
	calls int
}

func (s *oneTimeSchedules) ScheduleTimeout(_ context.Context, task service.TimeoutTask) error {
	s.mu.Lock()
	s.calls++
	s.mu.Unlock()
	s.timers.keep(task, eventbridge.FireTime(task.Deadline, s.clock.Now()))
	return nil
}

func (s *oneTimeSchedules) created() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// newTransportFixture is the timer fixture on both transports, routed by
// sqsdelay.
func newTransportFixture(t *testing.T) (*timerFixture, *delayQueue, *oneTimeSchedules) {
	t.Helper()
	var queue *delayQueue
	var schedules *oneTimeSchedules
	f := newTimerFixtureWith(t, func(timers *keptTimers, clock *fakeclock.Clock) service.Scheduler {
		queue, schedules = &delayQueue{timers: timers, clock: clock}, &oneTimeSchedules{timers: timers, clock: clock}
		s, err := sqsdelay.New(queue, "https://sqs.us-east-1.amazonaws.com/123456789012/chessapi-deadlines", schedules, clock.Now)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
	return f, queue, schedules
}

// TestLazyTimersByTransport is TestLazyTimersAcrossGames on the AWS
// transports, counted apart: every clock of these games is due within
// the queue's 15 minutes, so the Scheduler gets one call a game (the
// waiting game's 30-minute expiry) and none a move — the per-move clocks'
// early fires and re-arms are queue sends (one timer a period: perMove:30
// at 10 s a move still costs its 1/3 send a move, at $0.40 a million
// requests instead of a Scheduler call against its quota). A stalled
// player loses on time at the deadline, by the queue's timers alone.
func TestLazyTimersByTransport(t *testing.T) {
	for _, tc := range []struct {
		name, opts string
		plies      int
		think      func(ply int) time.Duration
		maxSends   float64 // queue sends a move
	}{
		{"Fischer 3+2", `{"colorAssignment":"hostWhite","timeControl":"3+2"}`, 80,
			func(ply int) time.Duration { return time.Duration(1+ply%4) * time.Second }, 0.1},
		{"per move 30 s", `{"colorAssignment":"hostWhite","timeControl":"perMove:30"}`, 60,
			func(ply int) time.Duration { return time.Duration(2+ply%5) * time.Second }, 0.3},
		{"Fischer 10+5 at 10 s a move", `{"colorAssignment":"hostWhite","timeControl":"10+5"}`, 80,
			func(ply int) time.Duration { return time.Duration(5+(ply*7)%11) * time.Second }, 0.1},
		{"per move 60 s at 10 s a move", `{"colorAssignment":"hostWhite","timeControl":"perMove:60"}`, 60,
			func(ply int) time.Duration { return time.Duration(5+(ply*7)%11) * time.Second }, 0.3},
		{"per move 30 s at 10 s a move", `{"colorAssignment":"hostWhite","timeControl":"perMove:30"}`, 60,
			func(ply int) time.Duration { return time.Duration(5+(ply*7)%11) * time.Second }, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, queue, schedules := newTransportFixture(t)
			id, seats := f.seats(t, tc.opts)
			f.checkArmed(t, id)
			f.play(t, id, seats, tc.plies, tc.think)
			created, sent := schedules.created(), queue.sent()
			t.Logf("%d plies: %d scheduler calls (%.3f a move), %d queue sends (%.3f a move)",
				tc.plies, created, float64(created)/float64(tc.plies), sent, float64(sent)/float64(tc.plies))
			if created > 1 {
				t.Errorf("%d scheduler calls; want at most the waiting game's expiry (every clock here is due within 15 minutes)", created)
			}
			if perMove := float64(sent) / float64(tc.plies); perMove > tc.maxSends {
				t.Errorf("%.3f queue sends a move; want at most %.1f", perMove, tc.maxSends)
			}
			st := f.stall(t, id)
			if st.Phase != game.PhaseFinished || st.Result.Reason != game.ReasonTimeLoss {
				t.Fatalf("after the stalled player's deadlines: %s %+v; want a time loss", st.Phase, st.Result)
			}
			if schedules.created() != created {
				t.Errorf("the stall made %d scheduler calls; want none (its deadlines are within 15 minutes)", schedules.created()-created)
			}
		})
	}
}

// TestCorrespondenceKeepsTheScheduler: a days:1 turn is beyond the
// queue's 15 minutes: its deadline is a schedule, and the game still ends
// at it with nobody calling.
func TestCorrespondenceKeepsTheScheduler(t *testing.T) {
	f, queue, schedules := newTransportFixture(t)
	id, seats := f.seats(t, `{"colorAssignment":"hostWhite","timeControl":"days:1"}`)
	f.play(t, id, seats, 2, func(int) time.Duration { return time.Hour })
	before := schedules.created()
	if before == 0 {
		t.Fatal("no schedule for a day-long turn")
	}
	rec := f.checkArmed(t, id)
	f.advance(t, rec.Deadline.Sub(f.clock.Now())+time.Minute)
	v, err := f.svc.Get(t.Context(), id, service.Caller{}, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Phase != game.PhaseFinished {
		t.Fatalf("a day after the last move: %s; want finished", v.Phase)
	}
	t.Logf("%d scheduler calls, %d queue sends", schedules.created(), queue.sent())
}
