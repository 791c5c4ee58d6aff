package deploy

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"chessapi/shared/api"
)

// repoRoot is where template.yaml, the Makefile and events/ live.
const repoRoot = ".."

// specRoutes is the route table of SPEC §5 and the function serving each.
var specRoutes = map[string]string{
	"POST /v1/games":               "MoveFunction",
	"POST /v1/games/{id}/join":     "MoveFunction",
	"GET /v1/games/{id}":           "ViewFunction", // views: their own concurrency, apart from the long poll's
	"GET /v1/games/{id}/events":    "ViewFunction",
	"GET /v1/games/{id}/poll":      "PollFunction", // the long poll: its own concurrency (SPEC §11)
	"POST /v1/games/{id}/actions":  "MoveFunction",
	"GET /v1/games/{id}/pgn":       "MoveFunction",
	"POST /v1/games/{id}/presence": "MoveFunction",
	"POST /v1/positions":           "MoveFunction",
	"GET /v1/health":               "MoveFunction",
	"POST /v1/ai/move":             "AiFunction",
	// SPEC §12
	"POST /v1/players":               "MoveFunction",
	"GET /v1/players/me":             "MoveFunction",
	"PATCH /v1/players/me":           "MoveFunction",
	"GET /v1/players/me/games":       "MoveFunction",
	"POST /v1/players/me/link-codes": "MoveFunction",
	"POST /v1/players/link":          "MoveFunction",
	"GET /v1/lobby":                  "MoveFunction",
	"POST /v1/lobby/quick":           "MoveFunction",
	// SPEC §16.3
	"POST /v1/players/me/devices":            "MoveFunction",
	"GET /v1/players/me/devices":             "MoveFunction",
	"DELETE /v1/players/me/devices/{id}":     "MoveFunction",
	"GET /v1/players/me/notifications":       "MoveFunction",
	"POST /v1/players/me/notifications/read": "MoveFunction",
	// SPEC §16.2
	"DELETE /v1/players/me":                 "MoveFunction",
	"GET /v1/players/me/sessions":           "MoveFunction",
	"PATCH /v1/players/me/sessions/current": "MoveFunction",
	"DELETE /v1/players/me/sessions/{id}":   "MoveFunction",
	"POST /v1/players/me/recovery-code":     "MoveFunction",
	"POST /v1/players/recover":              "MoveFunction",
	"GET /v1/players/me/blocks":             "MoveFunction",
	"POST /v1/players/me/blocks/{id}":       "MoveFunction",
	"DELETE /v1/players/me/blocks/{id}":     "MoveFunction",
	"GET /v1/players/{id}":                  "MoveFunction",
}

// TestTemplateRoutesMatchHandler: API Gateway routes exactly what the one
// HTTP handler serves, no more (a 404 from the mux) and no less (a 404 from
// API Gateway).
func TestTemplateRoutesMatchHandler(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	inTemplate := map[string]bool{}
	for _, r := range tmpl.Routes {
		inTemplate[r.Pattern()] = true
	}
	inHandler := map[string]bool{}
	for _, r := range api.Routes() {
		inHandler[r.Method+" "+r.Path] = true
	}
	for p := range inHandler {
		if !inTemplate[p] {
			t.Errorf("handler route %q has no route in template.yaml", p)
		}
	}
	for p := range inTemplate {
		if !inHandler[p] {
			t.Errorf("template route %q is not served by api.NewHandler", p)
		}
	}
}

