package service

import (
	"fmt"
	"time"
)

// The records of accounts (SPEC §16.2) the players port keeps besides the
// player itself: sessions, blocks and the rating history.

// Session is one token of a player: every player token is a session, made
// when the token was issued (creation, linking, recovery).
type Session struct {
	// ID names the session to its owner (credential.SessionID).
	ID       string
	PlayerID string
	// TokenHash is the hash of the session's token.
	TokenHash string
	// Label is what the owner calls it ("iPhone"); "" until set.
	Label     string
	CreatedAt time.Time
	// LastUsedAt is when a request last came with the token, to
	// SessionTouchEvery.
	LastUsedAt time.Time
}

// Block is one player another has blocked.
type Block struct {
	PlayerID  string
	CreatedAt time.Time
}

// RatingEntry is one rated game's application to a player: the rating
// just before it and after it, in the order applications happened.
type RatingEntry struct {
	GameID string
	// At is when the game ended.
	At            time.Time
	Before, After int
}

// DeletedError is the players port's answer for a token of a player that
// was deleted (a tombstone kept for a while, so that the deletion's
// retries are told apart from other requests).
type DeletedError struct {
	PlayerID string
}

func (e *DeletedError) Error() string { return fmt.Sprintf("player %s was deleted", e.PlayerID) }
