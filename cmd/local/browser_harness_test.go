package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// The browser tests drive the reference web client (cmd/local/web) in
// headless Chromium against the real local server, as a person would: by
// tapping, clicking and dragging on the page. Chromium is Debian's package;
// when it is missing the tests install it (with fonts-nanum, so Hangul
// renders in the screenshots). They are skipped under -short and fail,
// never skip, in a full run when Chromium cannot be had.

// updateScreenshotsEnv regenerates docs/screenshots/*.png:
// UPDATE_SCREENSHOTS=1 go test ./cmd/local -run Browser
const updateScreenshotsEnv = "UPDATE_SCREENSHOTS"

var (
	chromiumOnce sync.Once
	chromiumBin  string
	chromiumErr  error
)

// requireChromium returns Chromium's path, installing it when missing.
func requireChromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: needs headless Chromium, skipped under -short (a full run installs Chromium when missing; or: make chromium)")
	}
	chromiumOnce.Do(func() { chromiumBin, chromiumErr = findOrInstallChromium() })
	if chromiumErr != nil {
		t.Fatalf("browser test: Chromium is required and could not be installed: %v (install Debian's chromium and fonts-nanum, e.g. make chromium)", chromiumErr)
	}
	return chromiumBin
}

func findOrInstallChromium() (string, error) {
	find := func() string {
		for _, name := range []string{"chromium", "chromium-browser"} {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	_, fontErr := os.Stat("/usr/share/fonts/truetype/nanum")
	if p := find(); p != "" && fontErr == nil {
		return p, nil
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		if p := find(); p != "" {
			return p, nil // no Hangul font: screenshots show boxes, the tests still hold
		}
		return "", errors.New("chromium is not installed and there is no apt-get to install it")
	}
	cmd := exec.Command("sh", "-c", "apt-get update -qq && apt-get install -y -qq chromium fonts-nanum")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("apt-get install chromium fonts-nanum: %v\n%s", err, lastLines(string(out), 15))
	}
	if p := find(); p != "" {
		return p, nil
	}
	return "", errors.New("apt-get installed chromium but it is not on PATH")
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// browser is one headless Chromium for a test; its pages are isolated
// browser contexts (own storage, like two people on two devices).
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string
}

func newBrowser(t *testing.T, base string) *browser {
	t.Helper()
	bin := requireChromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // the tests may run as root (CI)
		chromedp.Flag("lang", "ko-KR"),
		chromedp.Flag("accept-lang", "ko-KR,ko"),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1280, 900),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancel()
		cancelAlloc()
		t.Fatalf("start Chromium: %v", err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return &browser{t: t, ctx: ctx, base: base}
}

// page is one tab in a browser context of its own.
type page struct {
	t     *testing.T
	ctx   context.Context
	close context.CancelFunc // closes the tab and its browser context
	base  string
	name  string
}

// pageOpts set up a page before its first navigation.
type pageOpts struct {
	width, height int64
	mobile        bool   // touch emulation, taps instead of clicks
	language      string // Accept-Language and navigator.languages; default Korean
}

func (b *browser) newPage(name string, o pageOpts) *page {
	b.t.Helper()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	b.t.Cleanup(cancel)
	if o.width == 0 {
		o.width, o.height = 390, 844 // a phone in portrait
	}
	if o.language == "" {
		o.language = "ko-KR,ko"
	}
	var vp []chromedp.EmulateViewportOption
	if o.mobile {
		vp = append(vp, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	p := &page{t: b.t, ctx: ctx, close: cancel, base: b.base, name: name}
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(o.width, o.height, vp...),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{
				UserAgent:      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome Safari/537.36",
				AcceptLanguage: o.language,
			})
			return err
		}),
	)
	if err != nil {
		b.t.Fatalf("%s: set up page: %v", name, err)
	}
	p.failOnPolicyViolations()
	return p
}

// failOnPolicyViolations fails the test, when it ends, if the page's
// Content-Security-Policy blocked anything (the browser reports each as a
// security log entry): the page's policy allows its own inline script and
// stylesheet by hash only (webui.go), and this catches a change that
// needs more.
func (p *page) failOnPolicyViolations() {
	p.t.Helper()
	p.do("enable the log", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
		return err
	}))
	var mu sync.Mutex
	var blocked []string
	go func() {
		for ev, err := range chromedp.Events(p.ctx, cdplog.EntryAdded) {
			if err != nil {
				return
			}
			if ev.Entry.Source == cdplog.EntrySourceSecurity && strings.Contains(ev.Entry.Text, "Content Security Policy") {
				mu.Lock()
				blocked = append(blocked, ev.Entry.Text)
				mu.Unlock()
			}
		}
	}()
	p.t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, text := range blocked {
			p.t.Errorf("%s: the page's content security policy blocked: %s", p.name, text)
		}
	})
}

