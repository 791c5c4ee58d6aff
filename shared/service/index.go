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
	UpdatedAt int64                       `json:"updatedAt"`
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

// indexOf is the index part of a game's record.
func (s *Service) indexOf(st *game.State) (GameIndex, error) {
	now := s.now()
	idx := GameIndex{
		Finished:  st.Phase == game.PhaseFinished,
		CreatedAt: time.UnixMilli(st.CreatedAt),
		UpdatedAt: now,
	}
	sum := GameSummary{
		GameID: st.GameID, Phase: st.Phase, Options: st.Options, Invite: st.Invite.Mode,
		CreatedAt: st.CreatedAt, UpdatedAt: now.UnixMilli(),
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
	data, err := json.Marshal(sum)
	if err != nil {
		return GameIndex{}, fmt.Errorf("encode summary of %s: %w", st.GameID, err)
	}
	idx.Summary = data
	return idx, nil
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
