package asdeployed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"chessapi/deploy"
	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// BenchmarkWarmMove measures a warm move as deployed: the move function under
// the emulator receives an API Gateway action event (a new legal move each
// time, alternating seats), loads the game from DynamoDB (moto), writes it
// back conditionally and creates the deadline schedule (moto). The times
// include moto's, which is a single-threaded Python server: they bound the
// function's own cost from above.
//
//	go test -run '^$' -bench WarmMove -benchtime 50x ./functions/asdeployed
func BenchmarkWarmMove(b *testing.B) {
	evs := loadEvents(b)
	s := newStack(b)
	move := start(b, moveSpec, s.env(moveSpec))
	st := sampleGame(b, "", time.Now())
	s.put(b, st)
	ucis := playableMoves(b, st, b.N)

	// Cold start and a first read outside the measurement.
	invokeHTTP(b, move, "health", evs["move/health.json"].Raw)
	invokeHTTP(b, move, "view", evs["move/view-player.json"].Raw)
	payloads := make([][]byte, b.N)
	for i, uci := range ucis {
		token := deploy.SampleWhiteToken
		if i%2 == 1 {
			token = deploy.SampleBlackToken
		}
		payloads[i] = moveEvent(b, evs["move/action-move-from-to.json"], token, uci, fmt.Sprintf("bench-%d", i))
	}

	roundTrips := make([]time.Duration, 0, b.N)
	reported := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		resp, res := invokeHTTP(b, move, "move "+ucis[i], payloads[i])
		if resp.StatusCode != 200 {
			b.Fatalf("move %d (%s): %d %s; want 200", i, ucis[i], resp.StatusCode, resp.Body)
		}
		roundTrips = append(roundTrips, res.RoundTrip)
		reported = append(reported, res.Duration)
	}
	b.StopTimer()

	if rec, _ := s.game(b, deploy.SampleGameID); rec.Version != st.Version+int64(b.N) {
		b.Errorf("table version after %d moves = %d; want %d", b.N, rec.Version, st.Version+int64(b.N))
	}
	// For scale: one DynamoDB read against moto from this process (a move
	// makes three moto calls: GetItem, PutItem, CreateSchedule).
	reads := make([]time.Duration, 0, 20)
	for range 20 {
		t0 := time.Now()
		s.game(b, deploy.SampleGameID)
		reads = append(reads, time.Since(t0))
	}
	b.ReportMetric(percentile(reads, 50), "moto-getitem-p50-ms")
	b.ReportMetric(percentile(roundTrips, 50), "p50-ms")
	b.ReportMetric(percentile(roundTrips, 99), "p99-ms")
	b.ReportMetric(percentile(reported, 50), "report-p50-ms")
	b.ReportMetric(percentile(reported, 99), "report-p99-ms")
}

// playableMoves picks n moves from st, at random but reproducibly, none of
// which ends the game (checked with the reducer the service uses).
func playableMoves(b *testing.B, st *game.State, n int) []string {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.UnixMilli(st.CreatedAt)
	var out []string
	for len(out) < n {
		pos := st.Position()
		var list chess.MoveList
		pos.GenerateMoves(&list, chess.GenAll)
		moves := list.Moves()
		rng.Shuffle(len(moves), func(i, j int) { moves[i], moves[j] = moves[j], moves[i] })
		found := false
		for _, m := range moves {
			uci := pos.UCI(m)
			action := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}
			next, _, err := game.Reduce(st, game.Act{By: st.Turn(), Action: action}, now.Add(time.Second))
			if err != nil || next.Phase != game.PhasePlaying {
				continue
			}
			st, now, found = next, now.Add(time.Second), true
			out = append(out, uci)
			break
		}
		if !found {
			b.Fatalf("no move keeps the game going after %d plies", len(out))
		}
	}
	return out
}

// percentile is the p-th percentile of ds (nearest rank), in milliseconds.
func percentile(ds []time.Duration, p int) float64 {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	rank := (p*len(sorted) + 99) / 100
	return float64(sorted[max(rank, 1)-1].Microseconds()) / 1000
}

// BenchmarkAIColdStart measures the AI function as a cold Lambda meets its
// first request: each iteration starts the function under the emulator (its
// template memory, so its template-sized transposition table) and sends it
// POST /v1/ai/move from events/ai/move-movetime-chess960.json (a 1.5 s
// search with the default evaluation, the embedded network, parsed on this
// first search), then reads the init duration, the invoke's REPORT
// duration and the process's peak resident memory.
//
//	go test -run '^$' -bench AIColdStart -benchtime 3x ./functions/asdeployed
func BenchmarkAIColdStart(b *testing.B) {
	evs := loadEvents(b)
	s := newStack(b)
	env := s.env(aiSpec)
	var inits, invokes []time.Duration
	var peakMiB float64
	for range b.N {
		f := start(b, aiSpec, env)
		resp, res := invokeHTTP(b, f, "ai move", evs["ai/move-movetime-chess960.json"].Raw)
		if a := decodeAnswer(b, "ai move", resp.Body); resp.StatusCode != 200 || a.BestMove == "" {
			b.Fatalf("move-movetime-chess960: %d %s; want 200 with a best move", resp.StatusCode, resp.Body)
		}
		rss, err := f.RuntimePeakRSS()
		if err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		inits = append(inits, res.InitDuration)
		invokes = append(invokes, res.Duration-res.InitDuration)
		peakMiB = max(peakMiB, float64(rss)/(1<<20))
	}
	b.ReportMetric(percentile(inits, 50), "init-p50-ms")
	b.ReportMetric(percentile(inits, 100), "init-max-ms")
	b.ReportMetric(percentile(invokes, 50), "first-invoke-p50-ms")
	b.ReportMetric(peakMiB, "peak-rss-max-MiB")
}
