package game

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"chessapi/shared/chess"
)

// The steps accounts ask of a game (SPEC §16.2): the end and the
// anonymisation of a deleted player's games, and the settlement of a rated
// result's numbers once each player's rating application has run. They
// are system-only, like Timeout and AIForfeit: no seat can ask for them.

// ReasonCancelled: a waiting game whose host (or the player its seat was
// kept for) deleted their account.
const ReasonCancelled Reason = "cancelled"

// DeletedPlayerName replaces the name of a deleted player's seats (and so
// stands in views, lists, the lobby and the PGN): a neutral label the edge
// shows in the reader's language ("탈퇴한 사용자" in Korean). The service
// refuses it, in any case and spacing, as the name of anyone.
const DeletedPlayerName = "Deleted player"

// PlayerDeleted is what a player's deletion does to one of their games: a
// waiting game of theirs (or one whose free seat was kept for them, a
// rematch) is cancelled; a game in its ready step or in play is resigned by
// their seat (called off before both sides moved, as a resignation then
// is); and every seat of
// theirs loses its name (DeletedPlayerName) and its seat token. A game
// that is already so is left as it is (no new version), so the step can
// be asked again when a deletion is retried.
type PlayerDeleted struct{ PlayerID string }

// SettleRating writes a rated game's final rating change: the numbers of
// each player's application (SPEC §16.2: each before is the rating just
// before that application), replacing the ones the end of the game
// computed from the standings read then. The gameEnded event of the
// change that ended the game (and the request log entry that answered it)
// carry the settled numbers too. Equal numbers change nothing.
type SettleRating struct{ Change RatingChange }

func (PlayerDeleted) isStep() {}
func (SettleRating) isStep()  {}

// systemStep is a step that applies itself (Reduce dispatches it without
// a case of its own).
type systemStep interface {
	Step
	apply(s *State, now time.Time) (*State, []Event, error)
}

var (
	_ systemStep = PlayerDeleted{}
	_ systemStep = SettleRating{}
)

func (d PlayerDeleted) apply(s *State, now time.Time) (*State, []Event, error) {
	if d.PlayerID == "" {
		return nil, nil, fmt.Errorf("game: player deleted: empty player id")
	}
	var mine []chess.Color
	for _, c := range []chess.Color{chess.White, chess.Black} {
		if seat := s.Seats[c]; seat.Bound && seat.PlayerID == d.PlayerID {
			mine = append(mine, c)
		}
	}
	reserved := s.Phase == PhaseWaiting && s.Invite.Mode == InviteReserved && s.Invite.PlayerID == d.PlayerID
	if len(mine) == 0 && !reserved {
		return s, nil, nil
	}
	next := s.clone()
	var events []Event
	switch s.Phase {
	case PhaseWaiting:
		next.finish(nil, ReasonCancelled, max(now.UnixMilli(), s.CreatedAt), &events)
	case PhaseReady, PhasePlaying:
		// The deleted player's seat resigns, as its own resignation would
		// (called off in the ready step and before both sides moved).
		var err error
		if next, events, err = s.act(mine[0], Action{Type: ActionResign}, now); err != nil {
			return nil, nil, err
		}
	}
	changed := len(events) > 0
	for _, c := range mine {
		seat := &next.Seats[c]
		if seat.Name != DeletedPlayerName || seat.TokenHash != "" {
			seat.Name, seat.TokenHash = DeletedPlayerName, ""
			changed = true
		}
	}
	if reserved && next.Invite.PlayerID != "" {
		next.Invite.PlayerID, next.Invite.TokenHash = "", ""
	}
	if !changed {
		return s, nil, nil
	}
	return next, events, nil
}

func (r SettleRating) apply(s *State, _ time.Time) (*State, []Event, error) {
	if s.Phase != PhaseFinished || s.Result == nil || s.Result.RatingChange == nil {
		return nil, nil, fmt.Errorf("game: settle rating: game %s has no rated result", s.GameID)
	}
	if *s.Result.RatingChange == r.Change {
		return s, nil, nil
	}
	next := s.clone()
	rc := r.Change
	next.Result.RatingChange = &rc
	// The change that ended the game, and the request that ended it if
	// one did: their gameEnded event carries the settled numbers.
	patch := func(events json.RawMessage) (json.RawMessage, bool, error) {
		if !bytes.Contains(events, []byte(`"gameEnded"`)) {
			return events, false, nil
		}
		var evs []Event
		if err := json.Unmarshal(events, &evs); err != nil {
			return nil, false, fmt.Errorf("game: settle rating: stored events: %w", err)
		}
		found := false
		for i := range evs {
			if evs[i].Type == EventGameEnded && evs[i].RatingChange != nil {
				evs[i].RatingChange, found = &rc, true
			}
		}
		if !found {
			return events, false, nil
		}
		js, err := json.Marshal(evs)
		return js, true, err
	}
	for i := range next.Changes {
		js, ok, err := patch(next.Changes[i].Events)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			next.Changes[i].Events = js
		}
	}
	for c := range next.Requests {
		for i := range next.Requests[c] {
			js, ok, err := patch(next.Requests[c][i].Events)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				next.Requests[c][i].Events = js
			}
		}
	}
	return next, nil, nil
}

// RateOne is one player's application of a rated result (SPEC §16.2): the
// player's rating just before it (p, read fresh when the application
// runs), the opponent's rating the game was rated against, and whether
// colour c won, drew or lost (winner nil: a draw). The rounding and K are
// Rate's.
func RateOne(p PlayerRating, opponent int, winner *chess.Color, c chess.Color) RatingMove {
	score := 0.5
	if winner != nil {
		score = 0
		if *winner == c {
			score = 1
		}
	}
	d := kFactor(p.RatedGames) * (score - Expected(p.Rating, opponent))
	return RatingMove{Before: p.Rating, After: p.Rating + int(math.Round(d))}
}
