package emulator

import (
	"context"
	"flag"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func TestStartServesDynamoDBAndStops(t *testing.T) {
	for _, kind := range []Kind{Moto, Dynalite} {
		var endpoint string
		t.Run(string(kind), func(t *testing.T) {
			endpoint = Start(t, kind)
			if !strings.HasPrefix(endpoint, "http://127.0.0.1:") {
				t.Fatalf("Start(%s) = %q; want a loopback URL", kind, endpoint)
			}
			table := NewGamesTable(t, endpoint)
			client := dynamodb.NewFromConfig(Config(endpoint))
			out, err := client.ListTables(context.Background(), &dynamodb.ListTablesInput{})
			if err != nil {
				t.Fatalf("ListTables on %s: %v", kind, err)
			}
			if len(out.TableNames) != 1 || out.TableNames[0] != table {
				t.Fatalf("ListTables on %s = %v; want [%s]", kind, out.TableNames, table)
			}
		})
		if endpoint == "" {
			continue
		}
		// The subtest's cleanup has stopped the server: nothing listens.
		addr := strings.TrimPrefix(endpoint, "http://")
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("%s still accepts connections on %s after its test ended", kind, addr)
		}
	}
}

// fakeTB records what Start does with a test instead of doing it.
type fakeTB struct {
	testing.TB
	mu      sync.Mutex
	fatal   string
	skipped string
}

func (f *fakeTB) Helper()             {}
func (f *fakeTB) Cleanup(fn func())   {}
func (f *fakeTB) TempDir() string     { return f.TB.TempDir() }
func (f *fakeTB) Logf(string, ...any) {}
func (f *fakeTB) Fatal(args ...any) {
	f.mu.Lock()
	f.fatal = strings.TrimSuffix(strings.Join(strings.Fields(sprint(args...)), " "), "\n")
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) { f.Fatal(sprintf(format, args...)) }
func (f *fakeTB) Skip(args ...any) {
	f.mu.Lock()
	f.skipped = sprint(args...)
	f.mu.Unlock()
	runtime.Goexit()
}

// run calls fn with a fakeTB on its own goroutine (Fatal and Skip end it).
func run(t *testing.T, fn func(tb testing.TB)) *fakeTB {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

func TestMissingToolSkipsInShortModeElseFails(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing to find
	tests := []struct {
		kind        Kind
		wantInstall string
	}{
		{Moto, "pip install 'moto[server]'"},
		{Dynalite, "Node.js"},
	}
	for _, tt := range tests {
		for _, short := range []bool{false, true} {
			setShort(t, short)
			f := run(t, func(tb testing.TB) { Start(tb, tt.kind) })
			got := f.fatal
			if short {
				got = f.skipped
			}
			if !strings.Contains(got, tt.wantInstall) {
				t.Errorf("Start(%s) without the tool, short=%v: fatal %q, skip %q; want the %s to mention %q",
					tt.kind, short, f.fatal, f.skipped, map[bool]string{false: "failure", true: "skip"}[short], tt.wantInstall)
			}
		}
	}
}

func TestUnknownKindFails(t *testing.T) {
	f := run(t, func(tb testing.TB) { Start(tb, Kind("localstack")) })
	if !strings.Contains(f.fatal, `unknown kind "localstack"`) {
		t.Errorf("Start(localstack) fatal = %q; want it to name the unknown kind", f.fatal)
	}
}

func setShort(t *testing.T, short bool) {
	t.Helper()
	old := flag.Lookup("test.short").Value.String()
	if err := flag.Set("test.short", map[bool]string{false: "false", true: "true"}[short]); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = flag.Set("test.short", old) })
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{limit: 8}
	for _, s := range []string{"hello ", "world", ", again"} {
		b.Write([]byte(s))
	}
	if got := b.String(); got != "d, again" {
		t.Errorf("tailBuffer after writes = %q; want %q", got, "d, again")
	}
}

func sprint(args ...any) string                 { return fmt.Sprint(args...) }
func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
