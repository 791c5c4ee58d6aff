package service

import (
	"context"
	"errors"
	"strconv"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// notificationsOf is the decision for one committed version, without I/O:
// the notifications its player events make (PlayerEvents, the account
// stream's), each with whether the player's seat in the game has an open
// stream connection (then no device gets it: the app shows the game).
func notificationsOf(prev, next *game.State) []outgoing {
	events := PlayerEvents(prev, next)
	if len(events) == 0 {
		return nil
	}
	out := make([]outgoing, 0, len(events))
	for _, e := range events {
		n := notificationOf(e, next)
		seat, seated := seatOfPlayer(next, e.PlayerID)
		out = append(out, outgoing{n: n, seatWatching: seated && next.Seats[seat].Streaming(), onAccountStream: true})
	}
	return out
}

// notificationOf is the notification of player event e of game st.
func notificationOf(e PlayerEvent, st *game.State) Notification {
	n := Notification{
		ID:       notificationID(e.At, e.PlayerID, e.GameID, strconv.FormatInt(e.Version, 10), string(e.Kind)),
		PlayerID: e.PlayerID, Kind: string(e.Kind), GameID: e.GameID, Version: e.Version, At: e.At,
		Deadline: e.Deadline, RatingChange: e.RatingChange, RematchOf: e.RematchOf,
		Opponent: opponentOf(st, e.PlayerID),
	}
	if e.Move != nil {
		n.Move = &NotificationMove{SAN: e.Move.SAN, UCI: e.Move.UCI}
	}
	if r := e.Result; r != nil {
		n.Result = &NotificationResult{Winner: r.Winner, Reason: r.Reason, MoveCount: r.MoveCount}
	}
	return n
}

// seatOfPlayer is the colour a registered player sits on in st.
func seatOfPlayer(st *game.State, playerID string) (chess.Color, bool) {
	for _, c := range []chess.Color{chess.White, chess.Black} {
		if s := st.Seats[c]; s.Bound && s.PlayerID == playerID {
			return c, true
		}
	}
	return chess.White, false
}

// opponentOf is the seat of st across from playerID's (for a rematch
// offered to a player not seated yet: the seat that is taken).
func opponentOf(st *game.State, playerID string) Opponent {
	for _, c := range []chess.Color{chess.White, chess.Black} {
		s := st.Seats[c]
		if s.PlayerID == "" || (s.Bound && s.PlayerID == playerID) {
			continue
		}
		return Opponent{Name: s.Name, AI: s.AI}
	}
	return Opponent{}
}

// notifyCommitted is the notification effect of a commit: every
// notification of next is delivered (deliver: the inbox, and the devices
// when the decision says so).
func (s *Service) notifyCommitted(ctx context.Context, prev, next *game.State) error {
	if s.cfg.Notifications == nil {
		return nil
	}
	var errs []error
	for _, o := range notificationsOf(prev, next) {
		if err := s.deliver(ctx, o); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Reminders (timeRunningOut, SPEC §16.3): due during a registered
// player's turn (game.TimeRunningOut), they wake the game's one timer
// (timer, timers.go, arms it at the earliest of the deadline and the next reminder)
// and end nothing: the timeout handler finds no timeout due, delivers the
// reminders due by then and re-arms for what comes next.

// nextReminder is the first reminder of st's turn after t for a
// registered player (anonymous seats have no inbox); none without
// notifications.
func (s *Service) nextReminder(st *game.State, t time.Time) (game.Reminder, bool) {
	if s.cfg.Notifications == nil {
		return game.Reminder{}, false
	}
	for _, r := range game.TimeRunningOut(st) {
		if seat := st.Seats[r.Color]; seat.Bound && seat.PlayerID != "" && r.At.After(t) {
			return r, true
		}
	}
	return game.Reminder{}, false
}

// remind delivers the reminders of st's turn due by now.
func (s *Service) remind(ctx context.Context, st *game.State) error {
	if s.cfg.Notifications == nil {
		return nil
	}
	now := s.now()
	var errs []error
	for _, r := range game.TimeRunningOut(st) {
		seat := st.Seats[r.Color]
		if !seat.Bound || seat.PlayerID == "" || r.At.After(now) {
			continue
		}
		at := r.At.UnixMilli()
		deadline, _ := game.Deadline(st)
		dl := deadline.UnixMilli()
		n := Notification{
			ID:       notificationID(at, seat.PlayerID, st.GameID, strconv.Itoa(r.Ply), "timeRunningOut", strconv.FormatInt(at, 10)),
			PlayerID: seat.PlayerID, Kind: string(PlayerTimeRunningOut), GameID: st.GameID, Version: st.Version, At: at,
			Deadline: &dl, Left: r.Left, Opponent: opponentOf(st, seat.PlayerID),
		}
		if err := s.deliver(ctx, outgoing{n: n, seatWatching: seat.Streaming()}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
