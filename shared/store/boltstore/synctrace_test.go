package boltstore_test

// A reader of `strace -f` output and the check the durability test makes on
// it: every acknowledged write reached the database file, its commit record
// (bbolt's meta page) followed, and an fsync/fdatasync of the file started
// after that and returned 0, all before the acknowledgement was written.

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// syscallEvent is one system call in the trace. Lines are numbered from 0
// in the order strace printed them; strace is one thread handling one
// ptrace stop at a time, so a call that returned before another one started
// (in the tracees' causal order) is printed so: its exit line comes first.
type syscallEvent struct {
	tid   int    // thread id (0 if the trace has no pid column)
	name  string // e.g. "pwrite64"
	args  string // the arguments as printed at entry, without the parentheses
	ret   string // the return value and anything after it; "" if it never returned
	entry int    // line where the call started
	exit  int    // line where it returned; -1 if it never did
}

// fd is the first argument as a file descriptor (strace -y decorations
// such as "3</path>" are allowed), or -1.
func (e *syscallEvent) fd() int {
	first, _, _ := strings.Cut(e.args, ",")
	first, _, _ = strings.Cut(first, "<")
	n, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		return -1
	}
	return n
}

// retval is the call's integer result; ok is false if it did not return
// or returned something that is not a number ("?").
func (e *syscallEvent) retval() (n int64, ok bool) {
	field, _, _ := strings.Cut(strings.TrimSpace(e.ret), " ")
	n, err := strconv.ParseInt(field, 10, 64)
	return n, err == nil && e.exit >= 0
}

// succeeded: returned, with a result that is not an error (-1).
func (e *syscallEvent) succeeded() bool {
	n, ok := e.retval()
	return ok && n >= 0
}

// offset is the file offset of a positional write, parsed from the last
// arguments; ok is false for writes without one.
func (e *syscallEvent) offset() (off int64, ok bool) {
	fields := strings.Split(e.args, ", ")
	var pick int
	switch e.name {
	case "pwrite64", "pwritev":
		pick = len(fields) - 1 // ..., offset
	case "pwritev2":
		pick = len(fields) - 2 // ..., offset, flags
	default:
		return 0, false
	}
	if pick < 1 {
		return 0, false
	}
	off, err := strconv.ParseInt(strings.TrimSpace(fields[pick]), 10, 64)
	return off, err == nil
}

var (
	pidPrefix = regexp.MustCompile(`^(?:\[pid\s+)?(\d+)\]?\s+`)
	callStart = regexp.MustCompile(`^([a-z_][a-z0-9_]*)\(`)
	resumed   = regexp.MustCompile(`^<\.\.\. ([a-z_][a-z0-9_]*) resumed>\s?`)
)

const unfinished = " <unfinished ...>"

// parseStrace reads `strace -f` output (one file, pid column optional).
// Lines that are not system calls (signals, exits, strace's own messages)
// are skipped. Events are returned in the order they started.
func parseStrace(r io.Reader) ([]*syscallEvent, error) {
	var events []*syscallEvent
	pending := map[int]*syscallEvent{} // unfinished call by thread
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 0; sc.Scan(); line++ {
		text := sc.Text()
		tid := 0
		if m := pidPrefix.FindStringSubmatch(text); m != nil {
			tid, _ = strconv.Atoi(m[1])
			text = text[len(m[0]):]
		}
		if m := resumed.FindStringSubmatch(text); m != nil {
			e := pending[tid]
			if e == nil || e.name != m[1] {
				return nil, fmt.Errorf("strace line %d: %q resumes a call that thread %d did not start", line+1, abbreviate(text), tid)
			}
			delete(pending, tid)
			finish(e, e.args+text[len(m[0]):], line)
			continue
		}
		m := callStart.FindStringSubmatch(text)
		if m == nil {
			continue // "--- SIGURG ... ---", "+++ exited with 0 +++", ...
		}
		// A thread starting a new call while one is pending never returned
		// from that one (it cannot, short of being killed): it stays
		// unreturned.
		delete(pending, tid)
		e := &syscallEvent{tid: tid, name: m[1], entry: line, exit: -1}
		events = append(events, e)
		rest := text[len(m[0]):]
		if args, ok := strings.CutSuffix(rest, unfinished); ok {
			e.args = args
			pending[tid] = e
			continue
		}
		finish(e, rest, line)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading strace output: %w", err)
	}
	return events, nil
}

// resultSep is the end of the arguments and the start of the result:
// strace pads ")" with spaces to a column before "= ".
var resultSep = regexp.MustCompile(`\) *= `)

// finish splits "args) = ret" into the event's arguments and result. The
// last separator counts: written data, before it, is printed escaped but may
// contain ") = ".
func finish(e *syscallEvent, argsAndRet string, line int) {
	seps := resultSep.FindAllStringIndex(argsAndRet, -1)
	if len(seps) == 0 {
		e.args = argsAndRet
		return // no result printed: the call did not return
	}
	last := seps[len(seps)-1]
	e.args = argsAndRet[:last[0]]
	e.ret = argsAndRet[last[1]:]
	e.exit = line
}

