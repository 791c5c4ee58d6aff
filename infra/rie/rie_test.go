package rie

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Lines as the emulator at EmulatorVersion prints them (stdout: START/END/
// REPORT and function output; stderr: rapid's log).
const (
	coldReport = "REPORT RequestId: req-1\tInit Duration: 0.27 ms\tDuration: 44.91 ms\tBilled Duration: 45 ms\tMemory Size: 3008 MB\tMax Memory Used: 3008 MB\t"
	warmReport = "REPORT RequestId: req-2\tDuration: 1.48 ms\tBilled Duration: 2 ms\tMemory Size: 3008 MB\tMax Memory Used: 3008 MB\t"
)

func out(text string) logLine { return logLine{streamStdout, text} }
func errl(text string) logLine {
	return logLine{streamStderr, "29 Nov 2026 13:48:54,646 [INFO] (rapid) " + text}
}

func TestParseReport(t *testing.T) {
	tests := []struct {
		name      string
		requestID string
		lines     []logLine
		want      report
		wantErr   bool
	}{
		{
			name:      "cold invoke",
			requestID: "req-1",
			lines: []logLine{
				errl("INIT START(type: on-demand, phase: init)"),
				out("init: config loaded"),
				out("START RequestId: req-1 Version: $LATEST"),
				errl("INIT RTDONE(status: success)"),
				errl("INIT REPORT(durationMs: 43.092000)"),
				errl("INVOKE START(requestId: req-1)"),
				out("2026/11/29 13:48:54 echo invocation 1: \"hi\""),
				out("END RequestId: req-1"),
				out(coldReport),
				errl("INVOKE RTDONE(status: success, produced bytes: 0, duration: 1.564000ms)"),
			},
			want: report{
				seen: true, duration: 44910 * time.Microsecond,
				runtimeDone: true, runtimeDuration: 1564 * time.Microsecond,
				initDuration: 43092 * time.Microsecond,
				functionLogs: []string{"init: config loaded", "2026/11/29 13:48:54 echo invocation 1: \"hi\""},
			},
		},
		{
			name:      "warm invoke, REPORT read before rapid's lines",
			requestID: "req-2",
			lines: []logLine{
				out("START RequestId: req-2 Version: $LATEST"),
				out("END RequestId: req-2"),
				out(warmReport),
				errl("INVOKE START(requestId: req-2)"),
				errl("INVOKE RTDONE(status: success, produced bytes: 0, duration: 1.237000ms)"),
			},
			want: report{seen: true, duration: 1480 * time.Microsecond, runtimeDone: true, runtimeDuration: 1237 * time.Microsecond},
		},
		{
			name:      "lines of another request are not this one's",
			requestID: "req-2",
			lines: []logLine{
				errl("INVOKE START(requestId: req-1)"),
				errl("INVOKE RTDONE(status: success, produced bytes: 0, duration: 9.000000ms)"),
				out(coldReport),
			},
			want: report{functionLogs: []string{coldReport}},
		},
		{
			name:      "nothing yet",
			requestID: "req-2",
			want:      report{},
		},
		{
			name:      "malformed REPORT duration",
			requestID: "req-3",
			lines:     []logLine{out("REPORT RequestId: req-3\tDuration: fast ms\t")},
			wantErr:   true,
		},
		{
			name:      "REPORT without Duration",
			requestID: "req-3",
			lines:     []logLine{out("REPORT RequestId: req-3\tInit Duration: 1.00 ms\t")},
			wantErr:   true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseReport(tt.lines, tt.requestID)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("parseReport(%q) = %+v, nil; want an error", tt.requestID, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseReport(%q): %v", tt.requestID, err)
			}
			if got.seen != tt.want.seen || got.duration != tt.want.duration ||
				got.runtimeDone != tt.want.runtimeDone || got.runtimeDuration != tt.want.runtimeDuration ||
				got.initDuration != tt.want.initDuration || !slices.Equal(got.functionLogs, tt.want.functionLogs) {
				t.Errorf("parseReport(%q) = %+v; want %+v", tt.requestID, got, tt.want)
			}
		})
	}
}

