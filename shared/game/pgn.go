package game

import (
	"fmt"
	"strconv"
	"time"

	"chessapi/shared/chess"
)

// PGN returns the game in Portable Game Notation: the Seven Tag Roster
// (Date from the creation day in UTC, player names), TimeControl and
// Termination, Variant/SetUp/FEN for a Chess960 start (added by the rules
// package), the SAN movetext and the result ("*" while playing and for an
// aborted game).
func PGN(s *State) (string, error) {
	start, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		return "", fmt.Errorf("game: pgn: %w", err)
	}
	g := chess.PGNGame{Result: s.pgnResult(), Tags: s.pgnTags()}
	if s.Options.Variant == VariantChess960 || s.StartFEN != chess.StartFEN {
		first := *start
		g.Start = &first
	}
	pos := *start
	g.Moves = make([]chess.Move, 0, len(s.Moves))
	for i, rec := range s.Moves {
		m, err := pos.ParseUCI(rec.UCI)
		if err != nil {
			return "", fmt.Errorf("game: pgn: move %d: %w", i+1, err)
		}
		g.Moves = append(g.Moves, m)
		pos.Play(m)
	}
	text, err := g.Text()
	if err != nil {
		return "", fmt.Errorf("game: pgn: %w", err)
	}
	return text, nil
}

func (s *State) pgnTags() []chess.PGNTag {
	// The PGN is language-neutral: AI seats are named by their level in
	// plain ASCII, whatever the language of the game's players, and an
	// unnamed player is "?" (the PGN standard's unknown), never an id.
	name := func(c chess.Color) string {
		switch seat := s.Seats[c]; {
		case seat.AI != "":
			return "AI (" + seat.AI + ")"
		case seat.Name != "":
			return seat.Name
		}
		return "?"
	}
	tags := []chess.PGNTag{
		{Name: "Event", Value: "Casual game"},
		{Name: "Site", Value: "chessapi"},
		{Name: "Date", Value: time.UnixMilli(s.CreatedAt).UTC().Format("2006.01.02")},
		{Name: "Round", Value: "-"},
		{Name: "White", Value: name(chess.White)},
		{Name: "Black", Value: name(chess.Black)},
	}
	if s.GameID != "" {
		tags = append(tags, chess.PGNTag{Name: "GameId", Value: s.GameID})
	}
	tags = append(tags, chess.PGNTag{Name: "TimeControl", Value: pgnTimeControl(s.Options.TimeControl)})
	if s.Result != nil {
		term := "normal"
		switch s.Result.Reason {
		case ReasonTimeLoss, ReasonTimeoutVsInsufficient:
			term = "time forfeit"
		case ReasonAborted, ReasonExpired, ReasonCancelled:
			term = "abandoned"
		}
		tags = append(tags, chess.PGNTag{Name: "Termination", Value: term})
	}
	return tags
}

// pgnTimeControl writes the PGN TimeControl tag: "600+5" (Fischer), "1/60"
// (one move per 60 seconds) or "-" (none).
func pgnTimeControl(tc TimeControl) string {
	switch tc.Kind {
	case TimeNone:
		return "-"
	case TimePerMove:
		return "1/" + strconv.Itoa(tc.PerMoveSec)
	}
	return strconv.Itoa(tc.BaseSec) + "+" + strconv.Itoa(tc.IncSec)
}