// syncCheck is what the durability check found in one trace.
type syncCheck struct {
	acks       int      // acknowledgements checked
	violations []string // one line per acknowledgement made too early

	// Measured from the "go" line on (the concurrent phase): successful
	// fdatasync and fsync calls on the database file, and acknowledgements.
	phaseAcks, phaseFdatasyncs, phaseFsyncs int
}

// ackMarker matches the marker the helper writes into each record's state
// and prints, after the write returned, as "ack <marker>".
var ackMarker = regexp.MustCompile(`durable-g\d{3}-v\d{6}\.`)

// syncMarker builds a marker for game g, version v.
func syncMarker(g int, v int64) string { return fmt.Sprintf("durable-g%03d-v%06d.", g, v) }

// checkAcksSynced checks every acknowledgement in the trace: the helper
// writes "ack <marker>" to stdout (fd 1) after Create or Update returned.
// For each, in trace order:
//
//	P: the first write to the database file (fd dbFD) whose data holds the
//	   marker, which must have returned successfully before the ack started;
//	M: the first write of a meta page (offset below 2*pageSize) that started
//	   after P returned: bbolt's commit record for P's transaction, which
//	   must have returned before the ack started;
//	F: the first fsync or fdatasync of the database file that started after
//	   M returned: it must have returned 0 before the ack started.
//
// A write to the database file whose offset cannot be read (write, writev)
// is an error: the check would not know whether it was a commit record.
func checkAcksSynced(events []*syscallEvent, dbFD, pageSize int) (syncCheck, error) {
	var res syncCheck
	var metaWrites, syncs []*syscallEvent
	firstWrite := map[string]*syscallEvent{}
	goLine := -1
	var acks []*syscallEvent
	ackMarkers := map[*syscallEvent]string{}
	seenAck := map[string]bool{}
	for _, e := range events {
		fd := e.fd()
		switch {
		case fd == dbFD && isWrite(e.name):
			off, ok := e.offset()
			if !ok {
				return res, fmt.Errorf("trace line %d: %s to the database file without an offset the check can read: %s", e.entry+1, e.name, abbreviate(e.args))
			}
			if !e.succeeded() {
				continue // failed or never returned: wrote nothing durable
			}
			if off < 2*int64(pageSize) {
				metaWrites = append(metaWrites, e)
			}
			for _, m := range ackMarker.FindAllString(e.args, -1) {
				if firstWrite[m] == nil {
					firstWrite[m] = e
				}
			}
		case fd == dbFD && (e.name == "fsync" || e.name == "fdatasync"):
			syncs = append(syncs, e)
		case fd == 1 && e.name == "write":
			switch {
			case strings.Contains(e.args, `"go\n"`) && goLine < 0:
				goLine = e.entry
			case strings.Contains(e.args, `"ack `):
				m := ackMarker.FindString(e.args)
				if m == "" {
					return res, fmt.Errorf("trace line %d: acknowledgement without a marker: %s", e.entry+1, abbreviate(e.args))
				}
				if seenAck[m] {
					continue // the same write again after EINTR: the first counts
				}
				seenAck[m] = true
				acks = append(acks, e)
				ackMarkers[e] = m
			}
		}
	}
	// firstAfter is the first event in list that started after line.
	firstAfter := func(list []*syscallEvent, line int) *syscallEvent {
		for _, e := range list {
			if e.entry > line {
				return e
			}
		}
		return nil
	}
	for _, a := range acks {
		m := ackMarkers[a]
		res.acks++
		if goLine >= 0 && a.entry > goLine {
			res.phaseAcks++
		}
		p := firstWrite[m]
		if p == nil || p.exit > a.entry {
			res.violations = append(res.violations, fmt.Sprintf("%s acknowledged (line %d) before any write of it to the database file returned", m, a.entry+1))
			continue
		}
		meta := firstAfter(metaWrites, p.exit)
		if meta == nil || meta.exit > a.entry {
			res.violations = append(res.violations, fmt.Sprintf("%s acknowledged (line %d) before the commit record (meta page) following its data write (line %d) was written", m, a.entry+1, p.entry+1))
			continue
		}
		sync := firstAfter(syncs, meta.exit)
		switch {
		case sync == nil || sync.entry > a.entry:
			res.violations = append(res.violations, fmt.Sprintf("%s acknowledged (line %d) with no fsync/fdatasync of the database file between its commit record (line %d) and the acknowledgement", m, a.entry+1, meta.exit+1))
		case sync.exit < 0 || sync.exit > a.entry:
			res.violations = append(res.violations, fmt.Sprintf("%s acknowledged (line %d) before the %s that followed its commit record (started line %d) returned", m, a.entry+1, sync.name, sync.entry+1))
		case !sync.succeeded():
			res.violations = append(res.violations, fmt.Sprintf("%s acknowledged (line %d) although the %s after its commit record failed: %s", m, a.entry+1, sync.name, sync.ret))
		}
	}
	if goLine >= 0 {
		for _, s := range syncs {
			if s.entry > goLine && s.succeeded() {
				if s.name == "fsync" {
					res.phaseFsyncs++
				} else {
					res.phaseFdatasyncs++
				}
			}
		}
	}
	return res, nil
}

