package game

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"chessapi/shared/chess"
)

// act performs action a by the seat of colour by at time now (not
// committed: Reduce commits). A refused action returns a *RuleError (or an
// *InputError for move text that is not a move) and no state.
//
// While a timeout is due every action is refused with CodeTimeExpired;
// Reduce applies a due timeout first, so this only guards direct use.
func (s *State) act(by chess.Color, a Action, now time.Time) (*State, []Event, error) {
	if by != chess.White && by != chess.Black {
		return nil, nil, fmt.Errorf("game: apply: invalid colour %d", uint8(by))
	}
	if a.Type == ActionReady {
		if s.Phase != PhaseFinished && s.timeoutDue(max(now.UnixMilli(), s.Clock.TurnStartedAt)) {
			return nil, nil, ruleError(CodeTimeExpired)
		}
		return s.ready(by, now)
	}
	if s.Phase == PhaseWaiting && a.Type == ActionResign && s.Seats[by].taken() {
		// The host leaves before anyone joined: the game is called off.
		next := s.clone()
		t := max(now.UnixMilli(), s.CreatedAt)
		var events []Event
		next.finish(nil, ReasonAborted, t, &events)
		return next, events, nil
	}
	if s.Phase == PhaseReady {
		// Before "대국 시작" a seat may only get ready or leave; leaving
		// calls the game off (nobody has moved).
		t := max(now.UnixMilli(), s.Clock.TurnStartedAt)
		switch {
		case s.timeoutDue(t):
			return nil, nil, ruleError(CodeTimeExpired)
		case a.Type != ActionResign:
			return nil, nil, ruleError(CodeNotStarted)
		}
		next := s.clone()
		events := []Event{{Type: EventResigned, Color: by.String(), At: t}}
		next.finish(nil, ReasonAborted, t, &events)
		return next, events, nil
	}
	if s.Phase != PhasePlaying {
		return nil, nil, ruleError(CodeGameNotPlaying)
	}
	t := max(now.UnixMilli(), s.Clock.TurnStartedAt)
	if s.timeoutDue(t) {
		return nil, nil, ruleError(CodeTimeExpired)
	}
	switch a.Type {
	case ActionMove, ActionCastle:
		return applyMove(s, by, a, t)
	case ActionClaimDraw:
		return claimDraw(s, by, t)
	case ActionRequestUndo:
		return requestUndo(s, by, a.Plies, t)
	case ActionRespondUndo:
		return respondUndo(s, by, a.Accept, t)
	case ActionOfferDraw:
		return offerDraw(s, by, t)
	case ActionRespondDraw:
		return respondDraw(s, by, a.Accept, t)
	case ActionCancelOffer:
		return cancelOffer(s, by, t)
	case ActionResign:
		return resign(s, by, t)
	}
	return nil, nil, fmt.Errorf("game: apply: unknown action type %d", uint8(a.Type))
}

// resolveMove turns move input into a legal move of pos; with autoQueen a
// promotion given without a piece is a queen (Options.promotesToQueen).
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
		return chess.NoMove, MoveRefusal(err, field)
	}
	return m, nil
}

func isPromotionRequired(err error) bool {
	return errors.Is(err, chess.ErrPromotionRequired)
}

func applyMove(s *State, by chess.Color, a Action, t int64) (*State, []Event, error) {
	if by != s.Turn() {
		return nil, nil, ruleError(CodeNotYourTurn)
	}
	var (
		m   chess.Move
		err error
	)
	if a.Type == ActionCastle {
		m, err = s.pos.CastlingMove(a.Castle)
		if err != nil {
			err = MoveRefusal(err, "payload.side")
		}
	} else {
		m, err = resolveMove(&s.pos, a.Move, s.Options.promotesToQueen())
	}
	if err != nil {
		return nil, nil, err
	}
	next := s.clone()
	var events []Event
	next.playMove(m, t, &events)
	return next, events, nil
}

// playMove plays the legal move m of the current position at t in the
// order of seeds/000 §8.2: clock charge, the move, the increment, pending
// requests, end checks in priority order, then claimable.
func (s *State) playMove(m chess.Move, t int64, events *[]Event) {
	mover := s.pos.Turn()
	s.chargeTurn(t)

	rec := s.play(m, t)
	child := &s.pos
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
	case tc.refills():
		c.RemainingMs[mover] = tc.fullMs()
	}
	c.Started[mover] = true
	c.TurnStartedAt = t

	s.settleRequestsAfterMove(mover, t, events)

	if s.endChecks(mover, t, events) {
		return
	}
	if child.InCheck() {
		*events = append(*events, Event{Type: EventCheck, Color: mover.Other().String(), At: t, Ply: ply})
	}
	s.updateClaimable()
	if s.Claimable != nil {
		*events = append(*events, Event{Type: EventDrawClaimable, Color: mover.Other().String(), At: t, Ply: ply, Reason: string(*s.Claimable)})
	}
}

