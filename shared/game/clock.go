package game

import (
	"time"

	"chessapi/shared/chess"
)

// Clocks and timeouts (seeds/000 §8.5, SPEC §7).
//
// Each side's first move is limited only by firstMoveSec and costs no main
// time (lichess style): White's first move starts Black's first-move limit,
// Black's first move starts White's main clock. After that:
//   - Fischer: the side to move loses time from RemainingMs; the increment
//     is added after each move (not after first moves, which cost nothing);
//   - per-move (seeds/003): RemainingMs refills to the per-move time after
//     each move; running out spends one of PerMoveExtensions and adds
//     another period; with none left the side loses on time;
//   - none: a turn may last at most idleLimitSec;
//   - correspondence (days:N, SPEC §16.3): every move has N days, refilled
//     after each move, no extensions; the first moves have the same N days
//     instead of firstMoveSec (missing one still calls the game off).
//
// A disconnected human seat to move gets min(deadline, grace start + grace),
// the grace starting when it disconnected, or when its turn began if it
// disconnected during the opponent's turn; a correspondence game has no
// grace. Under the yeoul rules a grace that runs out is a resignation
// ("돌아오지 못하면 기권으로 처리됩니다", seeds/003), and running out of
// time loses without the FIDE 6.9 exception ("무승부는 스테일메이트와 자동
// 무승부 조건으로만 납니다").
//
// Before a game of the yeoul rules is played it is in its ready step: its
// deadline is ReadyLimitSec after the step began (then it is called off),
// or, once both seats are ready, StartsAt, when it starts.
//
// An AI seat never loses on time: its turn has a deadline (when the service
// should re-trigger the AI) but a timeout never flags it, and its clock is
// clamped at zero when its move comes late.

// Timeout causes, as written in the timeout event's Reason.
const (
	causeFirstMove  = "firstMove"
	causeClock      = "clock"
	causeIdle       = "idle"
	causeDisconnect = "disconnect"
	// causeReady: the ready step ran out (the yeoul rules).
	causeReady = "ready"
	// causeAIUnavailable: an AI seat never answered (AIForfeit).
	causeAIUnavailable = "aiUnavailable"
)

// fullMs is the time a side starts with (and, per-move, each move's time).
func (tc TimeControl) fullMs() int64 {
	switch tc.Kind {
	case TimeFischer:
		return int64(tc.BaseSec) * 1000
	case TimePerMove:
		return int64(tc.PerMoveSec) * 1000
	case TimeDays:
		return int64(tc.Days) * dayMs
	}
	return 0
}

// refills reports whether the control gives every move the same time.
func (tc TimeControl) refills() bool { return tc.Kind == TimePerMove || tc.Kind == TimeDays }

// turnDeadline returns when the side to move times out, in Unix ms, and why.
func (s *State) turnDeadline() (at int64, cause string, ok bool) {
	if s.Phase != PhasePlaying {
		return 0, "", false
	}
	turn := s.Turn()
	c := &s.Clock
	tc := s.Options.TimeControl
	switch {
	case !c.Started[turn] && tc.Correspondence():
		at, cause = c.TurnStartedAt+tc.fullMs(), causeFirstMove
	case !c.Started[turn]:
		at, cause = c.TurnStartedAt+s.Options.firstMoveMs(), causeFirstMove
	case tc.Kind == TimeNone:
		at, cause = c.TurnStartedAt+s.Options.idleMs(), causeIdle
	default:
		at, cause = c.TurnStartedAt+c.RemainingMs[turn], causeClock
	}
	if seat := s.Seats[turn]; seat.GraceRunning() && !tc.Correspondence() {
		graceStart := max(seat.DisconnectedAt, c.TurnStartedAt)
		if g := graceStart + s.Options.graceMs(); g < at {
			at, cause = g, causeDisconnect
		}
	}
	return at, cause, true
}

// Deadline returns when the game times out if nobody acts: the side to
// move's first-move limit, clock, idle limit or disconnect grace. A finished
// or waiting game has none. On an AI seat's turn it is the time the service
// should re-trigger the AI (a timeout never flags an AI).
func Deadline(s *State) (time.Time, bool) {
	if at, ok := s.waitingExpiry(); ok {
		return time.UnixMilli(at), true
	}
	if at, _, ok := s.readyDeadline(); ok {
		return time.UnixMilli(at), true
	}
	at, _, ok := s.turnDeadline()
	if !ok {
		return time.Time{}, false
	}
	return time.UnixMilli(at), true
}

// waitingExpiry returns when a waiting game expires (SPEC §12).
func (s *State) waitingExpiry() (int64, bool) {
	if s.Phase != PhaseWaiting {
		return 0, false
	}
	return s.CreatedAt + s.Options.waitingMs(), true
}

