// Package eventbridge arms game timers with Amazon EventBridge Scheduler:
// each timer is a one-time schedule that invokes the timeout function with
// the service.TimeoutTask as its JSON input and then deletes itself
// (ActionAfterCompletion DELETE). The adapter only ever creates schedules:
// the service arms a timer when a game's deadline moves earlier than the
// armed one and lets superseded ones fire once into a delivery that does
// nothing (shared/service/timers.go), so a move costs no DeleteSchedule and
// nothing ever lists a game's schedules (SPEC §16.4).
//
// A schedule's name is the game and the second it fires
// ("t-<game>.<epoch s>"). Arming the same game for the same second again
// (a retry, a duplicate stream record) meets the schedule already there
// (ConflictException) and is done. A schedule of that name cannot be one
// that already fired: a schedule is always set for a second still ahead
// (FireTime), so a conflict is with one still to fire.
//
// Every request applies a due timeout itself (SPEC §7), so the schedule is
// the backstop for games nobody calls.
package eventbridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"chessapi/shared/service"
)

// Environment variables read by ConfigFromEnv (SPEC §10).
const (
	EnvGroup     = "SCHEDULE_GROUP"
	EnvRoleARN   = "SCHEDULER_ROLE_ARN"
	EnvTargetARN = "TIMEOUT_FUNCTION_ARN"
	EnvDLQARN    = "SCHEDULE_DLQ_ARN"
)

// minLead is how far ahead of now a schedule is set at the least: a
// deadline already past (or about to pass) is scheduled this far ahead
// instead of in the past, where an at() expression may be refused.
const minLead = time.Second

// Config says where schedules go and what they invoke.
type Config struct {
	Group     string // schedule group (SCHEDULE_GROUP)
	RoleARN   string // role EventBridge Scheduler assumes to invoke the target (SCHEDULER_ROLE_ARN)
	TargetARN string // the timeout function (TIMEOUT_FUNCTION_ARN)
	// DeadLetterARN is the SQS queue for schedule invocations that failed
	// for good (SCHEDULE_DLQ_ARN, optional).
	DeadLetterARN string
}

// ConfigFromEnv reads Config from the environment through getenv (os.Getenv
// in production), failing on the first missing variable.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{Group: getenv(EnvGroup), RoleARN: getenv(EnvRoleARN), TargetARN: getenv(EnvTargetARN), DeadLetterARN: getenv(EnvDLQARN)}
	return cfg, cfg.validate()
}

func (c Config) validate() error {
	for _, f := range []struct{ env, value string }{
		{EnvGroup, c.Group}, {EnvRoleARN, c.RoleARN}, {EnvTargetARN, c.TargetARN},
	} {
		if f.value == "" {
			return fmt.Errorf("eventbridge: %s is not set", f.env)
		}
	}
	for _, f := range []struct{ env, value string }{{EnvRoleARN, c.RoleARN}, {EnvTargetARN, c.TargetARN}, {EnvDLQARN, c.DeadLetterARN}} {
		if f.value != "" && !strings.HasPrefix(f.value, "arn:") {
			return fmt.Errorf("eventbridge: %s = %q is not an ARN", f.env, f.value)
		}
	}
	return nil
}

// API is the part of *scheduler.Client the adapter uses.
type API interface {
	CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, optFns ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error)
}

// Scheduler is a service.Scheduler on EventBridge Scheduler.
type Scheduler struct {
	client API
	cfg    Config
	now    func() time.Time
}

// Retries of a schedule's invocation of the timeout function (EventBridge
// Scheduler's own, for failures to invoke: throttling, the function being
// unavailable), and how long it keeps trying. Failed events then go to the
// dead-letter queue when one is configured.
const (
	maxInvokeRetries   = 10
	maxEventAgeSeconds = 3600
)

func (s *Scheduler) deadLetter() *types.DeadLetterConfig {
	if s.cfg.DeadLetterARN == "" {
		return nil
	}
	return &types.DeadLetterConfig{Arn: aws.String(s.cfg.DeadLetterARN)}
}

var _ service.Scheduler = (*Scheduler)(nil)

