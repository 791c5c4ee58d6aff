package eventbridge

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/service"
)

var testConfig = Config{
	Group:     "chess-timeouts",
	RoleARN:   "arn:aws:iam::123456789012:role/chess-scheduler",
	TargetARN: "arn:aws:lambda:us-east-1:123456789012:function:chess-timeout",
}

// TestAgainstMoto creates schedules on moto_server and reads them back.
func TestAgainstMoto(t *testing.T) {
	endpoint := emulatortest.StartMoto(t)
	client := scheduler.NewFromConfig(emulator.Config(endpoint))
	ctx := context.Background()
	if _, err := client.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(testConfig.Group)}); err != nil {
		t.Fatalf("CreateScheduleGroup: %v", err)
	}
	s, err := New(client, testConfig)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }

	t.Run("CreatesOneTimeSchedule", func(t *testing.T) {
		task := service.TimeoutTask{GameID: "Ab3_x-9", Version: 4, Deadline: now.Add(90*time.Second + 250*time.Millisecond)}
		if err := s.ScheduleTimeout(ctx, task); err != nil {
			t.Fatalf("ScheduleTimeout(%+v) = %v", task, err)
		}
		got := getSchedule(t, client, ScheduleName(task.GameID, FireTime(task.Deadline, now)))
		checkSchedule(t, got, task, "at(2026-05-01T12:01:31)") // rounded up to the second
	})

	t.Run("DuplicateIsNoop", func(t *testing.T) {
		task := service.TimeoutTask{GameID: "dup", Version: 1, Deadline: now.Add(time.Minute)}
		for i := range 3 {
			if err := s.ScheduleTimeout(ctx, task); err != nil {
				t.Fatalf("ScheduleTimeout call %d = %v; want nil (already scheduled)", i+1, err)
			}
		}
		if n := countSchedules(t, client, "t-dup."); n != 1 {
			t.Fatalf("schedules for game dup = %d; want 1", n)
		}
	})

	t.Run("ReplacingKeepsOneLiveSchedule", func(t *testing.T) {
		first := service.TimeoutTask{GameID: "one", Version: 1, Deadline: now.Add(time.Minute)}
		if err := s.ScheduleTimeout(ctx, first); err != nil {
			t.Fatal(err)
		}
		second := service.TimeoutTask{GameID: "one", Version: 2, Deadline: now.Add(3 * time.Minute), Replaces: first.Deadline}
		if err := s.ScheduleTimeout(ctx, second); err != nil {
			t.Fatal(err)
		}
		if n := countSchedules(t, client, "t-one."); n != 1 {
			t.Fatalf("schedules for game one after a new deadline = %d; want 1", n)
		}
		checkSchedule(t, getSchedule(t, client, ScheduleName("one", FireTime(second.Deadline, now))), second, "at(2026-05-01T12:03:00)")
		if err := s.CancelTimeout(ctx, "one"); err != nil {
			t.Fatal(err)
		}
		if n := countSchedules(t, client, "t-one."); n != 0 {
			t.Fatalf("schedules for game one after CancelTimeout = %d; want 0", n)
		}
		if err := s.CancelTimeout(ctx, "one"); err != nil {
			t.Fatalf("CancelTimeout with nothing left = %v; want nil", err)
		}
	})

	t.Run("RearmWhileTheFiredOneExists", func(t *testing.T) {
		// The schedule fired at its second and still exists (it deletes
		// itself after the invocation); the handler re-arms the same
		// deadline from "now", which is never before the fired second.
		fired := service.TimeoutTask{GameID: "early", Version: 3, Deadline: now.Add(10 * time.Second)}
		if err := s.ScheduleTimeout(ctx, fired); err != nil {
			t.Fatal(err)
		}
		later := now.Add(10 * time.Second)
		s.now = func() time.Time { return later }
		defer func() { s.now = func() time.Time { return now } }()
		rearm := service.TimeoutTask{GameID: "early", Version: 3, Deadline: now.Add(10*time.Second + 500*time.Millisecond)}
		if err := s.ScheduleTimeout(ctx, rearm); err != nil {
			t.Fatal(err)
		}
		firedName := ScheduleName("early", FireTime(fired.Deadline, now))
		rearmName := ScheduleName("early", FireTime(rearm.Deadline, later))
		if firedName == rearmName {
			t.Fatalf("the re-armed schedule reuses the firing one's name %q", firedName)
		}
		checkSchedule(t, getSchedule(t, client, rearmName), rearm, "at(2026-05-01T12:00:11)")
	})

	t.Run("PastDeadlineFiresSoon", func(t *testing.T) {
		task := service.TimeoutTask{GameID: "late", Version: 9, Deadline: now.Add(-time.Hour)}
		if err := s.ScheduleTimeout(ctx, task); err != nil {
			t.Fatalf("ScheduleTimeout(%+v) = %v", task, err)
		}
		got := getSchedule(t, client, ScheduleName(task.GameID, FireTime(task.Deadline, now)))
		// The input keeps the real deadline; only the firing moves.
		checkSchedule(t, got, task, "at(2026-05-01T12:00:01)")
	})

	t.Run("LongIDHashedName", func(t *testing.T) {
		task := service.TimeoutTask{GameID: strings.Repeat("x", 60) + "/é", Version: 1, Deadline: now.Add(time.Hour)}
		if err := s.ScheduleTimeout(ctx, task); err != nil {
			t.Fatalf("ScheduleTimeout(%+v) = %v", task, err)
		}
		got := getSchedule(t, client, ScheduleName(task.GameID, FireTime(task.Deadline, now)))
		checkSchedule(t, got, task, "at(2026-05-01T13:00:00)")
		if err := s.CancelTimeout(ctx, task.GameID); err != nil {
			t.Fatal(err)
		}
		if n := countSchedules(t, client, NamePrefix(task.GameID)); n != 0 {
			t.Fatalf("hashed-name schedules after CancelTimeout = %d; want 0", n)
		}
	})

	t.Run("MissingGroupFails", func(t *testing.T) {
		cfg := testConfig
		cfg.Group = "no-such-group"
		other, err := New(client, cfg)
		if err != nil {
			t.Fatal(err)
		}
		task := service.TimeoutTask{GameID: "g", Version: 1, Deadline: now.Add(time.Hour)}
		if err := other.ScheduleTimeout(ctx, task); err == nil {
			t.Fatalf("ScheduleTimeout into a missing group = nil; want an error")
		}
	})
}

