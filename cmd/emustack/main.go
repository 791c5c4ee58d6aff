// Command emustack runs the deployed stack of template.yaml on this machine,
// emulated, so that clients (cmd/loadgen, an app in development) can drive
// it and the AWS requests it makes can be counted:
//
//	go run ./cmd/emustack [-addr 127.0.0.1:3100] [-instances PollFunction=32]
//	go run ./cmd/loadgen -url http://127.0.0.1:3100 -games 4 -moves 200 -mode fetch
//	curl -s 'http://127.0.0.1:3100/_counts?settle=1&format=text'
//
// What runs, and what stands in for AWS:
//
//   - moto_server for DynamoDB (the games and data tables, the games
//     table's stream), EventBridge Scheduler and SQS (the dead-letter
//     queues, the deadline queue), behind the counting proxy
//     of infra/emulator (the same operation names the as-deployed tests
//     log);
//   - each function of the template, built as its Makefile target builds
//     it (for this machine's architecture) and run under aws-lambda-rie
//     (infra/rie) with the template's environment, one invocation per
//     process at a time, more processes when all are busy (-instances caps
//     them);
//   - an HTTP front that turns each request into the API Gateway HTTP API
//     payload 2.0 event of the route it matches and invokes the function
//     the template routes it to, and the WebSocket API at /v1/stream
//     ($connect, $disconnect, routes by "action"; on AWS it has its own
//     URL, the StreamUrl output);
//   - the games table's stream fed to the fan-out function in batches, as
//     the template's event source mapping says; Lambda's Invoke API
//     (asynchronous AI-seat triggers, run with the function's retry
//     settings); the @connections API posting to the WebSocket clients;
//     the one-time schedules fired into the timeout function when due, and
//     the deadline queue's messages delivered to it in batches once their
//     delay has passed (its SQS event source mapping).
//
// GET /_counts answers the counts so far as JSON (?format=text,
// ?settle=1 waits until the stream and the asynchronous invocations are
// done, ?reset=1 starts them again); on exit (SIGINT, SIGTERM) emustack
// prints them. docs/operations.md takes its request counts from them.
//
// Needs moto_server on PATH (pip install 'moto[server]') and Go (to build
// the functions and, once, aws-lambda-rie into .bin/).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"chessapi/infra/rie"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "emustack:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintln(stderr, "emustack: building the functions and starting moto ...")
	st, err := startStack(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "emustack: serving %s (HTTP API routes of %s; WebSocket API at %s/v1/stream; counts at %s/_counts)\n",
		st.URL, filepath.Base(cfg.Template), "ws"+strings.TrimPrefix(st.URL, "http"), st.URL)
	<-ctx.Done()
	fmt.Fprintln(stderr, "emustack: stopping ...")
	// The last commits' effects first, so that the counts are complete.
	settleCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	st.settle(settleCtx)
	cancel()
	st.counts.take(false).write(stdout)
	st.Close()
	return nil
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("emustack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:3100", "listen address of the HTTP front (port 0: any free port)")
	tmpl := fs.String("template", "", "the SAM template (default: template.yaml at the module root)")
	stackName := fs.String("stack", "chessapi", "stack name (the functions' and tables' names derive from it)")
	instances := fs.String("instances", "", "max instances per function, e.g. PollFunction=32,MoveFunction=8 (defaults: "+instanceDefaults()+")")
	logLevel := fs.String("log-level", "WARN", "the functions' LOG_LEVEL: DEBUG, INFO, WARN or ERROR")
	functionLogs := fs.Bool("function-logs", false, "print the functions' and the emulator's output on stderr")
	aiKeys := fs.String("ai-api-keys", "required", "the AiApiKeys parameter: required or off")
	aiKey := fs.String("ai-api-key", "", "a bootstrap API key for POST /v1/ai/move (AI_API_KEY; the template never sets one)")
	streamPoll := fs.Duration("stream-poll", 250*time.Millisecond, "how often the games table's stream is read (Lambda: 4 times a second)")
	schedulePoll := fs.Duration("schedule-poll", time.Second, "how often due schedules are looked for")
	asyncRetry := fs.Duration("async-retry-delay", time.Second, "wait before the first retry of a failed asynchronous invocation, doubling (Lambda: 1 and 2 minutes)")
	streamRetry := fs.Duration("stream-retry-delay", 500*time.Millisecond, "wait before retrying a failed stream batch")
	wsIdle := fs.Duration("ws-idle", 10*time.Minute, "WebSocket idle timeout (API Gateway: 10 minutes)")
	wsMax := fs.Duration("ws-max", 2*time.Hour, "WebSocket connection duration limit (API Gateway: 2 hours)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	root, err := rie.ModuleRoot(".")
	if err != nil {
		return config{}, fmt.Errorf("run emustack inside the repository: %w", err)
	}
	cfg := config{
		Root: root, Template: *tmpl, StackName: *stackName, Addr: *addr, LogLevel: strings.ToUpper(*logLevel),
		AIAPIKeys: *aiKeys, AIAPIKey: *aiKey,
		StreamPoll: *streamPoll, SchedulePoll: *schedulePoll, AsyncRetryDelay: *asyncRetry, StreamRetryDelay: *streamRetry,
		WSIdle: *wsIdle, WSMax: *wsMax, Log: stderr,
	}
	if cfg.Template == "" {
		cfg.Template = filepath.Join(root, "template.yaml")
	}
	if *functionLogs {
		cfg.FunctionLogs = stderr
	}
	if cfg.Instances, err = parseInstances(*instances); err != nil {
		return config{}, err
	}
	return cfg, cfg.check()
}

