// Command ops runs the stack's recovery procedures (docs/operations.md
// §5.6):
//
//	ops restore -to TIME|latest -suffix S [-games-table T] [-data-table T] [-wait D]
//	ops rearm [-rate N] [-workers N] [-progress D] [-dry-run] [-games-table T] [-data-table T]
//	ops redrive [-queue URL] [-function NAME] [-max N] [-dry-run] [-visibility D]
//
// restore restores the games and data tables to one point in time as new
// tables (the source's name + S), waits for them, and gives them what a
// restore does not copy and the stack needs: the games table's stream (new
// and old images), TTL on expiresAt and point-in-time recovery on both. It
// prints the stack parameters that point the stack at them.
//
// rearm re-arms every live game's timer (a human's deadline, or an AI
// turn's watchdog) from the games table, through the service's timeout
// handler: a deadline already past is applied at once, an AI turn past its
// think time is started again, and every other game gets its one schedule
// back, whatever the restored record says is armed. It is idempotent (a
// schedule that exists already is left as it is), rate-limited, and shows
// its progress on stderr.
//
// redrive replays the stream consumers' dead-letter queue: each record a
// consumer gave up on (written whole) goes back through the function that
// gave up on it; one it then does is deleted, one it fails again stays.
//
// They read the stack's configuration from the environment, under the
// functions' names (SPEC §10): GAMES_TABLE, DATA_TABLE, SCHEDULE_GROUP,
// SCHEDULER_ROLE_ARN, TIMEOUT_FUNCTION_ARN, SCHEDULE_DLQ_ARN, DEADLINE_QUEUE_URL (optional),
// AI_FUNCTION_NAME, STREAM_DLQ_URL; AWS credentials, region and endpoints come from the
// SDK's usual sources (AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL_*).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	c := cli{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, now: time.Now, sleep: sleepCtx}
	os.Exit(c.run(ctx, os.Args[1:]))
}

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // AWS refused or failed, or some games could not be re-armed
	exitUsage = 2 // bad flags, arguments or configuration
)

// cli is one invocation's surroundings (tests replace them).
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	now            func() time.Time
	// sleep waits d or until ctx ends (the rate limiter's and the
	// retries' pauses; tests count them instead of waiting).
	sleep func(ctx context.Context, d time.Duration) error
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// usageError is a mistake in the command line or the configuration: the
// message says which flag or variable, and the usage follows.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// usage names the defaults from the flags' own constants (rearm.go).
var usage = fmt.Sprintf(`usage: ops <command> [flags]

commands:
  restore -to TIME|latest -suffix S   restore both tables to one point in time as new tables (name + S),
                                      with stream, TTL and point-in-time recovery; print the stack parameters
      -games-table T, -data-table T   the tables to restore (default $GAMES_TABLE, $DATA_TABLE)
      -wait D                         how long to wait for the restores (default 4h)
  rearm                               re-arm every live game's timer and AI turn from the games table
      -rate N                         games a second at most (default %d)
      -workers N                      games re-armed at once (default %d)
      -progress D                     how often to print progress (default 5s)
      -dry-run                        list what would be re-armed, change nothing
      -games-table T, -data-table T   the tables (default $GAMES_TABLE, $DATA_TABLE)
  redrive                             replay the stream consumers' dead-letter queue through their functions
      -queue URL                      the queue (default $STREAM_DLQ_URL: the stack's FanoutDeadLetterQueueUrl)
      -function NAME                  for a message that names no function
      -max N                          messages at most (default: until the queue is empty)
      -dry-run                        list what would be replayed, change nothing
      -visibility D                   how long a message read is hidden from others (default 1m)

configuration (environment, as the functions have it): GAMES_TABLE, DATA_TABLE, SCHEDULE_GROUP,
SCHEDULER_ROLE_ARN, TIMEOUT_FUNCTION_ARN, SCHEDULE_DLQ_ARN, DEADLINE_QUEUE_URL (optional), AI_FUNCTION_NAME,
STREAM_DLQ_URL; AWS credentials and region as the AWS CLI's.
`, defaultRearmRate, defaultRearmWorkers)

// run runs one command line and returns the exit status.
func (c cli) run(ctx context.Context, args []string) int {
	err := c.dispatch(ctx, args)
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(c.stderr, usage)
		return exitUsage
	case errors.As(err, &ue):
		fmt.Fprintln(c.stderr, "ops:", err)
		fmt.Fprint(c.stderr, usage)
		return exitUsage
	}
	fmt.Fprintln(c.stderr, "ops:", err)
	return exitFail
}

func (c cli) dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return usagef("no command (restore, rearm or redrive)")
	}
	switch args[0] {
	case "rearm":
		return c.rearm(ctx, args[1:])
	case "redrive":
		return c.redrive(ctx, args[1:])
	case "restore":
		return c.restore(ctx, args[1:])
	case "-h", "-help", "--help", "help":
		return flag.ErrHelp
	}
	return usagef("unknown command %q (restore, rearm or redrive)", args[0])
}

// newFlags is a command's flag set: errors returned, nothing printed.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usagef("%s: %v", fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return usagef("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// setting is a flag's value, else the environment variable's.
func (c cli) setting(flagValue, env string) string {
	if v := strings.TrimSpace(flagValue); v != "" {
		return v
	}
	return strings.TrimSpace(c.getenv(env))
}
