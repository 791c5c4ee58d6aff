package service

import (
	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// Player events (SPEC §16.1): what a registered player learns about their
// games without following each one — on the account-wide stream
// ({"action":"subscribe","player":"me"}) and, with issue 24, as mobile
// notifications. They are derived from a committed version alone (the
// state before and after it), by PlayerEvents, so every consumer (the
// local stream, the AWS fan-out, notifications) says the same thing about
// the same version, however often it is delivered.

// PlayerEventKind is what happened to a player.
type PlayerEventKind string

const (
	// PlayerGameStarted: a game of the player started (its open game was
	// joined, a pairing found, or the player joined one).
	PlayerGameStarted PlayerEventKind = "gameStarted"
	// PlayerYourTurn: the opponent moved; Move and Deadline are set.
	PlayerYourTurn PlayerEventKind = "yourTurn"
	// PlayerGameEnded: Result is set, and RatingChange for a rated game.
	PlayerGameEnded PlayerEventKind = "gameEnded"
	// PlayerRematchOffered: the opponent of a finished game asks for a
	// rematch: GameID is the new game (to join), RematchOf the old one.
	PlayerRematchOffered PlayerEventKind = "rematchOffered"
	// PlayerInviteAccepted: the player's private game (or reserved
	// rematch) was joined by the one it was for.
	PlayerInviteAccepted PlayerEventKind = "inviteAccepted"
	// PlayerTimeRunningOut: a quarter of the turn's time is left (SPEC
	// §16.3). It needs a reminder timer, which comes with notifications
	// (issue 24); no version makes it, so PlayerEvents never returns it.
	PlayerTimeRunningOut PlayerEventKind = "timeRunningOut"
	// PlayerDisconnectGraceStarted: the player's disconnect grace started
	// on their turn; Deadline is when it ends.
	PlayerDisconnectGraceStarted PlayerEventKind = "disconnectGraceStarted"
)

// PlayerEvent is one event for one registered player.
type PlayerEvent struct {
	PlayerID string
	Kind     PlayerEventKind
	GameID   string
	// Version is the game's version that made the event, At its time
	// (Unix ms).
	Version int64
	At      int64
	// Move is the opponent's move (yourTurn).
	Move *MoveRef
	// Deadline is when the player's turn, or its grace, ends (Unix ms).
	Deadline *int64
	// Result is the game's result (gameEnded); its summary is a human
	// text for the edge to word.
	Result *game.Result
	// RatingChange is the player's own change in a rated game.
	RatingChange *game.RatingMove
	// RematchOf is the finished game a rematch is of (rematchOffered).
	RematchOf string
}

// MoveRef names a move.
type MoveRef struct {
	SAN string
	UCI string
}

// PlayerEvents returns the events of version next (after prev, nil for a
// new game) for the registered players seated in it (or invited to it),
// in seat order. A version that concerns no registered player has none.
func PlayerEvents(prev, next *game.State) []PlayerEvent {
	if next == nil {
		return nil
	}
	var at int64
	if c, ok := next.LastChange(); ok {
		at = c.At
	}
	base := PlayerEvent{GameID: next.GameID, Version: next.Version, At: at}
	var out []PlayerEvent
	add := func(playerID string, kind PlayerEventKind, fill func(*PlayerEvent)) {
		e := base
		e.PlayerID, e.Kind = playerID, kind
		if fill != nil {
			fill(&e)
		}
		out = append(out, e)
	}
	bound := func(c chess.Color) (string, bool) {
		seat := next.Seats[c]
		return seat.PlayerID, seat.Bound && seat.PlayerID != ""
	}
	deadline := func(e *PlayerEvent) {
		if d, ok := game.Deadline(next); ok {
			ms := d.UnixMilli()
			e.Deadline = &ms
		}
	}
	colors := []chess.Color{chess.White, chess.Black}

	// A new game that waits for the one it is reserved for: a rematch.
	if prev == nil && next.Phase == game.PhaseWaiting && next.Rematch.Of != "" &&
		next.Invite.Mode == game.InviteReserved && next.Invite.PlayerID != "" {
		add(next.Invite.PlayerID, PlayerRematchOffered, func(e *PlayerEvent) { e.RematchOf = next.Rematch.Of })
	}

	// The game starts: a waiting game was joined, or it was made playing
	// (against the AI, or paired).
	if next.Phase == game.PhasePlaying && (prev == nil || prev.Phase == game.PhaseWaiting) {
		for _, c := range colors {
			id, ok := bound(c)
			if !ok {
				continue
			}
			kind := PlayerGameStarted
			if prev != nil && prev.Seats[c].PlayerID == id && (prev.Invite.Mode == game.InvitePrivate || prev.Invite.Mode == game.InviteReserved) {
				kind = PlayerInviteAccepted // the host, whose invitee came
			}
			add(id, kind, nil)
		}
	}

	if prev == nil {
		return out
	}

	// The opponent moved: the side now to move is told.
	if next.Phase == game.PhasePlaying && len(next.Moves) == len(prev.Moves)+1 {
		if id, ok := bound(next.Turn()); ok {
			last := next.Moves[len(next.Moves)-1]
			add(id, PlayerYourTurn, func(e *PlayerEvent) {
				e.Move = &MoveRef{SAN: last.SAN, UCI: last.UCI}
				deadline(e)
			})
		}
	}

	// The player's grace started on their turn: they left during it, or
	// the turn came to them while they were away.
	if next.Phase == game.PhasePlaying {
		c := next.Turn()
		started := prev.Phase == game.PhasePlaying && prev.Turn() == c && prev.Seats[c].GraceRunning()
		if id, ok := bound(c); ok && next.Seats[c].GraceRunning() && !started {
			add(id, PlayerDisconnectGraceStarted, deadline)
		}
	}

	// The game ended.
	if next.Phase == game.PhaseFinished && prev.Phase != game.PhaseFinished && next.Result != nil {
		for _, c := range colors {
			id, ok := bound(c)
			if !ok {
				continue
			}
			add(id, PlayerGameEnded, func(e *PlayerEvent) {
				e.Result = next.Result
				if rc := next.Result.RatingChange; rc != nil {
					mine := rc.Of(c)
					e.RatingChange = &mine
				}
			})
		}
	}
	return out
}
