package game

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"chessapi/shared/chess"
)

// Apply performs action a by the seat of colour by at time now and returns
// the new state and what happened. It is pure: s is never modified, time
// comes only from now, and nothing random is drawn. A refused action
// returns a *RuleError (or an *InputError for move text that is not a move)
// and no state.
//
// Callers apply any due timeout first (ApplyTimeout): while one is due, every
// action is refused with CodeTimeExpired, which is how a move arriving after
// the mover's flag is rejected (seeds/000 §8.2: clock first, then legality).
//
// On success the version goes up by one and, when a.RequestID is set, the
// outcome is recorded in the seat's request log.
func Apply(s *State, by chess.Color, a Action, now time.Time) (*State, []Event, error) {
	if by != chess.White && by != chess.Black {
		return nil, nil, fmt.Errorf("game: apply: invalid colour %d", uint8(by))
	}
	if s.Phase == PhaseWaiting && a.Type == ActionResign && s.Seats[by].taken() {
		// The host leaves before anyone joined: the game is called off.
		next := s.clone()
		t := max(now.UnixMilli(), s.CreatedAt)
		var events []Event
		next.finish(nil, ReasonAborted, t, &events)
		return next.commit(by, a.RequestID, events)
	}
	if s.Phase != PhasePlaying {
		return nil, nil, ruleError(CodeGameNotPlaying)
	}
	t := max(now.UnixMilli(), s.Clock.TurnStartedAt)
	if s.timeoutDue(t) {
		return nil, nil, ruleError(CodeTimeExpired)
	}
	var (
		next   *State
		events []Event
		err    error
	)
	switch a.Type {
	case ActionMove, ActionCastle:
		next, events, err = applyMove(s, by, a, t)
	case ActionClaimDraw:
		next, events, err = claimDraw(s, by, t)
	case ActionRequestUndo:
		next, events, err = requestUndo(s, by, a.Plies, t)
	case ActionRespondUndo:
		next, events, err = respondUndo(s, by, a.Accept, t)
	case ActionOfferDraw:
		next, events, err = offerDraw(s, by, t)
	case ActionRespondDraw:
		next, events, err = respondDraw(s, by, a.Accept, t)
	case ActionCancelOffer:
		next, events, err = cancelOffer(s, by, t)
	case ActionResign:
		next, events, err = resign(s, by, t)
	default:
		return nil, nil, fmt.Errorf("game: apply: unknown action type %d", uint8(a.Type))
	}
	if err != nil {
		return nil, nil, err
	}
	return next.commit(by, a.RequestID, events)
}

// commit bumps the version and logs the request id.
func (next *State) commit(by chess.Color, requestID string, events []Event) (*State, []Event, error) {
	next.Version++
	if requestID != "" {
		js, err := json.Marshal(events)
		if err != nil {
			return nil, nil, fmt.Errorf("game: record request: %w", err)
		}
		log := append(next.Requests[by], AppliedRequest{ID: requestID, Version: next.Version, Events: js})
		if len(log) > RequestLogSize {
			log = log[len(log)-RequestLogSize:]
		}
		next.Requests[by] = log
	}
	return next, events, nil
}

// resolveMove turns move input into a legal move of pos, applying autoQueen
// to a promotion given without a piece.
func resolveMove(pos *chess.Position, in MoveInput, autoQueen bool) (chess.Move, error) {
	var m chess.Move
	var err error
	field := "payload"
	switch {
	case in.UCI != "":
		field = "payload.uci"
		m, err = pos.ParseUCI(in.UCI)
		if err != nil && autoQueen && len(in.UCI) == 4 && isPromotionRequired(err) {
			m, err = pos.ParseUCI(in.UCI + "q")
		}
	case in.SAN != "":
		field = "payload.san"
		m, err = pos.ParseSAN(in.SAN)
		if err != nil && autoQueen && isPromotionRequired(err) {
			m, err = pos.ParseSAN(strings.TrimRight(in.SAN, "+#!? ") + "=Q")
		}
	default:
		m, err = pos.MoveFromSquares(in.From, in.To, in.Promotion)
		if err != nil && autoQueen && in.Promotion == chess.NoPieceType && isPromotionRequired(err) {
			m, err = pos.MoveFromSquares(in.From, in.To, chess.Queen)
		}
	}
	if err != nil {
		return chess.NoMove, moveRefusal(err, field)
	}
	return m, nil
}

