package boltstore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
)

// benchIndexGames is the size of the lobby and of the player's game list
// the index benchmarks read.
const benchIndexGames = 1000

// seedIndex creates benchIndexGames waiting games, all hosted by one
// player in one room's lobby, with typical state and summary sizes.
// Writers run concurrently so group commit keeps the seeding short.
func seedIndex(b *testing.B) *storeHandle {
	b.Helper()
	s := openStore(b, filepath.Join(b.TempDir(), "games.db"))
	ctx := context.Background()
	base := time.Now().Add(-24 * time.Hour)
	summary := make([]byte, 300)
	var wg sync.WaitGroup
	const writers = 50
	for w := range writers {
		wg.Go(func() {
			for i := w; i < benchIndexGames; i += writers {
				at := base.Add(time.Duration(i) * time.Second)
				rec := service.GameRecord{
					GameID: fmt.Sprintf("bench-%04d", i), Version: 1, StateVersion: 1, State: make([]byte, benchState),
					Index: service.GameIndex{Players: [2]string{"host", ""}, LobbyRoom: "free", CreatedAt: at, UpdatedAt: at, ListedAt: at, Summary: summary},
				}
				if err := s.Create(ctx, rec); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return s
}

// benchList reads pages of 20 from the first page and from a cursor deep
// into the list (past 900 games), and reports the latency percentiles of
// a call.
func benchList(b *testing.B, list func(limit int, cursor string) ([]service.IndexEntry, string, error)) {
	deep := ""
	for range 9 {
		_, next, err := list(100, deep)
		if err != nil || next == "" {
			b.Fatalf("walking to game 900: next %q, %v", next, err)
		}
		deep = next
	}
	for _, c := range []struct{ name, cursor string }{{"first-page", ""}, {"after-900", deep}} {
		b.Run(c.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, 1024)
			for b.Loop() {
				start := time.Now()
				page, _, err := list(20, c.cursor)
				if err != nil || len(page) != 20 {
					b.Fatalf("list = %d entries, %v; want 20", len(page), err)
				}
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / float64(time.Microsecond) }
			b.ReportMetric(pct(0.50), "p50-µs")
			b.ReportMetric(pct(0.99), "p99-µs")
		})
	}
}

// BenchmarkLobby reads pages of 20 of a lobby of 1,000 waiting games.
func BenchmarkLobby(b *testing.B) {
	s := seedIndex(b)
	ctx := context.Background()
	benchList(b, func(limit int, cursor string) ([]service.IndexEntry, string, error) {
		return s.Lobby(ctx, "free", limit, cursor)
	})
}

// BenchmarkPlayerGames reads pages of 20 of a player's 1,000 active games.
func BenchmarkPlayerGames(b *testing.B) {
	s := seedIndex(b)
	ctx := context.Background()
	benchList(b, func(limit int, cursor string) ([]service.IndexEntry, string, error) {
		return s.PlayerGames(ctx, "host", false, limit, cursor)
	})
}
