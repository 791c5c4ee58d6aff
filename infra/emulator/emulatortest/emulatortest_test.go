package emulatortest

import (
	"flag"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/infra/emulator"
)

func TestStartStopsWithTheTest(t *testing.T) {
	var endpoint string
	t.Run("moto", func(t *testing.T) {
		endpoint = StartMoto(t)
		NewGamesTable(t, endpoint)
	})
	if endpoint == "" {
		t.Fatal("no endpoint")
	}
	addr := strings.TrimPrefix(endpoint, "http://")
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Errorf("moto still accepts connections on %s after its test ended", addr)
	}
}

// recorder records how a helper ends a test instead of ending it.
type recorder struct {
	testing.TB
	mu      sync.Mutex
	fatal   string
	skipped string
}

func (r *recorder) Helper()             {}
func (r *recorder) Cleanup(func())      {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Fatal(args ...any)   { r.end(&r.fatal, args) }
func (r *recorder) Skip(args ...any)    { r.end(&r.skipped, args) }

func (r *recorder) end(into *string, args []any) {
	r.mu.Lock()
	*into = fmt.Sprint(args...)
	r.mu.Unlock()
	runtime.Goexit()
}

// record calls fn on a goroutine of its own (Fatal and Skip end it).
func record(t *testing.T, fn func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(r)
	}()
	<-done
	return r
}

func TestMissingToolSkipsInShortModeElseFails(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing to find
	for _, kind := range []emulator.Kind{emulator.Moto, emulator.Dynalite} {
		for _, short := range []bool{false, true} {
			setShort(t, short)
			r := record(t, func(tb testing.TB) { Start(tb, kind) })
			ended, other := r.fatal, r.skipped
			if short {
				ended, other = r.skipped, r.fatal
			}
			if !strings.Contains(ended, "not found on PATH") || other != "" {
				t.Errorf("Start(%s) without its tool, short=%v: fatal %q, skip %q; want only the %s, naming the tool",
					kind, short, r.fatal, r.skipped, map[bool]string{false: "failure", true: "skip"}[short])
			}
		}
	}
}

func TestOtherStartErrorsFailInShortModeToo(t *testing.T) {
	setShort(t, true)
	r := record(t, func(tb testing.TB) { Start(tb, emulator.Kind("localstack")) })
	if !strings.Contains(r.fatal, "unknown kind") || r.skipped != "" {
		t.Errorf("Start(localstack) in -short: fatal %q, skip %q; want a failure", r.fatal, r.skipped)
	}
}

func setShort(t *testing.T, short bool) {
	t.Helper()
	old := flag.Lookup("test.short").Value.String()
	if err := flag.Set("test.short", fmt.Sprint(short)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("test.short", old) })
}
