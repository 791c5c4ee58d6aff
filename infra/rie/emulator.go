package rie

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options describe one function started under the emulator.
type Options struct {
	// Emulator is the aws-lambda-rie binary (see EnsureEmulator).
	Emulator string
	// Bootstrap is the function's executable (see BuildBootstrap). It runs
	// in its own directory, as /var/task is the working directory on Lambda.
	Bootstrap string
	// FunctionName is AWS_LAMBDA_FUNCTION_NAME; default "function".
	FunctionName string
	// Timeout is AWS_LAMBDA_FUNCTION_TIMEOUT, rounded up to whole seconds;
	// default 30 s.
	Timeout time.Duration
	// MemoryMB is AWS_LAMBDA_FUNCTION_MEMORY_SIZE (informational: nothing
	// enforces it); default 128.
	MemoryMB int
	// Env is the function's configuration. The process environment of the
	// test is NOT inherited (no HOME, no developer credentials): the function
	// sees Env on top of what Lambda always sets (PATH, TZ, LANG, AWS_REGION
	// us-east-1 unless Env says otherwise, AWS_LAMBDA_FUNCTION_*).
	Env map[string]string
	// Log, if set, receives every line the emulator and the function print
	// (for example t.Log). It must be safe to call until Close returns.
	Log func(line string)
	// StartTimeout bounds the wait for the emulator's port; default 10 s.
	StartTimeout time.Duration
}

// Function is a bootstrap running under the emulator. Invoke may be called
// from several goroutines: the calls are serialised.
type Function struct {
	url        string
	bootstrap  string
	timeout    time.Duration
	cmd        *exec.Cmd
	book       *logBook
	writers    [2]*lineWriter
	client     *http.Client
	exited     chan struct{}
	waitErr    error
	invokeMu   sync.Mutex
	closeOnce  sync.Once
	closeError error
}

// Result is one invocation as the caller and the emulator saw it.
type Result struct {
	RequestID string
	// StatusCode is the emulator's HTTP status: 200 for every completed
	// invoke, function errors included.
	StatusCode int
	// Payload is the function's response (or its error document).
	Payload []byte
	// FunctionError is set when the handler returned an error: Payload is
	// then the Lambda error document.
	FunctionError *FunctionError
	// InitDuration is how long the function's init took, set only on the
	// invoke that started it (the cold start), from rapid's INIT REPORT.
	InitDuration time.Duration
	// Duration is the REPORT line's Duration: the emulator's wall time for
	// the invoke, which includes InitDuration on the cold start.
	Duration time.Duration
	// RuntimeDuration is rapid's INVOKE RTDONE duration: from handing the
	// event to the runtime until its response, without init.
	RuntimeDuration time.Duration
	// RoundTrip is the HTTP round trip measured by the caller.
	RoundTrip time.Duration
	// Logs is what the function printed during this invoke (and its init).
	// It is complete for an invoke that answered 200 (the emulator's REPORT
	// follows the function's output on the same stdout); for one that did
	// not (a failed init: 502 at once, and no REPORT), it is what had been
	// read by the answer, and Function.AwaitLog waits for the rest.
	Logs []string
}

// FunctionError is the document Lambda returns for a handler error.
type FunctionError struct {
	Message    string          `json:"errorMessage"`
	Type       string          `json:"errorType"`
	StackTrace json.RawMessage `json:"stackTrace,omitempty"`
}

func (e *FunctionError) Error() string {
	return fmt.Sprintf("function error %s: %s", e.Type, e.Message)
}

// asFunctionError decodes payload as a Lambda error document: an object with
// errorType and errorMessage and nothing else but an optional stackTrace.
// Handlers here return JSON objects that never have exactly that shape.
func asFunctionError(payload []byte) *FunctionError {
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	var fe FunctionError
	if err := dec.Decode(&fe); err != nil || fe.Type == "" {
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil
	}
	return &fe
}

const (
	invokePath = "/2015-03-31/functions/function/invocations"
	// reportWait bounds the wait for the emulator's REPORT line after the
	// response: it is printed before the response is written, only our
	// reading of the pipe can lag.
	reportWait = 5 * time.Second
	// stopWait is how long the emulator gets to stop on SIGTERM.
	stopWait = 3 * time.Second
	// startAttempts covers the small race between picking a free port and
	// the emulator binding it.
	startAttempts = 3
)

// Start runs opts.Bootstrap under the emulator and waits until the emulator
// accepts invocations. ctx bounds the start only; Close stops the function.
func Start(ctx context.Context, opts Options) (*Function, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	var lastErr error
	for range startAttempts {
		f, err := start(ctx, opts)
		if err == nil {
			return f, nil
		}
		lastErr = err
		if !errors.Is(err, ErrExited) {
			break
		}
	}
	return nil, lastErr
}

