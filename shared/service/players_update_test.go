package service

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"

	"chessapi/shared/retry"
)

// memPlayers keeps player records in memory with the Players port's
// compare-and-set; the other methods are not used by these tests.
type memPlayers struct {
	Players
	mu     sync.Mutex
	recs   map[string]PlayerRecord
	reads  int
	writes int
	// conflict makes every write lose (a record that never stops moving).
	conflict bool
}

func newMemPlayers(recs ...PlayerRecord) *memPlayers {
	m := &memPlayers{recs: map[string]PlayerRecord{}}
	for _, r := range recs {
		m.recs[r.ID] = r
	}
	return m
}

func (m *memPlayers) Player(_ context.Context, id string) (PlayerRecord, error) {
	m.mu.Lock()
	r, ok := m.recs[id]
	m.reads++
	m.mu.Unlock()
	runtime.Gosched() // let a concurrent change overtake this read
	if !ok {
		return PlayerRecord{}, ErrNotFound
	}
	r.Applied = slices.Clone(r.Applied)
	return r, nil
}

func (m *memPlayers) UpdatePlayer(_ context.Context, p PlayerRecord, expected int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.recs[p.ID]
	if !ok || m.conflict || cur.Version != expected {
		return ErrVersionConflict
	}
	p.Applied = slices.Clone(p.Applied)
	m.recs[p.ID] = p
	m.writes++
	return nil
}

func (m *memPlayers) get(id string) PlayerRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.recs[id]
}

func newPlayerService(t *testing.T, ps Players, cfg Config) *Service {
	t.Helper()
	cfg.Store = struct{ Store }{}
	cfg.Players = ps
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(0) })
	return s
}

// Twenty rated results of one player applied at once: every one is
// counted, exactly once, and each application started from the record the
// previous one left (their "before" ratings are 1000, 1001, … 1019, each
// once), also when some callers had to try again after ErrBusy (as the
// effects' retries do).
func TestUpdatePlayerSerialisesConcurrentChanges(t *testing.T) {
	const games = 20
	ps := newMemPlayers(PlayerRecord{ID: "pl_a", Name: "A", Rating: 1000, Version: 1})
	s := newPlayerService(t, ps, Config{})
	var mu sync.Mutex
	var befores []int
	var wg sync.WaitGroup
	for i := range games {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gameID := fmt.Sprintf("g%02d", i)
			for {
				var before int
				_, err := s.updatePlayer(context.Background(), "pl_a", func(p *PlayerRecord) error {
					if slices.Contains(p.Applied, gameID) {
						return errUnchanged
					}
					before = p.Rating // the last round's is the applied one's
					p.Rating++
					p.RatedGames++
					p.Applied = append(p.Applied, gameID)
					return nil
				})
				if errors.Is(err, ErrBusy) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				befores = append(befores, before)
				mu.Unlock()
				return
			}
		}()
	}
	wg.Wait()
	got := ps.get("pl_a")
	if got.Rating != 1000+games || got.RatedGames != games || got.Version != 1+games || len(got.Applied) != games {
		t.Fatalf("after %d changes: rating %d, games %d, version %d, %d applied; want %d, %d, %d, %d",
			games, got.Rating, got.RatedGames, got.Version, len(got.Applied), 1000+games, games, 1+games, games)
	}
	slices.Sort(befores)
	for i, b := range befores {
		if b != 1000+i {
			t.Fatalf("the changes started from ratings %v; want 1000 … %d, each once", befores, 1000+games-1)
		}
	}
	if got.Name != "A" || got.ID != "pl_a" {
		t.Errorf("record %+v lost fields no change touched", got)
	}
}

func TestUpdatePlayerUnchangedWritesNothing(t *testing.T) {
	ps := newMemPlayers(PlayerRecord{ID: "pl_a", Name: "A", Rating: 1200, Version: 4, Applied: []string{"g1"}})
	s := newPlayerService(t, ps, Config{})
	got, err := s.updatePlayer(context.Background(), "pl_a", func(p *PlayerRecord) error { return errUnchanged })
	if err != nil || got.Version != 4 || got.Rating != 1200 {
		t.Fatalf("updatePlayer(unchanged) = %+v, %v; want the record as stored", got, err)
	}
	if ps.writes != 0 {
		t.Errorf("%d writes; want none", ps.writes)
	}
}

func TestUpdatePlayerRefusedChangeIsNotRetried(t *testing.T) {
	ps := newMemPlayers(PlayerRecord{ID: "pl_a", Version: 1})
	s := newPlayerService(t, ps, Config{})
	refused := errors.New("name taken")
	calls := 0
	_, err := s.updatePlayer(context.Background(), "pl_a", func(p *PlayerRecord) error {
		calls++
		p.Name = "half-done"
		return refused
	})
	if !errors.Is(err, refused) || calls != 1 || ps.writes != 0 || ps.get("pl_a").Name != "" {
		t.Fatalf("refused change: err %v, %d calls, %d writes, name %q; want the change's error, 1 call, nothing written",
			err, calls, ps.writes, ps.get("pl_a").Name)
	}
	if _, err := s.updatePlayer(context.Background(), "pl_nobody", func(*PlayerRecord) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("updatePlayer of an unknown player = %v; want ErrNotFound", err)
	}
}

// A record that changes under every write is given up after the player
// policy's rounds (Config.MaxAttempts narrows it), as ErrBusy.
func TestUpdatePlayerGivesUpAsBusy(t *testing.T) {
	for _, tt := range []struct {
		maxAttempts, rounds int
	}{{0, retry.PlayerWrite.Attempts}, {3, 3}} {
		ps := newMemPlayers(PlayerRecord{ID: "pl_a", Version: 1})
		ps.conflict = true
		s := newPlayerService(t, ps, Config{MaxAttempts: tt.maxAttempts})
		calls := 0
		_, err := s.updatePlayer(context.Background(), "pl_a", func(p *PlayerRecord) error { calls++; p.Rating++; return nil })
		if !errors.Is(err, ErrBusy) || calls != tt.rounds || ps.reads != tt.rounds {
			t.Errorf("MaxAttempts %d: err %v after %d changes and %d reads; want ErrBusy after %d rounds", tt.maxAttempts, err, calls, ps.reads, tt.rounds)
		}
	}
}

// The id and the version belong to the loop: a change cannot move them.
func TestUpdatePlayerOwnsIDAndVersion(t *testing.T) {
	ps := newMemPlayers(PlayerRecord{ID: "pl_a", Version: 7})
	s := newPlayerService(t, ps, Config{})
	got, err := s.updatePlayer(context.Background(), "pl_a", func(p *PlayerRecord) error {
		p.ID, p.Version, p.Name = "pl_b", 100, "B"
		return nil
	})
	if err != nil || got.ID != "pl_a" || got.Version != 8 || got.Name != "B" {
		t.Fatalf("updatePlayer = %+v, %v; want pl_a at version 8 named B", got, err)
	}
	if _, ok := ps.recs["pl_b"]; ok {
		t.Error("a change created another player")
	}
}
