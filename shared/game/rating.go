package game

import (
	"math"
	"strconv"

	"chessapi/shared/chess"
)

// Ratings (seeds/003, SPEC §12): everyone starts at 1000; a rated game
// moves both players' ratings by K·(S − E), E the Elo expectation
// 1/(1+10^((Ro−R)/400)), S 1, ½ or 0, rounded half away from zero; K is 40
// for a player's rated games 1-30 and 20 from the 31st (draws count).
// Games against the AI, in the free room, aborted or expired ones are
// unrated.

// InitialRating is every player's rating before their first rated game.
const InitialRating = 1000

// ProvisionalGames is how many rated games a player plays with K = 40.
const ProvisionalGames = 30

// PlayerRating is a player's standing before a game.
type PlayerRating struct {
	Rating int
	// RatedGames counts the player's rated games so far.
	RatedGames int
}

// RatingChange is what a rated game did to both players' ratings.
type RatingChange struct {
	White RatingMove `json:"white"`
	Black RatingMove `json:"black"`
}

// RatingMove is one player's rating before and after a game.
type RatingMove struct {
	Before int `json:"before"`
	After  int `json:"after"`
}

// Delta is the change.
func (m RatingMove) Delta() int { return m.After - m.Before }

// Of returns the move of the player of colour c.
func (rc RatingChange) Of(c chess.Color) RatingMove {
	if c == chess.Black {
		return rc.Black
	}
	return rc.White
}

// kFactor is K for a player who has played ratedGames rated games before
// this one.
func kFactor(ratedGames int) float64 {
	if ratedGames < ProvisionalGames {
		return 40
	}
	return 20
}

// Expected is the Elo expectation of a player rated r against one rated o.
func Expected(r, o int) float64 {
	return 1 / (1 + math.Pow(10, float64(o-r)/400))
}

// Rate computes a rated game's rating change: winner is nil for a draw.
func Rate(white, black PlayerRating, winner *chess.Color) RatingChange {
	score := [2]float64{0.5, 0.5}
	if winner != nil {
		score[*winner], score[winner.Other()] = 1, 0
	}
	move := func(p, o PlayerRating, s float64) RatingMove {
		d := kFactor(p.RatedGames) * (s - Expected(p.Rating, o.Rating))
		// math.Round rounds half away from zero, as SPEC §15 asks.
		return RatingMove{Before: p.Rating, After: p.Rating + int(math.Round(d))}
	}
	return RatingChange{
		White: move(white, black, score[chess.White]),
		Black: move(black, white, score[chess.Black]),
	}
}

// RankKey is the rank of a rating as a key: "kyu10" for 1000 (one 급 per
// 50 points: 900 is kyu12, 1299 kyu5, 1450 kyu1), "dan1" from 1500 (one 단
// per 100 points: 1600 is dan2). Display labels ("10급", "10 kyu") belong to
// the edge.
func RankKey(rating int) string {
	if rating >= 1500 {
		return "dan" + strconv.Itoa(1+(rating-1500)/100)
	}
	// Floor division, so 999 is kyu11 and 950 kyu11, 949 kyu12.
	steps := (rating - 1000) / 50
	if rating < 1000 && (rating-1000)%50 != 0 {
		steps--
	}
	return "kyu" + strconv.Itoa(10-steps)
}

// Rated reports whether a finished game changes ratings: a rated room,
// both seats bound to registered players, no AI, and a result that is
// not an abort or an expiry.
func (s *State) Rated() bool {
	if !s.ratedSeats() || s.Phase != PhaseFinished || s.Result == nil {
		return false
	}
	return s.Result.Reason != ReasonAborted && s.Result.Reason != ReasonExpired
}

// Rated asks Reduce to apply Step and, if that ends a rated game, to rate
// it with the players' standings as they are now: the result and its
// gameEnded event then carry the rating change. The service reads the
// standings only when a plain Reduce of the same step ends a rated game
// (Reduce is deterministic, so the outcome is the same).
type Rated struct {
	Step    Step
	Players PerColor[PlayerRating]
}

func (Rated) isStep() {}

// EndsRatedGame reports whether next, the state after one Reduce of prev,
// is the end of a rated game (so the step should be applied again as
// Rated).
func EndsRatedGame(prev, next *State) bool {
	return prev.Phase != PhaseFinished && next != nil && next.Rated()
}

// rate sets the rating change on a state that has just finished a rated
// game, and on its gameEnded event.
func (s *State) rate(players PerColor[PlayerRating], events []Event) {
	if !s.Rated() || s.Result.RatingChange != nil {
		return
	}
	rc := Rate(players[chess.White], players[chess.Black], s.Result.Winner)
	s.Result.RatingChange = &rc
	for i := range events {
		if events[i].Type == EventGameEnded {
			events[i].RatingChange = &rc
		}
	}
}
