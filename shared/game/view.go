package game

import (
	"slices"
	"time"

	"chessapi/shared/chess"
)

// View is what one viewer sees of a game (seeds/000 §8.3, SPEC §5 "game
// view"). Everything is public information except legalMoves, which only
// the seat to move gets; no view ever holds the RNG state or a token hash.
// Times are Unix milliseconds.
type View struct {
	GameID       string `json:"gameId"`
	Version      int64  `json:"version"`
	StateVersion int    `json:"stateVersion"`
	Phase        Phase  `json:"phase"`
	// Rules is the game the options follow: "standard" (seeds/000) or
	// "yeoul" (seeds/003: the rated rooms' game).
	Rules         Rules                 `json:"rules"`
	Options       Options               `json:"options"`
	Variant       Variant               `json:"variant"`
	Chess960Index *int                  `json:"chess960Index"`
	CreatedAt     int64                 `json:"createdAt"`
	StartFEN      string                `json:"startFen"`
	FEN           string                `json:"fen"`
	Players       PerColor[*PlayerView] `json:"players"`
	// You is the viewer's colour, null for spectators.
	You   *chess.Color `json:"you"`
	Turn  chess.Color  `json:"turn"`
	Check bool         `json:"check"`
	Moves []MoveRecord `json:"moves"`
	// LastMove is the last move with its squares for highlighting (for
	// Chess960 castling, the king's and the rook's squares).
	LastMove *LastMove `json:"lastMove"`
	Clock    ClockView `json:"clock"`
	// Deadline is when the side to move times out (null when none), and
	// DeadlineReason which limit that is: "firstMove" (a side's first move,
	// whose main clock has not started), "clock" (Fischer main time),
	// "perMove" (the per-move time, and a correspondence game's days),
	// "idle" (no time control: the turn limit), "disconnect" (the
	// disconnected side's grace ends first) or "ready" (the ready step of
	// the yeoul rules: both seats must be ready by then). Once both seats
	// are ready it is White's first-move limit, counted from StartsAt.
	Deadline       *int64  `json:"deadline"`
	DeadlineReason *string `json:"deadlineReason"`
	// StartsAt is when a game of the yeoul rules starts ("대국 시작":
	// both seats ready plus 3 s); null before both are ready and in games
	// of the standard rules.
	StartsAt *int64 `json:"startsAt"`
	// Ready tells which seats are ready (the yeoul rules only).
	Ready *PerColor[bool] `json:"ready,omitempty"`
	// Captured lists, per side, the letters of the pieces that side has
	// taken, most valuable first.
	Captured PerColor[[]string] `json:"captured"`
	// MaterialDiff is White's material minus Black's on the board
	// (Q 9, R 5, B 3, N 3, P 1).
	MaterialDiff int         `json:"materialDiff"`
	Pending      PendingView `json:"pending"`
	Claimable    *Claim      `json:"claimable"`
	// LegalMoves is present only for the seat to move in a game being
	// played.
	LegalMoves []LegalMove  `json:"legalMoves,omitempty"`
	Result     *ResultView  `json:"result"`
	Rematch    *RematchView `json:"rematch"`
}

// PlayerView is the public part of a seat. An AI seat's Name is a human
// text in the reader's language, filled by the edge.
type PlayerView struct {
	PlayerID  string  `json:"playerId"`
	Name      string  `json:"name"`
	AI        *string `json:"ai"` // level, null for a human
	Connected bool    `json:"connected"`
	// Rating is a registered player's rating when they sat down (absent
	// for anonymous and AI seats).
	Rating *int `json:"rating,omitempty"`
}

// LastMove describes the most recent move.
type LastMove struct {
	From  string      `json:"from"`
	To    string      `json:"to"`
	UCI   string      `json:"uci"`
	SAN   string      `json:"san"`
	Color chess.Color `json:"color"`
}

// ClockView is the clock as of AsOf (the view's now).
type ClockView struct {
	Type        string          `json:"type"` // "fischer", "perMove", "correspondence" or "none"
	RemainingMs PerColor[int64] `json:"remainingMs"`
	IncrementMs int64           `json:"incrementMs"`
	// Running is the side whose main time is running: null unless playing,
	// before that side's first move (only the first-move limit runs then;
	// see Deadline) and with no time control.
	Running *chess.Color `json:"running"`
	// Started tells which sides have made their first move; before it a
	// side has only the first-move limit (see Deadline).
	Started PerColor[bool] `json:"started"`
	// ExtensionsLeft is set for per-move clocks.
	ExtensionsLeft *PerColor[int] `json:"extensionsLeft,omitempty"`
	AsOf           int64          `json:"asOf"`
}

