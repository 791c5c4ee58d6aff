package rules

import (
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"chessapi/shared/service"
)

// MaxApplied bounds PlayerRecord.Applied. The service keeps the last 64;
// the bound only stops a runaway list before it meets the item size limit.
const MaxApplied = 1024

// ValidatePlayer checks a player record before it is written.
func ValidatePlayer(p service.PlayerRecord) error {
	if err := ValidateKey("player ID", p.ID); err != nil {
		return err
	}
	if p.Version < 1 {
		return fmt.Errorf("player Version %d is not positive", p.Version)
	}
	if !utf8.ValidString(p.Name) {
		return fmt.Errorf("player Name is not valid UTF-8")
	}
	if p.RatedGames < 0 {
		return fmt.Errorf("player RatedGames %d is negative", p.RatedGames)
	}
	if ms := p.CreatedAt.UnixMilli(); !p.CreatedAt.IsZero() && (ms < 0 || ms >= maxMillis) {
		return fmt.Errorf("player CreatedAt %v is outside 1970..2286", p.CreatedAt)
	}
	if len(p.Applied) > MaxApplied {
		return fmt.Errorf("player Applied holds %d game ids, over %d", len(p.Applied), MaxApplied)
	}
	for i, id := range p.Applied {
		if err := ValidateKey(fmt.Sprintf("player Applied[%d]", i), id); err != nil {
			return err
		}
	}
	return validateAccountFields(p)
}

// PlayerCreatedAt is how stores keep PlayerRecord.CreatedAt: epoch
// milliseconds (zero stays zero).
func PlayerCreatedAt(t time.Time) (ms int64, set bool) {
	if t.IsZero() {
		return 0, false
	}
	return t.UnixMilli(), true
}

// ValidUntil is how stores keep a link code's expiry: epoch milliseconds,
// rounded up like service.DeadlineMillis.
func ValidUntil(expiresAt time.Time) int64 { return service.DeadlineMillis(expiresAt) }

// Expired reports whether something valid until validUntil (epoch ms) has
// expired at now: from that millisecond on.
func Expired(validUntil int64, now time.Time) bool { return now.UnixMilli() >= validUntil }

// ValidateLinkCode checks PutLinkCode's arguments.
func ValidateLinkCode(codeHash, playerID string, expiresAt time.Time) error {
	if err := ValidateKey("link code hash", codeHash); err != nil {
		return err
	}
	if err := ValidateKey("player ID", playerID); err != nil {
		return err
	}
	if expiresAt.IsZero() {
		return fmt.Errorf("link code expiresAt is zero")
	}
	if ms := expiresAt.UnixMilli(); ms < 0 || ms >= maxMillis {
		return fmt.Errorf("link code expiresAt %v is outside 1970..2286", expiresAt)
	}
	return nil
}

// Window is the fixed window of length window that contains now: windows
// start at whole multiples of the length since the Unix epoch.
type Window struct {
	Length time.Duration
	Start  int64 // epoch nanoseconds
}

// End is when the window ends (UTC).
func (w Window) End() time.Time { return time.Unix(0, w.Start+int64(w.Length)).UTC() }

// WindowAt returns the window of the given length that contains now.
func WindowAt(length time.Duration, now time.Time) (Window, error) {
	if length <= 0 {
		return Window{}, fmt.Errorf("window %v is not positive", length)
	}
	ns := now.UnixNano() // the instants this service meets are within 1678..2262
	start := ns - ns%int64(length)
	if ns%int64(length) < 0 { // floor, also before 1970
		start -= int64(length)
	}
	if start > math.MaxInt64-int64(length) {
		return Window{}, fmt.Errorf("window %v at %v ends past the representable time", length, now)
	}
	return Window{Length: length, Start: start}, nil
}

// CounterGrace is how long a counter is kept after its window ended
// before it may be deleted (DynamoDB TTL, the embedded store's sweep): a
// process whose clock runs a little behind still finds the count.
const CounterGrace = time.Minute

// ValidateSlot checks ClaimSlot's arguments.
func ValidateSlot(key, value string, ttl time.Duration) error {
	if err := ValidateKey("slot key", key); err != nil {
		return err
	}
	if err := ValidateKey("slot value", value); err != nil {
		return err
	}
	if ttl < 0 {
		return fmt.Errorf("slot ttl %v is negative", ttl)
	}
	return nil
}

// StaleBefore is the claim time (epoch ms) before which a slot's holder is
// stale at now for ttl: a claim is stale once it is more than ttl old, to
// the millisecond.
func StaleBefore(ttl time.Duration, now time.Time) int64 {
	return now.UnixMilli() - ttl.Milliseconds()
}

// SlotGrace is how long after its holder's own ttl a slot may be deleted
// (DynamoDB TTL, the embedded store's sweep). Until then the claim rules
// decide alone: a claimer with a longer ttl than the holder's still sees
// the holder within that margin.
const SlotGrace = time.Hour