func getSchedule(t *testing.T, client *scheduler.Client, name string) *scheduler.GetScheduleOutput {
	t.Helper()
	out, err := client.GetSchedule(context.Background(), &scheduler.GetScheduleInput{
		Name: aws.String(name), GroupName: aws.String(testConfig.Group),
	})
	if err != nil {
		t.Fatalf("GetSchedule(%q): %v", name, err)
	}
	return out
}

func checkSchedule(t *testing.T, got *scheduler.GetScheduleOutput, task service.TimeoutTask, wantExpr string) {
	t.Helper()
	if e := aws.ToString(got.ScheduleExpression); e != wantExpr {
		t.Errorf("ScheduleExpression = %q; want %q", e, wantExpr)
	}
	if tz := aws.ToString(got.ScheduleExpressionTimezone); tz != "UTC" {
		t.Errorf("ScheduleExpressionTimezone = %q; want UTC", tz)
	}
	if g := aws.ToString(got.GroupName); g != testConfig.Group {
		t.Errorf("GroupName = %q; want %q", g, testConfig.Group)
	}
	if got.FlexibleTimeWindow == nil || got.FlexibleTimeWindow.Mode != types.FlexibleTimeWindowModeOff {
		t.Errorf("FlexibleTimeWindow = %+v; want mode OFF", got.FlexibleTimeWindow)
	}
	if got.ActionAfterCompletion != types.ActionAfterCompletionDelete {
		t.Errorf("ActionAfterCompletion = %q; want DELETE", got.ActionAfterCompletion)
	}
	if got.Target == nil {
		t.Fatal("Target = nil")
	}
	if a := aws.ToString(got.Target.Arn); a != testConfig.TargetARN {
		t.Errorf("Target.Arn = %q; want %q", a, testConfig.TargetARN)
	}
	if r := aws.ToString(got.Target.RoleArn); r != testConfig.RoleARN {
		t.Errorf("Target.RoleArn = %q; want %q", r, testConfig.RoleARN)
	}
	var input service.TimeoutTask
	if err := json.Unmarshal([]byte(aws.ToString(got.Target.Input)), &input); err != nil {
		t.Fatalf("Target.Input %q is not a TimeoutTask: %v", aws.ToString(got.Target.Input), err)
	}
	if input.GameID != task.GameID || input.Version != task.Version || !input.Deadline.Equal(task.Deadline) || input.Attempt != task.Attempt {
		t.Errorf("Target.Input = %+v; want %+v", input, task)
	}
	// The handler decodes exactly these keys (attempt only when not 0).
	var keys map[string]json.RawMessage
	_ = json.Unmarshal([]byte(aws.ToString(got.Target.Input)), &keys)
	for _, k := range []string{"gameId", "version", "deadline"} {
		if _, ok := keys[k]; !ok || len(keys) != 3 {
			t.Errorf("Target.Input keys = %v; want exactly gameId, version, deadline", keys)
			break
		}
	}
	if got.Target.RetryPolicy == nil || aws.ToInt32(got.Target.RetryPolicy.MaximumRetryAttempts) != maxInvokeRetries {
		t.Errorf("Target.RetryPolicy = %+v; want %d retries", got.Target.RetryPolicy, maxInvokeRetries)
	}
}