// PendingView shows the open requests.
type PendingView struct {
	Undo *UndoRequest   `json:"undo"`
	Draw *DrawOfferView `json:"draw"`
}

// DrawOfferView is an open draw offer.
type DrawOfferView struct {
	By chess.Color `json:"by"`
}

// LegalMove is one move the seat to move may make. Castling appears with
// castle set; in Chess960 it is listed both with the rook's square and,
// when that is not also an ordinary king move, with the king's destination
// as To, so a tap on either square castles.
type LegalMove struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Promotion string `json:"promotion,omitempty"`
	Castle    string `json:"castle,omitempty"`
	UCI       string `json:"uci"`
	SAN       string `json:"san"`
}

// ResultView is the result of seeds/000 §8.6 with its PGN. SummaryKo (the
// Korean one-line result the design defines) and Summary (the same in the
// reader's language) are human texts: the edge fills them.
type ResultView struct {
	Ranking   []Rank       `json:"ranking"`
	Winner    *chess.Color `json:"winner"`
	Reason    Reason       `json:"reason"`
	PGN       string       `json:"pgn"`
	MoveCount int          `json:"moveCount"`
	SummaryKo string       `json:"summaryKo"`
	Summary   string       `json:"summary"`
	EndedAt   int64        `json:"endedAt"`
	// RatingChange is set for a rated game (SPEC §12).
	RatingChange *RatingChange `json:"ratingChange,omitempty"`
}

// RematchView links rematches.
type RematchView struct {
	Of   *string `json:"of"`
	Next *string `json:"next"`
}

// pieceValues are the display values of seeds/000 §8.3.
var pieceValues = [...]int{chess.Pawn: 1, chess.Knight: 3, chess.Bishop: 3, chess.Rook: 5, chess.Queen: 9, chess.King: 0}

// ViewOf returns the game as the seat of colour *you sees it at now, or as a
// spectator sees it when you is nil.
func ViewOf(s *State, you *chess.Color, now time.Time) (*View, error) {
	pos := &s.pos
	t := max(now.UnixMilli(), s.Clock.TurnStartedAt)
	v := &View{
		GameID:        s.GameID,
		Version:       s.Version,
		StateVersion:  StateVersion,
		Phase:         s.Phase,
		Rules:         s.Options.Rules,
		Options:       s.Options,
		Variant:       s.Options.Variant,
		Chess960Index: s.Chess960Index,
		CreatedAt:     s.CreatedAt,
		StartFEN:      s.StartFEN,
		FEN:           s.FEN,
		Turn:          s.Turn(),
		Check:         pos.InCheck(),
		Moves:         s.Moves[:len(s.Moves):len(s.Moves)], // shared, read-only
		Claimable:     s.Claimable,
	}
	if len(v.Moves) == 0 {
		v.Moves = []MoveRecord{}
	}
	if you != nil {
		c := *you & 1
		v.You = &c
	}
	for c, seat := range s.Seats {
		if !seat.taken() {
			continue
		}
		pv := &PlayerView{PlayerID: seat.PlayerID, Name: seat.Name, Connected: seat.Connected}
		if seat.Bound {
			rating := seat.Rating
			pv.Rating = &rating
		}
		if seat.AI != "" {
			level := seat.AI
			pv.AI = &level
		}
		v.Players[c] = pv
	}
	if n := len(s.Moves); n > 0 {
		last := s.Moves[n-1]
		v.LastMove = &LastMove{From: last.UCI[0:2], To: last.UCI[2:4], UCI: last.UCI, SAN: last.SAN, Color: last.Color}
	}
	v.Clock = s.clockView(t)
	if at, cause, ok := s.viewDeadline(); ok {
		v.Deadline, v.DeadlineReason = &at, &cause
	}
	if s.Options.Rules == RulesYeoul {
		ready := s.Ready
		v.Ready = &ready
		if s.Clock.StartsAt > 0 {
			starts := s.Clock.StartsAt
			v.StartsAt = &starts
		}
	}
	v.Captured, v.MaterialDiff = s.material(pos)
	if p := s.Undo.Pending; p != nil {
		v.Pending.Undo = &UndoRequest{By: p.By, Plies: p.Plies}
	}
	if p := s.Draw.PendingBy; p != nil {
		v.Pending.Draw = &DrawOfferView{By: *p}
	}
	if v.You != nil && *v.You == s.Turn() && s.Phase == PhasePlaying {
		v.LegalMoves = LegalMoves(pos)
	}
	if r := s.Result; r != nil {
		pgn, err := PGN(s)
		if err != nil {
			return nil, err
		}
		v.Result = &ResultView{
			Ranking: slices.Clone(r.Ranking), Winner: r.Winner, Reason: r.Reason, PGN: pgn,
			MoveCount: r.MoveCount, EndedAt: r.EndedAt, RatingChange: r.RatingChange,
		}
	}
	if s.Rematch != (Rematch{}) {
		v.Rematch = &RematchView{}
		if s.Rematch.Of != "" {
			v.Rematch.Of = &s.Rematch.Of
		}
		if s.Rematch.Next != "" {
			v.Rematch.Next = &s.Rematch.Next
		}
	}
	return v, nil
}