func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %s: %v", p.name, what, err)
	}
}

// open navigates to a path of the client ("/#/g/ID") and waits for load.
func (p *page) open(path string) {
	p.t.Helper()
	p.do("open "+path, chromedp.Navigate(p.base+path))
}

// eval runs JavaScript and decodes its result into T.
func eval[T any](p *page, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: eval %q: %v", p.name, js, err)
	}
	return v
}

// waitFor waits until a JavaScript expression is truthy.
func (p *page) waitFor(what, js string, timeout time.Duration) {
	p.t.Helper()
	// The timeouts are what the page needs on an idle machine; make test
	// runs this package beside the others on two cores, where a ready
	// step once took longer than its 5 s. A wait that passes returns as
	// soon as its condition holds, so the slack costs only failing runs.
	timeout *= waitSlack
	ctx, cancel := context.WithTimeout(p.ctx, timeout+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(timeout))); err != nil {
		state, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(document.querySelector('#status-line')?.innerText||'') + ' | toast: ' + (document.querySelector('#toast.shown')?.innerText||'')`))
		p.t.Fatalf("%s: waiting for %s: %v (page: %s)", p.name, what, err, state)
	}
}

// waitSlack multiplies every waitFor timeout (see there).
const waitSlack = 3

// click presses the mouse on an element's centre (a desktop user).
func (p *page) click(sel string) {
	p.t.Helper()
	p.onNode("click "+sel, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// tap touches an element's centre (a phone user; needs a mobile page).
func (p *page) tap(sel string) {
	p.t.Helper()
	p.onNode("tap "+sel, chromedp.Tap(chromedp.CSS(sel), chromedp.NodeVisible))
}

// onNode runs an action on a node found by a selector, again when the
// node was replaced between being found and being acted on: the client
// re-renders a screen on every change the stream brings (a presence, a
// clock), which is what a user's tap meets too, and the next look finds
// the new node.
func (p *page) onNode(what string, action chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	var err error
	for range 5 {
		ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
		err = chromedp.Do(ctx, action)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "Could not find node with given id") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		p.t.Fatalf("%s: %s: %v", p.name, what, err)
	}
}

// square is the selector of a board square.
func square(sq string) string { return fmt.Sprintf(`.board .sq[data-sq="%s"]`, sq) }

// pieceAt returns the piece code shown on a square ("" when empty).
func (p *page) pieceAt(sq string) string {
	p.t.Helper()
	return eval[string](p, fmt.Sprintf(`document.querySelector('.board .pc[data-sq="%s"]')?.dataset.piece ?? ''`, sq))
}

// setStorage writes localStorage entries before the page's scripts run on
// every later navigation (a returning visitor's stored seat).
func (p *page) setStorage(entries map[string]any) {
	p.t.Helper()
	var b strings.Builder
	for k, v := range entries {
		data, _ := json.Marshal(v)
		key, _ := json.Marshal(k)
		val, _ := json.Marshal(string(data))
		fmt.Fprintf(&b, "localStorage.setItem(%s, %s);", key, val)
	}
	p.do("set storage", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{
			Source: "if (!sessionStorage.getItem('seeded')) { sessionStorage.setItem('seeded', '1');" + b.String() + "}",
		})
		return err
	}))
}

// screenshot saves the viewport as docs/screenshots/NAME.png when
// UPDATE_SCREENSHOTS is set.
func (p *page) screenshot(name string) {
	p.t.Helper()
	if os.Getenv(updateScreenshotsEnv) == "" {
		return
	}
	// Let animations and transitions settle.
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := filepath.Join("..", "..", "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("wrote docs/screenshots/%s.png", name)
}

// flakyProxy stands between the browser and the server like a network
// that can fail: it forwards TCP connections, and drop() cuts every open
// one (the page's stream included) and refuses new ones until allow().
type flakyProxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	blocked bool
}

func startProxy(t *testing.T, target string) *flakyProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &flakyProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.drop()
	})
	return p
}

func (p *flakyProxy) url() string { return "http://" + p.ln.Addr().String() }

func (p *flakyProxy) serve() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		blocked := p.blocked
		p.mu.Unlock()
		if blocked {
			in.Close()
			continue
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		if !p.track(in, out) {
			continue
		}
		go p.pipe(in, out)
		go p.pipe(out, in)
	}
}

func (p *flakyProxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.blocked {
		for _, c := range conns {
			c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *flakyProxy) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// drop cuts every connection and refuses new ones.
func (p *flakyProxy) drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *flakyProxy) allow() {
	p.mu.Lock()
	p.blocked = false
	p.mu.Unlock()
}
