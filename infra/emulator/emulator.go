// Package emulator starts local AWS-compatible servers: moto_server
// (DynamoDB, EventBridge Scheduler and more, from Python) and dynalite (a
// DynamoDB implementation on LevelDB, from npm, pinned by
// infra/package-lock.json), and around them what the tests and
// cmd/emustack need: tables made as the stores make them, a reader of a
// table's change stream that hands out Lambda's events, and a proxy that
// counts (and fails on demand) the API calls made through it.
//
// Each server runs as a child process on a free loopback port until its
// Close. Nothing is shared between processes, so `go test ./...` can run
// packages in parallel. Every function returns an error; the thin
// testing.TB wrappers (stop at the end of the test, a missing tool skipped
// in -short runs) are in chessapi/infra/emulator/emulatortest, for tests
// only.
package emulator

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Kind names an emulator.
type Kind string

const (
	// Moto is moto_server: DynamoDB (incl. TTL), EventBridge Scheduler,
	// Lambda and most other AWS APIs in one process.
	Moto Kind = "moto"
	// Dynalite is the npm dynalite server: DynamoDB only, no transactions,
	// no UpdateTimeToLive, no ReturnValuesOnConditionCheckFailure.
	Dynalite Kind = "dynalite"
)

// Region is the region every emulator client uses.
const Region = "us-east-1"

const (
	// startTimeout bounds how long a server may take to answer its first
	// request; moto imports a lot of Python and can take seconds on a busy
	// machine.
	startTimeout = 60 * time.Second
	// startAttempts retries on a fresh port when the server exits early, which
	// happens when another process grabbed the port between our probe and
	// the server's bind.
	startAttempts = 3
	// stopTimeout is how long a killed server may take to disappear.
	stopTimeout = 10 * time.Second
	// outputTail is how much of a server's output is kept for error messages.
	outputTail = 16 << 10
)

// Server is one running emulator.
type Server struct {
	Kind Kind
	// URL is the endpoint (http://127.0.0.1:PORT).
	URL string

	proc    *server
	tempDir string // the moto start-up patch, removed by Close
}

