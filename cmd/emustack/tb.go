package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
)

// setupTB is the testing.TB that chessapi/infra/emulator's helpers
// (StartMoto, CountCalls, EnableChangeStream) are written against, for a
// command: those helpers are the one definition of how moto is started,
// patched and counted, and emustack must run exactly that, not a copy.
//
// Fatal* panics with a setupFailure, which [runSetup] turns back into an
// error (the helpers, like tests, expect Fatal not to return). Cleanup
// functions run, last first, when [setupTB.close] is called at exit.
// Logs go to the log writer.
//
// The embedded testing.TB is nil: it is only there to supply the
// interface's unexported method, which nothing outside package testing can
// call. Every exported method is defined below, so none reaches the nil.
type setupTB struct {
	testing.TB

	log io.Writer

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	tempDirs []string
	ctx      context.Context
	cancel   context.CancelFunc
}

// setupFailure is what Fatal panics with.
type setupFailure struct{ msg string }

func newSetupTB(log io.Writer) *setupTB {
	ctx, cancel := context.WithCancel(context.Background())
	return &setupTB{log: log, ctx: ctx, cancel: cancel}
}

// runSetup calls f, turning a Fatal inside it into an error.
func runSetup(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			fail, ok := r.(setupFailure)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%s", fail.msg)
		}
	}()
	f()
	return nil
}

// close runs the cleanups, last registered first, and removes the
// temporary directories.
func (t *setupTB) close() {
	t.mu.Lock()
	cleanups := t.cleanups
	t.cleanups = nil
	dirs := t.tempDirs
	t.tempDirs = nil
	t.mu.Unlock()
	t.cancel()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}

func (t *setupTB) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *setupTB) Error(args ...any) { t.Log(args...); t.Fail() }

func (t *setupTB) Errorf(format string, args ...any) { t.Logf(format, args...); t.Fail() }

func (t *setupTB) Fail() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}

func (t *setupTB) FailNow() {
	t.Fail()
	panic(setupFailure{msg: "setup failed"})
}

func (t *setupTB) Failed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.failed
}

func (t *setupTB) Fatal(args ...any) {
	t.Fail()
	panic(setupFailure{msg: fmt.Sprint(args...)})
}

func (t *setupTB) Fatalf(format string, args ...any) {
	t.Fail()
	panic(setupFailure{msg: fmt.Sprintf(format, args...)})
}

func (t *setupTB) Helper() {}

func (t *setupTB) Log(args ...any) { fmt.Fprintln(t.log, append([]any{"emustack:"}, args...)...) }

func (t *setupTB) Logf(format string, args ...any) {
	fmt.Fprintf(t.log, "emustack: "+format+"\n", args...)
}

func (t *setupTB) Name() string { return "emustack" }

// Setenv would change the whole process's environment; the emulator
// helpers never call it, and emustack must not.
func (t *setupTB) Setenv(key, _ string) {
	t.Fatalf("Setenv(%q) is not supported outside tests", key)
}

// Chdir: as Setenv.
func (t *setupTB) Chdir(dir string) {
	t.Fatalf("Chdir(%q) is not supported outside tests", dir)
}

// Skip is how the helpers report a missing tool in -short test runs; in a
// command it is a failure (emustack checks its tools first, so this is
// only reached if a helper grows a new requirement).
func (t *setupTB) Skip(args ...any) { t.Fatal(args...) }

func (t *setupTB) SkipNow() { t.FailNow() }

func (t *setupTB) Skipf(format string, args ...any) { t.Fatalf(format, args...) }

func (t *setupTB) Skipped() bool { return false }

func (t *setupTB) TempDir() string {
	dir, err := os.MkdirTemp("", "emustack-")
	if err != nil {
		t.Fatalf("TempDir: %v", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.tempDirs = append(t.tempDirs, dir)
	return dir
}

func (t *setupTB) ArtifactDir() string { return t.TempDir() }

func (t *setupTB) Attr(key, value string) { t.Logf("%s=%s", key, value) }

func (t *setupTB) Context() context.Context { return t.ctx }

func (t *setupTB) Output() io.Writer { return t.log }
