package game

import (
	"encoding/json"
	"strings"
	"testing"

	"chessapi/shared/chess"
)

// boundGame is newGame with both seats bound to registered players.
func boundGame(t *testing.T, o Options) *State {
	t.Helper()
	s := newGame(t, o)
	s.Seats[white].Bound, s.Seats[black].Bound = true, true
	return s
}

func deleted(t *testing.T, s *State, player string) (*State, []Event) {
	t.Helper()
	next, events, err := Reduce(s, PlayerDeleted{PlayerID: player}, at(60_000))
	if err != nil {
		t.Fatalf("PlayerDeleted(%s) = %v", player, err)
	}
	return next, events
}

func TestPlayerDeleted(t *testing.T) {
	o := unlimitedClock(t, "standard")

	// Waiting: cancelled, nobody ranked, PGN "*", the name and token gone.
	w, _, err := New(NewGame{GameID: "w1", Options: o, Host: Player{ID: "alice", Name: "Alice", TokenHash: "h", Bound: true}, Seed: 1}, t0)
	if err != nil {
		t.Fatal(err)
	}
	next, events := deleted(t, w, "alice")
	host, _ := next.SeatOf("alice")
	if next.Phase != PhaseFinished || next.Result.Reason != ReasonCancelled || len(next.Result.Ranking) != 0 ||
		next.Seats[host].Name != DeletedPlayerName || next.Seats[host].TokenHash != "" || !hasEvent(events, EventGameEnded) {
		t.Fatalf("waiting game after the deletion: %+v %+v", next.Result, next.Seats[host])
	}
	pgn, err := PGN(next)
	if err != nil || strings.Contains(pgn, "Alice") || !strings.Contains(pgn, `"Deleted player"`) || !strings.Contains(pgn, "\n*") || !strings.Contains(pgn, `[Termination "abandoned"]`) {
		t.Errorf("PGN after the deletion: %v\n%s", err, pgn)
	}
	if again, ev := deleted(t, next, "alice"); again != next || ev != nil {
		t.Error("a second PlayerDeleted made a new version")
	}

	// In play, both sides moved: resigned for the deleted seat.
	s := play(t, boundGame(t, o), 0, "e2e4", "e7e5")
	next, events = deleted(t, s, "bob")
	if next.Result.Reason != ReasonResign || *next.Result.Winner != white || !hasEvent(events, EventResigned) ||
		next.Seats[black].Name != DeletedPlayerName || next.Seats[white].Name != "Alice" {
		t.Errorf("a game in play: %+v, seats %+v", next.Result, next.Seats)
	}
	// Before both sides moved: aborted, as a resignation then is.
	next, _ = deleted(t, play(t, boundGame(t, o), 0, "e2e4"), "alice")
	if next.Result.Reason != ReasonAborted || next.Result.Winner != nil {
		t.Errorf("a game before both moved: %+v", next.Result)
	}
	// Finished: only the name and the token change, and the version moves.
	done := play(t, boundGame(t, o), 0, "f2f3", "e7e5", "g2g4", "d8h4")
	next, events = deleted(t, done, "alice")
	if next.Version != done.Version+1 || len(events) != 0 || next.Result.Reason != ReasonCheckmate || next.Seats[white].Name != DeletedPlayerName {
		t.Errorf("a finished game: version %d→%d, events %v, result %+v", done.Version, next.Version, events, next.Result)
	}
	// A stranger's deletion, and anonymous seats of the same id, change nothing.
	if other, ev := deleted(t, done, "carol"); other != done || ev != nil {
		t.Error("another player's deletion changed the game")
	}
	anon := play(t, newGame(t, o), 0, "e2e4", "e7e5")
	if other, _ := deleted(t, anon, "alice"); other != anon {
		t.Error("an anonymous seat with the deleted player's id was changed")
	}
	// In the ready step of the yeoul rules: called off.
	ready := newRatedGame(t, RoomIntermediate, `{}`)
	if next, _ = deleted(t, ready, "pl_b"); next.Phase != PhaseFinished || next.Result.Reason != ReasonAborted || next.Seats[black].Name != DeletedPlayerName {
		t.Errorf("a game in its ready step: %s %+v", next.Phase, next.Result)
	}
	// A rematch waiting for the deleted player: cancelled.
	re, _, err := New(NewGame{GameID: "r1", Options: o, Host: Player{ID: "bob", Name: "Bob", TokenHash: "hb", Bound: true}, Seed: 2,
		Invite: Invite{Mode: InviteReserved, PlayerID: "alice", TokenHash: "ha"}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	next, _ = deleted(t, re, "alice")
	if next.Phase != PhaseFinished || next.Result.Reason != ReasonCancelled || next.Invite.PlayerID != "" {
		t.Errorf("a rematch kept for the deleted player: %+v, invite %+v", next.Result, next.Invite)
	}
	if _, _, err := Reduce(done, PlayerDeleted{}, t0); err == nil {
		t.Error("PlayerDeleted without a player id was applied")
	}
}

func TestSettleRating(t *testing.T) {
	s := readyBoth(t, newRatedGame(t, RoomIntermediate, `{}`), 0)
	ms := s.Clock.StartsAt - t0.UnixMilli()
	s = play(t, s, ms, "f2f3", "e7e5", "g2g4")
	standings := PerColor[PlayerRating]{{Rating: 1000}, {Rating: 1200}}
	ended, _, err := Reduce(s, Rated{Step: Act{By: black, Action: Action{Type: ActionMove, Move: MoveInput{UCI: "d8h4"}, RequestID: "r9"}}, Players: standings}, at(ms+5000))
	if err != nil || ended.Result.RatingChange == nil {
		t.Fatalf("the rated end: %v %+v", err, ended.Result)
	}
	if again, ev, err := Reduce(ended, SettleRating{Change: *ended.Result.RatingChange}, at(ms+6000)); err != nil || again != ended || ev != nil {
		t.Errorf("settling the same numbers: %v; want no new version", err)
	}
	settled := RatingChange{White: RatingMove{Before: 1020, After: 999}, Black: RatingMove{Before: 1040, After: 1058}}
	next, _, err := Reduce(ended, SettleRating{Change: settled}, at(ms+6000))
	if err != nil || *next.Result.RatingChange != settled || next.Version != ended.Version+1 {
		t.Fatalf("settled: %v %+v", err, next.Result)
	}
	// The change and the request that ended the game carry the numbers.
	for _, js := range []json.RawMessage{next.Changes[len(next.Changes)-2].Events, next.Requests[black][len(next.Requests[black])-1].Events} {
		var evs []Event
		if err := json.Unmarshal(js, &evs); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range evs {
			if e.Type == EventGameEnded {
				found = e.RatingChange != nil && *e.RatingChange == settled
			}
		}
		if !found {
			t.Errorf("logged events %s; want the gameEnded event with the settled numbers", js)
		}
	}
	if ended.Result.RatingChange.White == settled.White {
		t.Error("settling changed the state it was given")
	}
	if _, _, err := Reduce(s, SettleRating{Change: settled}, at(ms+6000)); err == nil {
		t.Error("a game in play was settled")
	}
}

// RateOne is Rate's arithmetic for one side.
func TestRateOneIsRate(t *testing.T) {
	for _, r := range []struct{ w, b PlayerRating }{{PlayerRating{1000, 0}, PlayerRating{1000, 0}}, {PlayerRating{1480, 31}, PlayerRating{1210, 3}}, {PlayerRating{900, 40}, PlayerRating{1600, 100}}} {
		for _, winner := range []*chess.Color{nil, colorPtr(white), colorPtr(black)} {
			rc := Rate(r.w, r.b, winner)
			if RateOne(r.w, r.b.Rating, winner, white) != rc.White || RateOne(r.b, r.w.Rating, winner, black) != rc.Black {
				t.Errorf("Rate(%v, %v, %v) = %+v; RateOne differs", r.w, r.b, winner, rc)
			}
		}
	}
}