// Start launches the emulator of the given kind on a free loopback port and
// waits until it answers HTTP (ctx bounds the wait, as does a start-up
// limit of its own). A program it needs that is not installed is a
// *ToolMissingError.
func Start(ctx context.Context, kind Kind) (_ *Server, err error) {
	s := &Server{Kind: kind}
	defer func() {
		if err != nil {
			s.removeTemp()
		}
	}()
	var p plan
	switch kind {
	case Moto:
		bin, err := lookTool("moto_server", "install moto with its server extra: pip install 'moto[server]'")
		if err != nil {
			return nil, err
		}
		p.argv = func(port int) []string {
			return []string{bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port)}
		}
		// Serialize moto's request handling (see motopatch/sitecustomize.py)
		// so conditional writes are atomic as in DynamoDB.
		if s.tempDir, err = os.MkdirTemp("", "emulator-moto-"); err != nil {
			return nil, fmt.Errorf("emulator: %w", err)
		}
		if err := os.WriteFile(filepath.Join(s.tempDir, "sitecustomize.py"), motoPatch, 0o644); err != nil {
			return nil, fmt.Errorf("emulator: write moto patch: %w", err)
		}
		p.env = []string{"PYTHONPATH=" + joinPath(s.tempDir, os.Getenv("PYTHONPATH"))}
		p.marker = motoPatchMarker
	case Dynalite:
		node, err := lookTool("node", "install Node.js 18 or newer with npm (Debian: apt-get install nodejs npm)")
		if err != nil {
			return nil, err
		}
		modules, err := ensureNodeModules(ctx)
		if err != nil {
			return nil, err
		}
		cli := filepath.Join(modules, "dynalite", "cli.js")
		p.argv = func(port int) []string {
			// dynalite treats --port 0 as its default 4567, so the port is
			// always explicit. Table status changes are instant so tests
			// need not wait for CREATING → ACTIVE.
			return []string{node, cli,
				"--host", "127.0.0.1", "--port", strconv.Itoa(port),
				"--createTableMs", "0", "--deleteTableMs", "0", "--updateTableMs", "0"}
		}
	default:
		return nil, fmt.Errorf("emulator: unknown kind %q (want %q or %q)", kind, Moto, Dynalite)
	}

	var lastErr error
	for attempt := 1; attempt <= startAttempts; attempt++ {
		endpoint, srv, err := launch(ctx, kind, p)
		if err == nil {
			s.URL, s.proc = endpoint, srv
			return s, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, fmt.Errorf("emulator: starting %s failed: %w", kind, lastErr)
}

// Close stops the server (SIGKILL to its process group) and removes its
// temporary files. It is safe to call more than once.
func (s *Server) Close() error {
	err := s.proc.stop()
	s.removeTemp()
	if err != nil {
		return fmt.Errorf("emulator: stopping %s: %w", s.Kind, err)
	}
	return nil
}

func (s *Server) removeTemp() {
	if s.tempDir != "" {
		os.RemoveAll(s.tempDir)
		s.tempDir = ""
	}
}

// Output is the end of what the server printed (for a failed test's log).
func (s *Server) Output() string { return s.proc.output.String() }

// plan is how to run one kind of emulator.
type plan struct {
	argv   func(port int) []string
	env    []string // added to the test binary's environment
	marker string   // must appear in the output once the server answers
}

//go:embed motopatch/sitecustomize.py
var motoPatch []byte

// motoPatchMarker is what motopatch/sitecustomize.py prints when it is
// active; without it the race tests would fail at random, so its absence
// fails the start instead.
const motoPatchMarker = "chessapi-emulator: moto requests serialized"

func joinPath(first, rest string) string {
	if rest == "" {
		return first
	}
	return first + string(os.PathListSeparator) + rest
}

// Config returns an AWS SDK configuration that talks to endpoint with dummy
// static credentials in Region. It deliberately ignores the environment and
// ~/.aws so a developer's real settings can never leak into a test.
func Config(endpoint string) aws.Config {
	return aws.Config{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider("emulator", "emulator", ""),
		BaseEndpoint: aws.String(endpoint),
	}
}

// ToolMissingError reports a program an emulator needs that is not on PATH.
type ToolMissingError struct {
	Tool    string
	Install string // how to install it
}

func (e *ToolMissingError) Error() string {
	return fmt.Sprintf("emulator: %s not found on PATH; %s", e.Tool, e.Install)
}

// lookTool returns the path of an executable, or a *ToolMissingError.
func lookTool(name, install string) (string, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", &ToolMissingError{Tool: name, Install: install}
	}
	return path, nil
}

// server is one running emulator process.
type server struct {
	cmd    *exec.Cmd
	output *tailBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // Wait's result, valid after exited is closed
}

// launch starts one process on a fresh port and waits until it answers.
func launch(ctx context.Context, kind Kind, p plan) (string, *server, error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	args := p.argv(port)
	srv := &server{output: &tailBuffer{limit: outputTail}, exited: make(chan struct{})}
	srv.cmd = exec.Command(args[0], args[1:]...)
	srv.cmd.Stdout = srv.output
	srv.cmd.Stderr = srv.output
	srv.cmd.Env = append(os.Environ(),
		// Neither server checks signatures, but keep them away from real
		// credentials and regions anyway.
		"AWS_ACCESS_KEY_ID=emulator", "AWS_SECRET_ACCESS_KEY=emulator", "AWS_DEFAULT_REGION="+Region)
	srv.cmd.Env = append(srv.cmd.Env, p.env...)
	setProcessGroup(srv.cmd)
	if err := srv.cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start %s: %w", kind, err)
	}
	go func() {
		srv.err = srv.cmd.Wait()
		close(srv.exited)
	}()

	endpoint := "http://127.0.0.1:" + strconv.Itoa(port)
	err = waitReady(ctx, endpoint, srv)
	if err == nil && p.marker != "" {
		err = waitMarker(srv, p.marker)
	}
	if err != nil {
		_ = srv.stop()
		return "", nil, fmt.Errorf("%s on port %d: %w\noutput:\n%s", kind, port, err, srv.output.String())
	}
	return endpoint, srv, nil
}