// specFunctions is SPEC §2 (where each function's code lives) and §10
// (which configuration each one reads).
var specFunctions = []struct {
	logicalID string
	pkg       string
	env       []string
}{
	{"AiFunction", "./functions/ai",
		[]string{"AI_API_KEYS", "DATA_TABLE", "GAMES_TABLE", "LOG_LEVEL", "ORIGIN_VERIFY_SECRET"}},
	{"AiSeatFunction", "./functions/ai",
		[]string{"GAMES_TABLE", "LOG_LEVEL"}},
	{"EffectsFunction", "./functions/effects",
		[]string{"AI_FUNCTION_NAME", "APNS_PLATFORM_APPLICATION_ARN", "APNS_SANDBOX_PLATFORM_APPLICATION_ARN", "DATA_TABLE", "DEADLINE_QUEUE_URL", "FCM_PLATFORM_APPLICATION_ARN", "GAMES_TABLE", "LOG_LEVEL", "SCHEDULER_ROLE_ARN", "SCHEDULE_DLQ_ARN", "SCHEDULE_GROUP", "STREAM_DLQ_URL", "STREAM_RETRY_SECONDS", "TIMEOUT_FUNCTION_ARN"}},
	{"FanoutFunction", "./functions/fanout",
		[]string{"DATA_TABLE", "GAMES_TABLE", "LOG_LEVEL", "STREAM_DLQ_URL", "STREAM_ENDPOINT", "STREAM_RETRY_SECONDS"}},
	{"MoveFunction", "./functions/move",
		[]string{"APNS_PLATFORM_APPLICATION_ARN", "APNS_SANDBOX_PLATFORM_APPLICATION_ARN", "DATA_TABLE", "FCM_PLATFORM_APPLICATION_ARN", "GAMES_TABLE", "LOG_LEVEL", "ORIGIN_VERIFY_SECRET", "STREAM_ENDPOINT"}},
	{"PollFunction", "./functions/move",
		[]string{"DATA_TABLE", "GAMES_TABLE", "LOG_LEVEL", "ORIGIN_VERIFY_SECRET"}},
	{"ViewFunction", "./functions/move",
		[]string{"DATA_TABLE", "GAMES_TABLE", "LOG_LEVEL", "ORIGIN_VERIFY_SECRET"}},
	{"StreamFunction", "./functions/stream",
		[]string{"DATA_TABLE", "GAMES_TABLE", "LOG_LEVEL", "ORIGIN_VERIFY_SECRET", "STREAM_ENDPOINT"}},
	{"TimeoutFunction", "./functions/timeout",
		[]string{"AI_FUNCTION_NAME", "APNS_PLATFORM_APPLICATION_ARN", "APNS_SANDBOX_PLATFORM_APPLICATION_ARN", "DATA_TABLE", "FCM_PLATFORM_APPLICATION_ARN", "GAMES_TABLE", "LOG_LEVEL"}},
}

func loadRepoTemplate(t *testing.T) *Template {
	t.Helper()
	tmpl, err := LoadTemplate(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return tmpl
}

func TestTemplateRoutesAreSpecRoutes(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	got := map[string]string{}
	for _, r := range tmpl.Routes {
		got[r.Pattern()] = r.Function
	}
	for pattern, fn := range specRoutes {
		if got[pattern] != fn {
			t.Errorf("template route %q -> %q; want -> %q", pattern, got[pattern], fn)
		}
	}
	for pattern, fn := range got {
		if _, ok := specRoutes[pattern]; !ok {
			t.Errorf("template route %q -> %s is not in SPEC §5", pattern, fn)
		}
	}
}

func TestTemplateFunctions(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	if len(tmpl.Functions) != len(specFunctions) {
		t.Errorf("template has %d functions; want %d", len(tmpl.Functions), len(specFunctions))
	}
	for _, want := range specFunctions {
		t.Run(want.logicalID, func(t *testing.T) {
			fn, ok := tmpl.Function(want.logicalID)
			if !ok {
				t.Fatalf("template has no function %s", want.logicalID)
			}
			// CodeUri is the repository root because the functions import
			// shared/; the Makefile target picks the package.
			if fn.CodeURI != "." || fn.BuildMethod != "makefile" || fn.BuildTarget() != "build-"+want.logicalID {
				t.Errorf("%s: CodeUri %q, BuildMethod %q, target %q; want \".\", makefile, build-%s",
					want.logicalID, fn.CodeURI, fn.BuildMethod, fn.BuildTarget(), want.logicalID)
			}
			if fn.Runtime != "provided.al2023" || fn.Handler != "bootstrap" || !slices.Equal(fn.Architectures, []string{"arm64"}) {
				t.Errorf("%s: runtime %q, handler %q, architectures %q; want provided.al2023, bootstrap, [arm64]",
					want.logicalID, fn.Runtime, fn.Handler, fn.Architectures)
			}
			if !slices.Equal(fn.EnvKeys, want.env) {
				t.Errorf("%s environment = %q; want %q (SPEC §10)", want.logicalID, fn.EnvKeys, want.env)
			}
		})
	}
}

// requireTool finds a command the test needs: missing, it skips in -short
// mode (a quick local run) and fails otherwise (CI must have it).
func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if testing.Short() {
			t.Skipf("%s is not installed; skipped in -short mode", name)
		}
		t.Fatalf("%s is not installed: %v", name, err)
	}
	return p
}