// New returns a Scheduler creating schedules through client.
func New(client API, cfg Config) (*Scheduler, error) {
	if client == nil {
		return nil, errors.New("eventbridge: nil scheduler client")
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Scheduler{client: client, cfg: cfg, now: time.Now}, nil
}

// NewFromConfig returns a Scheduler with a client made from awsCfg (as
// returned by config.LoadDefaultConfig, which applies
// AWS_ENDPOINT_URL_SCHEDULER).
func NewFromConfig(awsCfg aws.Config, cfg Config) (*Scheduler, error) {
	return New(scheduler.NewFromConfig(awsCfg), cfg)
}

// ScheduleTimeout creates the schedule for task, firing at FireTime of its
// Deadline. A schedule of the same name already existing is the same game
// armed for the same second: already scheduled, nil.
func (s *Scheduler) ScheduleTimeout(ctx context.Context, task service.TimeoutTask) error {
	if err := task.Validate(); err != nil {
		return fmt.Errorf("eventbridge: %w", err)
	}
	input, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("eventbridge: encode task of game %q: %w", task.GameID, err)
	}
	fireAt := FireTime(task.Deadline, s.now())
	_, err = s.client.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name:                       aws.String(ScheduleName(task.GameID, fireAt)),
		GroupName:                  aws.String(s.cfg.Group),
		ScheduleExpression:         aws.String(AtExpression(fireAt)),
		ScheduleExpressionTimezone: aws.String("UTC"),
		FlexibleTimeWindow:         &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		ActionAfterCompletion:      types.ActionAfterCompletionDelete,
		Description:                aws.String(fmt.Sprintf("timer of game %s armed at version %d", task.GameID, task.Version)),
		Target: &types.Target{
			Arn:     aws.String(s.cfg.TargetARN),
			RoleArn: aws.String(s.cfg.RoleARN),
			Input:   aws.String(string(input)),
			// The function's own retries come first (it is invoked
			// asynchronously); these are for failures to invoke it.
			RetryPolicy:      &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(maxInvokeRetries), MaximumEventAgeInSeconds: aws.Int32(maxEventAgeSeconds)},
			DeadLetterConfig: s.deadLetter(),
		},
	})
	var conflict *types.ConflictException
	if err != nil && !errors.As(err, &conflict) {
		return fmt.Errorf("eventbridge: schedule timeout of game %q version %d: %w", task.GameID, task.Version, err)
	}
	return nil
}

// FireTime is when the schedule for deadline is set: the deadline rounded
// up to the whole second (at() has no fractions, and firing early would
// only produce a no-op delivery), but never sooner than minLead after now.
func FireTime(deadline, now time.Time) time.Time {
	fire := ceilSecond(deadline)
	if earliest := ceilSecond(now.Add(minLead)); fire.Before(earliest) {
		fire = earliest
	}
	return fire.UTC()
}

// AtExpression is the one-time schedule expression for t, in UTC.
func AtExpression(t time.Time) string {
	return "at(" + t.UTC().Format("2006-01-02T15:04:05") + ")"
}

func ceilSecond(t time.Time) time.Time {
	down := t.Truncate(time.Second)
	if down.Equal(t) {
		return t
	}
	return down.Add(time.Second)
}

// maxNameLen is EventBridge Scheduler's limit on schedule names.
const maxNameLen = 64

// ScheduleName is the name of the schedule of game gameID firing at fireAt
// (whole seconds): "t-<game>.<epoch seconds>". A game id that is long or
// has characters schedule names do not allow is replaced by "h" and 96 bits
// of its SHA-256, so every game's names still share one prefix
// (NamePrefix): an operator can find a game's schedules by it.
func ScheduleName(gameID string, fireAt time.Time) string {
	return NamePrefix(gameID) + strconv.FormatInt(fireAt.Unix(), 10)
}

// NamePrefix is the part of a game's schedule names before the second.
// The id ends at a '.', which game ids never contain, so no game's prefix
// is the start of another's ("t-a." is not the start of "t-a-1.").
func NamePrefix(gameID string) string {
	id := gameID
	if len("t-")+len(id)+len(".")+12 > maxNameLen || !validNameChars(id) || strings.Contains(id, ".") {
		sum := sha256.Sum256([]byte(gameID))
		id = "h" + hex.EncodeToString(sum[:12])
	}
	return "t-" + id + "."
}

// validNameChars reports whether s holds only [0-9a-zA-Z-_.], the schedule
// name alphabet, and is not empty.
func validNameChars(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}
