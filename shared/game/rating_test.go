package game

import (
	"errors"
	"testing"

	"chessapi/shared/chess"
)

func TestRankKeyAtTheSeedsPoints(t *testing.T) {
	for rating, want := range map[int]string{
		900: "kyu12", 949: "kyu12", 950: "kyu11", 999: "kyu11", 1000: "kyu10", 1049: "kyu10", 1050: "kyu9",
		1299: "kyu5", 1300: "kyu4", 1450: "kyu1", 1499: "kyu1", 1500: "dan1", 1599: "dan1", 1600: "dan2", 2100: "dan7",
	} {
		if got := RankKey(rating); got != want {
			t.Errorf("RankKey(%d) = %s; want %s", rating, got, want)
		}
	}
}

func TestRate(t *testing.T) {
	white, black := chess.White, chess.Black
	tests := []struct {
		name   string
		w, b   PlayerRating
		winner *chess.Color
		want   RatingChange
	}{
		// Equal ratings, K 40: the winner gets 40·½ = 20.
		{"equal, white wins, both new", PlayerRating{1000, 0}, PlayerRating{1000, 0}, &white,
			RatingChange{White: RatingMove{1000, 1020}, Black: RatingMove{1000, 980}}},
		{"equal draw", PlayerRating{1000, 5}, PlayerRating{1000, 5}, nil,
			RatingChange{White: RatingMove{1000, 1000}, Black: RatingMove{1000, 1000}}},
		// The 31st rated game uses K 20; the opponent's 30th still 40.
		{"K 20 from the 31st game", PlayerRating{1000, 30}, PlayerRating{1000, 29}, &black,
			RatingChange{White: RatingMove{1000, 990}, Black: RatingMove{1000, 1020}}},
		// 200 points apart: E = 1/(1+10^(−0.5)) = 0.7597; an upset moves
		// the underdog 40·0.7597 = 30.39 → 30.
		{"upset", PlayerRating{1200, 3}, PlayerRating{1000, 3}, &black,
			RatingChange{White: RatingMove{1200, 1170}, Black: RatingMove{1000, 1030}}},
		// A draw against a stronger player: 40·(0.5−0.2403) = 10.39 → 10.
		{"draw up", PlayerRating{1000, 0}, PlayerRating{1200, 40}, nil,
			RatingChange{White: RatingMove{1000, 1010}, Black: RatingMove{1200, 1195}}},
		// Half away from zero: 20·(1−E) with E = 0.5 is exactly 10.
		{"K 20 equal", PlayerRating{1500, 100}, PlayerRating{1500, 100}, &white,
			RatingChange{White: RatingMove{1500, 1510}, Black: RatingMove{1500, 1490}}},
	}
	for _, tt := range tests {
		if got := Rate(tt.w, tt.b, tt.winner); got != tt.want {
			t.Errorf("%s: Rate = %+v; want %+v", tt.name, got, tt.want)
		}
	}
}

func TestRoomGates(t *testing.T) {
	for _, tc := range []struct {
		room   Room
		rating int
		admits bool
	}{
		{RoomBeginner, 1299, true}, {RoomBeginner, 1300, false},
		{RoomExpert, 1499, false}, {RoomExpert, 1500, true},
		{RoomIntermediate, 100, true}, {RoomIntermediate, 2500, true}, {RoomFree, 2500, true},
	} {
		if got := tc.room.Admits(tc.rating); got != tc.admits {
			t.Errorf("%s admits %d = %v; want %v", tc.room, tc.rating, got, tc.admits)
		}
	}
	expert := DefaultOptionsFor(RoomExpert)
	expert.ColorAssignment = ColorsHostWhite
	host := Player{ID: "pl_a", Name: "A", TokenHash: "ha", Bound: true, Rating: 1499}
	if _, _, err := New(NewGame{GameID: "g", Options: expert, Host: host}, t0); ruleCode(err) != CodeRatingOutOfRange {
		t.Errorf("create in expert at 1499: %v; want rating_out_of_range", err)
	}
	host.Rating = 1500
	s, _, err := New(NewGame{GameID: "g", Options: expert, Host: host}, t0)
	if err != nil {
		t.Fatalf("create in expert at 1500: %v", err)
	}
	if _, _, err := New(NewGame{GameID: "g", Options: expert, Host: host, AI: "easy"}, t0); err == nil || !isField(err, "opponent") {
		t.Errorf("AI opponent in a rated room: %v; want invalid opponent", err)
	}
	low := Player{ID: "pl_b", Name: "B", TokenHash: "hb", Bound: true, Rating: 1499}
	if _, _, err := joinGame(s, low, at(1)); ruleCode(err) != CodeRatingOutOfRange {
		t.Errorf("join expert at 1499: %v; want rating_out_of_range", err)
	}
	low.Rating = 1500
	if _, _, err := joinGame(s, low, at(1)); err != nil {
		t.Errorf("join expert at 1500: %v", err)
	}
}

