package boltstore_test

// Killing the process (TestAcknowledgedWritesSurviveSIGKILL) cannot show
// that writes are synced: the kernel's page cache outlives the process, so
// unsynced writes survive it too. These tests check the order of the system
// calls instead: a child process writes through the store under strace and
// prints an acknowledgement after each Create or Update returned, and the
// trace must show, before every acknowledgement, the write's data, its
// commit record and then a successful fsync/fdatasync of the database file
// (checkAcksSynced). With bbolt's NoSync the check fails
// (TestDurabilityCheckCatchesNoSync).

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// The helper process's settings.
const (
	envSyncHelper  = "BOLTSTORE_SYNC_HELPER"  // database path; set only in the child
	envSyncWriters = "BOLTSTORE_SYNC_WRITERS" // concurrent writers, one game each
	envSyncUpdates = "BOLTSTORE_SYNC_UPDATES" // updates per writer after its Create
	envSyncDefect  = "BOLTSTORE_SYNC_DEFECT"  // "nosync": run with bbolt's NoSync
)

// envRequireStrace makes a missing strace a failure instead of a skip; CI
// sets it so the durability test cannot silently stop running.
const envRequireStrace = "CI_REQUIRE_STRACE"

// The system calls traced: every way to write the database file (a write
// without an offset fails the check rather than going unseen), the syncs,
// and the helper's acknowledgements on stdout.
const tracedCalls = "trace=write,writev,pwrite64,pwritev,pwritev2,fsync,fdatasync"

// requireStrace returns strace's path. Without strace the test is skipped,
// unless CI_REQUIRE_STRACE is set.
func requireStrace(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("strace")
	if err == nil {
		return path
	}
	if os.Getenv(envRequireStrace) != "" {
		t.Fatalf("strace is not installed (%v) and %s is set: install it (Debian: apt-get install strace)", err, envRequireStrace)
	}
	t.Skipf("strace is not installed, so the fsync-ordering test cannot run (Debian: apt-get install strace; set %s=1 to make this a failure)", envRequireStrace)
	return ""
}

// TestAcknowledgedWritesAreSynced checks, with 1, 10 and 100 concurrent
// writers, that no write is acknowledged before it was fsynced. It also
// logs how many fdatasync calls each acknowledged update cost: group commit
// shares them (run with -v to see it).
func TestAcknowledgedWritesAreSynced(t *testing.T) {
	strace := requireStrace(t)
	for _, c := range []struct{ writers, updates int }{{1, 50}, {10, 20}, {100, 5}} {
		t.Run(fmt.Sprintf("writers=%d", c.writers), func(t *testing.T) {
			res := traceWriter(t, strace, c.writers, c.updates, "")
			if n := len(res.violations); n > 0 {
				t.Errorf("%d of %d acknowledged writes were not synced first:\n%s", n, res.acks, firstLines(res.violations, 10))
			}
			if res.phaseAcks > 0 {
				t.Logf("%d writers: %d acknowledged updates, %d fdatasync + %d fsync on the database file: %.3f fdatasync per acknowledged update",
					c.writers, res.phaseAcks, res.phaseFdatasyncs, res.phaseFsyncs, float64(res.phaseFdatasyncs)/float64(res.phaseAcks))
			}
		})
	}
}

// TestDurabilityCheckCatchesNoSync runs the same check on a store with
// bbolt's NoSync, which acknowledges writes that are only in the page cache
// (and passes the SIGKILL test): the check must find them.
func TestDurabilityCheckCatchesNoSync(t *testing.T) {
	strace := requireStrace(t)
	res := traceWriter(t, strace, 4, 10, "nosync")
	if len(res.violations) == 0 {
		t.Fatalf("the check accepted all %d writes of a store running with NoSync: it cannot detect unsynced acknowledgements", res.acks)
	}
	t.Logf("with NoSync, %d of %d acknowledged writes flagged, e.g.\n%s", len(res.violations), res.acks, firstLines(res.violations, 3))
}

