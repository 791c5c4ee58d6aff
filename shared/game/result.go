package game

import "chessapi/shared/chess"

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
	case reason == ReasonAborted || reason == ReasonExpired || reason == ReasonCancelled:
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
	return r
}

// reasons is the set of result reasons, for checking stored states.
var reasons = map[Reason]bool{
	ReasonCheckmate: true, ReasonResign: true, ReasonTimeLoss: true, ReasonStalemate: true,
	ReasonInsufficientMaterial: true, ReasonThreefold: true, ReasonFivefold: true, ReasonFiftyMove: true,
	ReasonSeventyFiveMove: true, ReasonDrawAgreed: true, ReasonTimeoutVsInsufficient: true,
	ReasonAborted: true, ReasonExpired: true, ReasonCancelled: true,
}

// pgnResult is the PGN result token of a state.
func (s *State) pgnResult() string {
	switch {
	case s.Result == nil || s.Result.Reason == ReasonAborted || s.Result.Reason == ReasonExpired || s.Result.Reason == ReasonCancelled:
		return "*"
	case s.Result.Winner == nil:
		return "1/2-1/2"
	case *s.Result.Winner == chess.White:
		return "1-0"
	}
	return "0-1"
}
