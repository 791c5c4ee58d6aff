package game

import (
	"time"

	"chessapi/shared/chess"
)

// Reminder is a timeRunningOut notice due during the turn in progress
// (SPEC §16.3): the side to move, the turn (the number of moves played
// before it), when the notice is due and the time it announces as left
// (a quarter of the clock or of the period; 12 h or 1 h).
type Reminder struct {
	Color chess.Color
	Ply   int
	At    time.Time
	Left  time.Duration
}

// Correspondence reminders come this long before the turn's deadline
// (SPEC §16.3).
var correspondenceReminders = []time.Duration{12 * time.Hour, time.Hour}

// TimeRunningOut returns the timeRunningOut reminders of the turn in
// progress, earliest first, for the notifications to send (SPEC §16.3):
//
//   - Fischer: once, when a quarter of the clock the side had at the
//     turn's start is left;
//   - per-move: once, when a quarter of the period is left (the period's
//     first run: extensions refill it, the turn is the same);
//   - correspondence: 12 h and 1 h before the deadline (only those still
//     ahead of the turn's start: a day's move gets both).
//
// A side's first move of a Fischer or per-move game (only its first-move
// limit of seconds runs), a game without a clock, an AI seat's turn and a
// game not being played have none; nor has a reminder that would come at
// or after the turn's deadline (a disconnected side's grace may end it
// sooner). The result depends on the state alone: the same turn gives the
// same reminders, so a sender can key them on (game, Ply, At).
func TimeRunningOut(s *State) []Reminder {
	deadline, _, ok := s.turnDeadline()
	turn := s.Turn()
	if !ok || s.Seats[turn].AI != "" {
		return nil
	}
	c := &s.Clock
	tc := s.Options.TimeControl
	var out []Reminder
	add := func(left int64, of int64) {
		if t := c.TurnStartedAt + of - left; t > c.TurnStartedAt && t < deadline {
			out = append(out, Reminder{Color: turn, Ply: len(s.Moves), At: time.UnixMilli(t), Left: time.Duration(left) * time.Millisecond})
		}
	}
	switch {
	case tc.Correspondence():
		for _, before := range correspondenceReminders {
			add(before.Milliseconds(), tc.fullMs())
		}
	case !c.Started[turn] || tc.Kind == TimeNone:
	case tc.Kind == TimeFischer:
		add(c.RemainingMs[turn]/4, c.RemainingMs[turn])
	case tc.Kind == TimePerMove:
		add(tc.fullMs()/4, tc.fullMs())
	}
	return out
}
