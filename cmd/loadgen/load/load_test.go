package load

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseModes(t *testing.T) {
	for in, want := range map[string][]Mode{
		"fetch":         {ModeFetch},
		"stream":        {ModeStream},
		"both":          {ModePoll, ModeStream},
		"fetch,stream":  {ModeFetch, ModeStream},
		"poll, stream ": {ModePoll, ModeStream},
	} {
		got, err := ParseModes(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseModes(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "idle", "push", "poll,poll", "both,fetch"} {
		if got, err := ParseModes(in); err == nil || !strings.HasPrefix(err.Error(), "-mode:") {
			t.Errorf("ParseModes(%q) = %v, %v; want an error naming -mode", in, got, err)
		}
	}
}

func TestConfigErrorsNameTheFlag(t *testing.T) {
	ok := Config{BaseURL: "http://127.0.0.1:1", Modes: []Mode{ModeStream}, Games: 1, Duration: time.Second}
	for flag, mutate := range map[string]func(*Config){
		"-url":      func(c *Config) { c.BaseURL = "127.0.0.1:3000" },
		"-mode":     func(c *Config) { c.Modes = nil },
		"-games":    func(c *Config) { c.Games = 0 },
		"-duration": func(c *Config) { c.Duration = -time.Second },
		"-moves":    func(c *Config) { c.MaxMoves = -1 },
		"-think":    func(c *Config) { c.Think = -time.Millisecond },
	} {
		c := ok
		mutate(&c)
		if _, err := Run(context.Background(), c); err == nil || !strings.HasPrefix(err.Error(), flag) {
			t.Errorf("%s: Run error %v; want one naming %s", flag, err, flag)
		}
	}
	c := ok
	c.Duration = 0
	if _, err := Run(context.Background(), c); err == nil || !strings.Contains(err.Error(), "never end") {
		t.Errorf("no duration and no move limit: %v; want a refusal", err)
	}
	// A server that is not there fails the start, not the run.
	if _, err := Run(context.Background(), ok); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("unreachable server: %v", err)
	}
}

func TestSummarizeNearestRank(t *testing.T) {
	var ds []time.Duration
	for i := 100; i >= 1; i-- { // unsorted on purpose
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	s := Summarize(ds)
	want := Summary{N: 100, P50: 50 * time.Millisecond, P95: 95 * time.Millisecond, P99: 99 * time.Millisecond, Max: 100 * time.Millisecond}
	if s != want {
		t.Errorf("Summarize(1..100 ms) = %+v; want %+v", s, want)
	}
	if ds[0] != 100*time.Millisecond {
		t.Errorf("Summarize sorted its argument")
	}
	if s := Summarize([]time.Duration{-2, 7}); s.P50 != -2 || s.P99 != 7 || s.Max != 7 {
		t.Errorf("Summarize(-2, 7) = %+v; a negative delivery (opponent before mover) counts as it is", s)
	}
	if s := Summarize(nil); s != (Summary{}) {
		t.Errorf("Summarize(nil) = %+v", s)
	}
}

func TestTrackerPairsMoverAndOpponentInEitherOrder(t *testing.T) {
	var got []delivery
	tr := newTracker(func(d delivery) { got = append(got, d) })
	t0 := time.Unix(1000, 0)
	ms := time.Millisecond
	// Mover first.
	tr.moved(5, t0, t0.Add(3*ms))
	tr.seen(5, t0.Add(4*ms), t0.UnixMilli()+1)
	// Opponent first: it heard before the mover read its answer.
	tr.seen(6, t0.Add(10*ms), t0.UnixMilli()+9)
	tr.moved(6, t0.Add(8*ms), t0.Add(12*ms))
	// A move never heard of, and a notification of a move nobody made.
	tr.moved(7, t0.Add(20*ms), t0.Add(22*ms))
	tr.seen(9, t0.Add(30*ms), 0)
	if len(got) != 2 {
		t.Fatalf("%d deliveries; want 2", len(got))
	}
	if d := got[0]; d.notified.Sub(d.sent) != 4*ms || d.notified.Sub(d.answered) != ms {
		t.Errorf("mover first: %+v", d)
	}
	if d := got[1]; d.notified.Sub(d.sent) != 2*ms || d.notified.Sub(d.answered) != -2*ms {
		t.Errorf("opponent first: %+v", d)
	}
	if n := tr.undelivered(); n != 1 {
		t.Errorf("undelivered = %d; want 1 (version 7)", n)
	}
}

func TestBudget(t *testing.T) {
	b := &budget{limit: 2}
	if !b.take() || b.exhausted() || !b.take() || !b.exhausted() || b.take() {
		t.Errorf("budget of 2 did not give exactly 2")
	}
	unlimited := &budget{}
	for range 1000 {
		if !unlimited.take() || unlimited.exhausted() {
			t.Fatal("unlimited budget ran out")
		}
	}
}

func TestParseVmRSS(t *testing.T) {
	status := "Name:\tlocal\nVmPeak:\t  123 kB\nVmRSS:\t   45678 kB\nRssAnon:\t 1 kB\n"
	if n, err := ParseVmRSS([]byte(status)); err != nil || n != 45678*1024 {
		t.Errorf("ParseVmRSS = %d, %v; want %d", n, err, 45678*1024)
	}
	for _, bad := range []string{"", "Name:\tkthreadd\n", "VmRSS:\t12 MB\n", "VmRSS:\t-5 kB\n", "VmRSS:\tx kB\n", "VmRSS:\n"} {
		if n, err := ParseVmRSS([]byte(bad)); err == nil {
			t.Errorf("ParseVmRSS(%q) = %d; want an error", bad, n)
		}
	}
}

func FuzzParseVmRSS(f *testing.F) {
	f.Add([]byte("VmRSS:\t   45678 kB\n"))
	f.Add([]byte("Name:\tx\nVmRSS: 1 kB"))
	f.Add([]byte("VmRSS:\t99999999999999999999 kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ParseVmRSS(data)
		if err == nil && (n < 0 || n%1024 != 0) {
			t.Errorf("ParseVmRSS(%q) = %d: not a whole number of kB", data, n)
		}
	})
}

func TestRequestErrorKeysGroupWithoutDetails(t *testing.T) {
	h := &httpAPI{base: "http://127.0.0.1:1", client: newHTTPClient(1)}
	_, err := h.do(context.Background(), "move", "POST", "/v1/games/abc/actions", "", map[string]any{}, nil)
	var re *requestError
	if !errors.As(err, &re) || re.key() != "move refused" {
		t.Errorf("nobody listening: key of %v; want %q", err, "move refused")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	_, err = h.do(ctx, "poll", "GET", "/v1/games/abc?afterVersion=3", "", nil, nil)
	if !errors.As(err, &re) || re.key() != "poll timeout" {
		t.Errorf("deadline passed: key of %v; want %q", err, "poll timeout")
	}
	status := &requestError{what: "move", status: 409, code: "not_your_turn"}
	if status.key() != "move 409 not_your_turn" {
		t.Errorf("status key %q", status.key())
	}
}
