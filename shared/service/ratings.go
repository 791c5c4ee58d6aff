package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// Ratings (SPEC §12, §16.2) chain: a player's rated results apply one at a
// time, in the order their applications reach the player, and each one
// starts from the rating the one before left. The end of a rated game
// records a provisional change, computed from both players' standings
// read when the step ended the game (update → standings); applying it to
// the players is an effect of that commit, like the timer:
//
//  1. for each player, inside the one player-update loop (updatePlayer),
//     from the record as it is at that moment: before = its rating, the
//     change = K(its rated games)·(S − E(before, the opponent's standing
//     at the end)), after = before + change; the record lists the game
//     (Applied) and keeps the numbers (RatingHistory). A redelivery finds
//     the game listed and takes the numbers from the history: exactly
//     once.
//  2. the game's result is settled with those numbers (game.SettleRating,
//     through the one game transaction); when nobody else's application
//     came between, they equal the provisional ones and nothing is written.
//
// So each game's ratingChange[color].before is the rating just before its
// application, the next application's before is this one's after, and
// the profile is the last after, also when games end at the same moment.
//
// Applications of one player are serialised in this process (playerLocks:
// twenty games ending at once queue instead of racing), and across
// processes retried on the conditional write with jittered pauses
// (retry.PlayerWrite).

// appliedKept is how many rated game ids a player record remembers; a
// redelivery of an older game's change than that is not possible (the
// stream keeps records 24 hours; local retries stop long before a player
// finishes 64 more rated games).
const appliedKept = 64

// standings reads both players' ratings for a rated game that is ending.
func (s *Service) standings(ctx context.Context, st *game.State) (game.PerColor[game.PlayerRating], error) {
	var out game.PerColor[game.PlayerRating]
	if s.cfg.Players == nil {
		return out, errors.New("rated game without a players store")
	}
	for _, c := range []chess.Color{chess.White, chess.Black} {
		p, err := s.cfg.Players.Player(ctx, st.Seats[c].PlayerID)
		if errors.Is(err, ErrNotFound) {
			// A player deleted meanwhile: rated from where they sat down.
			out[c] = game.PlayerRating{Rating: st.Seats[c].Rating}
			continue
		}
		if err != nil {
			return out, fmt.Errorf("standing of %s: %w", st.Seats[c].PlayerID, err)
		}
		out[c] = game.PlayerRating{Rating: p.Rating, RatedGames: p.RatedGames}
	}
	return out, nil
}

// ratingFinished reports whether next is the commit that finished a rated
// game (its change still to apply to the players).
func ratingFinished(prev, next *game.State) bool {
	return (prev == nil || prev.Phase != game.PhaseFinished) && next.Phase == game.PhaseFinished &&
		next.Result != nil && next.Result.RatingChange != nil
}

// applyRatings applies a finished rated game's result to both players,
// once each, and settles the game's numbers. It reports whether anything
// was written.
func (s *Service) applyRatings(ctx context.Context, st *game.State) (bool, error) {
	if s.cfg.Players == nil {
		return false, errors.New("rated game without a players store")
	}
	provisional := *st.Result.RatingChange
	settled := provisional
	wrote := false
	var errs []error
	for _, c := range []chess.Color{chess.White, chess.Black} {
		move, applied, err := s.applyRating(ctx, st, c, provisional)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		wrote = wrote || applied
		if c == chess.White {
			settled.White = move
		} else {
			settled.Black = move
		}
	}
	if err := errors.Join(errs...); err != nil {
		return wrote, err
	}
	if settled == provisional {
		return wrote, nil
	}
	out, err := s.update(ctx, txn{
		gameID: st.GameID,
		access: system,
		step: func(*game.State, *chess.Color) (game.Step, error) {
			return game.SettleRating{Change: settled}, nil
		},
	})
	if errors.Is(err, ErrNotFound) {
		return wrote, nil // the game expired meanwhile (TTL)
	}
	if err != nil {
		return wrote, fmt.Errorf("settle the rating of %s: %w", st.GameID, err)
	}
	return wrote || out.events != nil, nil
}

// applyRating applies a rated game's result to the player of colour c,
// once, and returns that player's numbers for the game (applied: the
// record was written now). The change starts from the player's record as
// updatePlayer reads it, against the opponent's standing when the game
// ended (the provisional change's before). A deleted player keeps the
// provisional numbers.
func (s *Service) applyRating(ctx context.Context, st *game.State, c chess.Color, provisional game.RatingChange) (move game.RatingMove, applied bool, err error) {
	playerID, gameID := st.Seats[c].PlayerID, st.GameID
	opponent := provisional.Of(c.Other()).Before
	endedAt := time.UnixMilli(st.Result.EndedAt).UTC()
	next, err := s.updatePlayer(ctx, playerID, func(p *PlayerRecord) error {
		if slices.Contains(p.Applied, gameID) {
			return errUnchanged // a redelivery: already counted
		}
		m := game.RateOne(game.PlayerRating{Rating: p.Rating, RatedGames: p.RatedGames}, opponent, st.Result.Winner, c)
		p.Rating = m.After
		p.RatedGames++
		p.Applied = append(p.Applied, gameID)
		if len(p.Applied) > appliedKept {
			p.Applied = p.Applied[len(p.Applied)-appliedKept:]
		}
		p.RatingHistory = append(p.RatingHistory, RatingEntry{GameID: gameID, At: endedAt, Before: m.Before, After: m.After})
		if len(p.RatingHistory) > ratingHistoryKept {
			p.RatingHistory = p.RatingHistory[len(p.RatingHistory)-ratingHistoryKept:]
		}
		applied = true
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return provisional.Of(c), false, nil // deleted: nothing to apply to
	}
	if err != nil {
		return game.RatingMove{}, false, fmt.Errorf("rating of %s for %s: %w", playerID, gameID, err)
	}
	for _, e := range slices.Backward(next.RatingHistory) {
		if e.GameID == gameID {
			return game.RatingMove{Before: e.Before, After: e.After}, applied, nil
		}
	}
	// Applied before the record kept its history (or long ago): the game's
	// numbers stand as they are.
	return st.Result.RatingChange.Of(c), applied, nil
}

// RecoverRatings applies the rating changes of finished games whose
// application may have been cut short (a crash between a game's last write
// and its effects): the local server calls it at start with the games
// finished recently. Games already applied and settled are left as they
// are; the number of games where something was written now is returned.
func (s *Service) RecoverRatings(ctx context.Context, recs []GameRecord) (int, error) {
	if s.cfg.Players == nil {
		return 0, nil
	}
	applied := 0
	for _, rec := range recs {
		st, err := s.decode(rec)
		if err != nil {
			return applied, err
		}
		if st.Result == nil || st.Result.RatingChange == nil {
			continue
		}
		wrote, err := s.applyRatings(ctx, st)
		if err != nil {
			return applied, err
		}
		if wrote {
			applied++
		}
	}
	return applied, nil
}