func TestPeakRSS(t *testing.T) {
	status := "Name:\tbootstrap\nVmPeak:\t  1262160 kB\nVmHWM:\t    10340 kB\nVmRSS:\t    10340 kB\n"
	if got, err := peakRSS(status); err != nil || got != 10340<<10 {
		t.Errorf("peakRSS = %d, %v; want %d", got, err, 10340<<10)
	}
	for _, bad := range []string{"", "VmRSS:\t 10 kB\n", "VmHWM:\t x kB\n", "VmHWM:\t 10 MB\n", "VmHWM:\n"} {
		if got, err := peakRSS(bad); err == nil {
			t.Errorf("peakRSS(%q) = %d, nil; want an error", bad, got)
		}
	}
}

func TestAsFunctionError(t *testing.T) {
	tests := []struct {
		payload string
		want    *FunctionError
	}{
		{`{"errorMessage":"boom","errorType":"errorString"}`, &FunctionError{Message: "boom", Type: "errorString"}},
		{`{"errorType":"Runtime.ExitError","errorMessage":"exit status 2","stackTrace":[]}`,
			&FunctionError{Message: "exit status 2", Type: "Runtime.ExitError", StackTrace: json.RawMessage(`[]`)}},
		{`{"statusCode":500,"body":"{\"errorMessage\":\"x\",\"errorType\":\"y\"}"}`, nil},
		{`{"errorMessage":"boom"}`, nil},
		{`{"errorMessage":"boom","errorType":"e","extra":1}`, nil},
		{`{"errorMessage":"boom","errorType":"e"} {}`, nil},
		{`"errorType"`, nil},
		{``, nil},
	}
	for _, tt := range tests {
		got := asFunctionError([]byte(tt.payload))
		if (got == nil) != (tt.want == nil) ||
			got != nil && (got.Message != tt.want.Message || got.Type != tt.want.Type || string(got.StackTrace) != string(tt.want.StackTrace)) {
			t.Errorf("asFunctionError(%q) = %+v; want %+v", tt.payload, got, tt.want)
		}
	}
}

func TestLineWriterSplitsLines(t *testing.T) {
	book := newLogBook(nil)
	w := &lineWriter{book: book, stream: streamStdout}
	for _, chunk := range []string{"fir", "st\nsecond\r\nthi", "rd"} {
		if _, err := w.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := book.texts(), []string{"first", "second"}; !slices.Equal(got, want) {
		t.Fatalf("lines before flush = %q; want %q", got, want)
	}
	w.flush()
	if got, want := book.texts(), []string{"first", "second", "third"}; !slices.Equal(got, want) {
		t.Errorf("lines after flush = %q; want %q", got, want)
	}
}

func TestModuleRoot(t *testing.T) {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatalf("ModuleRoot(.): %v", err)
	}
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.Contains(string(data), "module chessapi\n") {
		t.Errorf("ModuleRoot(.) = %s, whose go.mod is not chessapi's (%v)", root, err)
	}
	if got, err := ModuleRoot(t.TempDir()); err == nil {
		t.Errorf("ModuleRoot(temp dir) = %s, nil; want an error", got)
	}
}

func TestStartRejectsBadOptions(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "bootstrap")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh := "/bin/sh"
	tests := []struct {
		name string
		opts Options
	}{
		{"no emulator", Options{Bootstrap: sh}},
		{"no bootstrap", Options{Emulator: sh}},
		{"missing bootstrap", Options{Emulator: sh, Bootstrap: filepath.Join(dir, "absent")}},
		{"bootstrap is a directory", Options{Emulator: sh, Bootstrap: dir}},
		{"bootstrap not executable", Options{Emulator: sh, Bootstrap: notExec}},
		{"managed-instances mode", Options{Emulator: sh, Bootstrap: sh, Env: map[string]string{"AWS_LAMBDA_MAX_CONCURRENCY": "4"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if f, err := Start(context.Background(), tt.opts); err == nil {
				f.Close()
				t.Errorf("Start(%+v) = nil error; want one", tt.opts)
			}
		})
	}
}