// readyDeadline returns, in the ready step, when it ends: StartsAt once
// both seats are ready (starting reports true: the game then starts), else
// ReadyLimitSec after the step began (the game is then called off).
func (s *State) readyDeadline() (at int64, starting, ok bool) {
	if s.Phase != PhaseReady {
		return 0, false, false
	}
	if s.Clock.StartsAt > 0 {
		return s.Clock.StartsAt, true, true
	}
	return s.Clock.TurnStartedAt + ReadyLimitSec*1000, false, true
}

// timeoutDue reports whether a Timeout step would change the game at t.
func (s *State) timeoutDue(t int64) bool {
	if at, ok := s.waitingExpiry(); ok {
		return t >= at
	}
	if at, _, ok := s.readyDeadline(); ok {
		return t >= at
	}
	at, _, ok := s.turnDeadline()
	return ok && t >= at && s.Seats[s.Turn()].AI == ""
}

// timeout applies the timeout of seeds/000 §8.5 if it is due at now, as of
// the deadline (the clock is accounted at the deadline, not at now): a side
// that has not made its first move aborts the game; otherwise a per-move
// clock spends extensions while it has them, and a side out of time loses,
// or draws (timeoutVsInsufficient) when the opponent cannot mate (FIDE
// 6.9). It reports false, returning s itself, when nothing is due. The new
// state is not committed (Reduce commits).
func (s *State) timeout(now time.Time) (*State, []Event, bool) {
	t := now.UnixMilli()
	if !s.timeoutDue(t) {
		return s, nil, false
	}
	next := s.clone()
	var events []Event
	if at, ok := s.waitingExpiry(); ok {
		// Nobody joined in time: the game ends unplayed, unranked.
		next.finish(nil, ReasonExpired, at, &events)
		return next, events, true
	}
	if at, starting, ok := s.readyDeadline(); ok {
		if !starting {
			// The ready step ran out: called off, unrated, as a first
			// move not made in time. The event names the seat that was
			// not ready (none when neither was).
			ev := Event{Type: EventTimeout, At: at, Reason: causeReady}
			if next.Ready[chess.White] != next.Ready[chess.Black] {
				ev.Color = chess.White.String()
				if next.Ready[chess.White] {
					ev.Color = chess.Black.String()
				}
			}
			events = append(events, ev)
			next.finish(nil, ReasonAborted, at, &events)
			return next, events, true
		}
		// "대국 시작": the game starts, and with it White's first-move
		// limit, which may have run out too by now.
		events = append(events, next.start(at))
		if !next.timeoutDue(t) {
			return next, events, true
		}
	}
	turn := next.Turn()
	for {
		at, cause, _ := next.turnDeadline()
		if t < at {
			break // the extensions spent so far cover now
		}
		if cause == causeClock && next.Options.TimeControl.Kind == TimePerMove &&
			next.Clock.ExtensionsUsed[turn] < PerMoveExtensions {
			next.Clock.ExtensionsUsed[turn]++
			next.Clock.RemainingMs[turn] += next.Options.TimeControl.fullMs()
			events = append(events, Event{Type: EventExtensionUsed, Color: turn.String(), At: at})
			continue
		}
		events = append(events, Event{Type: EventTimeout, Color: turn.String(), At: at, Reason: cause, Ply: len(next.Moves)})
		if !next.Clock.Started[turn] {
			next.finish(nil, ReasonAborted, at, &events)
			break
		}
		winner, reason := next.outOfTime(turn, cause)
		next.finish(winner, reason, at, &events)
		break
	}
	return next, events, true
}

// outOfTime is the result when side c, past its first move, runs out of
// cause: a loss on time, or a draw when the opponent cannot mate (FIDE
// 6.9, seeds/000 §6.6). Under the yeoul rules it is always a loss, and a
// reconnection that did not come is a resignation (seeds/003).
func (s *State) outOfTime(c chess.Color, cause string) (*chess.Color, Reason) {
	if s.Options.Rules == RulesYeoul {
		if cause == causeDisconnect {
			return colorPtr(c.Other()), ReasonResign
		}
		return colorPtr(c.Other()), ReasonTimeLoss
	}
	if s.pos.CannotMate(c.Other()) {
		return nil, ReasonTimeoutVsInsufficient
	}
	return colorPtr(c.Other()), ReasonTimeLoss
}