func isField(err error, field string) bool {
	var ie *InputError
	return errors.As(err, &ie) && ie.Field == field
}

func TestInvites(t *testing.T) {
	o := opts(t, `{"colorAssignment":"hostWhite"}`)
	host := Player{ID: "h", Name: "H", TokenHash: "th"}
	s, _, err := New(NewGame{GameID: "g", Options: o, Host: host, Invite: Invite{Mode: InvitePrivate, CodeHash: "code-hash"}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	guest := Player{ID: "j", Name: "J", TokenHash: "tj"}
	for _, hash := range []string{"", "other"} {
		if _, _, err := Reduce(s, Join{Player: guest, InviteCodeHash: hash}, at(1)); ruleCode(err) != CodeInviteRequired {
			t.Errorf("join a private game with code hash %q: %v; want invite_required", hash, err)
		}
	}
	if _, _, err := Reduce(s, Join{Player: guest, InviteCodeHash: "code-hash"}, at(1)); err != nil {
		t.Errorf("join with the code: %v", err)
	}
	// Stored and read back, the invite holds.
	back := roundTrip(t, s)
	if back.Invite != s.Invite {
		t.Errorf("invite after a round trip = %+v; want %+v", back.Invite, s.Invite)
	}

	// A rematch seat reserved for the old opponent: their player, or their
	// old seat token.
	r, _, err := New(NewGame{GameID: "r", Options: o, Host: host, Invite: Invite{Mode: InviteReserved, PlayerID: "pl_x", TokenHash: "old-seat"}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Reduce(r, Join{Player: guest}, at(1)); ruleCode(err) != CodeInviteRequired {
		t.Errorf("a stranger takes the reserved seat: %v; want invite_required", err)
	}
	if _, _, err := Reduce(r, Join{Player: Player{ID: "pl_x", Bound: false}}, at(1)); ruleCode(err) != CodeInviteRequired {
		t.Errorf("an unbound claim of the reserved player's id: %v; want invite_required", err)
	}
	if _, _, err := Reduce(r, Join{Player: Player{ID: "pl_x", Name: "X", Bound: true}}, at(1)); err != nil {
		t.Errorf("the reserved player joins: %v", err)
	}
	if _, _, err := Reduce(r, Join{Player: guest, ProofTokenHash: "old-seat"}, at(1)); err != nil {
		t.Errorf("the old seat's token joins: %v", err)
	}
}

func TestWaitingGameExpires(t *testing.T) {
	o := opts(t, `{"colorAssignment":"hostWhite"}`)
	o.WaitingExpirySec = 60
	s, _, err := New(NewGame{GameID: "g", Options: o, Host: Player{ID: "h", TokenHash: "th"}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	if same, evs, err := Reduce(s, Timeout{}, at(59_999)); err != nil || same != s || evs != nil {
		t.Fatalf("timeout before the expiry: %v %v; want nothing", evs, err)
	}
	next, evs, err := Reduce(s, Timeout{}, at(60_000))
	if err != nil || next.Phase != PhaseFinished || next.Result.Reason != ReasonExpired || next.Result.Winner != nil || len(next.Result.Ranking) != 0 {
		t.Fatalf("timeout at the expiry: %+v, %v; want finished, expired, unranked", next.Result, err)
	}
	if !hasEvent(evs, EventGameEnded) || next.pgnResult() != "*" {
		t.Errorf("expiry events %v, PGN result %s; want gameEnded and *", evs, next.pgnResult())
	}
	if _, _, err := Reduce(next, Join{Player: Player{ID: "j", TokenHash: "tj"}}, at(60_001)); ruleCode(err) != CodeGameNotWaiting {
		t.Errorf("join an expired game: %v; want game_not_waiting", err)
	}
	if _, ok := Deadline(next); ok {
		t.Error("an expired game still has a deadline")
	}
	roundTrip(t, next)
}

// TestRatedStep: a rated game's end carries its rating change in the
// result and the gameEnded event, through a restore; a plain Reduce
// of the same step tells the caller to read the ratings (EndsRatedGame).
func TestRatedStep(t *testing.T) {
	s := newRatedGame(t, RoomIntermediate, `{"timeControl":"perMove:30"}`)
	s = readyBoth(t, s, 0)
	s = play(t, s, 4000, "f2f3", "e7e5", "g2g4")
	mate := Act{By: chess.Black, Action: moveAction("d8h4")}
	plain, _, err := Reduce(s, mate, at(7000))
	if err != nil || !EndsRatedGame(s, plain) || plain.Result.RatingChange != nil {
		t.Fatalf("plain mate: %v, ends rated %v, change %v; want a rated end without a change", err, EndsRatedGame(s, plain), plain.Result.RatingChange)
	}
	players := PerColor[PlayerRating]{{Rating: 1005, RatedGames: 2}, {Rating: 1190, RatedGames: 40}}
	rated, evs, err := Reduce(s, Rated{Step: mate, Players: players}, at(7000))
	if err != nil {
		t.Fatal(err)
	}
	want := Rate(players[chess.White], players[chess.Black], rated.Result.Winner)
	if rc := rated.Result.RatingChange; rc == nil || *rc != want || want.Black.Delta() <= 0 {
		t.Fatalf("rated mate: change %+v; want %+v (black won)", rc, want)
	}
	var ended *Event
	for i := range evs {
		if evs[i].Type == EventGameEnded {
			ended = &evs[i]
		}
	}
	if ended == nil || ended.RatingChange == nil || *ended.RatingChange != want {
		t.Errorf("gameEnded event %+v; want the rating change", ended)
	}
	if back := roundTrip(t, rated); back.Result.RatingChange == nil || *back.Result.RatingChange != want {
		t.Errorf("rating change after a round trip = %+v; want %+v", back.Result.RatingChange, want)
	}
	v, err := ViewOf(rated, nil, at(7000))
	if err != nil || v.Result.RatingChange == nil || *v.Result.RatingChange != want {
		t.Errorf("view's result rating change = %+v, %v", v.Result, err)
	}

	// A flag fall ends a rated game too (nobody acting: a Timeout step):
	// the per-move period and its three extensions, 4 × 30 s.
	flag, _, err := Reduce(s, Rated{Step: Timeout{}, Players: players}, at(6000+4*30_000))
	if err != nil || flag.Phase != PhaseFinished || flag.Result.RatingChange == nil {
		t.Errorf("flag fall: %+v, %v; want a rated end", flag.Result, err)
	}
	// Aborted and unrated games never carry one.
	free := opts(t, `{"colorAssignment":"hostWhite"}`)
	g := newGame(t, free)
	g = play(t, g, 1000, "f2f3", "e7e5", "g2g4")
	end, _, _ := Reduce(g, Rated{Step: mate, Players: players}, at(5000))
	if end.Result.RatingChange != nil || end.Rated() {
		t.Errorf("free room: change %+v; want none", end.Result.RatingChange)
	}
}
