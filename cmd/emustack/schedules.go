package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
)

// schedulerAPI is the part of *scheduler.Client the runner uses.
type schedulerAPI interface {
	ListSchedules(ctx context.Context, in *scheduler.ListSchedulesInput, optFns ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error)
	GetSchedule(ctx context.Context, in *scheduler.GetScheduleInput, optFns ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error)
	DeleteSchedule(ctx context.Context, in *scheduler.DeleteScheduleInput, optFns ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error)
}

// scheduleRunner fires the one-time schedules the functions create in moto
// (which stores schedules but never runs them): when an at() schedule of
// the group is due, its target function gets the schedule's input as an
// asynchronous invocation (as EventBridge Scheduler invokes Lambda), and a
// schedule with ActionAfterCompletion DELETE is deleted. It talks to moto
// directly, not through the counting proxy: these are the scheduler's own
// doings, counted as "scheduler:Invocations", not calls of the functions.
type scheduleRunner struct {
	client   schedulerAPI
	group    string
	spec     *stackSpec
	async    *asyncInvoker
	counts   *counters
	log      io.Writer
	interval time.Duration

	known map[string]*scheduleInfo // by name
}

type scheduleInfo struct {
	fireAt      time.Time
	target      fnSpec
	input       string
	deleteAfter bool
	fired       bool
	bad         bool // not an at() schedule of a known function: reported once, never fired
}

func newScheduleRunner(client schedulerAPI, group string, spec *stackSpec, async *asyncInvoker, counts *counters, log io.Writer, interval time.Duration) *scheduleRunner {
	return &scheduleRunner{client: client, group: group, spec: spec, async: async, counts: counts, log: log, interval: interval, known: map[string]*scheduleInfo{}}
}

func (s *scheduleRunner) run(ctx context.Context) {
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := s.tick(ctx, time.Now()); err != nil && ctx.Err() == nil {
			fmt.Fprintf(s.log, "emustack: schedules: %v\n", err)
		}
	}
}

// tick fires every schedule due at now.
func (s *scheduleRunner) tick(ctx context.Context, now time.Time) error {
	listed := map[string]bool{}
	var next *string
	for {
		out, err := s.client.ListSchedules(ctx, &scheduler.ListSchedulesInput{GroupName: aws.String(s.group), NextToken: next})
		if err != nil {
			return fmt.Errorf("ListSchedules: %w", err)
		}
		for _, sc := range out.Schedules {
			listed[aws.ToString(sc.Name)] = true
		}
		if out.NextToken == nil {
			break
		}
		next = out.NextToken
	}
	for name := range s.known {
		if !listed[name] {
			delete(s.known, name) // deleted by a function, or by us
		}
	}
	var errs []error
	for name := range listed {
		info, ok := s.known[name]
		if !ok {
			var err error
			if info, err = s.describe(ctx, name); err != nil {
				var notFound *types.ResourceNotFoundException
				if !errors.As(err, &notFound) { // deleted since the list: nothing to do
					errs = append(errs, err)
				}
				continue
			}
			s.known[name] = info
		}
		if info.bad || info.fired || info.fireAt.After(now) {
			continue
		}
		info.fired = true
		s.counts.event("scheduler:Invocations", 1)
		if late := now.Sub(info.fireAt); late > 0 {
			s.counts.event("scheduler:LateMs", late.Milliseconds())
		}
		s.async.enqueue(info.target, []byte(info.input), now)
		if info.deleteAfter {
			_, err := s.client.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(s.group)})
			var notFound *types.ResourceNotFoundException
			if err != nil && !errors.As(err, &notFound) {
				errs = append(errs, fmt.Errorf("DeleteSchedule %s after it fired: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// atExpression is a one-time schedule expression.
var atExpression = regexp.MustCompile(`^at\((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\)$`)

// describe reads a schedule's time, target and input.
func (s *scheduleRunner) describe(ctx context.Context, name string) (*scheduleInfo, error) {
	out, err := s.client.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(name), GroupName: aws.String(s.group)})
	if err != nil {
		return nil, fmt.Errorf("GetSchedule %s: %w", name, err)
	}
	info := &scheduleInfo{deleteAfter: out.ActionAfterCompletion == types.ActionAfterCompletionDelete}
	expr := aws.ToString(out.ScheduleExpression)
	m := atExpression.FindStringSubmatch(expr)
	if m == nil {
		info.bad = true
		fmt.Fprintf(s.log, "emustack: schedule %s: %q is not a one-time at() expression; emustack fires only those\n", name, expr)
		return info, nil
	}
	loc := time.UTC
	if tz := aws.ToString(out.ScheduleExpressionTimezone); tz != "" {
		if loc, err = time.LoadLocation(tz); err != nil {
			info.bad = true
			fmt.Fprintf(s.log, "emustack: schedule %s: timezone %q: %v\n", name, tz, err)
			return info, nil
		}
	}
	if info.fireAt, err = time.ParseInLocation("2006-01-02T15:04:05", m[1], loc); err != nil {
		info.bad = true
		fmt.Fprintf(s.log, "emustack: schedule %s: %q: %v\n", name, expr, err)
		return info, nil
	}
	if out.Target == nil {
		info.bad = true
		fmt.Fprintf(s.log, "emustack: schedule %s has no target\n", name)
		return info, nil
	}
	fn, ok := s.spec.functionByName(aws.ToString(out.Target.Arn))
	if !ok {
		info.bad = true
		fmt.Fprintf(s.log, "emustack: schedule %s targets %s, which is not a function of the stack\n", name, aws.ToString(out.Target.Arn))
		return info, nil
	}
	info.target, info.input = fn, aws.ToString(out.Target.Input)
	return info, nil
}
