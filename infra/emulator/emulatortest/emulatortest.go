// Package emulatortest wraps chessapi/infra/emulator for tests: each helper
// starts what the test needs, bounds the wait by the test's deadline, stops
// it when the test ends, and fails the test with the error. A tool the
// emulator needs that is not installed skips the test in -short runs and
// fails it otherwise, naming what to install: CI must not silently skip the
// storage tests. Only tests import this package.
package emulatortest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/infra/emulator"
)

// Start starts the emulator of the given kind for the rest of the test and
// returns its endpoint URL (http://127.0.0.1:PORT).
func Start(t testing.TB, kind emulator.Kind) string {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	srv, err := emulator.Start(ctx, kind)
	if err != nil {
		failOrSkip(t, err)
		return ""
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("emulator: last output of %s:\n%s", kind, srv.Output())
		}
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv.URL
}

// StartMoto starts moto_server; see Start.
func StartMoto(t testing.TB) string {
	t.Helper()
	return Start(t, emulator.Moto)
}

// StartDynalite starts dynalite; see Start.
func StartDynalite(t testing.TB) string {
	t.Helper()
	return Start(t, emulator.Dynalite)
}

// failOrSkip ends the test with err: a skip for a missing tool in -short
// runs, a failure otherwise.
func failOrSkip(t testing.TB, err error) {
	t.Helper()
	var missing *emulator.ToolMissingError
	if errors.As(err, &missing) && testing.Short() {
		t.Skip(err.Error() + " (skipped in -short mode)")
	}
	t.Fatal(err)
}

// CountCalls starts a proxy to the emulator at target that counts the
// calls through it, until the test ends.
func CountCalls(t testing.TB, target string) *emulator.CallCounter {
	t.Helper()
	c, err := emulator.CountCalls(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// EnableChangeStream turns on the stream of the games table on moto at
// endpoint and returns a reader positioned at its start.
func EnableChangeStream(t testing.TB, endpoint, table string) *emulator.ChangeStream {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	s, err := emulator.EnableChangeStream(ctx, endpoint, table)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tableSeq makes table names unique within a test process; each process
// has its own emulators, so that is enough.
var tableSeq atomic.Int64

// NewGamesTable creates a games table with a fresh name on the emulator at
// endpoint (emulator.CreateGamesTable) and returns the name. Tests that
// each take a new table stay independent while sharing one emulator.
func NewGamesTable(t testing.TB, endpoint string) string {
	t.Helper()
	table := fmt.Sprintf("games-%d", tableSeq.Add(1))
	ctx, cancel := testContext(t)
	defer cancel()
	if err := emulator.CreateGamesTable(ctx, endpoint, table); err != nil {
		t.Fatal(err)
	}
	return table
}

// NewDataTable creates a data table with a fresh name on the emulator at
// endpoint (emulator.CreateDataTable) and returns the name.
func NewDataTable(t testing.TB, endpoint string) string {
	t.Helper()
	table := fmt.Sprintf("data-%d", tableSeq.Add(1))
	ctx, cancel := testContext(t)
	defer cancel()
	if err := emulator.CreateDataTable(ctx, endpoint, table); err != nil {
		t.Fatal(err)
	}
	return table
}

// Esbuild returns the pinned esbuild (emulator.Esbuild), installing
// infra/node_modules first when needed.
func Esbuild(t testing.TB) string {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	path, err := emulator.Esbuild(ctx)
	if err != nil {
		failOrSkip(t, err)
	}
	return path
}

// testContext ends with the test, or at its deadline (-timeout) when it
// has one: the only limit a helper's wait gets, so that a loaded machine
// slows a test down instead of failing it.
func testContext(t testing.TB) (context.Context, context.CancelFunc) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if deadline, ok := d.Deadline(); ok {
			return context.WithDeadline(t.Context(), deadline)
		}
	}
	return context.WithCancel(t.Context())
}
