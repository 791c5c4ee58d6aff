package aiplayer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/service"
)

func TestChooseMovePacesWeakLevels(t *testing.T) {
	pool := NewPool(1, 1)
	pos := chess.StartingPosition()
	for _, tt := range []struct {
		level   string
		atLeast time.Duration
	}{
		{"easy", 150 * time.Millisecond},
		{"normal", 800 * time.Millisecond},
	} {
		start := time.Now()
		m, err := pool.ChooseMove(context.Background(), service.AIMoveRequest{Position: pos, Level: tt.level, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !contains(pos.LegalMoves(), m) {
			t.Fatalf("%s: illegal move %v", tt.level, m)
		}
		if took := time.Since(start); took < tt.atLeast {
			t.Errorf("%s answered after %v; want about its think time (≥ %v)", tt.level, took, tt.atLeast)
		}
	}
	// The clock wins over the pace: with 2 s left, no long wait.
	start := time.Now()
	if _, err := pool.ChooseMove(context.Background(), service.AIMoveRequest{Position: pos, Level: "hard", Remaining: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("hard with 2 s on its clock took %v", took)
	}
	if _, err := pool.ChooseMove(context.Background(), service.AIMoveRequest{Position: pos, Level: "grandmaster"}); err == nil {
		t.Error("unknown level accepted")
	}
}

func contains(moves []chess.Move, m chess.Move) bool {
	for _, x := range moves {
		if x == m {
			return true
		}
	}
	return false
}

// Twenty public searches at the longest movetime keep every public engine
// busy with more queued; an AI seat still answers within its think time
// plus a second (SPEC §13: public AI requests cannot starve AI seats).
func TestPublicSearchesCannotStarveAISeats(t *testing.T) {
	pool := New(Options{SeatEngines: 1, PublicEngines: 2, HashMB: 1})
	pos := chess.StartingPosition()
	ctx, cancel := context.WithCancel(context.Background())
	var public sync.WaitGroup
	var searching atomic.Int32
	for range 20 {
		public.Add(1)
		go func() {
			defer public.Done()
			searching.Add(1)
			_, _ = pool.Search(ctx, engine.Params{Position: pos, MoveTime: engine.MaxMoveTime})
		}()
	}
	// Cancel the public searches however the test ends, so it takes
	// seconds, not the ten of a full movetime.
	defer func() { cancel(); public.Wait() }()
	for deadline := time.Now().Add(5 * time.Second); searching.Load() < 20 || len(pool.public) > 0; {
		if time.Now().After(deadline) {
			t.Fatal("the public searches did not take every public engine within 5s")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // the public engines are searching now

	start := time.Now()
	m, err := pool.ChooseMove(context.Background(), service.AIMoveRequest{Position: pos, Level: "easy", Seed: 7})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("AI seat's move with 20 public searches in flight: %v (after %v)", err, took)
	}
	if !contains(pos.LegalMoves(), m) {
		t.Fatalf("illegal move %v", m)
	}
	if limit := engine.LevelEasy.ThinkTime() + time.Second; took > limit {
		t.Errorf("AI seat answered after %v with 20 public searches in flight; want ≤ %v", took, limit)
	}
}

// Search takes only public engines: with the public engine busy it waits
// (until its context ends) even though the seat engine is idle.
func TestSearchNeverTakesSeatEngines(t *testing.T) {
	pool := New(Options{SeatEngines: 1, PublicEngines: 1, HashMB: 1})
	pos := chess.StartingPosition()
	long, cancelLong := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = pool.Search(long, engine.Params{Position: pos, MoveTime: engine.MaxMoveTime})
	}()
	defer func() { cancelLong(); <-done }()
	for len(pool.public) > 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := pool.Search(ctx, engine.Params{Position: pos, MoveTime: 50 * time.Millisecond}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second public search with the public engine busy = %v; want it to wait until its deadline", err)
	}
	if n := len(pool.seats); n != 1 {
		t.Errorf("%d idle seat engines; want 1 (untouched by public searches)", n)
	}
}

// A seat borrows a free public engine when its own are busy.
func TestSeatBorrowsAnIdlePublicEngine(t *testing.T) {
	pool := New(Options{SeatEngines: 1, PublicEngines: 1, HashMB: 1}).WithoutPacing()
	pos := chess.StartingPosition()
	busy := <-pool.seats // another game's turn holds the seat engine
	defer func() { pool.seats <- busy }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := pool.ChooseMove(ctx, service.AIMoveRequest{Position: pos, Level: "easy", Seed: 1}); err != nil {
		t.Fatalf("ChooseMove with the seat engine busy and the public one idle: %v", err)
	}
	if n := len(pool.public); n != 1 {
		t.Errorf("%d idle public engines after the seat's move; want 1 (given back)", n)
	}
}

// Engines are created on first use: a pool costs no table until it
// searches (Lambda cold start).
func TestEnginesAreAllocatedLazily(t *testing.T) {
	pool := New(Options{SeatEngines: 2, PublicEngines: 3, HashMB: 1})
	for _, slots := range []chan *engine.Engine{pool.seats, pool.public} {
		for range cap(slots) {
			e := <-slots
			if e != nil {
				t.Fatal("engine allocated before its first search")
			}
			slots <- e
		}
	}
	if cap(pool.seats) != 2 || cap(pool.public) != 3 {
		t.Errorf("seat/public engines = %d/%d; want 2/3", cap(pool.seats), cap(pool.public))
	}
	if p := NewPool(2, 1); cap(p.seats) != 2 || cap(p.public) != 2 {
		t.Errorf("NewPool(2, 1): seat/public engines = %d/%d; want 2/2", cap(p.seats), cap(p.public))
	}
}
