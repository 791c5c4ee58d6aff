package service_test

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The lobby under load, locally (the embedded store): 1,000 open waiting
// games in a room and 200 players at once, listing the lobby or asking for
// quick pairing (issue 11's performance target).
//
//	go test ./shared/service -run '^$' -bench 'LobbyUnderLoad|QuickPairingUnderLoad' -benchtime 2000x

const (
	benchWaiting = 1000
	benchPlayers = 200
)

// waitingRoom fills the free room with n open waiting games of distinct
// players.
func waitingRoom(b *testing.B, f *playerFixture, n int) {
	b.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			np, err := f.svc.CreatePlayer(b.Context(), service.NewPlayerInput{Name: ptr(fmt.Sprintf("host%04d", i))})
			if err == nil {
				_, err = f.svc.Create(b.Context(), service.CreateInput{Options: game.DefaultOptions(), Caller: service.Caller{Token: np.Token}})
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// runConcurrently calls op b.N times from benchPlayers goroutines and
// reports the latency percentiles.
func runConcurrently(b *testing.B, op func(i int) error) {
	b.Helper()
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	for range benchPlayers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= b.N {
					return
				}
				start := time.Now()
				if err := op(i); err != nil {
					failed.Store(err)
					return
				}
				lat[i] = time.Since(start)
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	slices.Sort(lat)
	pct := func(p int) float64 { return float64(lat[min(len(lat)-1, p*len(lat)/100)].Microseconds()) / 1000 }
	b.ReportMetric(pct(50), "p50-ms")
	b.ReportMetric(pct(99), "p99-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}

func BenchmarkLobbyUnderLoad(b *testing.B) {
	f := newPlayerFixture(b, nil)
	waitingRoom(b, f, benchWaiting)
	runConcurrently(b, func(int) error {
		page, err := f.svc.Lobby(b.Context(), game.RoomFree, service.DefaultPageSize, "", service.LobbyFilter{})
		if err == nil && len(page.Items) != service.DefaultPageSize {
			err = fmt.Errorf("lobby page of %d games; want %d", len(page.Items), service.DefaultPageSize)
		}
		return err
	})
}

// BenchmarkQuickPairingUnderLoad: each call is a new player asking for
// quick pairing; the room holds benchWaiting waiting games beyond the ones
// the calls take.
func BenchmarkQuickPairingUnderLoad(b *testing.B) {
	f := newPlayerFixture(b, nil)
	waitingRoom(b, f, benchWaiting+b.N)
	players := make([]service.Caller, b.N)
	for i := range players {
		np, err := f.svc.CreatePlayer(b.Context(), service.NewPlayerInput{Name: ptr(fmt.Sprintf("guest%05d", i))})
		if err != nil {
			b.Fatal(err)
		}
		players[i] = service.Caller{Token: np.Token}
	}
	var matched atomic.Int64
	runConcurrently(b, func(i int) error {
		res, err := f.svc.QuickPair(b.Context(), service.QuickInput{Room: game.RoomFree, Caller: players[i]})
		if res.Matched {
			matched.Add(1)
		}
		return err
	})
	if int(matched.Load()) != b.N {
		b.Errorf("%d of %d quick pairings matched; want all (the room had games enough)", matched.Load(), b.N)
	}
}