func isPromotionRequired(err error) bool {
	rerr, ok := moveRefusal(err, "").(*RuleError)
	return ok && rerr.Code == CodePromotionRequired
}

func applyMove(s *State, by chess.Color, a Action, t int64) (*State, []Event, error) {
	if by != s.Turn() {
		return nil, nil, ruleError(CodeNotYourTurn)
	}
	pos, err := s.Position()
	if err != nil {
		return nil, nil, err
	}
	var m chess.Move
	if a.Type == ActionCastle {
		m, err = pos.CastlingMove(a.Castle)
		if err != nil {
			err = moveRefusal(err, "payload.side")
		}
	} else {
		m, err = resolveMove(pos, a.Move, s.Options.AutoQueen)
	}
	if err != nil {
		return nil, nil, err
	}
	next := s.clone()
	var events []Event
	next.playMove(pos, m, t, &events)
	return next, events, nil
}

// playMove plays the legal move m of pos (the current position) at t in the
// order of seeds/000 §8.2: clock charge, the move, the increment, pending
// requests, end checks in priority order, then claimable.
func (s *State) playMove(pos *chess.Position, m chess.Move, t int64, events *[]Event) {
	mover := pos.Turn()
	s.chargeTurn(t)

	rec, child := playRecord(pos, m, t)
	s.Moves = append(s.Moves, rec)
	s.FEN = rec.FENAfter
	key := repetitionKey(rec.FENAfter)
	s.Repetition[key]++
	ply := len(s.Moves)
	ev := Event{Type: EventMoved, Color: mover.String(), At: t, Ply: ply, UCI: rec.UCI, SAN: rec.SAN, Check: child.InCheck()}
	if rec.Captured != chess.NoPieceType {
		ev.Captured = string(rec.Captured.Letter())
	}
	*events = append(*events, ev)
	switch {
	case m.IsCastling():
		*events = append(*events, Event{Type: EventCastled, Color: mover.String(), At: t, Ply: ply, Castle: chess.CastleSideOf(m).String()})
	case m.IsEnPassant():
		*events = append(*events, Event{Type: EventEnPassant, Color: mover.String(), At: t, Ply: ply, UCI: rec.UCI})
	case m.Promotion() != chess.NoPieceType:
		*events = append(*events, Event{Type: EventPromoted, Color: mover.String(), At: t, Ply: ply, Promotion: string(m.Promotion().Letter())})
	}

	c := &s.Clock
	switch tc := s.Options.TimeControl; {
	case tc.Kind == TimeFischer && c.Started[mover]:
		c.RemainingMs[mover] += int64(tc.IncSec) * 1000
	case tc.Kind == TimePerMove:
		c.RemainingMs[mover] = tc.fullMs()
	}
	c.Started[mover] = true
	c.TurnStartedAt = t

	s.settleRequestsAfterMove(mover, t, events)

	if s.endChecks(&child, mover, key, t, events) {
		return
	}
	if child.InCheck() {
		*events = append(*events, Event{Type: EventCheck, Color: mover.Other().String(), At: t, Ply: ply})
	}
	s.updateClaimable(&child, key)
	if s.Claimable != nil {
		*events = append(*events, Event{Type: EventDrawClaimable, Color: mover.Other().String(), At: t, Ply: ply, Reason: string(*s.Claimable)})
	}
}

