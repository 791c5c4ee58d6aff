package boltstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
	"chessapi/shared/store/storetest"
)

func openStore(t testing.TB, path string) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatalf("Open(%q) = %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) service.Store {
		return openStore(t, filepath.Join(t.TempDir(), "games.db"))
	})
}

func TestIndexConformance(t *testing.T) {
	storetest.RunIndex(t, func(t *testing.T) (service.Store, service.GameLister) {
		s := openStore(t, filepath.Join(t.TempDir(), "games.db"))
		return s, s
	})
}

func TestPlayersConformance(t *testing.T) {
	storetest.RunPlayers(t, func(t *testing.T) service.Players {
		return openStore(t, filepath.Join(t.TempDir(), "games.db"))
	})
}

func TestOpenCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "games.db")
	openStore(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Open(%q) did not create the file: %v", path, err)
	}
}

func TestOpenTwiceFailsClearly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "games.db")
	openStore(t, path)
	start := time.Now()
	_, err := boltstore.Open(path)
	if err == nil || !strings.Contains(err.Error(), "in use by another process") {
		t.Fatalf("second Open(%q) = %v; want an 'in use' error", path, err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Errorf("second Open waited %v; want it to give up within seconds", waited)
	}
}

func TestOpenEmptyPath(t *testing.T) {
	if _, err := boltstore.Open(""); err == nil {
		t.Fatal(`Open("") = nil error; want an error`)
	}
}

func TestReopenKeepsRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "games.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := service.GameRecord{GameID: "keep", Version: 1, StateVersion: 1, State: []byte("s"), Deadline: time.UnixMilli(1_800_000_000_000).UTC()}
	if err := s.Create(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, path)
	got, err := s.Get(context.Background(), "keep")
	if err != nil || got.Version != 1 || string(got.State) != "s" || !got.Deadline.Equal(rec.Deadline) {
		t.Fatalf("Get after reopen = %+v, %v; want %+v", got, err, rec)
	}
}

func TestPendingTimeouts(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "games.db"))
	ctx := context.Background()
	base := time.UnixMilli(1_800_000_000_000).UTC()
	records := []service.GameRecord{
		{GameID: "a-live", Version: 3, StateVersion: 1, Deadline: base},
		{GameID: "b-no-deadline", Version: 1, StateVersion: 1},
		{GameID: "c-finished", Version: 9, StateVersion: 1, Deadline: base, ExpiresAt: base.Add(time.Hour)},
		{GameID: "d-live", Version: 1, StateVersion: 1, Deadline: base.Add(1500 * time.Microsecond)}, // rounds up to +2 ms
	}
	for _, rec := range records {
		if err := s.Create(ctx, rec); err != nil {
			t.Fatalf("Create(%q) = %v", rec.GameID, err)
		}
	}
	got, err := s.PendingTimeouts(ctx)
	if err != nil {
		t.Fatalf("PendingTimeouts() error = %v", err)
	}
	want := []service.TimeoutTask{
		{GameID: "a-live", Version: 3, Deadline: base},
		{GameID: "d-live", Version: 1, Deadline: base.Add(2 * time.Millisecond)},
	}
	if len(got) != len(want) {
		t.Fatalf("PendingTimeouts() = %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i].GameID != want[i].GameID || got[i].Version != want[i].Version || !got[i].Deadline.Equal(want[i].Deadline) {
			t.Errorf("PendingTimeouts()[%d] = %+v; want %+v", i, got[i], want[i])
		}
	}
}

