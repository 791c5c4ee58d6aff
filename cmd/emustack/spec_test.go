package main

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"chessapi/deploy"
	"chessapi/shared/lambdafn"
)

// repoTemplate is the repository's template.yaml (tests run in
// cmd/emustack).
var repoTemplate = filepath.Join("..", "..", "template.yaml")

func repoSpec(t *testing.T) *stackSpec {
	t.Helper()
	spec, err := loadSpec(repoTemplate, "chessapi")
	if err != nil {
		t.Fatalf("loadSpec: %v", err)
	}
	return spec
}

func TestSpecFromTemplate(t *testing.T) {
	spec := repoSpec(t)
	for _, r := range spec.Routes {
		if _, ok := spec.Functions[r.Function]; !ok {
			t.Errorf("route %s → %s, not a function of the spec", r.Pattern(), r.Function)
		}
		if spec.Timeouts[r.Pattern()] != 29*time.Second {
			t.Errorf("route %s: integration timeout %v; want the template's 29 s", r.Pattern(), spec.Timeouts[r.Pattern()])
		}
	}
	if len(spec.Sources) != 2 || spec.Sources[0].Function != "EffectsFunction" || spec.Sources[1].Function != "FanoutFunction" {
		t.Fatalf("stream sources %+v; want the effects' and the fan-out's", spec.Sources)
	}
	for _, got := range spec.Sources {
		if got.BatchSize != 100 || got.MaxRetries != -1 || got.MaxAge != time.Hour || !got.Bisect || got.OnFailure != "FanoutDeadLetterQueue" {
			t.Errorf("stream source %+v; want the mapping as in template.yaml", got)
		}
	}
	seat := spec.Functions["AiSeatFunction"]
	if seat.Name != "chessapi-ai-seat" || seat.MemoryMB != 1769 || seat.Timeout != 15*time.Second ||
		seat.AsyncRetries != 1 || seat.AsyncMaxAge != 120*time.Second || seat.AsyncFailures != "AiSeatDeadLetterQueue" {
		t.Errorf("AiSeatFunction %+v; want chessapi-ai-seat, 1769 MB, 15 s, 1 retry within 120 s to AiSeatDeadLetterQueue", seat)
	}
	timeout := spec.Functions["TimeoutFunction"]
	if timeout.AsyncRetries != 2 || timeout.AsyncFailures != "TimeoutDeadLetterQueue" || timeout.AsyncMaxAge != defaultAsyncMaxAge {
		t.Errorf("TimeoutFunction async config %+v; want 2 retries, Lambda's 6 h, TimeoutDeadLetterQueue", timeout)
	}
	if move := spec.Functions["MoveFunction"]; move.AsyncRetries != defaultAsyncRetries || move.AsyncFailures != "" {
		t.Errorf("MoveFunction async config %+v; want Lambda's defaults", move)
	}
	d := spec.Deadlines
	name, _ := substitute(d.QueueName, "chessapi")
	dlq, _ := substitute(d.DeadLetterName, "chessapi")
	if d.Function != "TimeoutFunction" || d.Queue != "DeadlineQueue" || name != "chessapi-deadlines" || dlq != "chessapi-deadline-dlq" ||
		d.BatchSize != 10 || d.Visibility != time.Minute || d.MaxReceives != 5 {
		t.Errorf("deadline queue source %+v (%s, %s); want TimeoutFunction on chessapi-deadlines, batches of 10, 60 s, 5 receives to chessapi-deadline-dlq", d, name, dlq)
	}
	if g, err := substitute(spec.GroupName, "chessapi"); err != nil || g != "chessapi-deadlines" {
		t.Errorf("schedule group %q, %v; want chessapi-deadlines", g, err)
	}
	keys := map[string]bool{}
	for _, r := range spec.StreamRoutes {
		keys[r.RouteKey] = true
	}
	for _, k := range []string{"$connect", "$disconnect", "$default", "subscribe", "unsubscribe", "ping"} {
		if !keys[k] {
			t.Errorf("stream route %s missing from %v", k, spec.StreamRoutes)
		}
	}
}