// freePort asks the kernel for an unused loopback port. The listener is
// closed before the server binds, so another process may take the port in
// between; launch then fails and Start retries on a new port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls endpoint until any HTTP response arrives (both servers
// answer a bare GET, with an error document), the process exits, ctx ends
// or startTimeout passes.
func waitReady(ctx context.Context, endpoint string, srv *server) error {
	client := &http.Client{Timeout: 500 * time.Millisecond}
	deadline := time.Now().Add(startTimeout)
	for {
		resp, err := client.Get(endpoint)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-srv.exited:
			return fmt.Errorf("exited before answering: %v", srv.err)
		case <-ctx.Done():
			return fmt.Errorf("no answer before the caller gave up: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within %v: %w", startTimeout, err)
		}
	}
}

// waitMarker waits briefly for marker in the output, which is copied from
// the process's pipes asynchronously.
func waitMarker(srv *server, marker string) error {
	for range 40 {
		if strings.Contains(srv.output.String(), marker) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("answers but never printed %q: the start-up patch was not loaded (is PYTHONPATH honoured?)", marker)
}

// stop kills the process group and waits for the process. SIGKILL at once:
// emulators keep nothing worth a graceful shutdown, and moto takes seconds
// to exit on SIGTERM.
func (s *server) stop() error {
	select {
	case <-s.exited:
		return nil // already gone (stopped, or it failed to start)
	default:
	}
	if err := kill(s.cmd); err != nil {
		return err
	}
	select {
	case <-s.exited:
		return nil
	case <-time.After(stopTimeout):
		return fmt.Errorf("process %d did not exit after SIGKILL", s.cmd.Process.Pid)
	}
}

// ensureNodeModules returns infra/node_modules (dynalite and esbuild),
// running `npm ci` in infra/ first when it is missing or incomplete. A file lock
// keeps concurrently starting test binaries from installing at once.
func ensureNodeModules(ctx context.Context) (string, error) {
	dir, err := infraDir()
	if err != nil {
		return "", err
	}
	modules := filepath.Join(dir, "node_modules")
	if installed(dir) {
		return modules, nil
	}
	npm, err := lookTool("npm", "install npm (Debian: apt-get install npm)")
	if err != nil {
		return "", err
	}

	unlock, err := lockFile(filepath.Join(dir, ".npm-ci.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if installed(dir) { // another test binary installed it while we waited
		return modules, nil
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("emulator: npm ci in %s failed (run it by hand to see why): %w\n%s", dir, err, out)
	}
	if !installed(dir) {
		return "", fmt.Errorf("emulator: npm ci in %s succeeded but %s is incomplete", dir, modules)
	}
	return modules, nil
}

// Esbuild returns the path of the pinned esbuild (infra/package.json), which
// bundles the web client (make web), running `npm ci` in infra/ first when
// needed, as for dynalite.
func Esbuild(ctx context.Context) (string, error) {
	modules, err := ensureNodeModules(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(modules, ".bin", "esbuild"), nil
}

// installed reports whether infra/node_modules is complete. npm writes
// node_modules/.package-lock.json at the end of an install, so its presence
// tells a finished install from an interrupted one.
func installed(dir string) bool {
	for _, p := range []string{
		filepath.Join(dir, "node_modules", ".package-lock.json"),
		filepath.Join(dir, "node_modules", "dynalite", "cli.js"),
		filepath.Join(dir, "node_modules", ".bin", "esbuild"),
	} {
		if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// infraDir finds the repository's infra/ directory (the one holding
// package.json): next to this source file when the build kept absolute
// paths, else by walking up from the working directory, which `go test`
// sets to the package under test.
func infraDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dir := filepath.Dir(filepath.Dir(file))
		if isInfraDir(dir) {
			return dir, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find infra directory: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if candidate := filepath.Join(dir, "infra"); isInfraDir(candidate) {
			return candidate, nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("find infra directory: no infra/package.json above " + wd)
		}
	}
}

func isInfraDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "package.json"))
	return err == nil
}

// tailBuffer keeps the last limit bytes written to it; safe for the two
// writers (stdout, stderr) of a process.
type tailBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	limit int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if extra := b.buf.Len() - b.limit; extra > 0 {
		b.buf.Next(extra)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