// TestMakefileBuildsEachFunction checks the recipes `sam build` and `make
// build` run, as make expands them, without running them.
func TestMakefileBuildsEachFunction(t *testing.T) {
	makeTool := requireTool(t, "make")
	tmpl := loadRepoTemplate(t)
	const flags = "GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w'"
	artifacts := t.TempDir()
	for _, want := range specFunctions {
		t.Run(want.logicalID, func(t *testing.T) {
			fn, ok := tmpl.Function(want.logicalID)
			if !ok {
				t.Fatalf("template has no function %s", want.logicalID)
			}
			got := makeDryRun(t, makeTool, fn.BuildTarget(), "ARTIFACTS_DIR="+artifacts)
			wantCmd := flags + " -o " + artifacts + "/bootstrap " + want.pkg
			if got != wantCmd {
				t.Errorf("make -n %s =\n%s\nwant\n%s", fn.BuildTarget(), got, wantCmd)
			}
			cmd := exec.Command(makeTool, "-n", "-s", fn.BuildTarget())
			cmd.Dir = repoRoot
			cmd.Env = withoutEnv(os.Environ(), "ARTIFACTS_DIR")
			if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "ARTIFACTS_DIR is not set") {
				t.Errorf("make %s without ARTIFACTS_DIR: err %v, output %q; want a clear failure", fn.BuildTarget(), err, out)
			}
		})
	}
	t.Run("build", func(t *testing.T) {
		got := makeDryRun(t, makeTool, "build")
		var want []string
		for _, f := range []string{"move", "timeout", "ai", "stream", "fanout", "effects"} {
			want = append(want, flags+" -o bin/"+f+"/bootstrap ./functions/"+f)
		}
		if got != strings.Join(want, "\n") {
			t.Errorf("make -n build =\n%s\nwant\n%s", got, strings.Join(want, "\n"))
		}
	})
}

func makeDryRun(t *testing.T, makeTool string, args ...string) string {
	t.Helper()
	cmd := exec.Command(makeTool, append([]string{"-n", "-s"}, args...)...)
	cmd.Dir = repoRoot
	cmd.Env = withoutEnv(os.Environ(), "ARTIFACTS_DIR")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func withoutEnv(env []string, key string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
}

// TestFunctionPackagesAreMains checks that each function's package, which
// the Makefile builds, is a main package.
func TestFunctionPackagesAreMains(t *testing.T) {
	for _, want := range specFunctions {
		t.Run(want.logicalID, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-f", "{{.Name}}", want.pkg)
			cmd.Dir = repoRoot
			out, err := cmd.CombinedOutput()
			if err != nil || strings.TrimSpace(string(out)) != "main" {
				t.Errorf("go list %s = %q, %v; want package main", want.pkg, out, err)
			}
		})
	}
}

func TestCfnLint(t *testing.T) {
	cfnLint := requireTool(t, "cfn-lint")
	cmd := exec.Command(cfnLint, "template.yaml")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("cfn-lint template.yaml: %v\n%s", err, out)
	}
}

func TestLoadTemplateGlobalsAndTags(t *testing.T) {
	tmpl, err := LoadTemplate("testdata/globals.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantRoutes := []Route{
		{Method: "POST", Path: "/items", Function: "Web"},
		{Method: "GET", Path: "/items/{id}", Function: "Web"},
	}
	if !slices.Equal(tmpl.Routes, wantRoutes) {
		t.Errorf("Routes = %+v; want %+v", tmpl.Routes, wantRoutes)
	}
	wantFunctions := []Function{
		{LogicalID: "Web", CodeURI: ".", BuildMethod: "makefile", Runtime: "provided.al2023", Handler: "bootstrap",
			Architectures: []string{"arm64"}, EnvKeys: []string{"OVERRIDDEN", "ROLE", "SHARED"}},
		{LogicalID: "Worker", CodeURI: "./worker", Runtime: "go1.x", Handler: "bootstrap",
			Architectures: []string{"x86_64"}, EnvKeys: []string{"OVERRIDDEN", "SHARED"}},
	}
	if !reflect.DeepEqual(tmpl.Functions, wantFunctions) {
		t.Errorf("Functions = %+v; want %+v", tmpl.Functions, wantFunctions)
	}
	if got := tmpl.Functions[1].BuildTarget(); got != "" {
		t.Errorf("BuildTarget() of a function without BuildMethod makefile = %q; want \"\"", got)
	}
	if _, err := LoadTemplate("testdata/absent.yaml"); err == nil || errors.Is(err, ErrInvalidTemplate) {
		t.Errorf("LoadTemplate(absent file) = %v; want a read error", err)
	}
}