// TestFunctionPackagesMatchMakefile holds functionPackages to the
// Makefile targets `sam build` runs, and to the template's functions.
func TestFunctionPackagesMatchMakefile(t *testing.T) {
	tmpl, err := deploy.LoadTemplate(repoTemplate)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range tmpl.Functions {
		ids = append(ids, f.LogicalID)
	}
	if want := slices.Sorted(maps.Keys(functionPackages)); !slices.Equal(ids, want) {
		t.Errorf("template functions %v; functionPackages has %v", ids, want)
	}
	makeTool, err := exec.LookPath("make")
	if err != nil {
		if testing.Short() {
			t.Skip("make is not installed; skipped in -short mode")
		}
		t.Fatal("make is not installed")
	}
	artifacts := t.TempDir()
	for _, f := range tmpl.Functions {
		cmd := exec.Command(makeTool, "-n", "-s", f.BuildTarget(), "ARTIFACTS_DIR="+artifacts)
		cmd.Dir = filepath.Join("..", "..")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %s: %v\n%s", f.BuildTarget(), err, out)
		}
		fields := strings.Fields(string(out))
		if len(fields) == 0 || fields[len(fields)-1] != functionPackages[f.LogicalID] {
			t.Errorf("make -n %s builds %q; functionPackages says %s", f.BuildTarget(), out, functionPackages[f.LogicalID])
		}
	}
}

func TestEnvironmentFromTemplate(t *testing.T) {
	spec := repoSpec(t)
	st := &stack{cfg: config{StackName: "chessapi", LogLevel: "WARN", AIAPIKeys: "required", AIAPIKey: "k_sample"}, spec: spec,
		gamesTable: "chessapi-GamesTable", dataTable: "chessapi-DataTable", group: "chessapi-deadlines",
		deadLetters: lambdafn.SQSQueue{URL: "http://127.0.0.1:3/123456789012/chessapi-fanout-dlq"},
		deadlines:   lambdafn.SQSQueue{URL: "http://127.0.0.1:3/123456789012/chessapi-deadlines"}, originSecret: "emustack-edge-0123456789abcdef0123456789",
		push: pushApplications{APNs: "arn:aws:sns:us-east-1:123456789012:app/APNS/chessapi-APNS",
			APNsSandbox: "arn:aws:sns:us-east-1:123456789012:app/APNS_SANDBOX/chessapi-APNS_SANDBOX",
			FCM:         "arn:aws:sns:us-east-1:123456789012:app/GCM/chessapi-GCM"}}
	raw, err := os.ReadFile(repoTemplate)
	if err != nil {
		t.Fatal(err)
	}
	param := regexp.MustCompile(`(?m)^  StreamRetrySeconds:\n    Type: Number\n    Default: (\d+)$`).FindSubmatch(raw)
	if param == nil || string(param[1]) != strconv.Itoa(defaultStreamRetrySeconds) {
		t.Errorf("template's StreamRetrySeconds default %q; emustack's %d", param, defaultStreamRetrySeconds)
	}
	tmpl, err := deploy.LoadTemplate(repoTemplate)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tmpl.Functions {
		env, err := st.environment(spec.Functions[f.LogicalID], "http://127.0.0.1:1", "http://127.0.0.1:2")
		if err != nil {
			t.Fatalf("%s: %v", f.LogicalID, err)
		}
		for _, k := range f.EnvKeys {
			if env[k] == "" {
				t.Errorf("%s: %s is empty", f.LogicalID, k)
			}
		}
		if env["AWS_ENDPOINT_URL_DYNAMODB"] != "http://127.0.0.1:1" || env["AWS_ENDPOINT_URL_LAMBDA"] != "http://127.0.0.1:2" {
			t.Errorf("%s: endpoints %q %q", f.LogicalID, env["AWS_ENDPOINT_URL_DYNAMODB"], env["AWS_ENDPOINT_URL_LAMBDA"])
		}
		if _, ok := env["AI_API_KEY"]; ok != (f.LogicalID == "AiFunction") {
			t.Errorf("%s: AI_API_KEY set = %v; want it only on the public AI function", f.LogicalID, ok)
		}
		if name := env["AI_FUNCTION_NAME"]; name != "" && name != spec.Functions["AiSeatFunction"].Name {
			t.Errorf("%s: AI_FUNCTION_NAME %q; want the AI seats' function", f.LogicalID, name)
		}
		if arn := env["TIMEOUT_FUNCTION_ARN"]; arn != "" {
			if fn, ok := spec.functionByName(arn); !ok || fn.LogicalID != "TimeoutFunction" {
				t.Errorf("%s: TIMEOUT_FUNCTION_ARN %q resolves to %q, %v; want TimeoutFunction", f.LogicalID, arn, fn.LogicalID, ok)
			}
		}
		if ep := env["STREAM_ENDPOINT"]; ep != "" && ep != "http://127.0.0.1:2/v1" {
			t.Errorf("%s: STREAM_ENDPOINT %q; want the local @connections", f.LogicalID, ep)
		}
	}
	fn := spec.Functions["MoveFunction"]
	fn.Env = maps.Clone(fn.Env)
	fn.Env["SOMETHING_NEW"] = map[string]any{"Ref": "SomeResource"}
	if _, err := st.environment(fn, "x", "y"); err == nil || !strings.Contains(err.Error(), "SOMETHING_NEW") {
		t.Errorf("a variable emustack cannot set: %v; want an error naming it", err)
	}
}

