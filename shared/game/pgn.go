package game

import (
	"fmt"
	"strconv"
	"time"

	"chessapi/shared/chess"
)

// PGN returns the game in Portable Game Notation, in the standard's export
// format (SPEC §16.2): the Seven Tag Roster (Event "Rated game" for a game
// of a rated room, "Casual game" otherwise; Date from the creation day in
// UTC; the player names), then in ASCII order of their names WhiteElo and
// BlackElo (a rated game's ratings before it), GameId, TimeControl,
// Termination and, for a Chess960 start, Variant/SetUp/FEN (added by the
// rules package); the SAN movetext, in a Fischer game with the mover's
// clock after each move as {[%clk H:MM:SS]}; and the result ("*" while
// playing and for an aborted game).
func PGN(s *State) (string, error) {
	start, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		return "", fmt.Errorf("game: pgn: %w", err)
	}
	g := chess.PGNGame{Result: s.pgnResult(), Tags: s.pgnTags(), Comments: s.pgnClocks()}
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
	event := "Casual game"
	if s.ratedSeats() {
		event = "Rated game"
	}
	tags := []chess.PGNTag{
		{Name: "Event", Value: event},
		{Name: "Site", Value: "chessapi"},
		{Name: "Date", Value: time.UnixMilli(s.CreatedAt).UTC().Format("2006.01.02")},
		{Name: "Round", Value: "-"},
		{Name: "White", Value: name(chess.White)},
		{Name: "Black", Value: name(chess.Black)},
	}
	if s.ratedSeats() {
		elo := s.ratingsBefore()
		tags = append(tags,
			chess.PGNTag{Name: "WhiteElo", Value: strconv.Itoa(elo[chess.White])},
			chess.PGNTag{Name: "BlackElo", Value: strconv.Itoa(elo[chess.Black])})
	}
	if s.GameID != "" {
		tags = append(tags, chess.PGNTag{Name: "GameId", Value: s.GameID})
	}
	tags = append(tags,
		chess.PGNTag{Name: "TimeControl", Value: pgnTimeControl(s.Options.TimeControl)},
		chess.PGNTag{Name: "Termination", Value: s.pgnTermination()})
	return tags
}

// ratedSeats reports whether the game is one that rates its players: a
// rated room with both seats bound to registered players and no AI (Rated
// says whether its result does).
func (s *State) ratedSeats() bool {
	if !s.Options.Room.Rated() {
		return false
	}
	for _, seat := range s.Seats {
		if !seat.Bound || seat.AI != "" {
			return false
		}
	}
	return true
}

// ratingsBefore is each player's rating before the game: the result's
// rating change says it exactly (SPEC §16.2: the rating just before the
// change was applied); until then the rating the player sat down with.
func (s *State) ratingsBefore() PerColor[int] {
	if r := s.Result; r != nil && r.RatingChange != nil {
		return PerColor[int]{r.RatingChange.White.Before, r.RatingChange.Black.Before}
	}
	return PerColor[int]{s.Seats[chess.White].Rating, s.Seats[chess.Black].Rating}
}

// pgnTermination is the Termination tag of the PGN standard (9.8.1) for each
// result reason: every game that ends by the rules of play ends "normal",
// the flag falls "time forfeit", games called off are "abandoned", and a
// game still being played is "unterminated".
var pgnTermination = map[Reason]string{
	ReasonCheckmate:             "normal",
	ReasonResign:                "normal",
	ReasonStalemate:             "normal",
	ReasonInsufficientMaterial:  "normal",
	ReasonThreefold:             "normal",
	ReasonFivefold:              "normal",
	ReasonFiftyMove:             "normal",
	ReasonSeventyFiveMove:       "normal",
	ReasonDrawAgreed:            "normal",
	ReasonTimeLoss:              "time forfeit",
	ReasonTimeoutVsInsufficient: "time forfeit",
	ReasonAborted:               "abandoned",
	ReasonCancelled:             "abandoned",
	ReasonExpired:               "abandoned",
}

func (s *State) pgnTermination() string {
	if s.Result == nil {
		return "unterminated"
	}
	if t, ok := pgnTermination[s.Result.Reason]; ok {
		return t
	}
	return "abandoned" // a reason this table does not know: the game did not end by play
}

// pgnTimeControl writes the PGN TimeControl tag (9.6.1): "600+5" (Fischer),
// "1/60" (one move per 60 seconds), "1/86400" (correspondence: one move per
// day, for days:1) or "-" (none).
func pgnTimeControl(tc TimeControl) string {
	switch tc.Kind {
	case TimeNone:
		return "-"
	case TimePerMove, TimeDays:
		return "1/" + strconv.FormatInt(tc.fullMs()/1000, 10)
	}
	return strconv.Itoa(tc.BaseSec) + "+" + strconv.Itoa(tc.IncSec)
}

// pgnClocks are the clock comments of a Fischer game: after each move the
// mover's main time, "[%clk H:MM:SS]" (whole seconds, rounded down as a
// clock shows them). Other time controls have none.
func (s *State) pgnClocks() []string {
	if s.Options.TimeControl.Kind != TimeFischer || len(s.Moves) == 0 {
		return nil
	}
	after := s.ClocksAfterMoves()
	out := make([]string, len(after))
	for i, ms := range after {
		out[i] = "[%clk " + clockText(ms) + "]"
	}
	return out
}

// clockText writes ms as H:MM:SS, rounded down to the second.
func clockText(ms int64) string {
	sec := max(0, ms) / 1000
	b := strconv.AppendInt(nil, sec/3600, 10)
	b = append(b, ':', byte('0'+sec/60%60/10), byte('0'+sec/60%10), ':', byte('0'+sec%60/10), byte('0'+sec%10))
	return string(b)
}
