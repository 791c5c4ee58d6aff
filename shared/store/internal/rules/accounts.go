package rules

import (
	"fmt"
	"time"
	"unicode/utf8"

	"chessapi/shared/service"
)

// The rules of the account records (sessions, blocks, the rating
// history) both stores apply before a write, so that they refuse the same
// things.

// MaxRatingHistory bounds PlayerRecord.RatingHistory. The service keeps
// the last 64; the bound only stops a runaway list before it meets the
// item size limit.
const MaxRatingHistory = 256

// MaxLabelBytes bounds a session label (the service allows 40
// characters).
const MaxLabelBytes = 256

// validateAccountFields checks the account fields of a player record.
func validateAccountFields(p service.PlayerRecord) error {
	if len(p.RatingHistory) > MaxRatingHistory {
		return fmt.Errorf("player RatingHistory holds %d entries, over %d", len(p.RatingHistory), MaxRatingHistory)
	}
	for i, e := range p.RatingHistory {
		if err := ValidateKey(fmt.Sprintf("player RatingHistory[%d].GameID", i), e.GameID); err != nil {
			return err
		}
		if err := validTime(fmt.Sprintf("player RatingHistory[%d].At", i), e.At, true); err != nil {
			return err
		}
	}
	if p.RecoveryHash != "" {
		return ValidateKey("player RecoveryHash", p.RecoveryHash)
	}
	return nil
}

// ValidateSession checks a session before it is written.
func ValidateSession(s service.Session) error {
	for _, k := range []struct{ field, value string }{{"session ID", s.ID}, {"session PlayerID", s.PlayerID}, {"session TokenHash", s.TokenHash}} {
		if err := ValidateKey(k.field, k.value); err != nil {
			return err
		}
	}
	if len(s.Label) > MaxLabelBytes || !utf8.ValidString(s.Label) {
		return fmt.Errorf("session Label is not valid UTF-8 of at most %d bytes", MaxLabelBytes)
	}
	if err := validTime("session CreatedAt", s.CreatedAt, false); err != nil {
		return err
	}
	return validTime("session LastUsedAt", s.LastUsedAt, false)
}

// StoredSession is a session as a store reads it back: its times to the
// millisecond, in UTC.
func StoredSession(s service.Session) service.Session {
	s.CreatedAt, s.LastUsedAt = TimeOf(MillisOf(s.CreatedAt)), TimeOf(MillisOf(s.LastUsedAt))
	return s
}

// ValidateBlock checks Block's arguments.
func ValidateBlock(playerID, blockedID string, at time.Time) error {
	if err := ValidateKey("player ID", playerID); err != nil {
		return err
	}
	if err := ValidateKey("blocked ID", blockedID); err != nil {
		return err
	}
	if playerID == blockedID {
		return fmt.Errorf("player %q cannot block itself", playerID)
	}
	return validTime("block time", at, true)
}

// ValidateTombstone checks EndSessions' until.
func ValidateTombstone(until time.Time) error { return validTime("tombstone time", until, true) }

// validTime checks a time kept as epoch milliseconds (zero allowed unless
// required).
func validTime(field string, t time.Time, required bool) error {
	if t.IsZero() {
		if required {
			return fmt.Errorf("%s is zero", field)
		}
		return nil
	}
	if ms := t.UnixMilli(); ms < 0 || ms >= maxMillis {
		return fmt.Errorf("%s %v is outside 1970..2286", field, t)
	}
	return nil
}

// Times are kept to the millisecond in UTC; zero stays zero.

// MillisOf is how stores keep an optional time: epoch milliseconds, 0 for
// the zero time.
func MillisOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// TimeOf reads MillisOf back.
func TimeOf(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return Millis(ms)
}
