package game

import (
	"strconv"

	"chessapi/shared/chess"
)

// finish ends the game at t with the given winner (nil: draw or abort) and
// reason: the running clock is accounted up to t, pending requests lapse,
// and the result of seeds/000 §8.6 is set.
func (s *State) finish(winner *chess.Color, reason Reason, t int64, events *[]Event) {
	if s.Phase == PhasePlaying {
		s.chargeTurn(t)
		s.Clock.TurnStartedAt = t
	}
	s.Phase = PhaseFinished
	s.Claimable = nil
	s.Undo.Pending = nil
	s.Draw.PendingBy = nil
	s.Result = s.makeResult(winner, reason, t)
	ev := Event{Type: EventGameEnded, At: t, Ply: len(s.Moves), Reason: string(reason)}
	if winner != nil {
		ev.Winner = winner.String()
	}
	*events = append(*events, ev)
}

// makeResult builds the result record; everything in it follows from the
// seats, the move count, the winner and the reason.
func (s *State) makeResult(winner *chess.Color, reason Reason, t int64) *Result {
	r := &Result{
		Ranking:   []Rank{},
		Reason:    reason,
		MoveCount: (len(s.Moves) + 1) / 2,
		EndedAt:   t,
	}
	switch {
	case reason == ReasonAborted:
	case winner != nil:
		w := *winner
		r.Winner = &w
		r.Ranking = []Rank{
			{PlayerID: s.Seats[w].PlayerID, Rank: 1},
			{PlayerID: s.Seats[w.Other()].PlayerID, Rank: 2},
		}
	default:
		r.Ranking = []Rank{
			{PlayerID: s.Seats[chess.White].PlayerID, Rank: 1},
			{PlayerID: s.Seats[chess.Black].PlayerID, Rank: 1},
		}
	}
	r.SummaryKo = summaryKo(r.Winner, reason, r.MoveCount)
	return r
}

// reasonKo is how each reason reads in a Korean summary.
var reasonKo = map[Reason]string{
	ReasonCheckmate:             "체크메이트",
	ReasonResign:                "기권",
	ReasonTimeLoss:              "시간 초과",
	ReasonStalemate:             "스테일메이트",
	ReasonInsufficientMaterial:  "기물 부족",
	ReasonThreefold:             "3회 반복",
	ReasonFivefold:              "5회 반복",
	ReasonFiftyMove:             "50수 규칙",
	ReasonSeventyFiveMove:       "75수 규칙",
	ReasonDrawAgreed:            "합의",
	ReasonTimeoutVsInsufficient: "시간 초과, 상대 기물 부족",
	ReasonAborted:               "대국 취소",
}

// summaryKo writes the one-line result: "백 승 (체크메이트, 34수)",
// "무승부 (3회 반복, 41수)", "대국 취소 (0수)".
func summaryKo(winner *chess.Color, reason Reason, moveCount int) string {
	head := "무승부"
	switch {
	case reason == ReasonAborted:
		return "대국 취소 (" + strconv.Itoa(moveCount) + "수)"
	case winner != nil && *winner == chess.White:
		head = "백 승"
	case winner != nil:
		head = "흑 승"
	}
	return head + " (" + reasonKo[reason] + ", " + strconv.Itoa(moveCount) + "수)"
}

// pgnResult is the PGN result token of a state.
func (s *State) pgnResult() string {
	switch {
	case s.Result == nil || s.Result.Reason == ReasonAborted:
		return "*"
	case s.Result.Winner == nil:
		return "1/2-1/2"
	case *s.Result.Winner == chess.White:
		return "1-0"
	}
	return "0-1"
}
