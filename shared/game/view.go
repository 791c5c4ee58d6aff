package game

import (
	"slices"
	"strconv"
	"strings"
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
	// Moves is the move list (nil: left out, GET ?moves=false); each entry
	// is written as MoveView.
	Moves MoveList `json:"moves,omitzero"`
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
	// LegalMoves is set only for the seat to move in a game being played
	// (null otherwise: always present, so that a change's delta can remove
	// it by writing null).
	LegalMoves []LegalMove  `json:"legalMoves"`
	Result     *ResultView  `json:"result"`
	Rematch    *RematchView `json:"rematch"`
}

// PlayerView is the public part of a seat. An AI seat's Name is a human
// text in the reader's language, filled by the edge.
type PlayerView struct {
	PlayerID string  `json:"playerId"`
	Name     string  `json:"name"`
	AI       *string `json:"ai"` // level, null for a human
	// Connected is Presence.Connected (the field of the views before
	// presence existed).
	Connected bool         `json:"connected"`
	Presence  PresenceView `json:"presence"`
	// Rating is a registered player's rating when they sat down (absent
	// for anonymous and AI seats).
	Rating *int `json:"rating,omitempty"`
}

// PresenceView is a seat's presence (SPEC §16.1): Connected while at least
// one stream connection of the seat is open, since Since (Unix ms); after
// its last one closed, not connected since then (the disconnect grace runs
// from Since). A seat that never opened a stream (an app that uses HTTP
// only) is not connected with Since null, and is never on the disconnect
// clock. An AI seat is always connected (Since null).
type PresenceView struct {
	Connected bool   `json:"connected"`
	Since     *int64 `json:"since"`
}

func presenceOf(seat Seat) PresenceView {
	switch {
	case seat.AI != "":
		return PresenceView{Connected: true}
	case seat.Streaming():
		at := seat.ConnectedAt
		return PresenceView{Connected: true, Since: &at}
	case seat.GraceRunning():
		at := seat.DisconnectedAt
		return PresenceView{Since: &at}
	}
	return PresenceView{}
}

// MoveList is a view's move list, sharing the state's records (read-only);
// it is written as a JSON array of MoveView.
type MoveList []MoveRecord

// IsZero reports a list left out of the view (nil), not an empty one.
func (l MoveList) IsZero() bool { return l == nil }

// MarshalJSON writes each move as MoveView.
func (l MoveList) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(l)*150)
	b = append(b, '[')
	for i := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMoveView(b, &l[i])
	}
	return append(b, ']'), nil
}

// MoveView is one played move as views and changes show it: the record
// (UCI, SAN, side, time, FEN after it) with its squares, the promotion
// piece and the castling side, so that a client can animate it without a
// chess library. A change's delta carries the new move in this form, and
// appending it to the move list gives the list of the next version.
type MoveView struct{ Record MoveRecord }

// MarshalJSON writes {uci, san, from, to, promotion?, castle?, color, at,
// fenAfter}.
func (m MoveView) MarshalJSON() ([]byte, error) { return appendMoveView(nil, &m.Record), nil }

func appendMoveView(b []byte, m *MoveRecord) []byte {
	b = append(b, `{"uci":`...)
	b = appendJSONString(b, m.UCI)
	b = append(b, `,"san":`...)
	b = appendJSONString(b, m.SAN)
	if len(m.UCI) >= 4 {
		b = append(b, `,"from":"`...)
		b = append(b, m.UCI[0:2]...)
		b = append(b, `","to":"`...)
		b = append(b, m.UCI[2:4]...)
		b = append(b, '"')
	}
	if len(m.UCI) == 5 {
		b = append(b, `,"promotion":"`...)
		b = append(b, m.UCI[4])
		b = append(b, '"')
	}
	switch {
	case strings.HasPrefix(m.SAN, "O-O-O"):
		b = append(b, `,"castle":"queen"`...)
	case strings.HasPrefix(m.SAN, "O-O"):
		b = append(b, `,"castle":"king"`...)
	}
	b = append(b, `,"color":"`...)
	b = append(b, m.Color.String()...)
	b = append(b, `","at":`...)
	b = strconv.AppendInt(b, m.At, 10)
	b = append(b, `,"fenAfter":`...)
	b = appendJSONString(b, m.FENAfter)
	return append(b, '}')
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
	Ranking []Rank       `json:"ranking"`
	Winner  *chess.Color `json:"winner"`
	Reason  Reason       `json:"reason"`
	// PGN is the game's PGN (left out with the move list: GET
	// ?moves=false).
	PGN       string `json:"pgn,omitempty"`
	MoveCount int    `json:"moveCount"`
	SummaryKo string `json:"summaryKo"`
	Summary   string `json:"summary"`
	EndedAt   int64  `json:"endedAt"`
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
		Moves:         MoveList(s.Moves[:len(s.Moves):len(s.Moves)]), // shared, read-only
		Claimable:     s.Claimable,
	}
	if len(v.Moves) == 0 {
		v.Moves = MoveList{}
	}
	if you != nil {
		c := *you & 1
		v.You = &c
	}
	for c, seat := range s.Seats {
		if !seat.taken() {
			continue
		}
		pv := &PlayerView{PlayerID: seat.PlayerID, Name: seat.Name, Presence: presenceOf(seat)}
		pv.Connected = pv.Presence.Connected
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
