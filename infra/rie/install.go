// Package rie runs Lambda function binaries the way Lambda runs them, for
// tests on a machine without Docker: it installs the pinned AWS Lambda
// Runtime Interface Emulator (aws-lambda-rie) into the repository's .bin/,
// builds a function's main package as a static `bootstrap` for the host's
// architecture (the deployed one is the same source built for arm64), starts
// it under the emulator on loopback ports with exactly the environment the
// test gives, invokes it one request at a time and reads the emulator's log
// to report init and invoke durations.
//
// Emulator facts this package relies on (read from its source at
// EmulatorVersion, internal/lambda/rie):
//   - `aws-lambda-rie [--runtime-interface-emulator-address H:P]
//     [--runtime-api-address H:P] [--log-level L] BOOTSTRAP` serves
//     POST /2015-03-31/functions/function/invocations and runs BOOTSTRAP with
//     the emulator's own environment and working directory.
//   - The function is initialised lazily, on the first invoke. The REPORT
//     line's "Init Duration" only times the asynchronous start request (well
//     under a millisecond), so the real init time is taken from rapid's
//     "INIT REPORT(durationMs: ...)" log line, and the first REPORT Duration
//     includes the init.
//   - Invokes must not overlap: the emulator keeps unsynchronised global
//     state and fails or misbehaves on concurrent requests.
//   - A handler error comes back as HTTP 200 with the Lambda error document
//     {"errorMessage","errorType"}; see Result.FunctionError.
//   - SIGTERM makes the emulator kill the runtime and exit.
//   - With AWS_LAMBDA_MAX_CONCURRENCY set it switches to another (managed
//     instances) mode, so Start refuses that variable.
package rie

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
)

// The emulator this repository tests with; the Makefile's `rie` target
// installs the same one.
const (
	EmulatorModule  = "github.com/aws/aws-lambda-runtime-interface-emulator"
	EmulatorPackage = EmulatorModule + "/cmd/aws-lambda-rie"
	EmulatorVersion = "v0.0.0-20261030222936-bef5c4ba774d"
)

// BinDir is where repository-local tools live, relative to the module root.
const BinDir = ".bin"

// BuildFlags are the go build flags of every Lambda bootstrap (as in the
// Makefile): no legacy RPC mode, reproducible paths, no symbol tables.
var BuildFlags = []string{"-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w"}

// ModuleRoot returns the directory holding the go.mod that encloses dir.
func ModuleRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("rie: module root of %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("rie: no go.mod in %s or any parent", abs)
		}
	}
}

// installMu keeps one process from installing twice at once; the rename in
// install keeps concurrent test processes from seeing a half-written file.
var installMu sync.Mutex

// EnsureEmulator returns the path of aws-lambda-rie at EmulatorVersion in
// root/.bin, installing it with `go install` (from the Go module proxy or
// the module cache) when it is missing or another version.
func EnsureEmulator(ctx context.Context, root string) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()

	path := filepath.Join(root, BinDir, "aws-lambda-rie")
	if err := checkEmulatorVersion(path); err == nil {
		return path, nil
	}
	if err := install(ctx, root, path); err != nil {
		return "", err
	}
	if err := checkEmulatorVersion(path); err != nil {
		return "", fmt.Errorf("rie: after go install: %w", err)
	}
	return path, nil
}

// checkEmulatorVersion reads the module version Go recorded in the binary.
func checkEmulatorVersion(path string) error {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("rie: reading build info of %s: %w", path, err)
	}
	if info.Main.Path != EmulatorModule || info.Main.Version != EmulatorVersion {
		return fmt.Errorf("rie: %s is %s@%s; want %s@%s", path, info.Main.Path, info.Main.Version, EmulatorModule, EmulatorVersion)
	}
	return nil
}

func install(ctx context.Context, root, path string) error {
	binDir := filepath.Dir(path)
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return fmt.Errorf("rie: %w", err)
	}
	gobin, err := os.MkdirTemp(binDir, "install-")
	if err != nil {
		return fmt.Errorf("rie: %w", err)
	}
	defer os.RemoveAll(gobin)

	cmd := exec.CommandContext(ctx, "go", "install", EmulatorPackage+"@"+EmulatorVersion)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("rie: go install %s@%s: %w\n%s", EmulatorPackage, EmulatorVersion, err, out)
	}
	if err := os.Rename(filepath.Join(gobin, "aws-lambda-rie"), path); err != nil {
		return fmt.Errorf("rie: %w", err)
	}
	return nil
}

// BuildBootstrap builds the main package pkg (a path relative to root, such
// as "./functions/move") into outDir/bootstrap: static, linux, this host's
// architecture, with BuildFlags. It returns the binary's path.
func BuildBootstrap(ctx context.Context, root, pkg, outDir string) (string, error) {
	out := filepath.Join(outDir, "bootstrap")
	args := append([]string{"build"}, BuildFlags...)
	args = append(args, "-o", out, pkg)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
	var output bytes.Buffer
	cmd.Stdout = &output
	cmd.Stderr = &output
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("rie: building %s: %w\n%s", pkg, err, output.Bytes())
	}
	return out, nil
}

// ErrExited is returned when the emulator process is no longer running.
var ErrExited = errors.New("rie: emulator exited")
