package service_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/game"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// stores returns a constructor per store kind: the embedded store and
// DynamoDB on both emulators (started by the test).
func stores(t *testing.T) map[string]func(t *testing.T) service.Store {
	return map[string]func(t *testing.T) service.Store{
		"bolt": func(t *testing.T) service.Store { return nil }, // newFixture opens one
		"moto": func(t *testing.T) service.Store { return dynamoStore(t, emulator.Moto) },
		"dynalite": func(t *testing.T) service.Store {
			return dynamoStore(t, emulator.Dynalite)
		},
	}
}

func dynamoStore(t *testing.T, kind emulator.Kind) service.Store {
	t.Helper()
	endpoint := emulatortest.Start(t, kind)
	table := emulatortest.NewGamesTable(t, endpoint)
	s, err := dynamostore.NewFromConfig(emulator.Config(endpoint), table)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConcurrentMoves races 20 move requests on one game (both seats, same
// and different moves) against each store: exactly the legal ones are
// applied, once each, in turn order; no ply is lost or duplicated. Then the
// same requestId is sent 10 times concurrently: it applies once and every
// sender gets the one stored outcome.
func TestConcurrentMoves(t *testing.T) {
	for name, newStore := range stores(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, newStore(t))
			g := f.newGame(t, `{"timeControl":"none"}`)

			type attempt struct {
				seat service.Caller
				uci  string
			}
			var attempts []attempt
			for i := 0; i < 8; i++ {
				attempts = append(attempts, attempt{g.white, "e2e4"}) // same move, many times
			}
			for i := 0; i < 4; i++ {
				attempts = append(attempts, attempt{g.white, "d2d4"}) // a different move
			}
			for i := 0; i < 8; i++ {
				attempts = append(attempts, attempt{g.black, "e7e5"}) // the reply
			}
			var wg sync.WaitGroup
			succeeded := make([]bool, len(attempts))
			errs := make([]error, len(attempts))
			for i, a := range attempts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := f.svc.Act(t.Context(), g.gameID, a.seat, service.ActionInput{Action: moveUCI(a.uci)})
					succeeded[i], errs[i] = err == nil, err
				}()
			}
			wg.Wait()
			wins := 0
			for i, ok := range succeeded {
				if ok {
					wins++
					continue
				}
				var rule *game.RuleError
				if !errors.As(errs[i], &rule) {
					t.Errorf("attempt %d (%s) failed with a non-rule error: %v", i, attempts[i].uci, errs[i])
				}
			}
			view := f.view(t, g.gameID)
			if wins != len(view.Moves) {
				t.Fatalf("%d requests succeeded but the game has %d moves: %v", wins, len(view.Moves), view.Moves)
			}
			// White may get both of its moves in (e4 or d4, then the other
			// after ...e5); black's single move lands at most once.
			if len(view.Moves) == 0 || len(view.Moves) > 3 {
				t.Fatalf("game has %d moves after the race; want 1 to 3", len(view.Moves))
			}
			seen := map[string]bool{}
			for i, m := range view.Moves {
				want := map[string]bool{"e2e4": true, "d2d4": true}
				if i%2 == 1 {
					want = map[string]bool{"e7e5": true}
				}
				if !want[m.UCI] || seen[m.UCI] {
					t.Errorf("ply %d is %s (moves %v)", i+1, m.UCI, view.Moves)
				}
				seen[m.UCI] = true
			}

			// Race one requestId on the side to move.
			turn, uci := g.white, "g1f3"
			if len(view.Moves)%2 == 1 {
				turn, uci = g.black, "g8f6"
			}
			plies := len(view.Moves)
			outcomes := make([]string, 10)
			for i := range outcomes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := f.svc.Act(t.Context(), g.gameID, turn, service.ActionInput{
						Action: moveUCI(uci), RequestID: "dup-1",
					})
					if err != nil {
						outcomes[i] = "error: " + err.Error()
						return
					}
					outcomes[i] = string(out.EventsJSON)
				}()
			}
			wg.Wait()
			for i, o := range outcomes {
				if o != outcomes[0] || len(o) < 2 || o[0] != '[' {
					t.Errorf("duplicate %d got %q; first got %q", i, o, outcomes[0])
				}
			}
			if after := f.view(t, g.gameID); len(after.Moves) != plies+1 {
				t.Errorf("10 duplicates applied %d moves; want 1", len(after.Moves)-plies)
			}
		})
	}
}

// TestManyGamesInterleaved plays several games at once through one service
// and store, checking no game sees another's writes.
func TestManyGamesInterleaved(t *testing.T) {
	f := newFixture(t, nil)
	const n = 8
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		g := f.newGame(t, `{"timeControl":"none"}`)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j, uci := range []string{"g1f3", "g8f6", "f3g1", "f6g8", "b1c3", "b8c6"} {
				seat := g.white
				if j%2 == 1 {
					seat = g.black
				}
				if err := f.move(t, g.gameID, seat, uci); err != nil {
					t.Error(fmt.Errorf("game %d move %s: %w", i, uci, err))
					return
				}
			}
		}()
	}
	wg.Wait()
}
