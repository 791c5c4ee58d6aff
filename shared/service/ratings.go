package service

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// Ratings (SPEC §12) are applied exactly once per rated game. The game's
// own write decides the change (the result carries it, computed from both
// players' standings read when the step ended the game); applying it to
// the players is an effect of that commit, like the timer: retried until
// done, and idempotent, because each player record lists the games whose
// change it already includes (PlayerRecord.Applied). Two games of one
// player ending at once both apply: each goes through updatePlayer (a
// compare-and-set on the player's version, retried on a lost race),
// adding its own delta.
//
// The delta itself is still decided when the game ends, from the
// standings read then (update → standings): two games of one player that
// end at the same moment are both rated from the same standing. Making
// each game's change start from the rating the previous application left
// (issue 23's chain) means deciding it inside the change function, where
// the fresh record is, and writing it back into the game's result.

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

// applyRatings adds a finished rated game's change to both players, once.
func (s *Service) applyRatings(ctx context.Context, st *game.State) error {
	if s.cfg.Players == nil {
		return errors.New("rated game without a players store")
	}
	rc := st.Result.RatingChange
	var errs []error
	for _, c := range []chess.Color{chess.White, chess.Black} {
		if err := s.applyRating(ctx, st.Seats[c].PlayerID, st.GameID, rc.Of(c).Delta()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// applyRating adds a rated game's change to one player, once: through the
// one player-update loop, so each game's application sees the record as
// the one before left it, and a redelivery finds its game already listed.
func (s *Service) applyRating(ctx context.Context, playerID, gameID string, delta int) error {
	_, err := s.updatePlayer(ctx, playerID, func(p *PlayerRecord) error {
		if slices.Contains(p.Applied, gameID) {
			return errUnchanged // a redelivery: already counted
		}
		p.Rating += delta
		p.RatedGames++
		p.Applied = append(p.Applied, gameID)
		if len(p.Applied) > appliedKept {
			p.Applied = p.Applied[len(p.Applied)-appliedKept:]
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rating of %s for %s: %w", playerID, gameID, err)
	}
	return nil
}

// RecoverRatings applies the rating changes of finished games whose
// application may have been cut short (a crash between a game's last write
// and its effects): the local server calls it at start with the games
// finished recently. Games already applied are left as they are; the
// number of games whose change was applied now is returned.
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
		before := make(map[string]bool, 2)
		for _, c := range []chess.Color{chess.White, chess.Black} {
			p, err := s.cfg.Players.Player(ctx, st.Seats[c].PlayerID)
			if err != nil {
				return applied, err
			}
			before[p.ID] = slices.Contains(p.Applied, st.GameID)
		}
		if before[st.Seats[chess.White].PlayerID] && before[st.Seats[chess.Black].PlayerID] {
			continue
		}
		if err := s.applyRatings(ctx, st); err != nil {
			return applied, err
		}
		applied++
	}
	return applied, nil
}
