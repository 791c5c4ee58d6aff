package game

import (
	"time"
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
//   - none: a turn may last at most idleLimitSec.
//
// A disconnected human seat to move gets min(deadline, grace start + grace),
// the grace starting when it disconnected, or when its turn began if it
// disconnected during the opponent's turn.
//
// An AI seat never loses on time: its turn has a deadline (when the service
// should re-trigger the AI) but ApplyTimeout never flags it, and its clock is
// clamped at zero when its move comes late.

// Timeout causes, as written in the timeout event's Reason.
const (
	causeFirstMove  = "firstMove"
	causeClock      = "clock"
	causeIdle       = "idle"
	causeDisconnect = "disconnect"
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
	}
	return 0
}

// turnDeadline returns when the side to move times out, in Unix ms, and why.
func (s *State) turnDeadline() (at int64, cause string, ok bool) {
	if s.Phase != PhasePlaying {
		return 0, "", false
	}
	turn := s.Turn()
	c := &s.Clock
	switch {
	case !c.Started[turn]:
		at, cause = c.TurnStartedAt+s.Options.firstMoveMs(), causeFirstMove
	case s.Options.TimeControl.Kind == TimeNone:
		at, cause = c.TurnStartedAt+s.Options.idleMs(), causeIdle
	default:
		at, cause = c.TurnStartedAt+c.RemainingMs[turn], causeClock
	}
	if seat := s.Seats[turn]; seat.GraceRunning() {
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
// should re-trigger the AI (ApplyTimeout never flags an AI).
func Deadline(s *State) (time.Time, bool) {
	if at, ok := s.waitingExpiry(); ok {
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

// timeoutDue reports whether ApplyTimeout would change the game at t.
func (s *State) timeoutDue(t int64) bool {
	if at, ok := s.waitingExpiry(); ok {
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
		winner, reason := colorPtr(turn.Other()), ReasonTimeLoss
		if next.pos.CannotMate(turn.Other()) {
			winner, reason = nil, ReasonTimeoutVsInsufficient
		}
		next.finish(winner, reason, at, &events)
		break
	}
	return next, events, true
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
	winner, reason := colorPtr(turn.Other()), ReasonTimeLoss
	if next.pos.CannotMate(turn.Other()) {
		winner, reason = nil, ReasonTimeoutVsInsufficient
	}
	next.finish(winner, reason, t, &events)
	return next, events, nil
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
