package rie

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// stream tells which of the emulator's outputs a line came from. The
// emulator prints START/END/REPORT and everything the function writes (its
// stdout and stderr) on stdout, and its own rapid log on stderr.
type stream int

const (
	streamStdout stream = iota
	streamStderr
)

type logLine struct {
	stream stream
	text   string
}

// logBook collects the emulator's output lines and wakes waiters when a line
// arrives.
type logBook struct {
	mu      sync.Mutex
	lines   []logLine
	changed chan struct{} // closed and replaced on every append
	mirror  func(string)
}

func newLogBook(mirror func(string)) *logBook {
	return &logBook{changed: make(chan struct{}), mirror: mirror}
}

func (b *logBook) add(s stream, text string) {
	b.mu.Lock()
	b.lines = append(b.lines, logLine{s, text})
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
	if b.mirror != nil {
		b.mirror(text)
	}
}

// len is a mark: lines appended later are what an invoke produced.
func (b *logBook) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.lines)
}

func (b *logBook) since(mark int) []logLine {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]logLine(nil), b.lines[mark:]...)
}

func (b *logBook) texts() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, len(b.lines))
	for i, l := range b.lines {
		out[i] = l.text
	}
	return out
}

// waitFor blocks until done holds for the lines after mark, ctx ends or
// stop is closed (the process exited; done is checked once more then).
func (b *logBook) waitFor(ctx context.Context, mark int, stop <-chan struct{}, done func([]logLine) bool) error {
	for {
		b.mu.Lock()
		ok := done(b.lines[mark:])
		changed := b.changed
		b.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-stop:
			b.mu.Lock()
			ok := done(b.lines[mark:])
			b.mu.Unlock()
			if ok {
				return nil
			}
			return ErrExited
		}
	}
}

// lineWriter splits what a process writes into lines for the log book.
// exec runs one copying goroutine per stream, so each stream gets its own.
type lineWriter struct {
	book    *logBook
	stream  stream
	mu      sync.Mutex
	partial []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.book.add(w.stream, strings.TrimRight(string(w.partial[:i]), "\r"))
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

// flush records a last line that had no newline.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.book.add(w.stream, string(w.partial))
		w.partial = nil
	}
}

// report is what the emulator's log says about one invoke.
type report struct {
	seen            bool          // the REPORT line arrived
	duration        time.Duration // REPORT "Duration"
	runtimeDone     bool          // rapid's INVOKE RTDONE arrived
	runtimeDuration time.Duration // rapid's INVOKE RTDONE "duration"
	initDuration    time.Duration // rapid's INIT REPORT, when this invoke initialised the function
	functionLogs    []string      // what the function wrote (during init too, when cold)
}

var (
	initReportRE    = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)
	invokeStartRE   = regexp.MustCompile(`INVOKE START\(requestId: ([^)]+)\)`)
	runtimeDoneRE   = regexp.MustCompile(`INVOKE RTDONE\(status: [^,]*,.* duration: ([0-9.]+)ms\)`)
	reportDuration  = "Duration: "
	reportLinePrfx  = "REPORT RequestId: "
	startLinePrefix = "START RequestId: "
	endLinePrefix   = "END RequestId: "
)

// parseReport reads the lines logged since an invoke with requestID began.
// Lines of the two streams interleave arbitrarily, so each stream is read in
// its own order.
func parseReport(lines []logLine, requestID string) (report, error) {
	var r report
	invokeStarted := false
	for _, l := range lines {
		switch l.stream {
		case streamStdout:
			switch {
			case l.text == startLinePrefix+requestID || strings.HasPrefix(l.text, startLinePrefix+requestID+" "),
				l.text == endLinePrefix+requestID:
			case strings.HasPrefix(l.text, reportLinePrfx+requestID+"\t"):
				d, err := reportField(l.text, reportDuration)
				if err != nil {
					return r, err
				}
				r.seen, r.duration = true, d
			default:
				// Invokes never overlap, so everything else on stdout since
				// the invoke began is the function's output (init included).
				r.functionLogs = append(r.functionLogs, l.text)
			}
		case streamStderr:
			if m := initReportRE.FindStringSubmatch(l.text); m != nil {
				d, err := parseMillis(m[1])
				if err != nil {
					return r, fmt.Errorf("rie: INIT REPORT line %q: %w", l.text, err)
				}
				r.initDuration = d
			}
			if m := invokeStartRE.FindStringSubmatch(l.text); m != nil {
				invokeStarted = m[1] == requestID
			}
			if m := runtimeDoneRE.FindStringSubmatch(l.text); m != nil && invokeStarted {
				d, err := parseMillis(m[1])
				if err != nil {
					return r, fmt.Errorf("rie: INVOKE RTDONE line %q: %w", l.text, err)
				}
				r.runtimeDone, r.runtimeDuration = true, d
				invokeStarted = false
			}
		}
	}
	return r, nil
}

// reportField reads "Name: 12.34 ms" out of a tab-separated REPORT line.
// Fields are matched whole, so "Duration" does not match "Init Duration".
func reportField(line, name string) (time.Duration, error) {
	for _, field := range strings.Split(line, "\t") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(field), name); ok {
			d, err := parseMillis(strings.TrimSuffix(v, " ms"))
			if err != nil {
				return 0, fmt.Errorf("rie: REPORT field %q: %w", field, err)
			}
			return d, nil
		}
	}
	return 0, fmt.Errorf("rie: REPORT line without %q: %q", strings.TrimSpace(name), line)
}

func parseMillis(s string) (time.Duration, error) {
	ms, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if ms < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}
