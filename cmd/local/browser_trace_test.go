package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/tracing"
	"github.com/chromedp/chromedp"
)

// traceFirstLoadEnv asks for a DevTools trace of the client's first load
// (docs/web-client.md, "Measurements"):
//
//	WEB_TRACE=game go test -count=1 ./cmd/local -run BrowserTraceFirstLoad -v
//
// (or WEB_TRACE=home). The trace files go to WEB_TRACE_DIR (default: the
// test's temporary directory), to open in chrome://tracing or Perfetto; the
// test logs what the renderer's main thread spent before the page's mark.
const traceFirstLoadEnv = "WEB_TRACE"

// traceCategories: the timeline, the loader, V8 and the font queries.
var traceCategories = []string{
	"toplevel", "devtools.timeline", "disabled-by-default-devtools.timeline", "blink", "blink.user_timing",
	"loading", "navigation", "v8", "fonts",
}

// TestBrowserTraceFirstLoad traces three cold loads of a returning
// player's game (or of the home screen) and summarises each: the main
// thread's busy time before the mark, and the named steps and font
// queries within it. Tracing slows the browser, so its times are longer
// than TestBrowserFirstLoad's; the counts are what it is for.
func TestBrowserTraceFirstLoad(t *testing.T) {
	which := os.Getenv(traceFirstLoadEnv)
	if which == "" {
		t.Skipf("a diagnostic: %s=game or %s=home runs it", traceFirstLoadEnv, traceFirstLoadEnv)
	}
	if which != "game" && which != "home" {
		t.Fatalf("%s=%q; want game or home", traceFirstLoadEnv, which)
	}
	requireChromium(t)
	dir := os.Getenv("WEB_TRACE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	c := startLocal(t)
	b := newBrowser(t, c.base)
	path, mark, storage := "/", "home-interactive", map[string]any(nil)
	if which == "game" {
		var id string
		id, storage = c.returningPlayersGame()
		path, mark = "/#/g/"+id, "board-interactive"
	}
	b.measureFirstLoad("/", "home-interactive", nil) // the browser warmed up, as in TestBrowserFirstLoad
	for run := 1; run <= 3; run++ {
		events := traceLoad(t, b, path, mark, storage)
		file := filepath.Join(dir, fmt.Sprintf("trace-%s-%d.json", which, run))
		data, err := json.Marshal(map[string]any{"traceEvents": events})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := summariseTrace(data, mark)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		t.Logf("%s, load %d (%s):\n%s", which, run, file, s)
	}
}

// traceLoad opens path in a fresh browser context with tracing on and
// returns the trace's events once the page has set its mark.
func traceLoad(t *testing.T, b *browser, path, mark string, storage map[string]any) []json.RawMessage {
	t.Helper()
	p := b.newPage("trace", pageOpts{mobile: true})
	defer p.close()
	if storage != nil {
		p.setStorage(storage)
	}
	var mu sync.Mutex
	var events []json.RawMessage
	complete := make(chan struct{})
	go func() {
		for e, err := range chromedp.Events(p.ctx, tracing.DataCollected) {
			if err != nil {
				return
			}
			mu.Lock()
			for _, v := range e.Value {
				events = append(events, json.RawMessage(v))
			}
			mu.Unlock()
		}
	}()
	go func() {
		for _, err := range chromedp.Events(p.ctx, tracing.TracingComplete) {
			if err == nil {
				close(complete)
			}
			return
		}
	}()
	p.do("start tracing", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, tracing.Start, tracing.StartParams{
			TransferMode: tracing.StartTransferModeReportEvents,
			TraceConfig:  &tracing.TraceConfig{IncludedCategories: traceCategories},
		})
		return err
	}))
	p.open(path)
	p.waitMark(mark)
	p.do("end tracing", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Call(ctx, tracing.End, cdp.Empty{})
		return err
	}))
	select {
	case <-complete:
	case <-time.After(10 * time.Second):
		t.Fatal("the trace did not complete in 10 s")
	}
	time.Sleep(100 * time.Millisecond) // the last dataCollected events
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(events)
}