// traceWriter runs TestSyncHelperProcess under strace, checks that the
// store has every acknowledged write afterwards, and checks the trace.
func traceWriter(t *testing.T, strace string, writers, updates int, defect string) syncCheck {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "games.db")
	tracePath := filepath.Join(dir, "strace.out")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, strace,
		"-f",  // every thread
		"-qq", // no attach/exit notices
		"-e", tracedCalls,
		"-e", "signal=none", // no signal lines (Go preempts with SIGURG)
		"-s", "65536", // whole buffers: markers are found in page images
		"-o", tracePath,
		"--", os.Args[0], "-test.run=^TestSyncHelperProcess$", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(),
		envSyncHelper+"="+path,
		envSyncWriters+"="+strconv.Itoa(writers),
		envSyncUpdates+"="+strconv.Itoa(updates),
		envSyncDefect+"="+defect)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nstderr:\n%s\nstdout:\n%s", cmd, err, stderr.String(), stdout.String())
	}

	// The helper's own account: the database's descriptor and its acks.
	dbFD := -1
	printed := map[string]bool{}
	lines := bufio.NewScanner(&stdout)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "dbfd "); ok {
			dbFD, _ = strconv.Atoi(v)
		}
		if m, ok := strings.CutPrefix(lines.Text(), "ack "); ok {
			printed[m] = true
		}
	}
	if dbFD < 0 {
		t.Fatalf("the helper did not print its database descriptor; stdout:\n%s", stdout.String())
	}
	if want := writers * (updates + 1); len(printed) != want {
		t.Fatalf("the helper acknowledged %d writes; want %d", len(printed), want)
	}

	// Every acknowledged write is in the file (it is, page cache or not:
	// this checks the workload, not durability).
	s := openStore(t, path)
	for g := range writers {
		rec, err := s.Get(context.Background(), syncGameID(g))
		last := int64(updates) + 1
		if err != nil || rec.Version != last || string(rec.State) != syncMarker(g, last) {
			t.Fatalf("Get(%q) = version %d state %q, %v; want version %d", syncGameID(g), rec.Version, rec.State, err, last)
		}
	}

	trace, err := os.Open(tracePath)
	if err != nil {
		t.Fatal(err)
	}
	defer trace.Close()
	events, err := parseStrace(trace)
	if err != nil {
		t.Fatal(err)
	}
	res, err := checkAcksSynced(events, dbFD, boltstore.PageSize(s))
	if err != nil {
		t.Fatal(err)
	}
	// A trace the reader misunderstands must not pass for a clean one.
	if res.acks != len(printed) {
		t.Fatalf("found %d acknowledgements in the strace output, the helper printed %d: the trace reader is out of step with strace", res.acks, len(printed))
	}
	return res
}

func syncGameID(g int) string { return fmt.Sprintf("sync-%03d", g) }

// TestSyncHelperProcess is the traced child of traceWriter: each writer
// creates its game, then, once all games exist, prints "go" and updates its
// game. Every record's state is a unique marker, printed as "ack <marker>"
// after the Create or Update returned.
func TestSyncHelperProcess(t *testing.T) {
	path := os.Getenv(envSyncHelper)
	if path == "" {
		t.Skip("only runs as the traced child of the durability tests")
	}
	writers, err1 := strconv.Atoi(os.Getenv(envSyncWriters))
	updates, err2 := strconv.Atoi(os.Getenv(envSyncUpdates))
	if err1 != nil || err2 != nil {
		t.Fatalf("bad %s or %s", envSyncWriters, envSyncUpdates)
	}
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	switch defect := os.Getenv(envSyncDefect); defect {
	case "":
	case "nosync":
		boltstore.SetNoSync(s, true)
	default:
		t.Fatalf("unknown %s=%q", envSyncDefect, defect)
	}
	fd, err := descriptorOf(path)
	if err != nil {
		t.Fatal(err)
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	say("dbfd %d", fd)

	ctx := context.Background()
	start := make(chan struct{})
	var created, done sync.WaitGroup
	errs := make(chan error, writers)
	for g := range writers {
		created.Add(1)
		done.Go(func() {
			rec := service.GameRecord{GameID: syncGameID(g), Version: 1, StateVersion: 1, State: []byte(syncMarker(g, 1))}
			err := s.Create(ctx, rec)
			if err == nil {
				say("ack %s", rec.State) // before "go": not part of the measured phase
			} else {
				errs <- err
			}
			created.Done()
			if err != nil {
				return
			}
			<-start
			for range updates {
				rec.Version++
				rec.State = []byte(syncMarker(g, rec.Version))
				if err := s.Update(ctx, rec, rec.Version-1); err != nil {
					errs <- err
					return
				}
				say("ack %s", rec.State)
			}
		})
	}
	created.Wait()
	say("go")
	close(start)
	done.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// descriptorOf finds this process's file descriptor for path.
func descriptorOf(path string) (int, error) {
	want, err := os.Stat(path)
	if err != nil {
		return -1, err
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1, err
	}
	for _, e := range entries {
		fi, err := os.Stat(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && os.SameFile(fi, want) {
			return strconv.Atoi(e.Name())
		}
	}
	return -1, fmt.Errorf("no descriptor of %s in /proc/self/fd", path)
}

func firstLines(lines []string, n int) string {
	if len(lines) > n {
		return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… and %d more", len(lines)-n)
	}
	return strings.Join(lines, "\n")
}
