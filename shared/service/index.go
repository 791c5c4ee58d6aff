package service

import (
	"encoding/json"
	"fmt"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// The game index (SPEC §12, §15): every write carries, with the game,
// what a player's game list and the lobby show of it, so both are one
// index query (GameLister) and never a read of each game.

// GameSummary is a game as the lists show it: the stored Summary of the
// index, decoded.
type GameSummary struct {
	GameID    string                      `json:"gameId"`
	Phase     game.Phase                  `json:"phase"`
	Options   game.Options                `json:"options"`
	Seats     game.PerColor[*SummarySeat] `json:"seats"`
	Result    *SummaryResult              `json:"result,omitempty"`
	CreatedAt int64                       `json:"createdAt"`
	Invite    game.InviteMode             `json:"invite"`
}

// SummarySeat is a taken seat in a summary.
type SummarySeat struct {
	PlayerID string `json:"playerId"`
	Name     string `json:"name,omitempty"`
	// Bound: PlayerID is a registered player's; Rating is theirs when
	// they sat down.
	Bound  bool   `json:"bound,omitempty"`
	Rating int    `json:"rating,omitempty"`
	AI     string `json:"ai,omitempty"`
}

// SummaryResult is a finished game's outcome in a summary.
type SummaryResult struct {
	Winner       *chess.Color       `json:"winner"`
	Reason       game.Reason        `json:"reason"`
	RatingChange *game.RatingChange `json:"ratingChange,omitempty"`
}

// indexOf is the index part of a game's record; prev is the version it
// replaces (the zero loaded for a new game). Nothing of the
// summary changes with a move (it has no time of the write, no position,
// no clock), so with ListedAt carried over a move leaves every index row
// as it was: the stores' index rows hold the summary.
func (s *Service) indexOf(st *game.State, prev loaded) (GameIndex, error) {
	now := s.now()
	idx := GameIndex{
		Finished:  st.Phase == game.PhaseFinished,
		CreatedAt: time.UnixMilli(st.CreatedAt),
		UpdatedAt: now,
	}
	sum := GameSummary{
		GameID: st.GameID, Phase: st.Phase, Options: st.Options, Invite: st.Invite.Mode,
		CreatedAt: st.CreatedAt,
	}
	for c, seat := range st.Seats {
		if seat.PlayerID == "" {
			continue
		}
		if seat.Bound {
			idx.Players[c] = seat.PlayerID
		}
		sum.Seats[c] = &SummarySeat{PlayerID: seat.PlayerID, Name: seat.Name, Bound: seat.Bound, Rating: seat.Rating, AI: seat.AI}
	}
	if st.Phase == game.PhaseWaiting && st.Invite.Mode == game.InviteOpen {
		idx.LobbyRoom = string(st.Options.Room)
	}
	if r := st.Result; r != nil {
		sum.Result = &SummaryResult{Winner: r.Winner, Reason: r.Reason, RatingChange: r.RatingChange}
	}
	idx.ListedAt = listedAt(prev, idx, st, now)
	data, err := json.Marshal(sum)
	if err != nil {
		return GameIndex{}, fmt.Errorf("encode summary of %s: %w", st.GameID, err)
	}
	idx.Summary = data
	return idx, nil
}

// listedAt is the ListedAt of idx, the index of st written at now over
// prev. A finished game's is the time of this write (its UpdatedAt), so
// the finished list, which its index rows order, is newest updatedAt first
// exactly (SPEC §15); a write after the end is rare (a rematch link, a
// presence version) and each rewrites the game's index rows. An active
// game's is prev's while its status and players stay what they were and it
// does not start (a move, a presence change, an armed timer), so a move
// rewrites no index row; else its creation (a new game) or the time of
// this write (its second seat taken, its players changed). The active
// list is not ordered by it (MyGames orders it by the games' UpdatedAt);
// it only keeps the rows still between starts. A record stored before
// ListedAt existed comes back from the stores with the time its index
// rows were sorted by then (its last write).
func listedAt(prev loaded, idx GameIndex, st *game.State, now time.Time) time.Time {
	was := prev.rec.Index
	started := prev.state != nil && prev.state.Phase == game.PhaseWaiting && st.Phase != game.PhaseWaiting
	switch {
	case idx.Finished:
		return now
	case !was.ListedAt.IsZero() && !was.Finished && was.Players == idx.Players && !started:
		return was.ListedAt
	case prev.state == nil:
		return idx.CreatedAt
	default:
		return now
	}
}

// decodeSummary reads an index entry's summary.
func decodeSummary(e IndexEntry) (GameSummary, error) {
	var sum GameSummary
	if err := json.Unmarshal(e.Summary, &sum); err != nil {
		return GameSummary{}, fmt.Errorf("summary of %s: %w", e.GameID, err)
	}
	if sum.GameID != e.GameID {
		return GameSummary{}, fmt.Errorf("summary of %s names game %s", e.GameID, sum.GameID)
	}
	return sum, nil
}