// aiForfeit ends the game on an AI seat's turn as if its time ran out now.
func (s *State) aiForfeit(now time.Time) (*State, []Event, error) {
	if _, ok := s.AITurn(); !ok {
		return nil, nil, ruleError(CodeGameNotPlaying)
	}
	next := s.clone()
	turn := next.Turn()
	t := max(now.UnixMilli(), s.Clock.TurnStartedAt)
	events := []Event{{Type: EventTimeout, Color: turn.String(), At: t, Reason: causeAIUnavailable, Ply: len(next.Moves)}}
	winner, reason := next.outOfTime(turn, causeAIUnavailable)
	next.finish(winner, reason, t, &events)
	return next, events, nil
}

// ClocksAfterMoves returns, for a Fischer game, the mover's main time
// after each move (nil for other time controls). It replays the moves'
// times by the rules playMove applies — a side's first move costs nothing
// and earns nothing; later moves cost the time since the turn began
// (clamped at zero, as chargeTurn does) and earn the increment — starting
// again from each standing take-back's clock (Resets).
func (s *State) ClocksAfterMoves() []int64 {
	tc := s.Options.TimeControl
	if tc.Kind != TimeFischer {
		return nil
	}
	inc := int64(tc.IncSec) * 1000
	out := make([]int64, len(s.Moves))
	remaining := PerColor[int64]{tc.fullMs(), tc.fullMs()}
	var started PerColor[bool]
	var turnStart int64
	resets := s.Clock.Resets
	for i, m := range s.Moves {
		if len(resets) > 0 && resets[0].Ply == i {
			remaining, turnStart = resets[0].RemainingMs, resets[0].At
			resets = resets[1:]
		}
		c := m.Color & 1
		if started[c] {
			remaining[c] = max(0, remaining[c]-max(0, m.At-turnStart)) + inc
		}
		started[c] = true
		out[i] = remaining[c]
		turnStart = m.At
	}
	return out
}

// chargeTurn accounts the side to move's time up to t (clamped at zero: an
// AI is never flagged, and a human's late action is refused before this).
func (s *State) chargeTurn(t int64) {
	turn := s.Turn()
	c := &s.Clock
	if !c.Started[turn] || s.Options.TimeControl.Kind == TimeNone {
		return
	}
	elapsed := max(0, t-c.TurnStartedAt)
	c.RemainingMs[turn] = max(0, c.RemainingMs[turn]-elapsed)
}

// remainingAt returns each side's main time at t.
func (s *State) remainingAt(t int64) PerColor[int64] {
	r := s.Clock.RemainingMs
	if s.Phase == PhasePlaying {
		turn := s.Turn()
		if s.Clock.Started[turn] && s.Options.TimeControl.Kind != TimeNone {
			r[turn] = max(0, r[turn]-max(0, t-s.Clock.TurnStartedAt))
		}
	}
	return r
}

// setPresence records what p reports of the seat of colour p.Seat at now
// (SPEC §16.1, seeds/000 §8.5 disconnect grace):
//
//   - the stream: a connection of the seat opened (connected from now; a
//     running grace ends), or the seat's last one closed (the grace starts);
//   - the seat itself over HTTP: a sign of life (an action, a read, POST
//     presence true) ends a running grace without showing the seat as
//     connected; POST presence false starts the grace, unless a stream
//     connection of the seat is open.
//
// It returns s itself when nothing changes: the presence is already so, the
// seat is empty or an AI, the game is finished, or a timeout is due (Reduce
// applies it first).
func (s *State) setPresence(p Presence, now time.Time) (*State, []Event) {
	c := p.Seat & 1
	seat := s.Seats[c]
	t := max(now.UnixMilli(), s.Clock.TurnStartedAt)
	if s.Phase == PhaseFinished || !seat.taken() || seat.AI != "" || s.timeoutDue(t) {
		return s, nil
	}
	var after Seat
	var events []Event
	switch {
	case p.Stream && p.Connected:
		if seat.Streaming() {
			return s, nil
		}
		after.Connected, after.ConnectedAt = true, t
		if seat.GraceRunning() {
			events = []Event{{Type: EventPlayerReconnected, Color: c.String(), At: t}}
		}
	case p.Connected: // a sign of life over HTTP
		if !seat.GraceRunning() {
			return s, nil
		}
		events = []Event{{Type: EventPlayerReconnected, Color: c.String(), At: t}}
	case p.Stream && !seat.Streaming(), !p.Stream && (seat.GraceRunning() || seat.Streaming()):
		// Nothing to close; or the app says it left while a stream
		// connection of the seat is open (the stream shows otherwise).
		return s, nil
	default: // the last stream connection closed, or the app says it left
		after.DisconnectedAt = t
		events = []Event{{Type: EventPlayerDisconnected, Color: c.String(), At: t}}
	}
	next := s.clone()
	next.Seats[c].Connected, next.Seats[c].ConnectedAt, next.Seats[c].DisconnectedAt = after.Connected, after.ConnectedAt, after.DisconnectedAt
	return next, events
}
