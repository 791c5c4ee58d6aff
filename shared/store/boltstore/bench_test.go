package boltstore_test

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// benchState is the stored size of these benchmarks' games. The states
// are random bytes, which the store's compression leaves as they are, so
// 2 KiB is what is stored (a real 40-ply game stores in 4.6 KB:
// BenchmarkGameRecordCodec).
const benchState = 2 << 10

// incompressible returns n pseudo-random bytes.
func incompressible(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func seedGames(b *testing.B, n int) (*storeHandle, []service.GameRecord) {
	b.Helper()
	s := openStore(b, filepath.Join(b.TempDir(), "games.db"))
	recs := make([]service.GameRecord, n)
	for i := range recs {
		recs[i] = service.GameRecord{
			GameID: "bench-" + strconv.Itoa(i), Version: 1, StateVersion: 1,
			State: incompressible(benchState, uint64(i)), Deadline: time.Now().Add(time.Minute),
		}
		if err := s.Create(context.Background(), recs[i]); err != nil {
			b.Fatal(err)
		}
	}
	return s, recs
}

type storeHandle = boltstore.Store

// BenchmarkUpdate is one writer updating one game: the latency of a single
// durable (fsynced) write.
func BenchmarkUpdate(b *testing.B) {
	s, recs := seedGames(b, 1)
	rec := recs[0]
	ctx := context.Background()
	for b.Loop() {
		rec.Version++
		if err := s.Update(ctx, rec, rec.Version-1); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet reads one game.
func BenchmarkGet(b *testing.B) {
	s, recs := seedGames(b, 1)
	ctx := context.Background()
	for b.Loop() {
		if _, err := s.Get(ctx, recs[0].GameID); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdate200Games runs 200 writers, each reading and updating its
// own game, the shape of 200 concurrent games making moves. It reports the
// write latency percentiles besides the throughput (ns/op is per update).
func BenchmarkUpdate200Games(b *testing.B) {
	const games = 200
	s, recs := seedGames(b, games)
	ctx := context.Background()
	perGame := b.N/games + 1
	latencies := make([][]time.Duration, games)
	var wg sync.WaitGroup
	b.ResetTimer()
	for g := range games {
		wg.Go(func() {
			rec := recs[g]
			lat := make([]time.Duration, 0, perGame)
			for range perGame {
				start := time.Now()
				cur, err := s.Get(ctx, rec.GameID)
				if err != nil {
					b.Error(err)
					return
				}
				cur.Version++
				if err := s.Update(ctx, cur, cur.Version-1); err != nil {
					b.Error(err)
					return
				}
				lat = append(lat, time.Since(start))
			}
			latencies[g] = lat
		})
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(latencies...)
	slices.Sort(all)
	if len(all) == 0 {
		return
	}
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}
