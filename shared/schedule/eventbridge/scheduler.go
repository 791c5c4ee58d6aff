// Package eventbridge schedules game timeouts with Amazon EventBridge
// Scheduler: one one-time schedule per game version, which invokes the
// timeout function with the service.TimeoutTask as its JSON input and then
// deletes itself.
//
// EventBridge Scheduler fires within the minute of its at() time, so the
// schedule is a backstop: every request applies a due timeout itself (SPEC
// §7) and the timeout handler ignores stale or early deliveries.
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
}

// ConfigFromEnv reads Config from the environment through getenv (os.Getenv
// in production), failing on the first missing variable.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{Group: getenv(EnvGroup), RoleARN: getenv(EnvRoleARN), TargetARN: getenv(EnvTargetARN)}
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
	for _, f := range []struct{ env, value string }{{EnvRoleARN, c.RoleARN}, {EnvTargetARN, c.TargetARN}} {
		if !strings.HasPrefix(f.value, "arn:") {
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

// ScheduleTimeout creates the one-time schedule for task. A schedule of the
// same name (same game, version and deadline) already existing means it is
// already scheduled: nil.
func (s *Scheduler) ScheduleTimeout(ctx context.Context, task service.TimeoutTask) error {
	if err := validateTask(task); err != nil {
		return err
	}
	input, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("eventbridge: encode task of game %q: %w", task.GameID, err)
	}
	name := ScheduleName(task)
	fireAt := FireTime(task.Deadline, s.now())
	_, err = s.client.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name:                       aws.String(name),
		GroupName:                  aws.String(s.cfg.Group),
		ScheduleExpression:         aws.String(AtExpression(fireAt)),
		ScheduleExpressionTimezone: aws.String("UTC"),
		FlexibleTimeWindow:         &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		ActionAfterCompletion:      types.ActionAfterCompletionDelete,
		Description:                aws.String(fmt.Sprintf("timeout of game %s version %d", task.GameID, task.Version)),
		Target: &types.Target{
			Arn:     aws.String(s.cfg.TargetARN),
			RoleArn: aws.String(s.cfg.RoleARN),
			Input:   aws.String(string(input)),
		},
	})
	var conflict *types.ConflictException
	if errors.As(err, &conflict) {
		return nil // this game version's timeout is already scheduled
	}
	if err != nil {
		return fmt.Errorf("eventbridge: schedule timeout of game %q version %d: %w", task.GameID, task.Version, err)
	}
	return nil
}

func validateTask(task service.TimeoutTask) error {
	switch {
	case task.GameID == "":
		return errors.New("eventbridge: timeout task has an empty game id")
	case task.Version < 1:
		return fmt.Errorf("eventbridge: timeout task of game %q has version %d; want ≥ 1", task.GameID, task.Version)
	case task.Deadline.IsZero():
		return fmt.Errorf("eventbridge: timeout task of game %q version %d has no deadline", task.GameID, task.Version)
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

// ScheduleName is the schedule's name for task: the same task always gets
// the same name, so a repeated or retried ScheduleTimeout meets a
// ConflictException instead of creating a second schedule. It is
// "t-<game>-<version>-<deadline in epoch ms>" when that is valid (game ids
// are URL-safe and short), otherwise "th-" and a hash of the same three
// values. The readable form parses back uniquely (version and deadline are
// the last two dash-free fields), and the two forms cannot collide: their
// second characters differ.
func ScheduleName(task service.TimeoutTask) string {
	ms := task.Deadline.UnixMilli()
	if task.Deadline.Nanosecond()%int(time.Millisecond) != 0 {
		ms++ // the rounding the stores use
	}
	name := "t-" + task.GameID + "-" + strconv.FormatInt(task.Version, 10) + "-" + strconv.FormatInt(ms, 10)
	if len(name) <= maxNameLen && validNameChars(task.GameID) && ms >= 0 {
		return name
	}
	// A NUL cannot occur in the decimal numbers, so the three values are
	// unambiguous in the hashed text.
	sum := sha256.Sum256([]byte(task.GameID + "\x00" + strconv.FormatInt(task.Version, 10) + "\x00" + strconv.FormatInt(ms, 10)))
	return "th-" + hex.EncodeToString(sum[:])[:maxNameLen-len("th-")]
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