func (c config) check() error {
	switch {
	case !validStackName(c.StackName):
		return fmt.Errorf("-stack: %q is not a stack name (a letter, then letters, digits and hyphens, at most 128)", c.StackName)
	case c.LogLevel != "DEBUG" && c.LogLevel != "INFO" && c.LogLevel != "WARN" && c.LogLevel != "ERROR":
		return fmt.Errorf("-log-level: %q is not DEBUG, INFO, WARN or ERROR", c.LogLevel)
	case c.AIAPIKeys != "required" && c.AIAPIKeys != "off":
		return fmt.Errorf("-ai-api-keys: %q is not required or off", c.AIAPIKeys)
	case c.AIAPIKey != "" && c.AIAPIKeys == "off":
		return errors.New("-ai-api-key: set, but -ai-api-keys off turns keys off")
	case c.StreamPoll <= 0 || c.SchedulePoll <= 0:
		return errors.New("-stream-poll and -schedule-poll must be positive")
	case c.AsyncRetryDelay <= 0 || c.StreamRetryDelay <= 0:
		return errors.New("-async-retry-delay and -stream-retry-delay must be positive")
	case c.WSIdle <= 0 || c.WSMax <= 0:
		return errors.New("-ws-idle and -ws-max must be positive")
	}
	return nil
}

// validStackName is CloudFormation's rule for stack names.
func validStackName(s string) bool {
	if s == "" || len(s) > 128 || !isLetter(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseInstances reads -instances: comma-separated LogicalId=N, N ≥ 1.
// The names are checked against the template when the stack starts.
func parseInstances(s string) (map[string]int, error) {
	out := map[string]int{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for part := range strings.SplitSeq(s, ",") {
		id, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || id == "" {
			return nil, fmt.Errorf("-instances: %q is not Function=N", part)
		}
		v, err := strconv.Atoi(n)
		if err != nil || v < 1 || v > 256 {
			return nil, fmt.Errorf("-instances: %s=%q is not a whole number from 1 to 256", id, n)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("-instances: %s named twice", id)
		}
		out[id] = v
	}
	return out, nil
}

func instanceDefaults() string {
	var parts []string
	for _, id := range []string{"MoveFunction", "ViewFunction", "PollFunction", "TimeoutFunction", "AiFunction", "AiSeatFunction", "StreamFunction", "FanoutFunction"} {
		parts = append(parts, fmt.Sprintf("%s=%d", id, defaultInstances[id]))
	}
	return strings.Join(parts, ",")
}
