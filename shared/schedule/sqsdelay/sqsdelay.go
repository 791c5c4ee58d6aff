// Package sqsdelay arms game timers that fall due within SQS's longest
// message delay through an Amazon SQS delay queue, and hands the others
// to another scheduler (EventBridge Scheduler: shared/schedule/eventbridge).
//
// Why two transports: EventBridge Scheduler invokes a one-time schedule
// "between 1:00:00 and 1:00:59" of the minute it is set for
// (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html),
// so a game nobody calls would end up to 59 s after its flag fell; and
// every schedule is a CreateSchedule call against the Scheduler's
// per-Region rate quota. An SQS message sent with DelaySeconds becomes
// visible once the delay has passed ("The maximum is 15 minutes",
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-delay-queues.html;
// a per-message DelaySeconds is a message timer), and the deadline
// function's event source mapping long-polls the queue, so it is
// delivered within about a second of its time. Nearly every timer of a
// game being played (a per-move clock's, a blitz or rapid clock's, the
// first move's, an AI seat's watchdog) is due within 15 minutes; long
// Fischer clocks and correspondence turns keep the Scheduler.
//
// The message body is the service.TimeoutTask JSON, exactly what a
// schedule's input is, so the deadline function handles both the same
// way (shared/lambdafn). The delay is rounded up to the whole second: a
// timer never fires before the instant it was armed for (an early
// delivery would only re-arm). What the service's lazy timers rely on
// (shared/service/timers.go) holds for either transport: a timer fires at
// least once, at or after its instant, and a duplicate delivery (SQS is at
// least once; a retried arm sends a second message) finds the game as the
// first left it and does nothing more.
package sqsdelay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"chessapi/shared/service"
)

// EnvQueueURL names the deadline queue's URL (the effects function's
// environment, cmd/ops rearm's).
const EnvQueueURL = "DEADLINE_QUEUE_URL"

// MaxDelay is SQS's longest message delay (DelaySeconds 0 to 900): a
// timer due within it goes through the queue.
const MaxDelay = 900 * time.Second

// API is the part of *sqs.Client the adapter uses.
type API interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Scheduler is a service.Scheduler that sends timers due within MaxDelay
// to the deadline queue and the others to Far.
type Scheduler struct {
	client API
	url    string
	far    service.Scheduler
	now    func() time.Time
}

var _ service.Scheduler = (*Scheduler)(nil)

// New returns a Scheduler sending to the queue at queueURL through client
// and handing timers beyond MaxDelay to far. now is the clock (time.Now
// when nil).
func New(client API, queueURL string, far service.Scheduler, now func() time.Time) (*Scheduler, error) {
	queueURL = strings.TrimSpace(queueURL)
	switch {
	case client == nil:
		return nil, errors.New("sqsdelay: nil SQS client")
	case far == nil:
		return nil, errors.New("sqsdelay: no scheduler for timers beyond the queue's 15 minutes")
	case queueURL == "":
		return nil, fmt.Errorf("sqsdelay: %s is not set", EnvQueueURL)
	case !strings.HasPrefix(queueURL, "https://") && !strings.HasPrefix(queueURL, "http://"):
		return nil, fmt.Errorf("sqsdelay: %s = %q is not a queue URL", EnvQueueURL, queueURL)
	}
	if now == nil {
		now = time.Now
	}
	return &Scheduler{client: client, url: queueURL, far: far, now: now}, nil
}

// NewFromConfig returns a Scheduler with an SQS client made from awsCfg
// (which applies AWS_ENDPOINT_URL_SQS).
func NewFromConfig(awsCfg aws.Config, queueURL string, far service.Scheduler) (*Scheduler, error) {
	return New(sqs.NewFromConfig(awsCfg), queueURL, far, nil)
}

// Delay is the message delay that makes a timer for deadline fire at or
// after it, as of now: the time left rounded up to the whole second, 0
// for a deadline already past. ok is false beyond MaxDelay (the timer is
// the far scheduler's).
func Delay(deadline, now time.Time) (seconds int32, ok bool) {
	left := deadline.Sub(now)
	if left <= 0 {
		return 0, true
	}
	secs := (left + time.Second - 1) / time.Second
	if secs > MaxDelay/time.Second {
		return 0, false
	}
	return int32(secs), true
}

// ScheduleTimeout arms task: a message delayed until its Deadline when
// that is within MaxDelay, else the far scheduler's timer. Sending again
// for the same instant (a retry) makes a second message: its delivery is
// a duplicate, which the service's handling makes harmless.
func (s *Scheduler) ScheduleTimeout(ctx context.Context, task service.TimeoutTask) error {
	if err := task.Validate(); err != nil {
		return fmt.Errorf("sqsdelay: %w", err)
	}
	delay, near := Delay(task.Deadline, s.now())
	if !near {
		return s.far.ScheduleTimeout(ctx, task)
	}
	body, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("sqsdelay: encode task of game %q: %w", task.GameID, err)
	}
	if _, err := s.client.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:     aws.String(s.url),
		MessageBody:  aws.String(string(body)),
		DelaySeconds: delay,
	}); err != nil {
		return fmt.Errorf("sqsdelay: timer of game %q version %d in %d s: %w", task.GameID, task.Version, delay, err)
	}
	return nil
}