func (o *Options) setDefaults() error {
	if o.Emulator == "" || o.Bootstrap == "" {
		return errors.New("rie: Options.Emulator and Options.Bootstrap are required")
	}
	for _, p := range []string{o.Emulator, o.Bootstrap} {
		if info, err := os.Stat(p); err != nil {
			return fmt.Errorf("rie: %w", err)
		} else if info.IsDir() || info.Mode()&0o111 == 0 {
			return fmt.Errorf("rie: %s is not an executable file", p)
		}
	}
	abs, err := filepath.Abs(o.Bootstrap)
	if err != nil {
		return fmt.Errorf("rie: %w", err)
	}
	o.Bootstrap = abs
	if _, ok := o.Env["AWS_LAMBDA_MAX_CONCURRENCY"]; ok {
		return errors.New("rie: AWS_LAMBDA_MAX_CONCURRENCY switches the emulator to another mode; leave it unset")
	}
	if o.FunctionName == "" {
		o.FunctionName = "function"
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.MemoryMB <= 0 {
		o.MemoryMB = 128
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 10 * time.Second
	}
	return nil
}

// environment is what the emulator passes on to the function unchanged.
func (o *Options) environment() []string {
	timeoutSec := int64((o.Timeout + time.Second - 1) / time.Second)
	env := map[string]string{
		"PATH":                            "/usr/local/bin:/usr/bin:/bin",
		"TZ":                              ":UTC",
		"LANG":                            "en_US.UTF-8",
		"AWS_REGION":                      "us-east-1",
		"AWS_DEFAULT_REGION":              "us-east-1",
		"AWS_LAMBDA_FUNCTION_NAME":        o.FunctionName,
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     strconv.FormatInt(timeoutSec, 10),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(o.MemoryMB),
	}
	for k, v := range o.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func start(ctx context.Context, opts Options) (*Function, error) {
	apiAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	runtimeAddr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}

	book := newLogBook(opts.Log)
	f := &Function{
		url:       "http://" + apiAddr + invokePath,
		bootstrap: opts.Bootstrap,
		timeout:   opts.Timeout,
		book:      book,
		writers:   [2]*lineWriter{{book: book, stream: streamStdout}, {book: book, stream: streamStderr}},
		client:    &http.Client{Transport: &http.Transport{}},
		exited:    make(chan struct{}),
	}
	// --log-level info is needed for rapid's INIT REPORT and RTDONE lines;
	// it also keeps the emulator from reading the function's LOG_LEVEL.
	f.cmd = exec.Command(opts.Emulator,
		"--log-level", "info",
		"--runtime-interface-emulator-address", apiAddr,
		"--runtime-api-address", runtimeAddr,
		opts.Bootstrap)
	f.cmd.Dir = filepath.Dir(opts.Bootstrap)
	f.cmd.Env = opts.environment()
	f.cmd.Stdout = f.writers[streamStdout]
	f.cmd.Stderr = f.writers[streamStderr]
	// The runtime inherits the emulator's stdout; if it outlives the
	// emulator, Wait must not block on the pipe forever.
	f.cmd.WaitDelay = time.Second
	// Should the test binary die without Close, the emulator goes with it
	// (and the runtime exits when its Runtime API disappears).
	f.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := f.cmd.Start(); err != nil {
		return nil, fmt.Errorf("rie: starting %s: %w", opts.Emulator, err)
	}
	go func() {
		f.waitErr = f.cmd.Wait()
		f.writers[streamStdout].flush()
		f.writers[streamStderr].flush()
		close(f.exited)
	}()

	startCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	if err := f.awaitListening(startCtx, apiAddr); err != nil {
		f.Close()
		return nil, fmt.Errorf("rie: emulator for %s not ready: %w; its output:\n%s",
			opts.Bootstrap, err, strings.Join(f.book.texts(), "\n"))
	}
	return f, nil
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("rie: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// awaitListening polls the emulator's port: it logs nothing when it starts
// listening.
func (f *Function) awaitListening(ctx context.Context, addr string) error {
	var d net.Dialer
	for {
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-f.exited:
			return fmt.Errorf("%w (%v)", ErrExited, f.waitErr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Invoke sends payload to the function and waits for its response and the
// emulator's report. A handler error is not an error here: see
// Result.FunctionError. Without a deadline in ctx, the function's timeout
// plus a margin applies.
func (f *Function) Invoke(ctx context.Context, payload []byte) (Result, error) {
	f.invokeMu.Lock()
	defer f.invokeMu.Unlock()

	select {
	case <-f.exited:
		return Result{}, fmt.Errorf("%w (%v)", ErrExited, f.waitErr)
	default:
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout+10*time.Second)
		defer cancel()
	}

	res := Result{RequestID: newRequestID()}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(payload))
	if err != nil {
		return res, fmt.Errorf("rie: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Amzn-RequestId", res.RequestID)

	mark := f.book.len()
	began := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		return res, fmt.Errorf("rie: invoking %s: %w", f.bootstrap, err)
	}
	res.Payload, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	res.RoundTrip = time.Since(began)
	res.StatusCode = resp.StatusCode
	if err != nil {
		return res, fmt.Errorf("rie: reading the response of %s: %w", f.bootstrap, err)
	}
	if res.StatusCode == http.StatusOK {
		res.FunctionError = asFunctionError(res.Payload)
	}

	rep, err := f.awaitReport(ctx, mark, res.RequestID, res.StatusCode == http.StatusOK)
	res.InitDuration, res.Duration, res.RuntimeDuration = rep.initDuration, rep.duration, rep.runtimeDuration
	res.Logs = rep.functionLogs
	return res, err
}

// awaitReport waits for the REPORT line (always printed for a completed
// invoke) and, briefly, for rapid's RTDONE line from the other stream.
func (f *Function) awaitReport(ctx context.Context, mark int, requestID string, completed bool) (report, error) {
	var rep report
	var parseErr error
	parse := func(lines []logLine) {
		rep, parseErr = parseReport(lines, requestID)
	}
	if !completed {
		parse(f.book.since(mark))
		return rep, parseErr
	}
	waitCtx, cancel := context.WithTimeout(ctx, reportWait)
	defer cancel()
	err := f.book.waitFor(waitCtx, mark, f.exited, func(lines []logLine) bool {
		parse(lines)
		return parseErr != nil || (rep.seen && rep.runtimeDone)
	})
	if parseErr != nil {
		return rep, parseErr
	}
	if err != nil && !rep.seen {
		return rep, fmt.Errorf("rie: no REPORT line for request %s: %w", requestID, err)
	}
	return rep, nil
}

// Logs returns every line the emulator and the function printed so far.
func (f *Function) Logs() []string {
	return f.book.texts()
}

// AwaitLog waits until a line the emulator or the function printed so far
// or prints later satisfies match, and returns it. The function's output
// reaches the emulator's stdout and rapid's own log its stderr, read by
// two goroutines, and a failed init prints nothing on stdout after the
// function's last line, so that line can be read after the invoke's 502:
// look for it with AwaitLog, not once with Logs. It fails when ctx ends or
// the emulator exits without such a line.
func (f *Function) AwaitLog(ctx context.Context, match func(string) bool) (string, error) {
	var found string
	err := f.book.waitFor(ctx, 0, f.exited, func(lines []logLine) bool {
		for _, l := range lines {
			if match(l.text) {
				found = l.text
				return true
			}
		}
		return false
	})
	if err != nil {
		return "", fmt.Errorf("rie: no matching log line from %s: %w", f.bootstrap, err)
	}
	return found, nil
}

// Close stops the emulator (which kills the function's process) and waits
// for it. It is safe to call more than once.
func (f *Function) Close() error {
	f.closeOnce.Do(func() {
		// The emulator starts the runtime in a process group of its own, so
		// note it now in case the emulator has to be killed outright.
		runtimes := childProcesses(f.cmd.Process.Pid)
		_ = f.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-f.exited:
		case <-time.After(stopWait):
			_ = f.cmd.Process.Kill()
			<-f.exited
			f.closeError = fmt.Errorf("rie: emulator for %s ignored SIGTERM and was killed", f.bootstrap)
		}
		for _, pid := range runtimes {
			if f.isRuntime(pid) { // still our bootstrap: pids are reused
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		f.client.CloseIdleConnections()
	})
	return f.closeError
}

// RuntimePeakRSS returns the peak resident memory (VmHWM) of the running
// function process, in bytes: the figure Lambda's REPORT line gives as "Max
// Memory Used", which this emulator fills with the configured size instead.
// It fails when no runtime is running (before the first invoke, or after
// Close).
func (f *Function) RuntimePeakRSS() (int64, error) {
	for _, pid := range childProcesses(f.cmd.Process.Pid) {
		if !f.isRuntime(pid) {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			return 0, fmt.Errorf("rie: status of %s: %w", f.bootstrap, err)
		}
		return peakRSS(string(status))
	}
	return 0, fmt.Errorf("rie: no running process of %s", f.bootstrap)
}

// isRuntime reports whether process pid runs this function's bootstrap.
func (f *Function) isRuntime(pid int) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return err == nil && exe == f.bootstrap
}

// peakRSS reads the VmHWM line of a /proc/<pid>/status file.
func peakRSS(status string) (int64, error) {
	for line := range strings.Lines(status) {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		kb, unit, _ := strings.Cut(strings.TrimSpace(rest), " ")
		n, err := strconv.ParseInt(kb, 10, 64)
		if err != nil || strings.TrimSpace(unit) != "kB" {
			return 0, fmt.Errorf("rie: VmHWM line %q: want <n> kB", strings.TrimSpace(line))
		}
		return n << 10, nil
	}
	return 0, errors.New("rie: no VmHWM line in the process status")
}

// childProcesses lists the direct children of pid (Linux /proc).
func childProcesses(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var pids []int
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, field := range strings.Fields(string(data)) {
			if n, err := strconv.Atoi(field); err == nil {
				pids = append(pids, n)
			}
		}
	}
	return pids
}

// newRequestID makes a UUID-shaped id, as Lambda's request ids are.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