func countSchedules(t *testing.T, client *scheduler.Client, prefix string) int {
	t.Helper()
	out, err := client.ListSchedules(context.Background(), &scheduler.ListSchedulesInput{
		GroupName: aws.String(testConfig.Group), NamePrefix: aws.String(prefix),
	})
	if err != nil {
		t.Fatalf("ListSchedules: %v", err)
	}
	return len(out.Schedules)
}

var nameRE = regexp.MustCompile(`^[0-9a-zA-Z_.-]{1,64}$`)

func TestScheduleName(t *testing.T) {
	fire := time.Unix(1_800_000_000, 0)
	tests := []struct {
		name string
		game string
		want string // "" when the id part is hashed
	}{
		{"typical id", "Zk3n_Q-8f2LmA0pXy7TgW1vB5c", "t-Zk3n_Q-8f2LmA0pXy7TgW1vB5c.1800000000"},
		{"invalid characters", "a/b c", ""},
		{"too long", strings.Repeat("a", 60), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScheduleName(tt.game, fire)
			if !nameRE.MatchString(got) {
				t.Fatalf("ScheduleName(%q) = %q; not a valid schedule name", tt.game, got)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("ScheduleName(%q) = %q; want %q", tt.game, got, tt.want)
			}
			if tt.want == "" && !strings.HasPrefix(got, "t-h") {
				t.Errorf("ScheduleName(%q) = %q; want the hashed t-h form", tt.game, got)
			}
			if !strings.HasPrefix(got, NamePrefix(tt.game)) {
				t.Errorf("ScheduleName(%q) = %q does not start with the game's prefix %q", tt.game, got, NamePrefix(tt.game))
			}
		})
	}
}

// TestScheduleNamesDiffer: different games or seconds never share a name,
// and no game's prefix is another's (CancelTimeout lists by prefix).
func TestScheduleNamesDiffer(t *testing.T) {
	s := time.Unix(1_800_000_000, 0)
	games := []string{"a", "b", "a-1", "a.1", "a/", "a?", strings.Repeat("z", 70), strings.Repeat("z", 71)}
	seen := map[string]bool{}
	for _, g := range games {
		for _, at := range []time.Time{s, s.Add(time.Second)} {
			name := ScheduleName(g, at)
			if seen[name] {
				t.Errorf("ScheduleName(%q, %v) = %q repeats", g, at, name)
			}
			seen[name] = true
		}
		for _, other := range games {
			if other != g && strings.HasPrefix(NamePrefix(other), NamePrefix(g)) {
				t.Errorf("prefix of %q (%q) is a prefix of %q's (%q)", g, NamePrefix(g), other, NamePrefix(other))
			}
		}
	}
}

func FuzzScheduleName(f *testing.F) {
	f.Add("Zk3n_Q-8f2LmA0pXy7TgW1vB5c", int64(1_800_000_000))
	f.Add("", int64(-1))
	f.Add("ü/../x", int64(0))
	f.Fuzz(func(t *testing.T, id string, sec int64) {
		name := ScheduleName(id, time.Unix(sec%(1<<40), 0))
		if !nameRE.MatchString(name) {
			t.Fatalf("ScheduleName(%q, %d) = %q; not a valid schedule name", id, sec, name)
		}
	})
}