func TestFunctionByName(t *testing.T) {
	spec := repoSpec(t)
	for in, want := range map[string]string{
		"chessapi-ai-seat":         "AiSeatFunction",
		"chessapi-ai-seat:$LATEST": "AiSeatFunction",
		"arn:aws:lambda:us-east-1:123456789012:function:chessapi-timeout":      "TimeoutFunction",
		"arn:aws:lambda:us-east-1:123456789012:function:chessapi-timeout:live": "TimeoutFunction",
		"chessapi-nothing": "",
		"arn:aws:sqs:us-east-1:123456789012:chessapi-timeout": "",
		"arn:aws": "",
	} {
		fn, ok := spec.functionByName(in)
		if fn.LogicalID != want || ok != (want != "") {
			t.Errorf("functionByName(%q) = %q, %v; want %q", in, fn.LogicalID, ok, want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	for _, c := range []struct {
		in      any
		want    string
		wantErr bool
	}{
		{nil, "", false},
		{"plain", "plain", false},
		{map[string]any{"Fn::Sub": "${AWS::StackName}-move"}, "s-move", false},
		{map[string]any{"Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${AWS::StackName}-timeout"},
			"arn:aws:lambda:us-east-1:123456789012:function:s-timeout", false},
		{map[string]any{"Fn::Sub": "https://${StreamApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}/v1"}, "", true},
		{map[string]any{"Ref": "GamesTable"}, "", true},
		{42, "", true},
	} {
		got, err := substitute(c.in, "s")
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("substitute(%v) = %q, %v; want %q, error %v", c.in, got, err, c.want, c.wantErr)
		}
	}
}

func TestSpecRefusesWhatItCannotRun(t *testing.T) {
	base, err := os.ReadFile(repoTemplate)
	if err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(string) string{
		"unknown function": func(s string) string {
			return strings.Replace(s, "  MoveFunction:\n", "  MoveFunction2:\n", 1)
		},
		"no memory size": func(s string) string {
			return strings.Replace(s, "      MemorySize: 512\n", "", 1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			tmpl, err := deploy.ParseTemplate([]byte(edit(string(base))))
			if err != nil {
				t.Fatalf("ParseTemplate: %v", err)
			}
			if _, err := specOf(tmpl, "chessapi"); err == nil {
				t.Error("specOf accepted it; want an error")
			}
		})
	}
}
