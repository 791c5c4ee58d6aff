package service_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// rivalStore is the embedded store with a rival writer: before each of the
// next rivals Update calls it lets rival commit a change to the same game
// first, so the Update that follows loses a real version race in the store
// (not an injected error). It counts the Update calls that were not the
// rival's own.
type rivalStore struct {
	service.Store
	mu      sync.Mutex
	rivals  int
	rival   func() error
	inRival bool
	updates int
	// fail, when set, is returned by every Update instead of writing.
	fail error
}

func (s *rivalStore) Update(ctx context.Context, rec service.GameRecord, expected int64) error {
	s.mu.Lock()
	if s.inRival { // the rival's own write
		s.mu.Unlock()
		return s.Store.Update(ctx, rec, expected)
	}
	s.updates++
	if s.fail != nil {
		err := s.fail
		s.mu.Unlock()
		return err
	}
	race := s.rivals > 0
	if race {
		s.rivals--
		s.inRival = true
	}
	s.mu.Unlock()
	if race {
		err := s.rival()
		s.mu.Lock()
		s.inRival = false
		s.mu.Unlock()
		if err != nil {
			return err
		}
	}
	return s.Store.Update(ctx, rec, expected)
}

func (s *rivalStore) setUp(rivals int, fail error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rivals, s.fail, s.updates = rivals, fail, 0
}

func (s *rivalStore) updateCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updates
}

// TestRetryBoundsAreProduction (issue 15): the service runs with its
// production retry bound (Config.MaxAttempts left at its default, 8). A
// move that loses 7 real races to the opponent's presence changes still
// lands on its 8th round; one that loses 8 answers ErrBusy (HTTP 503
// busy) after exactly 8 rounds and changes nothing; a record too large for
// the store answers ErrTooLarge (game_too_large) at once, as retrying
// cannot make it fit.
func TestRetryBoundsAreProduction(t *testing.T) {
	const productionAttempts = 8
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	store := &rivalStore{Store: bolt}
	f := newFixture(t, store)
	g := f.newGame(t, `{"timeControl":"none"}`)
	connected := true
	store.rival = func() error {
		connected = !connected // a real change each time: disconnect, reconnect, ...
		_, err := f.svc.SetPresence(t.Context(), g.gameID, g.black, connected)
		return err
	}

	before := f.view(t, g.gameID).Version
	store.setUp(productionAttempts-1, nil)
	if err := f.move(t, g.gameID, g.white, "e2e4"); err != nil {
		t.Fatalf("move after %d lost races = %v; want it applied on round %d", productionAttempts-1, err, productionAttempts)
	}
	if n := store.updateCalls(); n != productionAttempts {
		t.Errorf("move wrote %d times; want %d", n, productionAttempts)
	}
	v := f.view(t, g.gameID)
	if len(v.Moves) != 1 || v.Version != before+productionAttempts {
		t.Fatalf("after the races: %d moves at version %d; want 1 move at version %d (7 rival changes, then the move)", len(v.Moves), v.Version, before+productionAttempts)
	}

	before = v.Version
	store.setUp(productionAttempts, nil)
	err = f.move(t, g.gameID, g.black, "e7e5")
	if !errors.Is(err, service.ErrBusy) {
		t.Fatalf("move losing %d races = %v; want ErrBusy", productionAttempts, err)
	}
	if n := store.updateCalls(); n != productionAttempts {
		t.Errorf("busy move wrote %d times; want exactly the production bound %d", n, productionAttempts)
	}
	if v := f.view(t, g.gameID); len(v.Moves) != 1 || v.Version != before+productionAttempts {
		t.Errorf("after ErrBusy: %d moves at version %d; want the 8 rival changes only (1 move, version %d)", len(v.Moves), v.Version, before+productionAttempts)
	}

	before = f.view(t, g.gameID).Version
	store.setUp(0, service.ErrTooLarge)
	err = f.move(t, g.gameID, g.black, "e7e5")
	if !errors.Is(err, service.ErrTooLarge) {
		t.Fatalf("move whose record is too large = %v; want ErrTooLarge", err)
	}
	if n := store.updateCalls(); n != 1 {
		t.Errorf("too-large move wrote %d times; want 1 (not retried)", n)
	}
	store.setUp(0, nil)
	if v := f.view(t, g.gameID); v.Version != before || len(v.Moves) != 1 {
		t.Errorf("after ErrTooLarge: version %d, %d moves; want unchanged (%d, 1)", v.Version, len(v.Moves), before)
	}
}
