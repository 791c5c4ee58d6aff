package rules

import (
	"cmp"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"chessapi/shared/service"
)

// The rules both stores apply to devices and inboxes (service.NotificationStore).

// Bounds of the records' variable parts: an FCM token is at most 4,096
// characters, an endpoint ARN a few hundred.
const (
	maxTokenLen    = 4096
	maxEndpointLen = 1024
	// MaxNotificationBody bounds an inbox entry's body (the service's are a
	// few hundred bytes).
	MaxNotificationBody = 8 << 10
	// MaxDevicesPerPlayer bounds AddDevice's max: ten devices of the
	// longest tokens stay far below DynamoDB's item limit.
	MaxDevicesPerPlayer = 50
)

// ValidateDevice checks a device before it is written.
func ValidateDevice(d service.DeviceRecord) error {
	for _, f := range []struct{ name, value string }{{"device ID", d.ID}, {"device PlayerID", d.PlayerID}, {"device Session", d.Session}} {
		if err := ValidateKey(f.name, f.value); err != nil {
			return err
		}
	}
	if !d.Platform.Valid() {
		return fmt.Errorf("device Platform %q is not a platform", d.Platform)
	}
	if d.Token == "" || len(d.Token) > maxTokenLen || !utf8.ValidString(d.Token) {
		return fmt.Errorf("device Token is empty, longer than %d bytes or not UTF-8", maxTokenLen)
	}
	if d.Locale == "" {
		return fmt.Errorf("device Locale is empty")
	}
	if len(d.Endpoint) > maxEndpointLen {
		return fmt.Errorf("device Endpoint is longer than %d bytes", maxEndpointLen)
	}
	if ms := d.CreatedAt.UnixMilli(); d.CreatedAt.IsZero() || ms < 0 || ms >= maxMillis {
		return fmt.Errorf("device CreatedAt %v is outside 1970..2286", d.CreatedAt)
	}
	return nil
}

// ValidateMax checks AddDevice's bound.
func ValidateMax(max int) error {
	if max < 1 || max > MaxDevicesPerPlayer {
		return fmt.Errorf("max devices %d is outside 1..%d", max, MaxDevicesPerPlayer)
	}
	return nil
}

// StoredDevice is what a read returns for a written device: CreatedAt to
// the millisecond, in UTC.
func StoredDevice(d service.DeviceRecord) service.DeviceRecord {
	d.CreatedAt = Millis(d.CreatedAt.UnixMilli())
	return d
}

// SortDevices orders devices as Devices lists them: oldest first, then by
// ID.
func SortDevices(ds []service.DeviceRecord) {
	slices.SortFunc(ds, func(a, b service.DeviceRecord) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
}

// AddDevice is AddDevice's decision on a player's devices as read: the
// list to write (nil when nothing changes), the device to return, whether
// it was added, or service.ErrTooManyDevices.
func AddDevice(cur []service.DeviceRecord, d service.DeviceRecord, max int) (next []service.DeviceRecord, stored service.DeviceRecord, added bool, err error) {
	for i, old := range cur {
		if old.Platform == d.Platform && old.Token == d.Token {
			if old.Locale == d.Locale {
				return nil, old, false, nil
			}
			next = slices.Clone(cur)
			next[i].Locale = d.Locale
			return next, next[i], false, nil
		}
	}
	if len(cur) >= max {
		return nil, service.DeviceRecord{}, false, service.ErrTooManyDevices
	}
	d = StoredDevice(d)
	next = append(slices.Clone(cur), d)
	SortDevices(next)
	return next, d, true, nil
}

// SplitDevices parts devices into those m selects and the others.
func SplitDevices(cur []service.DeviceRecord, m service.DeviceMatch) (gone, kept []service.DeviceRecord) {
	gone = []service.DeviceRecord{}
	for _, d := range cur {
		if m.Matches(d) {
			gone = append(gone, d)
		} else {
			kept = append(kept, d)
		}
	}
	return gone, kept
}

// ValidateNotification checks an inbox entry before it is written.
func ValidateNotification(n service.NotificationRecord) error {
	if err := ValidateKey("notification PlayerID", n.PlayerID); err != nil {
		return err
	}
	if err := ValidateKey("notification ID", n.ID); err != nil {
		return err
	}
	if len(n.Body) == 0 || len(n.Body) > MaxNotificationBody {
		return fmt.Errorf("notification Body is empty or over %d bytes", MaxNotificationBody)
	}
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"At", n.At}, {"ExpiresAt", n.ExpiresAt}} {
		if ms := t.at.UnixMilli(); t.at.IsZero() || ms < 0 || ms >= maxMillis {
			return fmt.Errorf("notification %s %v is outside 1970..2286", t.name, t.at)
		}
	}
	return nil
}

// StoredNotification is what a read returns for a written entry: At to
// the millisecond and ExpiresAt to the second (rounded up, as the TTL
// keeps it), both in UTC.
func StoredNotification(n service.NotificationRecord) service.NotificationRecord {
	n.At = Millis(n.At.UnixMilli())
	n.ExpiresAt = time.Unix(service.ExpirySeconds(n.ExpiresAt), 0).UTC()
	return n
}

// ValidatePage checks Notifications' arguments.
func ValidatePage(playerID, before string, limit int) error {
	if err := ValidateKey("player ID", playerID); err != nil {
		return err
	}
	if len(before) > MaxKeyBytes {
		return fmt.Errorf("before is longer than %d bytes", MaxKeyBytes)
	}
	if limit < 1 || limit > service.MaxPageSize {
		return fmt.Errorf("limit %d is outside 1..%d", limit, service.MaxPageSize)
	}
	return nil
}

// ValidatePushClaim checks ClaimPush's arguments.
func ValidatePushClaim(playerID, key, id string, window time.Duration) error {
	for _, f := range []struct{ name, value string }{{"player ID", playerID}, {"push key", key}, {"notification ID", id}} {
		if err := ValidateKey(f.name, f.value); err != nil {
			return err
		}
	}
	if window <= 0 {
		return fmt.Errorf("push window %v is not positive", window)
	}
	return nil
}

// PushClaimed is ClaimPush's decision on the claim as stored (holder ""
// for none): granted when it is free, id's already, or older than window.
func PushClaimed(holder string, claimedAt int64, id string, window time.Duration, now time.Time) bool {
	return holder == "" || holder == id || claimedAt <= now.Add(-window).UnixMilli()
}