// viewDeadline is the view's deadline and its reason: the turn's, or in the
// ready step the step's end, or once both seats are ready White's
// first-move limit from StartsAt (the start itself is StartsAt).
func (s *State) viewDeadline() (int64, string, bool) {
	if at, starting, ok := s.readyDeadline(); ok {
		if starting {
			return at + s.Options.firstMoveMs(), causeFirstMove, true
		}
		return at, causeReady, true
	}
	at, cause, ok := s.turnDeadline()
	if cause == causeClock && s.Options.TimeControl.refills() {
		cause = "perMove"
	}
	return at, cause, ok
}

func (s *State) clockView(t int64) ClockView {
	tc := s.Options.TimeControl
	cv := ClockView{RemainingMs: s.remainingAt(t), Started: s.Clock.Started, AsOf: t}
	switch tc.Kind {
	case TimeFischer:
		cv.Type = "fischer"
		cv.IncrementMs = int64(tc.IncSec) * 1000
	case TimePerMove:
		cv.Type = "perMove"
		left := PerColor[int]{}
		for c := range left {
			left[c] = PerMoveExtensions - s.Clock.ExtensionsUsed[c]
		}
		cv.ExtensionsLeft = &left
	case TimeDays:
		cv.Type = "correspondence"
	default:
		cv.Type = "none"
	}
	if turn := s.Turn(); s.Phase == PhasePlaying && s.Clock.Started[turn] && tc.Kind != TimeNone {
		cv.Running = colorPtr(turn)
	}
	return cv
}

// material returns the pieces each side has captured and the material
// difference on the board.
func (s *State) material(pos *chess.Position) (PerColor[[]string], int) {
	var counts PerColor[[chess.King + 1]int]
	for _, m := range s.Moves {
		if m.Captured != chess.NoPieceType {
			counts[m.Color][m.Captured]++
		}
	}
	var captured PerColor[[]string]
	for c := range captured {
		list := []string{}
		for _, pt := range []chess.PieceType{chess.Queen, chess.Rook, chess.Bishop, chess.Knight, chess.Pawn} {
			for range counts[c][pt] {
				list = append(list, string(pt.Letter()))
			}
		}
		captured[c] = list
	}
	diff := 0
	for pt := chess.Pawn; pt <= chess.Queen; pt++ {
		diff += pieceValues[pt] * (pos.Pieces(chess.White, pt).Count() - pos.Pieces(chess.Black, pt).Count())
	}
	return captured, diff
}

// LegalMoves lists the legal moves of pos as every route shows them (the
// game view and POST /v1/positions): each with its UCI, SAN, squares,
// promotion piece and castling side. Chess960 castling appears twice when
// seeds/000 §9 asks the board to offer two targets: with the rook's square
// as To (the move's UCI), and with the king's g/c-file square as To when
// that square is not also an ordinary king step.
func LegalMoves(pos *chess.Position) []LegalMove {
	moves := pos.LegalMoves()
	sans := pos.SANs(moves)
	out := make([]LegalMove, 0, len(moves)+2)
	for i, m := range moves {
		lm := LegalMove{From: m.From().String(), UCI: pos.UCI(m), SAN: sans[i]}
		lm.To = lm.UCI[2:4]
		if p := m.Promotion(); p != chess.NoPieceType {
			lm.Promotion = string(p.Letter())
		}
		if m.IsCastling() {
			lm.Castle = chess.CastleSideOf(m).String()
			if pos.Chess960() {
				out = append(out, lm) // king → rook square
				kingTo := castleKingTarget(pos.Turn(), lm.Castle)
				if kingTo == m.To() || kingTo == m.From() || chess.KingAttacks(m.From()).Has(kingTo) {
					continue // only the rook square (or the castle action) castles
				}
				lm.To = kingTo.String()
			}
		}
		out = append(out, lm)
	}
	return out
}

// castleKingTarget is where the king lands when castling (g or c file).
func castleKingTarget(c chess.Color, side string) chess.Square {
	rank := 0
	if c == chess.Black {
		rank = 7
	}
	if side == "king" {
		return chess.NewSquare(6, rank)
	}
	return chess.NewSquare(2, rank)
}
