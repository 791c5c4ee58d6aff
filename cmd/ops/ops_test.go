package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/service"
)

// runCLI runs one command line with env as the whole environment.
func runCLI(t *testing.T, env map[string]string, now func() time.Time, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := cli{stdout: &out, stderr: &errOut, getenv: func(k string) string { return env[k] }, now: now, sleep: sleepCtx}
	code := c.run(context.Background(), args)
	return code, out.String(), errOut.String()
}

// TestUsageErrors: a mistake in the command line or the configuration
// exits 2 naming the flag or variable, before any AWS call (no endpoint is
// configured here: a call would fail otherwise).
func TestUsageErrors(t *testing.T) {
	full := map[string]string{
		"GAMES_TABLE": "g", "DATA_TABLE": "d", "SCHEDULE_GROUP": "grp",
		"SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/r", "TIMEOUT_FUNCTION_ARN": "arn:aws:lambda:us-east-1:123456789012:function:t",
		"AI_FUNCTION_NAME": "ai",
	}
	without := func(k string) map[string]string {
		m := map[string]string{}
		for key, v := range full {
			if key != k {
				m[key] = v
			}
		}
		return m
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no command", full, nil, "no command"},
		{"unknown command", full, []string{"rebuild"}, `unknown command "rebuild"`},
		{"rate zero", full, []string{"rearm", "-rate", "0"}, "-rate 0"},
		{"workers", full, []string{"rearm", "-workers", "0"}, "-workers 0"},
		{"progress", full, []string{"rearm", "-progress", "1ms"}, "-progress 1ms"},
		{"stray argument", full, []string{"rearm", "now"}, `unexpected argument "now"`},
		{"unknown flag", full, []string{"rearm", "-fast"}, "-fast"},
		{"no games table", without("GAMES_TABLE"), []string{"rearm"}, "GAMES_TABLE"},
		{"no schedule group", without("SCHEDULE_GROUP"), []string{"rearm"}, "SCHEDULE_GROUP"},
		{"no AI function", without("AI_FUNCTION_NAME"), []string{"rearm"}, "AI_FUNCTION_NAME"},
		{"role not an ARN", map[string]string{"GAMES_TABLE": "g", "DATA_TABLE": "d", "SCHEDULE_GROUP": "grp", "SCHEDULER_ROLE_ARN": "role", "TIMEOUT_FUNCTION_ARN": "arn:x", "AI_FUNCTION_NAME": "ai"}, []string{"rearm"}, "SCHEDULER_ROLE_ARN"},
		{"restore without -to", full, []string{"restore", "-suffix", "-r1"}, "-to is required"},
		{"restore bad time", full, []string{"restore", "-to", "yesterday", "-suffix", "-r1"}, `-to "yesterday"`},
		{"restore no suffix", full, []string{"restore", "-to", "latest"}, "-suffix"},
		{"restore bad suffix", full, []string{"restore", "-to", "latest", "-suffix", "/x"}, `-suffix "/x"`},
		{"restore no tables", without("DATA_TABLE"), []string{"restore", "-to", "latest", "-suffix", "-r1"}, "DATA_TABLE"},
		{"restore wait", full, []string{"restore", "-to", "latest", "-suffix", "-r1", "-wait", "0s"}, "-wait 0s"},
		{"redrive without a queue", full, []string{"redrive"}, "STREAM_DLQ_URL"},
		{"redrive queue not a URL", full, []string{"redrive", "-queue", "chessapi-fanout-dlq"}, `-queue "chessapi-fanout-dlq"`},
		{"redrive negative max", full, []string{"redrive", "-queue", "https://sqs.example/q", "-max", "-1"}, "-max -1"},
		{"redrive visibility", full, []string{"redrive", "-queue", "https://sqs.example/q", "-visibility", "10ms"}, "-visibility 10ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tt.env, time.Now, tt.args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) || !strings.Contains(errOut, "usage: ops") {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and a message naming %q, then the usage", code, out, errOut, tt.want)
			}
		})
	}
	if code, _, errOut := runCLI(t, full, time.Now, "-h"); code != exitUsage || !strings.HasPrefix(errOut, "usage: ops") {
		t.Errorf("-h: exit %d, %q", code, errOut)
	}
}