// traceEvent is the part of a Chrome trace event the summary reads.
type traceEvent struct {
	Name string  `json:"name"`
	Ph   string  `json:"ph"`
	Ts   float64 `json:"ts"`  // µs
	Dur  float64 `json:"dur"` // µs, complete ("X") events
	Pid  int     `json:"pid"`
	Tid  int     `json:"tid"`
	Args struct {
		Name string `json:"name"` // thread_name metadata
	} `json:"args"`
}

// traceSteps are the main-thread steps the summary totals, by event name:
// each is a complete event of Chromium's own instrumentation.
var traceSteps = []struct{ label, event string }{
	{"navigation commit", "RenderFrameImpl::CommitNavigation"},
	{"HTML parsing", "ParseHTML"},
	{"script compile", "v8.compileModule"},
	{"script run", "v8.evaluateModule"},
	{"style", "UpdateLayoutTree"},
	{"layout", "Layout"},
	{"paint", "Paint"},
	{"font: family queries", "FontDataManager::onMatchFamilyStyle"},
	{"font: size/weight queries", "WebSandboxSupportLinux::GetWebFontRenderStyleForStrike"},
	{"font: per-character fallbacks", "WebSandboxSupportLinux::GetFallbackFontForCharacter"},
}

// summariseTrace reports, for the renderer main thread of the page that set
// mark, from its last navigationStart to the mark: the time in top-level
// tasks, and the count and total time of each of traceSteps (steps nest:
// the font queries are inside layout, which is inside its task).
func summariseTrace(data []byte, mark string) (string, error) {
	var trace struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &trace); err != nil {
		return "", err
	}
	type thread struct{ pid, tid int }
	names := map[thread]string{}
	var markEv *traceEvent
	for i, e := range trace.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			names[thread{e.Pid, e.Tid}] = e.Args.Name
		}
		if e.Name == mark && markEv == nil {
			markEv = &trace.TraceEvents[i]
		}
	}
	if markEv == nil {
		return "", fmt.Errorf("no %q in the trace", mark)
	}
	start := -1.0
	for _, e := range trace.TraceEvents {
		if e.Name == "navigationStart" && e.Pid == markEv.Pid && e.Ts <= markEv.Ts && e.Ts > start {
			start = e.Ts
		}
	}
	if start < 0 {
		return "", fmt.Errorf("no navigationStart before %q", mark)
	}
	main := func(e traceEvent) bool {
		return e.Ph == "X" && e.Pid == markEv.Pid && names[thread{e.Pid, e.Tid}] == "CrRendererMain" && e.Ts >= start && e.Ts <= markEv.Ts
	}
	var events []traceEvent
	for _, e := range trace.TraceEvents {
		if main(e) {
			events = append(events, e)
		}
	}
	slices.SortStableFunc(events, func(a, b traceEvent) int { return cmp.Compare(a.Ts, b.Ts) })
	// An event inside another of the same name (Chromium nests some, e.g.
	// Paint in Paint) is counted once, as the outer one.
	var busy float64
	count := map[string]int{}
	total := map[string]float64{}
	end := map[string]float64{}
	for _, e := range events {
		if e.Ts < end[e.Name] {
			continue
		}
		end[e.Name] = e.Ts + e.Dur
		if e.Name == "ThreadControllerImpl::RunTask" {
			busy += e.Dur
		}
		count[e.Name]++
		total[e.Name] += e.Dur
	}
	var out strings.Builder
	fmt.Fprintf(&out, "  %-30s %6.1f ms\n", "the mark, from navigation start", (markEv.Ts-start)/1000)
	fmt.Fprintf(&out, "  %-30s %6.1f ms\n", "main thread busy before it", busy/1000)
	for _, s := range traceSteps {
		fmt.Fprintf(&out, "  %-30s %6.1f ms in %d\n", s.label, total[s.event]/1000, count[s.event])
	}
	return strings.TrimRight(out.String(), "\n"), nil
}