func isWrite(name string) bool {
	switch name {
	case "write", "writev", "pwrite64", "pwritev", "pwritev2":
		return true
	}
	return false
}

// abbreviate shortens a trace excerpt for an error message.
func abbreviate(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// TestCheckAcksSynced runs the trace check on hand-written traces of the
// orders that are and are not durable, without strace.
func TestCheckAcksSynced(t *testing.T) {
	const (
		data  = `1000 pwrite64(5, "\2\0\0\0data durable-g000-v000001.\0\0", 4096, 12288) = 4096`
		other = `1000 pwrite64(5, "\2\0\0\0data durable-g001-v000001.\0\0", 4096, 16384) = 4096`
		meta  = `1000 pwrite64(5, "\0\0\0\0meta\355\332\f\355\0\0", 4096, 4096) = 4096`
		sync  = `1000 fdatasync(5)                      = 0`
		ack   = `1001 write(1, "ack durable-g000-v000001.\n", 26) = 26`
	)
	tests := []struct {
		name       string
		trace      []string
		violations int
	}{
		{"data, sync, meta, sync, ack", []string{data, sync, meta, sync, ack}, 0},
		{"the final sync is an fsync", []string{data, sync, meta, `1000 fsync(5) = 0`, ack}, 0},
		{"ack while the final sync was in flight", []string{data, sync, meta,
			`1000 fdatasync(5 <unfinished ...>`, ack, `1000 <... fdatasync resumed>) = 0`}, 1},
		{"ack started before the final sync returned", []string{data, sync, meta,
			`1000 fdatasync(5 <unfinished ...>`, `1001 write(1, "ack durable-g000-v000001.\n", 26 <unfinished ...>`,
			`1000 <... fdatasync resumed>) = 0`, `1001 <... write resumed>) = 26`}, 1},
		{"sync returned before the ack started, calls interleaved", []string{data, sync,
			`1000 pwrite64(5, "meta", 4096, 0 <unfinished ...>`, `1002 write(1, "go\n", 3) = 3`,
			`1000 <... pwrite64 resumed>) = 4096`, `1000 fdatasync(5 <unfinished ...>`, `1002 write(1, "x\n", 2) = 2`,
			`1000 <... fdatasync resumed>) = 0`, ack}, 0},
		{"no sync at all (NoSync)", []string{data, meta, ack}, 1},
		{"data synced, commit record not", []string{data, sync, meta, ack}, 1},
		{"sync started before the commit record returned", []string{data, sync,
			`1000 pwrite64(5, "meta", 4096, 0 <unfinished ...>`, `1003 fdatasync(5) = 0`, `1000 <... pwrite64 resumed>) = 4096`, ack}, 1},
		{"sync of another file", []string{data, sync, meta, `1000 fdatasync(6) = 0`, ack}, 1},
		{"sync failed", []string{data, sync, meta, `1000 fdatasync(5) = -1 EIO (Input/output error)`, sync, ack}, 1},
		{"ack before the commit record", []string{data, sync, ack, meta, sync}, 1},
		{"ack before the data", []string{ack, data, sync, meta, sync}, 1},
		{"data never written", []string{other, sync, meta, sync, ack}, 1},
		{"data write failed", []string{`1000 pwrite64(5, "durable-g000-v000001.", 4096, 12288) = -1 ENOSPC (No space left on device)`, sync, meta, sync, ack}, 1},
		{"a later commit's sync does not count", []string{data, sync, meta, ack, sync}, 1},
		{"the ack retried after EINTR counts from its first try", []string{data, sync, meta,
			`1001 write(1, "ack durable-g000-v000001.\n", 26) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)`, sync, ack}, 1},
		{"no pid column", []string{data[5:], sync[5:], meta[5:], sync[5:], ack[5:]}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, err := parseStrace(strings.NewReader(strings.Join(tt.trace, "\n") + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			res, err := checkAcksSynced(events, 5, 4096)
			if err != nil {
				t.Fatal(err)
			}
			if res.acks != 1 || len(res.violations) != tt.violations {
				t.Errorf("checked %d acks, violations %q; want 1 ack and %d violations", res.acks, res.violations, tt.violations)
			}
		})
	}
}

// TestCheckAcksSyncedRejectsUnreadableWrites: a write to the database file
// whose offset the check cannot read might be a commit record, so the check
// gives up instead of guessing.
func TestCheckAcksSyncedRejectsUnreadableWrites(t *testing.T) {
	events, err := parseStrace(strings.NewReader(`1000 write(5, "durable-g000-v000001.", 21) = 21` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkAcksSynced(events, 5, 4096); err == nil {
		t.Fatal("checkAcksSynced accepted a write(2) to the database file")
	}
}

// TestParseStraceRejectsOrphanResume: a resumed call nobody started means
// the trace is not what the reader expects.
func TestParseStraceRejectsOrphanResume(t *testing.T) {
	if _, err := parseStrace(strings.NewReader("1000 <... fdatasync resumed>) = 0\n")); err == nil {
		t.Fatal("parseStrace accepted a resumed call that never started")
	}
}