// playRecord plays m on a copy of pos and describes it.
func playRecord(pos *chess.Position, m chess.Move, t int64) (MoveRecord, chess.Position) {
	rec := MoveRecord{UCI: pos.UCI(m), SAN: pos.SAN(m), Color: pos.Turn(), At: t}
	switch {
	case m.IsEnPassant():
		rec.Captured = chess.Pawn
	case !m.IsCastling():
		rec.Captured = pos.PieceAt(m.To()).Type()
	}
	child := *pos
	child.Play(m)
	rec.FENAfter = child.FEN()
	return rec, child
}

// repetitionKey returns the first four fields of a FEN written by the rules
// package, which equal Position.RepetitionKey.
func repetitionKey(fen string) string {
	spaces := 0
	for i := 0; i < len(fen); i++ {
		if fen[i] == ' ' {
			spaces++
			if spaces == 4 {
				return fen[:i]
			}
		}
	}
	return fen
}

// settleRequestsAfterMove resolves pending requests when mover moves: a
// request to the mover is declined automatically (seeds/000 §8.2); the
// mover's own take-back request is withdrawn, since the moves it named have
// changed. The mover's own draw offer stands.
func (s *State) settleRequestsAfterMove(mover chess.Color, t int64, events *[]Event) {
	if p := s.Undo.Pending; p != nil {
		typ := EventUndoDeclined
		if p.By == mover {
			typ = EventUndoCancelled
		}
		*events = append(*events, Event{Type: typ, Color: mover.String(), At: t, Plies: p.Plies, Auto: true})
		s.Undo.Pending = nil
	}
	if by := s.Draw.PendingBy; by != nil && *by != mover {
		*events = append(*events, Event{Type: EventDrawDeclined, Color: mover.String(), At: t, Auto: true})
		s.Draw.LastOfferPly[*by] = len(s.Moves)
		s.Draw.PendingBy = nil
	}
}

// endChecks ends the game if the position after mover's move is terminal,
// in the priority of seeds/000 §8.2: checkmate > stalemate > insufficient
// material > 75-move > fivefold > (drawMode auto) 50-move > threefold.
// key is the new position's repetition key.
func (s *State) endChecks(child *chess.Position, mover chess.Color, key string, t int64, events *[]Event) bool {
	ply := len(s.Moves)
	auto := s.Options.DrawMode == DrawAuto
	halfmove := child.HalfmoveClock()
	reps := s.Repetition[key]
	noMoves := child.CountMoves() == 0
	switch {
	case noMoves && child.InCheck():
		*events = append(*events, Event{Type: EventCheckmate, Color: mover.String(), At: t, Ply: ply})
		s.finish(colorPtr(mover), ReasonCheckmate, t, events)
	case noMoves:
		*events = append(*events, Event{Type: EventStalemate, Color: mover.String(), At: t, Ply: ply})
		s.finish(nil, ReasonStalemate, t, events)
	case child.InsufficientMaterial():
		s.finish(nil, ReasonInsufficientMaterial, t, events)
	case halfmove >= 150:
		s.finish(nil, ReasonSeventyFiveMove, t, events)
	case reps >= 5:
		s.finish(nil, ReasonFivefold, t, events)
	case auto && halfmove >= 100:
		s.finish(nil, ReasonFiftyMove, t, events)
	case auto && reps >= 3:
		s.finish(nil, ReasonThreefold, t, events)
	default:
		return false
	}
	return true
}

// updateClaimable sets what the side to move may claim in drawMode fide.
func (s *State) updateClaimable(pos *chess.Position, key string) {
	s.Claimable = nil
	if s.Phase != PhasePlaying || s.Options.DrawMode != DrawFIDE {
		return
	}
	var c Claim
	switch {
	case pos.HalfmoveClock() >= 100:
		c = ClaimFiftyMove
	case s.Repetition[key] >= 3:
		c = ClaimThreefold
	default:
		return
	}
	s.Claimable = &c
}