func TestDecodeNodeShortForms(t *testing.T) {
	tests := []struct {
		yaml string
		want any
	}{
		{`!Ref Table`, map[string]any{"Ref": "Table"}},
		{`!Sub ${AWS::StackName}-move`, map[string]any{"Fn::Sub": "${AWS::StackName}-move"}},
		{`!Sub ["${A}-x", {A: !Ref B}]`, map[string]any{"Fn::Sub": []any{"${A}-x", map[string]any{"A": map[string]any{"Ref": "B"}}}}},
		{`!GetAtt Role.Arn`, map[string]any{"Fn::GetAtt": []any{"Role", "Arn"}}},
		{`!GetAtt Db.Endpoint.Address`, map[string]any{"Fn::GetAtt": []any{"Db", "Endpoint.Address"}}},
		{`!GetAtt [Role, Arn]`, map[string]any{"Fn::GetAtt": []any{"Role", "Arn"}}},
		{`!If [HasKey, !Ref Key, !Ref AWS::NoValue]`,
			map[string]any{"Fn::If": []any{"HasKey", map[string]any{"Ref": "Key"}, map[string]any{"Ref": "AWS::NoValue"}}}},
		{`!Not [!Equals [!Ref Key, ""]]`,
			map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{map[string]any{"Ref": "Key"}, ""}}}}},
		{`!Join ["", ["a", !Ref B]]`, map[string]any{"Fn::Join": []any{"", []any{"a", map[string]any{"Ref": "B"}}}}},
		{`{a: &x !Ref T, b: *x}`, map[string]any{"a": map[string]any{"Ref": "T"}, "b": map[string]any{"Ref": "T"}}},
		{`{n: 128, s: "128", b: true, f: 1.5}`, map[string]any{"n": 128, "s": "128", "b": true, "f": 1.5}},
		{`!!str 10`, "10"},
	}
	for _, tt := range tests {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tt.yaml), &n); err != nil {
			t.Fatalf("yaml.Unmarshal(%q): %v", tt.yaml, err)
		}
		got, err := decodeNode(&n)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("decodeNode(%q) = %#v, %v; want %#v", tt.yaml, got, err, tt.want)
		}
	}
}

func TestParseTemplateErrors(t *testing.T) {
	const fn = "Resources:\n  F:\n    Type: AWS::Serverless::Function\n    Properties:\n"
	tests := []struct {
		name string
		yaml string
	}{
		{"not YAML", "Resources: [\n"},
		{"not a mapping", "- a\n- b\n"},
		{"empty document", ""},
		{"no resources", "Parameters: {}\n"},
		{"resources not a mapping", "Resources: [a]\n"},
		{"resource not a mapping", "Resources:\n  F: 3\n"},
		{"unknown tag", fn + "      CodeUri: !Bogus x\n"},
		{"GetAtt without attribute", fn + "      CodeUri: .\n      Role: !GetAtt Role\n"},
		{"duplicate key", fn + "      CodeUri: .\n      CodeUri: ./x\n"},
		{"no CodeUri", fn + "      Runtime: provided.al2023\n"},
		{"CodeUri not a string", fn + "      CodeUri: {Bucket: b, Key: k}\n"},
		{"environment not a mapping", fn + "      CodeUri: .\n      Environment: {Variables: [A]}\n"},
		{"globals not a mapping", "Globals:\n  Function: [x]\n" + fn + "      CodeUri: .\n"},
		{"route without path", fn + "      CodeUri: .\n      Events:\n        E: {Type: HttpApi, Properties: {Method: GET}}\n"},
		{"route path not absolute", fn + "      CodeUri: .\n      Events:\n        E: {Type: HttpApi, Properties: {Method: GET, Path: v1}}\n"},
		{"event not a mapping", fn + "      CodeUri: .\n      Events:\n        E: HttpApi\n"},
		{"route twice", fn + "      CodeUri: .\n      Events:\n" +
			"        A: {Type: HttpApi, Properties: {Method: GET, Path: /x}}\n" +
			"        B: {Type: HttpApi, Properties: {Method: get, Path: /x}}\n"},
		{"self-referencing alias", "a: &a [*a]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTemplate([]byte(tt.yaml))
			if !errors.Is(err, ErrInvalidTemplate) {
				t.Errorf("ParseTemplate(%q) = %+v, %v; want an ErrInvalidTemplate", tt.yaml, got, err)
			}
		})
	}
}
