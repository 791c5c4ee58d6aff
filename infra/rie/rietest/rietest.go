// Package rietest gives tests the Lambda emulator and the functions'
// bootstraps (chessapi/infra/rie) with the test's deadline as the only
// limit, failing the test on an error. The bootstraps are built once per
// test process, shared by every test in it, or taken from the directory
// named by $LAMBDA_BOOTSTRAP_DIR, which `make test` fills beforehand (make
// build-native). A package that uses Bootstrap runs its tests through Main,
// which removes the builds at the end. Only tests import this package.
package rietest

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"chessapi/infra/rie"
)

// BootstrapDirEnv names the directory of bootstraps built beforehand, as
// the Makefile's build-native writes it (bin/native/<function>/bootstrap).
const BootstrapDirEnv = "LAMBDA_BOOTSTRAP_DIR"

var process struct {
	once       sync.Once
	root       string
	bootstraps *rie.Bootstraps
	err        error
}

func setup() (string, *rie.Bootstraps, error) {
	process.once.Do(func() {
		process.root, process.err = rie.ModuleRoot(".")
		if process.err == nil {
			process.bootstraps = rie.NewBootstraps(process.root, os.Getenv(BootstrapDirEnv))
		}
	})
	return process.root, process.bootstraps, process.err
}

// Main runs the tests, then removes the bootstraps built for them:
//
//	func TestMain(m *testing.M) { rietest.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if process.bootstraps != nil {
		_ = process.bootstraps.Close()
	}
	os.Exit(code)
}

// Bootstraps is the test process's bootstraps, for code that takes a
// *rie.Bootstraps (cmd/emustack's stack).
func Bootstraps(t testing.TB) *rie.Bootstraps {
	t.Helper()
	_, b, err := setup()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Bootstrap returns the bootstrap of the function package pkg
// ("./functions/move"), building it if this process has not yet.
func Bootstrap(t testing.TB, pkg string) string {
	t.Helper()
	ctx, cancel := Context(t)
	defer cancel()
	p, err := Bootstraps(t).Path(ctx, pkg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Emulator returns the pinned aws-lambda-rie, installing it into the
// module's .bin/ first when needed (rie.EnsureEmulator).
func Emulator(t testing.TB) string {
	t.Helper()
	root, _, err := setup()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := Context(t)
	defer cancel()
	p, err := rie.EnsureEmulator(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Context ends with the test, or at its deadline (go test -timeout) when it
// has one: the only limit a build or a start gets, so that a loaded
// machine makes a test slower instead of failing it.
func Context(t testing.TB) (context.Context, context.CancelFunc) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			return context.WithDeadline(t.Context(), deadline)
		}
	}
	return context.WithCancel(t.Context())
}