// echoResponse is testdata/echo's answer.
type echoResponse struct {
	Message      string `json:"message"`
	EnvValue     string `json:"envValue"`
	FunctionName string `json:"functionName"`
	RequestID    string `json:"requestId"`
	Invocations  int64  `json:"invocations"`
}

// TestEchoUnderEmulator builds testdata/echo as a bootstrap, runs it under
// the pinned emulator and checks what Lambda guarantees: the payload gets
// through, the configured environment (and only it) is visible, the process
// is reused warm, handler errors come back as Lambda error documents,
// concurrent callers are serialised, and Close leaves no process behind.
func TestEchoUnderEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Lambda bootstrap and may install aws-lambda-rie; skipped with -short")
	}
	ctx := context.Background()
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	emulator, err := EnsureEmulator(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	bootstrap, err := BuildBootstrap(ctx, root, "./infra/rie/testdata/echo", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(bootstrap); err == nil {
		t.Logf("echo bootstrap: %.1f MiB", float64(info.Size())/(1<<20))
	}

	f, err := Start(ctx, Options{
		Emulator:     emulator,
		Bootstrap:    bootstrap,
		FunctionName: "echo-test",
		Timeout:      5 * time.Second,
		Env:          map[string]string{"GAMES_TABLE": "games-test", "LOG_LEVEL": "DEBUG"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	})
	runtimes := childProcesses(f.cmd.Process.Pid) // none until the first invoke

	invoke := func(t *testing.T, payload string) (Result, echoResponse) {
		t.Helper()
		res, err := f.Invoke(ctx, []byte(payload))
		if err != nil {
			t.Fatalf("Invoke(%s): %v\nemulator output:\n%s", payload, err, strings.Join(f.Logs(), "\n"))
		}
		if res.StatusCode != 200 {
			t.Fatalf("Invoke(%s) status = %d; want 200 (payload %s)", payload, res.StatusCode, res.Payload)
		}
		var resp echoResponse
		if res.FunctionError == nil {
			if err := json.Unmarshal(res.Payload, &resp); err != nil {
				t.Fatalf("Invoke(%s) payload %s: %v", payload, res.Payload, err)
			}
		}
		return res, resp
	}

	t.Run("cold start", func(t *testing.T) {
		res, resp := invoke(t, `{"message":"hello","envKey":"GAMES_TABLE"}`)
		want := echoResponse{Message: "hello", EnvValue: "games-test", FunctionName: "echo-test", RequestID: res.RequestID, Invocations: 1}
		if resp != want {
			t.Errorf("cold invoke = %+v; want %+v", resp, want)
		}
		if res.InitDuration <= 0 || res.Duration < res.InitDuration || res.RuntimeDuration <= 0 {
			t.Errorf("cold invoke durations: init %v, duration %v, runtime %v; want init > 0, duration >= init, runtime > 0",
				res.InitDuration, res.Duration, res.RuntimeDuration)
		}
		if !slices.ContainsFunc(res.Logs, func(l string) bool { return strings.HasSuffix(l, `echo invocation 1: "hello"`) }) {
			t.Errorf("cold invoke logs = %q; want the function's log line", res.Logs)
		}
		t.Logf("cold: init %v, REPORT duration %v, runtime %v, round trip %v", res.InitDuration, res.Duration, res.RuntimeDuration, res.RoundTrip)
	})

	t.Run("warm invoke reuses the process", func(t *testing.T) {
		res, resp := invoke(t, `{"message":"again"}`)
		if resp.Invocations != 2 || resp.Message != "again" {
			t.Errorf("warm invoke = %+v; want invocation 2 of the same process", resp)
		}
		if res.InitDuration != 0 || res.Duration <= 0 || res.RuntimeDuration <= 0 {
			t.Errorf("warm invoke durations: init %v, duration %v, runtime %v; want 0, > 0, > 0", res.InitDuration, res.Duration, res.RuntimeDuration)
		}
		t.Logf("warm: REPORT duration %v, runtime %v, round trip %v", res.Duration, res.RuntimeDuration, res.RoundTrip)
		// The emulator's REPORT says the configured size; the process says
		// what it used: an aws-lambda-go echo is a few MiB, far below it.
		rss, err := f.RuntimePeakRSS()
		if err != nil || rss < 1<<20 || rss > 256<<20 {
			t.Errorf("RuntimePeakRSS() = %d, %v; want 1 MiB..256 MiB", rss, err)
		}
		t.Logf("warm: peak RSS %.1f MiB", float64(rss)/(1<<20))
	})

	t.Run("test environment is not inherited", func(t *testing.T) {
		for _, key := range []string{"HOME", "GOPATH", "AWS_LAMBDA_FUNCTION_TIMEOUT", "LOG_LEVEL"} {
			_, resp := invoke(t, fmt.Sprintf(`{"message":"env","envKey":%q}`, key))
			want := map[string]string{"HOME": "", "GOPATH": "", "AWS_LAMBDA_FUNCTION_TIMEOUT": "5", "LOG_LEVEL": "DEBUG"}[key]
			if resp.EnvValue != want {
				t.Errorf("function sees %s=%q; want %q", key, resp.EnvValue, want)
			}
		}
	})

	t.Run("handler error", func(t *testing.T) {
		res, _ := invoke(t, `{"message":"x","fail":"boom"}`)
		if res.FunctionError == nil || res.FunctionError.Message != "boom" || res.FunctionError.Type != "errorString" {
			t.Errorf("FunctionError = %+v (payload %s); want boom/errorString", res.FunctionError, res.Payload)
		}
	})

	t.Run("a log line is awaited, or the wait ends", func(t *testing.T) {
		invoke(t, `{"message":"await me"}`)
		line, err := f.AwaitLog(ctx, func(l string) bool { return strings.HasSuffix(l, `: "await me"`) })
		if err != nil || !strings.Contains(line, "echo invocation") {
			t.Errorf("AwaitLog = %q, %v; want the function's line", line, err)
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		if line, err := f.AwaitLog(short, func(l string) bool { return strings.Contains(l, "never printed") }); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("AwaitLog of a line never printed = %q, %v; want the context's deadline", line, err)
		}
	})

	t.Run("concurrent callers are serialised", func(t *testing.T) {
		const callers = 4
		var wg sync.WaitGroup
		seen := make(chan int64, callers)
		errs := make(chan error, callers)
		for i := range callers {
			wg.Go(func() {
				res, err := f.Invoke(ctx, []byte(fmt.Sprintf(`{"message":"caller %d"}`, i)))
				if err != nil {
					errs <- err
					return
				}
				var resp echoResponse
				if err := json.Unmarshal(res.Payload, &resp); err != nil {
					errs <- fmt.Errorf("payload %s: %w", res.Payload, err)
					return
				}
				seen <- resp.Invocations
			})
		}
		wg.Wait()
		close(seen)
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var counts []int64
		for n := range seen {
			counts = append(counts, n)
		}
		slices.Sort(counts)
		if len(counts) != callers || len(slices.Compact(slices.Clone(counts))) != callers {
			t.Errorf("invocation numbers = %v; want %d distinct", counts, callers)
		}
	})

	t.Run("close stops emulator and runtime", func(t *testing.T) {
		runtimes = append(runtimes, childProcesses(f.cmd.Process.Pid)...)
		if len(runtimes) == 0 {
			t.Fatal("no runtime process under the emulator after invokes")
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Invoke(ctx, []byte(`{}`)); !errors.Is(err, ErrExited) {
			t.Errorf("Invoke after Close: %v; want ErrExited", err)
		}
		for _, pid := range runtimes {
			if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && exe == bootstrap {
				t.Errorf("runtime process %d (%s) still running after Close", pid, exe)
			}
		}
	})
}
