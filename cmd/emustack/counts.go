package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"

	"chessapi/infra/rie"
)

// Counts is what GET /_counts answers and what emustack prints at exit:
// everything the emulated stack did since the start or the last reset.
type Counts struct {
	Since   time.Time `json:"since"`
	Seconds float64   `json:"seconds"`
	// AWSCalls are the requests the functions made to AWS APIs, by
	// operation: DynamoDB, EventBridge Scheduler and SQS through the
	// counting proxy in front of moto (infra/emulator.CountCalls, the same
	// names as the as-deployed tests log; "sqs:SendMessage:DeadlineQueue"
	// is the part of "AmazonSQS:SendMessage" that armed timers), Lambda's Invoke
	// API ("lambda:Invoke") and the WebSocket API's @connections
	// ("execute-api:PostToConnection").
	AWSCalls map[string]int64 `json:"awsCalls"`
	// Platform is what the AWS services themselves did, the billed units
	// that are not API calls of the functions: HTTP API requests (by route
	// and in all), WebSocket connects, messages in and out and connection
	// time, schedules that fired, the deadline queue's event source
	// mapping (its receives and deletes, batches and records), change-stream
	// records and batches, asynchronous retries and events sent to
	// on-failure destinations.
	Platform map[string]int64 `json:"platform"`
	// Functions are the invocations by function (logical ID).
	Functions map[string]FunctionCounts `json:"functions"`
}

// FunctionCounts are one function's invocations.
type FunctionCounts struct {
	MemoryMB    int   `json:"memoryMB"`
	Invocations int64 `json:"invocations"`
	// Errors are function errors and invocations that never completed.
	Errors     int64 `json:"errors"`
	ColdStarts int64 `json:"coldStarts"`
	// BilledMs is the sum of the invocations' durations (the emulator's
	// REPORT, init included on a cold start) rounded up to the
	// millisecond, as Lambda bills them. Measured on this machine, under
	// the emulator: an upper bound for CPU-bound work on Lambda's arm64,
	// exact for time spent waiting (the long poll).
	BilledMs int64 `json:"billedMs"`
	// GBSeconds is BilledMs × memory, Lambda's unit of compute price.
	GBSeconds float64 `json:"gbSeconds"`
	// MaxConcurrent is the most invocations in flight at once.
	MaxConcurrent int `json:"maxConcurrent"`
	// Instances is how many instances (processes) the function has run.
	Instances int `json:"instances"`
	// LogBytes is what the function printed (its JSON log lines and EMF
	// metric lines), which CloudWatch Logs ingests; Lambda adds its own
	// START, END and REPORT lines (about 300 bytes an invocation), not
	// counted here.
	LogBytes int64 `json:"logBytes"`
}

// functionStats accumulates one function's FunctionCounts.
type functionStats struct {
	memoryMB int

	mu                     sync.Mutex
	invocations, errors    int64
	coldStarts, billedMs   int64
	logBytes               int64
	busy, maxBusy, started int
}

func (s *functionStats) begin() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy++
	s.maxBusy = max(s.maxBusy, s.busy)
}

func (s *functionStats) end(res rie.Result, err error) {
	d := res.Duration
	if d == 0 {
		d = res.RoundTrip // no REPORT line (the invoke failed)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy--
	s.invocations++
	if err != nil || res.FunctionError != nil {
		s.errors++
	}
	if res.InitDuration > 0 {
		s.coldStarts++
	}
	s.billedMs += int64((d + time.Millisecond - 1) / time.Millisecond)
	for _, l := range res.Logs {
		s.logBytes += int64(len(l)) + 1
	}
}

func (s *functionStats) instance() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started++
}

// take returns the counts and, with reset, starts them again (the
// instances keep running: their number is not reset).
func (s *functionStats) take(reset bool) FunctionCounts {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := FunctionCounts{
		MemoryMB: s.memoryMB, Invocations: s.invocations, Errors: s.errors, ColdStarts: s.coldStarts,
		BilledMs: s.billedMs, MaxConcurrent: s.maxBusy, Instances: s.started, LogBytes: s.logBytes,
		GBSeconds: float64(s.billedMs) / 1000 * float64(s.memoryMB) / 1024,
	}
	if reset {
		s.invocations, s.errors, s.coldStarts, s.billedMs, s.logBytes = 0, 0, 0, 0, 0
		s.maxBusy = s.busy
	}
	return c
}

// counters gathers every count of the stack.
type counters struct {
	// takeProxy drains the counting proxy in front of moto
	// (emulator.CallCounter.Take).
	takeProxy func() map[string]int

	mu        sync.Mutex
	since     time.Time
	aws       map[string]int64
	platform  map[string]int64
	functions map[string]*functionStats
}

func newCounters(takeProxy func() map[string]int) *counters {
	return &counters{takeProxy: takeProxy, since: time.Now(), aws: map[string]int64{}, platform: map[string]int64{}, functions: map[string]*functionStats{}}
}

func (c *counters) function(logicalID string, memoryMB int) *functionStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := &functionStats{memoryMB: memoryMB}
	c.functions[logicalID] = s
	return s
}

// call counts an AWS API call the proxy does not see.
func (c *counters) call(op string) { c.add(c.aws, op, 1) }

// event counts n units of something a service did.
func (c *counters) event(what string, n int64) { c.add(c.platform, what, n) }

// maxEvent keeps the largest value seen of what.
func (c *counters) maxEvent(what string, v int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.platform[what] = max(c.platform[what], v)
}

func (c *counters) add(m map[string]int64, key string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m[key] += n
}

// take returns the counts since the last reset and, with reset, starts
// them again.
func (c *counters) take(reset bool) Counts {
	proxied := c.takeProxy()
	c.mu.Lock()
	for op, n := range proxied {
		c.aws[op] += int64(n)
	}
	now := time.Now()
	out := Counts{
		Since: c.since, Seconds: now.Sub(c.since).Seconds(),
		AWSCalls: maps.Clone(c.aws), Platform: maps.Clone(c.platform), Functions: map[string]FunctionCounts{},
	}
	fns := maps.Clone(c.functions)
	if reset {
		c.since = now
		clear(c.aws)
		clear(c.platform)
	}
	c.mu.Unlock()
	for id, s := range fns {
		out.Functions[id] = s.take(reset)
	}
	return out
}

// write prints the counts as aligned text, one figure a line.
func (c Counts) write(w io.Writer) {
	fmt.Fprintf(w, "counts over %.1f s since %s\n", c.Seconds, c.Since.Format(time.RFC3339))
	section := func(title string, m map[string]int64) {
		fmt.Fprintf(w, "%s:\n", title)
		if len(m) == 0 {
			fmt.Fprintln(w, "  (none)")
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			fmt.Fprintf(w, "  %-48s %d\n", k, m[k])
		}
	}
	section("AWS calls by the functions", c.AWSCalls)
	section("platform", c.Platform)
	fmt.Fprintln(w, "functions (invocations, errors, cold starts, billed ms, GB-s, max concurrent, instances, log bytes):")
	for _, id := range slices.Sorted(maps.Keys(c.Functions)) {
		f := c.Functions[id]
		if f.Invocations == 0 && f.Instances == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-16s %4d MB  %6d inv  %3d err  %3d cold  %9d ms  %9.3f GB-s  %3d conc  %3d inst  %9d B log\n",
			id, f.MemoryMB, f.Invocations, f.Errors, f.ColdStarts, f.BilledMs, f.GBSeconds, f.MaxConcurrent, f.Instances, f.LogBytes)
	}
}