// play plays the legal move m on the live position at t and records it:
// the move list, the FEN after it and the position's hash.
func (s *State) play(m chess.Move, t int64) MoveRecord {
	pos := &s.pos
	rec := MoveRecord{UCI: pos.UCI(m), SAN: pos.SAN(m), Color: pos.Turn(), At: t}
	switch {
	case m.IsEnPassant():
		rec.Captured = chess.Pawn
	case !m.IsCastling():
		rec.Captured = pos.PieceAt(m.To()).Type()
	}
	pos.Play(m)
	rec.FENAfter = pos.FEN()
	s.Moves = append(s.Moves, rec)
	s.FEN = rec.FENAfter
	s.hashes = append(s.hashes, pos.Hash())
	return rec
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
func (s *State) endChecks(mover chess.Color, t int64, events *[]Event) bool {
	child := &s.pos
	ply := len(s.Moves)
	auto := s.Options.DrawMode == DrawAuto
	halfmove := child.HalfmoveClock()
	reps := s.repetitions()
	noMoves := child.CountMoves() == 0
	switch {
	case noMoves && child.InCheck():
		*events = append(*events, Event{Type: EventCheckmate, Color: mover.String(), At: t, Ply: ply})
		s.finish(colorPtr(mover), ReasonCheckmate, t, events)
	case noMoves:
		*events = append(*events, Event{Type: EventStalemate, Color: mover.String(), At: t, Ply: ply})
		s.finish(nil, ReasonStalemate, t, events)
	case s.insufficientMaterial():
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

// insufficientMaterial reports the automatic draw by material: the list of
// seeds/000 §6.2 (chess.Position.InsufficientMaterial), or under the yeoul
// rules only its three cases (yeoulInsufficient).
func (s *State) insufficientMaterial() bool {
	if s.Options.Rules == RulesYeoul {
		return yeoulInsufficient(&s.pos)
	}
	return s.pos.InsufficientMaterial()
}

// yeoulInsufficient is seeds/003's list: "킹만 남았거나, 한쪽에 킹과 나이트
// 하나 또는 킹과 비숍 하나만 남은 경우" (K v K, K+N v K, K+B v K) and no
// other ("양쪽에 비숍이 하나씩 남은 판 등은 계속 둡니다": bishops on both
// sides play on, whatever their squares).
func yeoulInsufficient(p *chess.Position) bool {
	minors := 0
	for _, c := range []chess.Color{chess.White, chess.Black} {
		for pt := chess.Pawn; pt <= chess.Queen; pt++ {
			n := p.Pieces(c, pt).Count()
			switch {
			case pt == chess.Knight || pt == chess.Bishop:
				minors += n
			case n > 0:
				return false
			}
		}
	}
	return minors <= 1
}

// updateClaimable sets what the side to move may claim in drawMode fide.
func (s *State) updateClaimable() {
	s.Claimable = nil
	if s.Phase != PhasePlaying || s.Options.DrawMode != DrawFIDE {
		return
	}
	var c Claim
	switch {
	case s.pos.HalfmoveClock() >= 100:
		c = ClaimFiftyMove
	case s.repetitions() >= 3:
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
		ev, err := next.takeBack(t)
		if err != nil {
			return nil, nil, err
		}
		events = append(events, ev)
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
	ev, err := next.takeBack(t)
	if err != nil {
		return nil, nil, err
	}
	return next, []Event{ev}, nil
}

// takeBack carries out the pending undo request at t: the moves are removed
// and the position, repetition history and claimable are rebuilt from the
// moves that remain (seeds/000 §8.2). The clock is not rewound: the side
// that was to move is charged up to t, and the side to move afterwards
// starts its turn at t.
func (s *State) takeBack(t int64) (Event, error) {
	p := *s.Undo.Pending
	s.chargeTurn(t)
	s.Moves = s.Moves[:len(s.Moves)-p.Plies]
	if err := s.replayLive(); err != nil {
		return Event{}, err
	}
	s.Clock.Started = PerColor[bool]{}
	for _, m := range s.Moves {
		s.Clock.Started[m.Color] = true
	}
	if tc := s.Options.TimeControl; tc.refills() {
		s.Clock.RemainingMs = PerColor[int64]{tc.fullMs(), tc.fullMs()}
	}
	s.Clock.TurnStartedAt = t
	if s.Options.TimeControl.Kind == TimeFischer {
		// The clock after each move is no longer the moves' times alone:
		// record where this take-back left it (resets of the moves taken
		// back go with them).
		n := len(s.Moves)
		s.Clock.Resets = slices.DeleteFunc(s.Clock.Resets, func(r ClockReset) bool { return r.Ply >= n })
		s.Clock.Resets = append(s.Clock.Resets, ClockReset{Ply: n, At: t, RemainingMs: s.Clock.RemainingMs})
	}
	s.Undo.UsedBy[p.By]++
	s.Undo.Pending = nil
	return Event{Type: EventUndoAccepted, Color: p.By.Other().String(), At: t, Plies: p.Plies, Ply: len(s.Moves)}, nil
}

// replayLive rebuilds the live position, the hashes, FEN and claimable by
// replaying the recorded moves from StartFEN (after a take-back). The moves
// were legal when played, so an error means a corrupt state.
func (s *State) replayLive() error {
	pos, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		return fmt.Errorf("game: replay: start position: %w", err)
	}
	s.hashes = append(s.hashes[:0:0], pos.Hash())
	for i, rec := range s.Moves {
		m, err := pos.DecodeStoredUCI(rec.UCI)
		if err != nil {
			return fmt.Errorf("game: replay: ply %d: %w", i+1, err)
		}
		pos.Play(m)
		s.hashes = append(s.hashes, pos.Hash())
	}
	s.pos = *pos
	s.FEN = s.StartFEN
	if n := len(s.Moves); n > 0 {
		s.FEN = s.Moves[n-1].FENAfter
	}
	s.updateClaimable()
	return nil
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
