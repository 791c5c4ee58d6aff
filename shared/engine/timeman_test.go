package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// Time compliance is judged by wall time from the call to the return,
// against one pair of tolerances over the time a search was given:
const (
	// complianceP99: the 99th percentile (nearest rank: with fewer than 100
	// searches, every one) answers within movetime + complianceP99.
	complianceP99 = 25 * time.Millisecond
	// complianceMax: no search at all answers later than movetime +
	// complianceMax (the bound for the 1 % of a long run).
	complianceMax = 100 * time.Millisecond
)

// processCPU returns the CPU time this process has used (for failure
// messages only: compliance is judged by wall time).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// requireQuietRun skips a wall-clock test unless it runs on its own:
// `go test ./...` runs packages side by side on the two cores, and a search
// that waits for a core is late without any fault of the engine. make test
// runs these tests alone afterwards (ENGINE_COMPLIANCE=1), as does
// ENGINE_LONG=1.
func requireQuietRun(t *testing.T) {
	t.Helper()
	if os.Getenv("ENGINE_COMPLIANCE") == "" && !longTests {
		t.Skip("wall-clock time compliance runs alone: ENGINE_COMPLIANCE=1 go test -run 'Compliance|WithinTime|DeadlineBounds' ./shared/engine (make test does)")
	}
}

// complianceCase is one movetime of TestMoveTimeCompliance.
type complianceCase struct {
	moveTime time.Duration
	multiPV  int
	n, nLong int // searches in the default run and with ENGINE_LONG=1
}

// complianceCases: the documented movetimes 10 ms, 100 ms and 1 s, and five
// lines at 10 ms and 1 s. The default run (about 10 s) keeps at least 50
// searches at 10 and 100 ms and a smaller sample at 1 s; ENGINE_LONG=1
// (about 105 s) has 60 or more everywhere.
var complianceCases = []complianceCase{
	{10 * time.Millisecond, 1, 100, 1000},
	{100 * time.Millisecond, 1, 50, 300},
	{time.Second, 1, 6, 60},
	{10 * time.Millisecond, 5, 100, 300},
	{time.Second, 5, 4, 60},
}

// TestMoveTimeCompliance runs fixed-time searches on random positions (a
// fixed-seed generator per case) one after the other (searches in parallel
// would share the 2 cores of the CI machine with each other and distort the
// timing) and checks every answer is a legal move, the 99th percentile of
// the wall times is within movetime + complianceP99 and the maximum within
// movetime + complianceMax.
func TestMoveTimeCompliance(t *testing.T) {
	requireQuietRun(t)
	for i, tc := range complianceCases {
		n := tc.n
		if longTests {
			n = tc.nLong
		}
		t.Run(fmt.Sprintf("%v/multipv=%d", tc.moveTime, tc.multiPV), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(i)))
			e := New(Options{HashMB: 16})
			elapsed := make([]time.Duration, 0, n)
			var worstCPU time.Duration // CPU time of the slowest search, for the failure message
			for len(elapsed) < n {
				pos, hist := randomPlayout(chess.StartingPosition(), rng.IntN(80), rng)
				if pos.Status() != chess.StatusPlaying {
					continue
				}
				start, cpu := time.Now(), processCPU()
				res, err := e.Search(context.Background(), Params{Position: pos, History: hist, MoveTime: tc.moveTime, MultiPV: tc.multiPV})
				el, cpu := time.Since(start), processCPU()-cpu
				if err != nil {
					t.Fatal(err)
				}
				var list chess.MoveList
				pos.GenerateMoves(&list, chess.GenAll)
				if !list.Contains(res.BestMove) || len(res.Lines) != min(tc.multiPV, list.Len()) {
					t.Fatalf("Search(%s, %v, MultiPV %d) = %v with %d lines; want a legal move and %d lines",
						pos.FEN(), tc.moveTime, tc.multiPV, res.BestMove, len(res.Lines), min(tc.multiPV, list.Len()))
				}
				if len(elapsed) == 0 || el > slices.Max(elapsed) {
					worstCPU = cpu
				}
				elapsed = append(elapsed, el)
			}
			slices.Sort(elapsed)
			p99 := elapsed[(len(elapsed)*99+99)/100-1] // nearest rank
			median, worst := elapsed[len(elapsed)/2], elapsed[len(elapsed)-1]
			t.Logf("movetime %v multipv %d: n=%d median %v p99 %v max %v", tc.moveTime, tc.multiPV, len(elapsed),
				median.Round(100*time.Microsecond), p99.Round(100*time.Microsecond), worst.Round(100*time.Microsecond))
			if p99 > tc.moveTime+complianceP99 {
				t.Errorf("movetime %v, MultiPV %d: p99 of %d searches = %v; want at most %v", tc.moveTime, tc.multiPV,
					len(elapsed), p99, tc.moveTime+complianceP99)
			}
			if worst > tc.moveTime+complianceMax {
				t.Errorf("movetime %v, MultiPV %d: slowest of %d searches = %v; want at most %v", tc.moveTime, tc.multiPV,
					len(elapsed), worst, tc.moveTime+complianceMax)
			}
			if t.Failed() {
				t.Logf("the slowest search used %v of CPU; far less than its wall time means the process was not running", worstCPU)
			}
		})
	}
}

