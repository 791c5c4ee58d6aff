package game

import (
	"errors"
	"testing"

	"chessapi/shared/chess"
)

// storedParts is what a stored form keeps of s (shared/game/storedgame):
// everything but the derived fields, of each move its UCI, SAN and time,
// the start position only when it is not the variant's, and options and
// invite as a record written before their defaults existed may have them.
// The result shares nothing with s.
func storedParts(s *State) *State {
	p := s.clone()
	p.FEN, p.Claimable, p.pos, p.hashes = "", nil, chess.Position{}, nil
	if !p.CustomStart() {
		p.StartFEN = ""
	}
	for i, m := range p.Moves {
		p.Moves[i] = MoveRecord{UCI: m.UCI, SAN: m.SAN, At: m.At}
	}
	if p.Result != nil {
		p.Result.Ranking, p.Result.MoveCount = nil, 0
	}
	if p.Invite.Mode == InviteOpen {
		p.Invite.Mode = ""
	}
	return p
}

// roundTrip restores s from its stored parts, checks that Restore gives s
// back, and returns the restored copy.
func roundTrip(t testing.TB, s *State) *State {
	t.Helper()
	back := storedParts(s)
	if err := Restore(back); err != nil {
		t.Fatalf("Restore(stored parts) = %v", err)
	}
	assertSameState(t, back, s, "Restore(storedParts(s))")
	return back
}

// TestRestoreRebuildsTheDerivedFields restores games of every kind from
// their stored parts, with their SANs kept and without them (Restore
// computes a missing SAN).
func TestRestoreRebuildsTheDerivedFields(t *testing.T) {
	finished := play(t, newGame(t, DefaultOptions()), 1000, "f2f3", "e7e5", "g2g4", "d8h4")
	custom := play(t, gameFromFEN(t, "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", DefaultOptions()), 1000, "e1g1")
	claimable := play(t, newGame(t, opts(t, `{"drawMode":"fide"}`)), 1000, "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8")
	games := map[string]*State{
		"new":       newGame(t, DefaultOptions()),
		"finished":  finished,
		"custom":    custom,
		"claimable": claimable,
		"960":       last(randomGame(t, unlimitedClock(t, "chess960"), 3, 200)),
		"standard":  last(randomGame(t, unlimitedClock(t, "standard"), 4, 300)),
	}
	if claimable.Claimable == nil {
		t.Fatal("the repetition game has nothing to claim")
	}
	for name, s := range games {
		t.Run(name, func(t *testing.T) {
			roundTrip(t, s)
			noSAN := storedParts(s)
			for i := range noSAN.Moves {
				noSAN.Moves[i].SAN = ""
			}
			if err := Restore(noSAN); err != nil {
				t.Fatal(err)
			}
			assertSameState(t, noSAN, s, "restored without SANs")
		})
	}
}

func last(states []*State) *State { return states[len(states)-1] }

func TestRestoreRefusesWhatIsNotAGame(t *testing.T) {
	good := play(t, newGame(t, DefaultOptions()), 1000, "e2e4", "e7e5")
	tests := map[string]func(s *State){
		"illegal move":        func(s *State) { s.Moves[1].UCI = "e7e4" },
		"not a move":          func(s *State) { s.Moves[0].UCI = "castle" },
		"bad option":          func(s *State) { s.Options.DrawMode = "never" },
		"black starts":        func(s *State) { s.StartFEN = "4k3/8/8/8/8/8/8/4K3 b - - 0 1" },
		"bad start":           func(s *State) { s.StartFEN = "8/8/8/8/8/8/8/8 w - - 0 1" },
		"960 without index":   func(s *State) { s.Options.Variant = VariantChess960 },
		"index in standard":   func(s *State) { s.Chess960Index = new(int) },
		"unknown phase":       func(s *State) { s.Phase = "paused" },
		"finished no result":  func(s *State) { s.Phase = PhaseFinished },
		"result while play":   func(s *State) { s.Result = &Result{Reason: ReasonResign} },
		"unknown reason":      func(s *State) { s.Phase, s.Result = PhaseFinished, &Result{Reason: "bored"} },
		"waiting with moves":  func(s *State) { s.Phase = PhaseWaiting },
		"negative clock":      func(s *State) { s.Clock.RemainingMs[black] = -1 },
		"too many extensions": func(s *State) { s.Clock.ExtensionsUsed[white] = PerMoveExtensions + 1 },
		"bad pending undo":    func(s *State) { s.Undo.Pending = &UndoRequest{By: white, Plies: 3} },
		"unknown invite":      func(s *State) { s.Invite.Mode = "friends" },
		"private no code":     func(s *State) { s.Invite.Mode = InvitePrivate },
		"change log gap":      func(s *State) { s.Changes[1].Version += 2 },
		"request log too long": func(s *State) {
			s.Requests[white] = make([]AppliedRequest, RequestLogSize+1)
		},
	}
	for name, change := range tests {
		t.Run(name, func(t *testing.T) {
			s := storedParts(good)
			change(s)
			var re *RestoreError
			if err := Restore(s); !errors.As(err, &re) {
				t.Errorf("Restore = %v; want a *RestoreError", err)
			}
		})
	}
}

// TestLiveStateMatchesReplay checks the state a transition carries forward
// (the live position and its hash history) against a replay from the moves:
// the FEN agrees, and counting repetitions by hash agrees with counting
// them by repetition key, the rule's own definition.
func TestLiveStateMatchesReplay(t *testing.T) {
	for _, variant := range []string{"standard", "chess960"} {
		for seed := range uint64(5) {
			for _, s := range randomGame(t, unlimitedClock(t, variant), seed, 400) {
				pos := s.Position()
				if got, want := pos.FEN(), s.FEN; got != want {
					t.Fatalf("live position FEN = %q; want %q", got, want)
				}
				if got, want := s.repetitions(), repetitionCount(s, pos.RepetitionKey()); got != want {
					t.Fatalf("repetitions() = %d; want %d (by key) at %q", got, want, s.FEN)
				}
				if got, want := len(s.History()), s.Ply(); got != want {
					t.Fatalf("len(History()) = %d; want %d", got, want)
				}
			}
		}
	}
}