// TestLimiter: calls are spaced 1/rate apart, without bursts, and a
// caller that comes late waits nothing.
func TestLimiter(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	var slept []time.Duration
	sleep := func(_ context.Context, d time.Duration) error {
		slept = append(slept, d)
		clock.Advance(d)
		return nil
	}
	l := newLimiter(4, clock.Now, sleep)
	for range 5 {
		if err := l.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if len(slept) != 4 || slept[0] != 250*time.Millisecond || slept[3] != 250*time.Millisecond {
		t.Errorf("slept %v; want four 250 ms pauses (4 a second, the first call at once)", slept)
	}
	clock.Advance(time.Second) // the caller was busy: no pause owed
	slept = nil
	if err := l.wait(context.Background()); err != nil || len(slept) != 0 {
		t.Errorf("after a pause: slept %v, %v", slept, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l2 := newLimiter(1, clock.Now, sleepCtx)
	_ = l2.wait(context.Background())
	if err := l2.wait(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("wait on a canceled context: %v", err)
	}
}

// fakeSource is a games table of records and undecodable items.
type fakeSource struct {
	recs []service.GameRecord
	bad  map[int]error // index → decode error
}

func (f fakeSource) ApproxItems(context.Context) (int64, error) { return int64(len(f.recs)), nil }

func (f fakeSource) Scan(_ context.Context, visit func(service.GameRecord, error) error) error {
	for i, r := range f.recs {
		if err := visit(r, f.bad[i]); err != nil {
			return err
		}
	}
	return nil
}

// fakeHandler records the tasks it is given and fails as told.
type fakeHandler struct {
	mu       sync.Mutex
	tasks    []service.TimeoutTask
	failLeft map[string]int // game → failures still to give (-1: always)
}

func (h *fakeHandler) RearmTimer(_ context.Context, task service.TimeoutTask) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.tasks = append(h.tasks, task)
	switch n := h.failLeft[task.GameID]; {
	case n < 0:
		return errors.New("ThrottlingException: rate exceeded")
	case n > 0:
		h.failLeft[task.GameID] = n - 1
		return errors.New("ThrottlingException: rate exceeded")
	}
	return nil
}

// TestRunRearm: only live games with a timer are handed to the timeout
// handler, soonest deadline first (one worker, so in order), a failure is
// retried and one that keeps failing is reported (and exits 1 through
// rearm), an undecodable item is reported, and -dry-run changes nothing.
func TestRunRearm(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	recs := []service.GameRecord{
		{GameID: "late", Version: 7, Deadline: base.Add(time.Hour)},
		{GameID: "finished", Version: 40, Deadline: base.Add(time.Minute), ExpiresAt: base.Add(30 * 24 * time.Hour)},
		{GameID: "soon", Version: 3, Deadline: base.Add(time.Second)},
		{GameID: "untimed", Version: 2},
		{GameID: "flaky", Version: 5, Deadline: base.Add(2 * time.Minute)},
		{GameID: "broken"},
		{GameID: "doomed", Version: 9, Deadline: base.Add(3 * time.Minute)},
	}
	src := fakeSource{recs: recs, bad: map[int]error{5: errors.New("attribute state: not binary")}}
	clock := fakeclock.New(base)
	var pauses int
	var out, errOut bytes.Buffer
	c := cli{stdout: &out, stderr: &errOut, now: clock.Now, sleep: func(_ context.Context, d time.Duration) error {
		pauses++
		clock.Advance(d)
		return nil
	}}
	h := &fakeHandler{failLeft: map[string]int{"flaky": 2, "doomed": -1}}
	stats, err := c.runRearm(context.Background(), src, h, rearmOptions{rate: 10, workers: 1, progress: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, task := range h.tasks {
		if len(order) == 0 || order[len(order)-1] != task.GameID {
			order = append(order, task.GameID)
		}
	}
	if want := []string{"soon", "flaky", "doomed", "late"}; strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("re-armed in the order %v; want %v (soonest deadline first, live games with a timer only)", order, want)
	}
	if stats.scanned != 7 || stats.live != 4 || stats.rearmed != 3 || len(stats.failed) != 2 {
		t.Errorf("stats %+v; want 7 scanned, 4 live, 3 re-armed, 2 failed (broken, doomed)", stats)
	}
	if h.tasks[0] != (service.TimeoutTask{GameID: "soon", Version: 3, Deadline: base.Add(time.Second)}) {
		t.Errorf("first task %+v; want the game's id, version and deadline", h.tasks[0])
	}
	if n := len(h.tasks); n != 1+3+3+1 { // flaky twice failed then done, doomed thrice
		t.Errorf("%d handler calls; want 8", n)
	}
	text := out.String()
	for _, want := range []string{"3 of 4 live games re-armed, 1 failed", "failed doomed: ThrottlingException", "failed broken: attribute state"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if pauses < 3 {
		t.Errorf("%d pauses; want the rate's (10 a second) and the retries'", pauses)
	}

	// A dry run lists and calls nothing.
	out.Reset()
	h2 := &fakeHandler{}
	if _, err := c.runRearm(context.Background(), src, h2, rearmOptions{rate: 10, workers: 2, progress: time.Hour, dryRun: true}); err != nil {
		t.Fatal(err)
	}
	if len(h2.tasks) != 0 || strings.Count(out.String(), "would re-arm") != 4 || !strings.Contains(out.String(), "would re-arm soon version 3 deadline 2026-12-01T10:00:01Z") {
		t.Errorf("dry run: %d calls, output\n%s", len(h2.tasks), out.String())
	}
}

// TestRunRearmProgress: progress lines come at the interval while the
// games are re-armed (here every re-arm takes a second of the clock).
func TestRunRearmProgress(t *testing.T) {
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var recs []service.GameRecord
	for i := range 10 {
		recs = append(recs, service.GameRecord{GameID: string(rune('a' + i)), Version: 1, Deadline: base.Add(time.Duration(i) * time.Minute)})
	}
	clock := fakeclock.New(base)
	var out, errOut bytes.Buffer
	c := cli{stdout: &out, stderr: &errOut, now: clock.Now, sleep: func(_ context.Context, d time.Duration) error { clock.Advance(d); return nil }}
	if _, err := c.runRearm(context.Background(), fakeSource{recs: recs}, &fakeHandler{}, rearmOptions{rate: 1, workers: 1, progress: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(errOut.String(), "live games re-armed"); n < 2 {
		t.Errorf("%d progress lines over 10 s at one every 3 s:\n%s", n, errOut.String())
	}
	if !strings.Contains(out.String(), "10 of 10 live games re-armed, 0 failed") {
		t.Errorf("summary:\n%s", out.String())
	}
}