// TestClockSearchStaysWithinTime: a clock search answers within its planned
// hard limit (well under the time left, TestPlanTime) plus complianceP99.
func TestClockSearchStaysWithinTime(t *testing.T) {
	requireQuietRun(t)
	pos := chess.StartingPosition()
	for i, left := range []time.Duration{30 * time.Millisecond, 200 * time.Millisecond, 2 * time.Second, 30 * time.Millisecond, 200 * time.Millisecond} {
		e := New(Options{HashMB: 4, Evaluation: allEvaluations[i%2]}) // either evaluation
		p := Params{Position: pos, WhiteTime: left}
		start := time.Now()
		tb := planTime(context.Background(), start, &p, true, DefaultMoveOverhead)
		if _, err := e.Search(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > tb.hard+complianceP99 || el >= left {
			t.Errorf("Search with %v on the clock took %v; want at most its hard limit %v + %v, and less than the clock",
				left, el, tb.hard, complianceP99)
		}
	}
}

func TestContextDeadlineBoundsSearch(t *testing.T) {
	requireQuietRun(t)
	const budget = 50 * time.Millisecond
	for _, lines := range []int{1, MaxMultiPV} {
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		e := New(Options{HashMB: 4})
		start := time.Now()
		res, err := e.Search(ctx, Params{Position: chess.StartingPosition(), Infinite: true, MultiPV: lines})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if el := time.Since(start); el > budget+complianceP99 {
			t.Errorf("Search (MultiPV %d) with a %v context took %v; want at most %v", lines, budget, el, budget+complianceP99)
		}
		if res.BestMove == chess.NoMove || len(res.Lines) != lines {
			t.Errorf("Search (MultiPV %d) with a context deadline returned %v and %d lines", lines, res.BestMove, len(res.Lines))
		}
	}
}

func TestPlanTime(t *testing.T) {
	bg := context.Background()
	now := time.Now()
	tests := []struct {
		name       string
		p          Params
		white      bool
		wantHardLE time.Duration
		wantHardGE time.Duration
	}{
		{"movetime", Params{MoveTime: time.Second}, true, time.Second, 980 * time.Millisecond},
		{"tiny movetime", Params{MoveTime: 10 * time.Millisecond}, true, 10 * time.Millisecond, 8 * time.Millisecond},
		{"clock", Params{WhiteTime: 10 * time.Second, WhiteInc: 100 * time.Millisecond}, true, 3500 * time.Millisecond, 400 * time.Millisecond},
		{"clock black", Params{WhiteTime: time.Hour, BlackTime: time.Second}, false, 350 * time.Millisecond, 30 * time.Millisecond},
		{"last move before control", Params{WhiteTime: time.Second, MovesToGo: 1}, true, 900 * time.Millisecond, 800 * time.Millisecond},
	}
	for _, tc := range tests {
		tb := planTime(bg, now, &tc.p, tc.white, DefaultMoveOverhead)
		if tb.hard > tc.wantHardLE || tb.hard < tc.wantHardGE || tb.soft > tb.hard {
			t.Errorf("planTime(%s) = %+v; want hard in [%v, %v] and soft <= hard", tc.name, tb, tc.wantHardGE, tc.wantHardLE)
		}
	}
}
