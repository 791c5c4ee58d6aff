package genclient

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGeneratedClientDrivesEveryRoute generates the client from
// openapi.yaml with the pinned ogen and ogen.yml into a temporary module,
// then vets it and runs testdata/everyroute there against the local server
// built from this checkout (see the package doc). It fails when the
// generator refuses the contract, when the generated code does not build,
// and when any answer of the server does not decode as the contract says.
func TestGeneratedClientDrivesEveryRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: generates and builds a client, builds and starts the local server")
	}
	ctx := t.Context()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(root, "openapi.yaml")
	// Read here too, so that go test's cache knows the result depends on it.
	if _, err := os.ReadFile(spec); err != nil {
		t.Fatal(err)
	}

	mod := t.TempDir()
	run(ctx, t, ".", nil, "go", "tool", "ogen", "--config", "ogen.yml", "--target", filepath.Join(mod, "client"), "--package", "client", "--clean", spec)
	copyFiles(t, mod, "go.mod", "go.sum", filepath.Join("testdata", "everyroute", "everyroute_test.go"))

	server := filepath.Join(t.TempDir(), "local")
	run(ctx, t, root, nil, "go", "build", "-o", server, "./cmd/local")

	env := []string{"GOWORK=off", "GENCLIENT_SERVER=" + server, "GENCLIENT_OPENAPI=" + spec}
	run(ctx, t, mod, env, "go", "vet", "./...")
	args := []string{"test", "-count=1", "-v"}
	if deadline, ok := t.Deadline(); ok {
		// The driver gets what is left of this test's time, not the go
		// command's default.
		args = append(args, "-timeout", time.Until(deadline).Round(time.Second).String())
	}
	out := run(ctx, t, mod, env, "go", append(args, "./...")...)
	if !strings.Contains(out, "--- PASS: TestEveryRoute") {
		t.Fatalf("the driver did not run TestEveryRoute:\n%s", out)
	}
}

// run runs a command in dir with env added to this process's, failing the
// test with its output; it returns the output.
func run(ctx context.Context, t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s (in %s): %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

// copyFiles copies files (paths relative to this directory) into dir, each
// under its base name.
func copyFiles(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
