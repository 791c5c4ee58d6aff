package service

import (
	"context"
	"errors"
	"time"

	"chessapi/shared/notify"
)

// The ports of notifications (SPEC §16.3): what the service needs from
// storage for devices and inboxes (NotificationStore; the embedded store
// and the data table implement it with the same semantics, held to it by
// shared/store/storetest), from a push provider (notify.Sender) and from
// the stream (AccountFollowers).

// DeviceRecord is one device a player registered for notifications.
type DeviceRecord struct {
	ID       string
	PlayerID string
	// Session is the session that registered the device: revoking the
	// session removes its devices.
	Session  string
	Platform notify.Platform
	Token    string
	Locale   notify.Locale
	// Endpoint is the sender's handle (an SNS endpoint ARN); "" when the
	// sender needs none.
	Endpoint  string
	CreatedAt time.Time
}

// DeviceMatch selects some of a player's devices: each field that is set
// must match. The zero DeviceMatch selects them all.
type DeviceMatch struct {
	ID       string
	Session  string
	Platform notify.Platform
	Token    string
}

// Matches reports whether d is selected by m.
func (m DeviceMatch) Matches(d DeviceRecord) bool {
	return (m.ID == "" || d.ID == m.ID) && (m.Session == "" || d.Session == m.Session) &&
		(m.Platform == "" || d.Platform == m.Platform) && (m.Token == "" || d.Token == m.Token)
}

// NotificationRecord is one entry of a player's inbox as stored.
type NotificationRecord struct {
	PlayerID string
	// ID orders the inbox: a later notification has a greater ID.
	ID string
	At time.Time
	// Body is the service's encoding of the notification (opaque to
	// stores, a few hundred bytes).
	Body []byte
	// Pushed says the notification went to the player's devices: a
	// retried effect does not send it again.
	Pushed bool
	// ExpiresAt is when the store may delete the entry (its TTL).
	ExpiresAt time.Time
}

// Errors of the notification store (besides ErrNotFound).
var (
	// ErrTooManyDevices: the player has the most devices allowed.
	ErrTooManyDevices = errors.New("too many devices")
)

// NotificationStore keeps players' devices, the owner of each device
// token, the inboxes and their read marks, and the claims that space
// pushes out (the data table on AWS).
type NotificationStore interface {
	// Devices lists a player's devices, oldest CreatedAt first (ties:
	// smaller ID first); none is an empty list.
	Devices(ctx context.Context, playerID string) ([]DeviceRecord, error)
	// AddDevice stores d for d.PlayerID, unless the player has a device of
	// the same platform and token already: that one is returned (added
	// false) with its Locale replaced by d's. ErrTooManyDevices when the
	// player has max devices already. Atomic: of concurrent additions no
	// more than max are kept, and one token is kept once.
	AddDevice(ctx context.Context, d DeviceRecord, max int) (stored DeviceRecord, added bool, err error)
	// DeleteDevices removes the player's devices that m selects and
	// returns them (none: an empty list, no error).
	DeleteDevices(ctx context.Context, playerID string, m DeviceMatch) ([]DeviceRecord, error)
	// ClaimToken makes playerID the owner of a device token (by its key)
	// and returns the previous owner ("" for none).
	ClaimToken(ctx context.Context, tokenKey, playerID string) (previous string, err error)
	// ReleaseToken removes the token's owner if it is playerID, and
	// reports whether it was.
	ReleaseToken(ctx context.Context, tokenKey, playerID string) (bool, error)

	// AddNotification stores n in its player's inbox unless the inbox has
	// an entry with its ID: that one is returned (added false).
	AddNotification(ctx context.Context, n NotificationRecord) (stored NotificationRecord, added bool, err error)
	// SetPushed marks an entry pushed; ErrNotFound if there is none.
	SetPushed(ctx context.Context, playerID, id string) error
	// Notification reads one entry; ErrNotFound.
	Notification(ctx context.Context, playerID, id string) (NotificationRecord, error)
	// Notifications lists a player's entries with an ID below before (""
	// from the newest), greatest ID first, at most limit.
	Notifications(ctx context.Context, playerID, before string, limit int) ([]NotificationRecord, error)
	// MarkRead moves the player's read mark to upTo if that is greater
	// than the mark (an older upTo leaves it).
	MarkRead(ctx context.Context, playerID, upTo string) error
	// ReadUpTo is the player's read mark ("" when nothing was read).
	ReadUpTo(ctx context.Context, playerID string) (string, error)
	// ClaimPush claims the right to push for key (a game and a kind) for
	// notification id: granted when nobody claimed key in the window
	// before now, or when id holds the claim already (a retry). Of
	// concurrent claims of a free key exactly one is granted.
	ClaimPush(ctx context.Context, playerID, key, id string, window time.Duration, now time.Time) (bool, error)
	// DeleteInbox removes the player's entries, read mark and claims.
	DeleteInbox(ctx context.Context, playerID string) error
}

// AccountFollowers tells whether a player follows their account on an
// open stream connection ({"action":"subscribe","player":"me"}): such a
// player hears every player event there, and gets no device notification.
type AccountFollowers interface {
	FollowsAccount(ctx context.Context, playerID string) (bool, error)
}

// AccountFollowersFunc is a function as an AccountFollowers.
type AccountFollowersFunc func(ctx context.Context, playerID string) (bool, error)

// FollowsAccount calls f.
func (f AccountFollowersFunc) FollowsAccount(ctx context.Context, playerID string) (bool, error) {
	return f(ctx, playerID)
}