func TestDeleteExpired(t *testing.T) {
	s := openStore(t, filepath.Join(t.TempDir(), "games.db"))
	ctx := context.Background()
	now := time.Unix(1_900_000_000, 0)
	ids := map[string]time.Time{
		"expired-long-ago": now.Add(-time.Hour),
		"expired-now":      now,
		"expires-later":    now.Add(time.Second),
		"live":             {},
	}
	// Adjacent expired keys catch a delete loop that skips the item after
	// each deletion.
	for i := range 5 {
		ids[fmt.Sprintf("expired-%d", i)] = now.Add(-time.Minute)
	}
	for id, exp := range ids {
		if err := s.Create(ctx, service.GameRecord{GameID: id, Version: 1, StateVersion: 1, ExpiresAt: exp}); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.DeleteExpired(ctx, now)
	if err != nil || n != 7 {
		t.Fatalf("DeleteExpired(%v) = %d, %v; want 7, nil", now, n, err)
	}
	for id, exp := range ids {
		_, err := s.Get(ctx, id)
		gone := errors.Is(err, service.ErrNotFound)
		wantGone := !exp.IsZero() && !exp.After(now)
		if gone != wantGone {
			t.Errorf("after DeleteExpired, Get(%q) = %v; want gone = %v", id, err, wantGone)
		}
	}
}

// TestAcknowledgedWritesSurviveSIGKILL runs a writer in a child process
// (this test binary, re-executed), kills it with SIGKILL in the middle of a
// stream of updates, and checks every update it acknowledged is on disk.
func TestAcknowledgedWritesSurviveSIGKILL(t *testing.T) {
	if os.Getenv("BOLTSTORE_CRASH_WRITER") != "" {
		t.Skip("this is the writer process")
	}
	path := filepath.Join(t.TempDir(), "games.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashWriterProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BOLTSTORE_CRASH_WRITER="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}

	// Each line "ack <game> <version>" is printed after Update returned.
	const killAfter = 300
	acked := map[string]int64{}
	lines := bufio.NewScanner(stdout)
	count := 0
	for lines.Scan() {
		var game string
		var version int64
		if _, err := fmt.Sscanf(lines.Text(), "ack %s %d", &game, &version); err != nil {
			continue
		}
		acked[game] = version
		count++
		if count == killAfter {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	_ = cmd.Wait()
	if count < killAfter {
		t.Fatalf("writer stopped after %d acknowledgements; want %d before the kill", count, killAfter)
	}

	s := openStore(t, path)
	for game, version := range acked {
		rec, err := s.Get(context.Background(), game)
		if err != nil {
			t.Fatalf("Get(%q) after SIGKILL = %v; want version ≥ %d", game, err, version)
		}
		// The writer may have committed one more write whose
		// acknowledgement never reached us; never fewer.
		if rec.Version < version {
			t.Errorf("Get(%q).Version after SIGKILL = %d; want ≥ %d (acknowledged write lost)", game, rec.Version, version)
		}
		if want := strconv.FormatInt(rec.Version, 10); string(rec.State) != want {
			t.Errorf("Get(%q).State = %q; want %q (state and version written together)", game, rec.State, want)
		}
	}
}

// TestCrashWriterProcess is the child of TestAcknowledgedWritesSurviveSIGKILL:
// it updates a few games in parallel forever, acknowledging each write on
// stdout, until it is killed.
func TestCrashWriterProcess(t *testing.T) {
	path := os.Getenv("BOLTSTORE_CRASH_WRITER")
	if path == "" {
		t.Skip("only runs as the child of TestAcknowledgedWritesSurviveSIGKILL")
	}
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var out sync.Mutex
	var wg sync.WaitGroup
	for g := range 4 {
		id := "crash-" + strconv.Itoa(g)
		if err := s.Create(ctx, service.GameRecord{GameID: id, Version: 1, StateVersion: 1, State: []byte("1")}); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for v := int64(1); ; v++ {
				next := service.GameRecord{GameID: id, Version: v + 1, StateVersion: 1, State: []byte(strconv.FormatInt(v+1, 10))}
				if err := s.Update(ctx, next, v); err != nil {
					fmt.Fprintln(os.Stderr, "writer:", err)
					return
				}
				out.Lock()
				fmt.Printf("ack %s %d\n", id, v+1)
				out.Unlock()
			}
		})
	}
	wg.Wait()
}

// TestCloseWithWritersInFlight closes the store while writers are busy:
// every write either succeeded (and is on disk after reopening) or failed
// with an error; none hangs or panics. Writes after Close fail.
func TestCloseWithWritersInFlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "games.db")
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := map[string]bool{}
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := s.Create(ctx, service.GameRecord{GameID: id, Version: 1, StateVersion: 1}); err != nil {
					return
				}
				mu.Lock()
				created[id] = true
				mu.Unlock()
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Errorf("second Close() = %v; want nil", err)
	}
	if err := s.Create(ctx, service.GameRecord{GameID: "late", Version: 1, StateVersion: 1}); err == nil {
		t.Error("Create after Close = nil; want an error")
	}

	s = openStore(t, path)
	if len(created) == 0 {
		t.Fatal("no write succeeded before Close")
	}
	for id := range created {
		if _, err := s.Get(ctx, id); err != nil {
			t.Fatalf("acknowledged game %q missing after Close and reopen: %v", id, err)
		}
	}
}