func claimDraw(s *State, by chess.Color, t int64) (*State, []Event, error) {
	if by != s.Turn() {
		return nil, nil, ruleError(CodeNotYourTurn)
	}
	if s.Options.DrawMode != DrawFIDE {
		return nil, nil, ruleError(CodeClaimDisabled)
	}
	if s.Claimable == nil {
		return nil, nil, ruleError(CodeNotClaimable)
	}
	next := s.clone()
	claim := *s.Claimable
	events := []Event{{Type: EventDrawClaimed, Color: by.String(), At: t, Reason: string(claim)}}
	reason := ReasonThreefold
	if claim == ClaimFiftyMove {
		reason = ReasonFiftyMove
	}
	next.finish(nil, reason, t, &events)
	return next, events, nil
}

func (s *State) pendingRequest() bool { return s.Undo.Pending != nil || s.Draw.PendingBy != nil }

// aiOpponent reports whether the seat opposite by is an AI, which answers
// requests at once: it accepts take-backs and declines draw offers.
func (s *State) aiOpponent(by chess.Color) bool { return s.Seats[by.Other()].AI != "" }

func requestUndo(s *State, by chess.Color, plies int, t int64) (*State, []Event, error) {
	switch {
	case s.Options.Undo == UndoOff:
		return nil, nil, ruleError(CodeUndoDisabled)
	case s.pendingRequest():
		return nil, nil, ruleError(CodeRequestPending)
	case !s.Options.Undo.allows(s.Undo.UsedBy[by]):
		return nil, nil, ruleError(CodeUndoLimit)
	}
	n := len(s.Moves)
	if plies == 0 { // back to before my last move
		plies = 2
		if n > 0 && s.Moves[n-1].Color == by {
			plies = 1
		}
	}
	if plies > n || (plies == 1 && s.Moves[n-1].Color != by) {
		return nil, nil, ruleError(CodeNothingToUndo)
	}
	next := s.clone()
	next.Undo.Pending = &UndoRequest{By: by, Plies: plies}
	events := []Event{{Type: EventUndoRequested, Color: by.String(), At: t, Plies: plies}}
	if next.aiOpponent(by) {
		events = append(events, next.takeBack(t))
	}
	return next, events, nil
}

func respondUndo(s *State, by chess.Color, accept bool, t int64) (*State, []Event, error) {
	p := s.Undo.Pending
	if p == nil || p.By == by {
		return nil, nil, ruleError(CodeNoPendingRequest)
	}
	next := s.clone()
	if !accept {
		next.Undo.Pending = nil
		return next, []Event{{Type: EventUndoDeclined, Color: by.String(), At: t, Plies: p.Plies}}, nil
	}
	return next, []Event{next.takeBack(t)}, nil
}

// takeBack carries out the pending undo request at t: the moves are removed
// and the position, repetition table and claimable are rebuilt from the
// moves that remain (seeds/000 §8.2). The clock is not rewound: the side
// that was to move is charged up to t, and the side to move afterwards
// starts its turn at t.
func (s *State) takeBack(t int64) Event {
	p := *s.Undo.Pending
	s.chargeTurn(t)
	s.Moves = s.Moves[:len(s.Moves)-p.Plies]
	s.rebuildFromMoves()
	s.Clock.Started = PerColor[bool]{}
	for _, m := range s.Moves {
		s.Clock.Started[m.Color] = true
	}
	if tc := s.Options.TimeControl; tc.Kind == TimePerMove {
		s.Clock.RemainingMs = PerColor[int64]{tc.fullMs(), tc.fullMs()}
	}
	s.Clock.TurnStartedAt = t
	s.Undo.UsedBy[p.By]++
	s.Undo.Pending = nil
	return Event{Type: EventUndoAccepted, Color: p.By.Other().String(), At: t, Plies: p.Plies, Ply: len(s.Moves)}
}