func TestFireTime(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 400_000_000, time.UTC)
	tests := []struct {
		deadline time.Time
		want     string
	}{
		{now.Add(time.Hour), "2026-05-01T13:00:01Z"},                           // rounded up
		{time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC), "2026-05-01T13:00:00Z"}, // whole second kept
		{now.Add(-time.Hour), "2026-05-01T12:00:02Z"},                          // past: now+1s, rounded up
		{now.Add(300 * time.Millisecond), "2026-05-01T12:00:02Z"},              // too close: same
		{time.Date(2026, 5, 1, 21, 0, 5, 0, time.FixedZone("KST", 9*3600)), "2026-05-01T12:00:05Z"},
	}
	for _, tt := range tests {
		if got := FireTime(tt.deadline, now).Format(time.RFC3339); got != tt.want {
			t.Errorf("FireTime(%v, %v) = %s; want %s", tt.deadline, now, got, tt.want)
		}
	}
	if got := AtExpression(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", -3600))); got != "at(2026-01-02T04:04:05)" {
		t.Errorf("AtExpression = %q; want at(2026-01-02T04:04:05) (UTC)", got)
	}
}

func TestConfigFromEnv(t *testing.T) {
	full := map[string]string{
		EnvGroup:     testConfig.Group,
		EnvRoleARN:   testConfig.RoleARN,
		EnvTargetARN: testConfig.TargetARN,
	}
	cfg, err := ConfigFromEnv(func(k string) string { return full[k] })
	if err != nil || cfg != testConfig {
		t.Fatalf("ConfigFromEnv(full) = %+v, %v; want %+v", cfg, err, testConfig)
	}
	for _, missing := range []string{EnvGroup, EnvRoleARN, EnvTargetARN} {
		_, err := ConfigFromEnv(func(k string) string {
			if k == missing {
				return ""
			}
			return full[k]
		})
		if err == nil || !strings.Contains(err.Error(), missing) {
			t.Errorf("ConfigFromEnv without %s = %v; want an error naming it", missing, err)
		}
	}
	_, err = ConfigFromEnv(func(k string) string {
		if k == EnvTargetARN {
			return "chess-timeout"
		}
		return full[k]
	})
	if err == nil || !strings.Contains(err.Error(), EnvTargetARN) {
		t.Errorf("ConfigFromEnv with a bare function name = %v; want an error naming %s", err, EnvTargetARN)
	}
}

// fakeAPI records calls and answers with a fixed error.
type fakeAPI struct {
	calls int
	err   error
}

func (f *fakeAPI) CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error) {
	f.calls++
	return &scheduler.CreateScheduleOutput{}, f.err
}

func (f *fakeAPI) DeleteSchedule(ctx context.Context, in *scheduler.DeleteScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error) {
	f.calls++
	return &scheduler.DeleteScheduleOutput{}, f.err
}

func (f *fakeAPI) ListSchedules(ctx context.Context, in *scheduler.ListSchedulesInput, _ ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error) {
	f.calls++
	return &scheduler.ListSchedulesOutput{}, f.err
}

func TestScheduleTimeoutErrors(t *testing.T) {
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	t.Run("InvalidTask", func(t *testing.T) {
		api := &fakeAPI{}
		s, _ := New(api, testConfig)
		for _, task := range []service.TimeoutTask{
			{GameID: "", Version: 1, Deadline: deadline},
			{GameID: "g", Version: 0, Deadline: deadline},
			{GameID: "g", Version: 1},
		} {
			if err := s.ScheduleTimeout(ctx, task); err == nil {
				t.Errorf("ScheduleTimeout(%+v) = nil; want an error", task)
			}
		}
		if api.calls != 0 {
			t.Errorf("invalid tasks reached the API %d times; want 0", api.calls)
		}
	})
	t.Run("ConflictIsNil", func(t *testing.T) {
		s, _ := New(&fakeAPI{err: &types.ConflictException{Message: aws.String("exists")}}, testConfig)
		if err := s.ScheduleTimeout(ctx, service.TimeoutTask{GameID: "g", Version: 1, Deadline: deadline}); err != nil {
			t.Errorf("ScheduleTimeout on ConflictException = %v; want nil", err)
		}
	})
	t.Run("OtherErrorsWrapped", func(t *testing.T) {
		cause := &types.ValidationException{Message: aws.String("bad")}
		s, _ := New(&fakeAPI{err: cause}, testConfig)
		err := s.ScheduleTimeout(ctx, service.TimeoutTask{GameID: "g", Version: 1, Deadline: deadline})
		var got *types.ValidationException
		if !errors.As(err, &got) || !strings.Contains(err.Error(), `game "g" version 1`) {
			t.Errorf("ScheduleTimeout on ValidationException = %v; want it wrapped with the game named", err)
		}
	})
	t.Run("NilClient", func(t *testing.T) {
		if _, err := New(nil, testConfig); err == nil {
			t.Error("New(nil, cfg) = nil error; want an error")
		}
	})
}