// rebuildFromMoves sets FEN, Repetition and Claimable from StartFEN and the
// recorded positions after each move.
func (s *State) rebuildFromMoves() {
	s.FEN = s.StartFEN
	if n := len(s.Moves); n > 0 {
		s.FEN = s.Moves[n-1].FENAfter
	}
	s.Repetition = make(map[string]int, len(s.Moves)+1)
	s.Repetition[repetitionKey(s.StartFEN)]++
	for _, m := range s.Moves {
		s.Repetition[repetitionKey(m.FENAfter)]++
	}
	s.Claimable = nil
	if pos, err := chess.ParseFENVariant(s.FEN, s.Options.Variant.chess()); err == nil {
		s.updateClaimable(pos, repetitionKey(s.FEN))
	}
}

// ownMovesSince counts c's moves after the first ply plies.
func (s *State) ownMovesSince(c chess.Color, ply int) int {
	n := 0
	for _, m := range s.Moves[min(max(ply, 0), len(s.Moves)):] {
		if m.Color == c {
			n++
		}
	}
	return n
}

// drawOfferWait is how many own moves a side must make after a declined or
// withdrawn draw offer before offering again (seeds/000 §8.2).
const drawOfferWait = 3

func offerDraw(s *State, by chess.Color, t int64) (*State, []Event, error) {
	switch {
	case !s.Options.DrawOffer:
		return nil, nil, ruleError(CodeDrawOfferDisabled)
	case s.pendingRequest():
		return nil, nil, ruleError(CodeRequestPending)
	case s.Draw.LastOfferPly[by] >= 0 && s.ownMovesSince(by, s.Draw.LastOfferPly[by]) < drawOfferWait:
		return nil, nil, ruleError(CodeDrawOfferTooSoon)
	}
	next := s.clone()
	events := []Event{{Type: EventDrawOffered, Color: by.String(), At: t}}
	if next.aiOpponent(by) {
		next.Draw.LastOfferPly[by] = len(next.Moves)
		events = append(events, Event{Type: EventDrawDeclined, Color: by.Other().String(), At: t, Auto: true})
		return next, events, nil
	}
	next.Draw.PendingBy = colorPtr(by)
	return next, events, nil
}

func respondDraw(s *State, by chess.Color, accept bool, t int64) (*State, []Event, error) {
	offerer := s.Draw.PendingBy
	if offerer == nil || *offerer == by {
		return nil, nil, ruleError(CodeNoPendingRequest)
	}
	next := s.clone()
	next.Draw.PendingBy = nil
	if !accept {
		next.Draw.LastOfferPly[*offerer] = len(next.Moves)
		return next, []Event{{Type: EventDrawDeclined, Color: by.String(), At: t}}, nil
	}
	events := []Event{{Type: EventDrawAccepted, Color: by.String(), At: t}}
	next.finish(nil, ReasonDrawAgreed, t, &events)
	return next, events, nil
}

// cancelOffer withdraws the caller's pending draw offer or take-back
// request.
func cancelOffer(s *State, by chess.Color, t int64) (*State, []Event, error) {
	next := s.clone()
	switch {
	case s.Draw.PendingBy != nil && *s.Draw.PendingBy == by:
		next.Draw.PendingBy = nil
		next.Draw.LastOfferPly[by] = len(next.Moves)
		return next, []Event{{Type: EventDrawOfferCancelled, Color: by.String(), At: t}}, nil
	case s.Undo.Pending != nil && s.Undo.Pending.By == by:
		next.Undo.Pending = nil
		return next, []Event{{Type: EventUndoCancelled, Color: by.String(), At: t, Plies: s.Undo.Pending.Plies}}, nil
	}
	return nil, nil, ruleError(CodeNoPendingRequest)
}

// resign ends the game for by; before both sides have moved it aborts the
// game instead (no result, PGN "*").
func resign(s *State, by chess.Color, t int64) (*State, []Event, error) {
	next := s.clone()
	events := []Event{{Type: EventResigned, Color: by.String(), At: t}}
	if !s.Clock.Started[chess.White] || !s.Clock.Started[chess.Black] {
		next.finish(nil, ReasonAborted, t, &events)
	} else {
		next.finish(colorPtr(by.Other()), ReasonResign, t, &events)
	}
	return next, events, nil
}
