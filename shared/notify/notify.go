// Package notify holds the ports of mobile notifications (SPEC §16.3):
// the push platforms a device registers with and what a well-formed token
// of each looks like, a device and a message as a sender sees them, and
// the Sender port that delivers them. It imports nothing of this module,
// so the service (which decides what to send and to whom) and the
// senders (Amazon SNS in notify/snspush, the local webhook in
// notify/webhook) depend on it without compiling each other.
//
// Declared once here: the platforms (Platforms, with each one's token
// rule and SNS payload key), the device locales, and the JSON form of a
// notification (Message), which is the same in the inbox, at the webhook
// and inside every platform's payload.
package notify

import (
	"context"
	"encoding/json"
	"errors"
)

// Platform is a push service a device registers with.
type Platform string

// The platforms (SPEC §16.3). The spellings are the API's and stored.
const (
	// APNs is the Apple Push Notification service, production
	// environment.
	APNs Platform = "apns"
	// APNsSandbox is APNs's development environment (builds run from
	// Xcode): its tokens differ from production's and go to another SNS
	// platform application.
	APNsSandbox Platform = "apns_sandbox"
	// FCM is Firebase Cloud Messaging (Android, and iOS apps that use it).
	FCM Platform = "fcm"
)

// platformSpec is what this package knows of one platform.
type platformSpec struct {
	platform Platform
	// validToken reports whether a token has the platform's form.
	validToken func(string) bool
	// format names the token's form for error texts ("apnsToken").
	format string
	// snsKey is the platform's key in an SNS MessageStructure "json"
	// message (APNS, APNS_SANDBOX, GCM).
	snsKey string
}

// The token rules. An APNs device token is 32 bytes, sent as 64
// hexadecimal characters; an FCM registration token is opaque text of
// 100–4096 characters of [A-Za-z0-9_:-] (SPEC §16.3).
const (
	apnsTokenLen   = 64
	fcmTokenMinLen = 100
	fcmTokenMaxLen = 4096
)

// platforms is the one table of the platforms, in the order the API lists
// them.
var platforms = []platformSpec{
	{APNs, validAPNsToken, "apnsToken", "APNS"},
	{APNsSandbox, validAPNsToken, "apnsToken", "APNS_SANDBOX"},
	{FCM, validFCMToken, "fcmToken", "GCM"},
}

// Platforms lists every platform.
func Platforms() []Platform {
	out := make([]Platform, len(platforms))
	for i, p := range platforms {
		out[i] = p.platform
	}
	return out
}

func (p Platform) spec() *platformSpec {
	for i := range platforms {
		if platforms[i].platform == p {
			return &platforms[i]
		}
	}
	return nil
}

// ParsePlatform reads a platform's name; false for anything else.
func ParsePlatform(s string) (Platform, bool) {
	p := Platform(s)
	return p, p.spec() != nil
}

// Valid reports whether p is one of Platforms.
func (p Platform) Valid() bool { return p.spec() != nil }

// ValidToken reports whether token has the form p's tokens have.
func (p Platform) ValidToken(token string) bool {
	sp := p.spec()
	return sp != nil && sp.validToken(token)
}

// TokenFormat names the form of p's tokens ("apnsToken", "fcmToken"), the
// key of the error text that describes it.
func (p Platform) TokenFormat() string {
	if sp := p.spec(); sp != nil {
		return sp.format
	}
	return ""
}

// SNSKey is p's key in an Amazon SNS message of MessageStructure "json"
// ("APNS", "APNS_SANDBOX", "GCM": FCM keeps the key of its predecessor).
func (p Platform) SNSKey() string {
	if sp := p.spec(); sp != nil {
		return sp.snsKey
	}
	return ""
}

// Apple reports whether p is one of Apple's environments (an aps payload).
func (p Platform) Apple() bool { return p == APNs || p == APNsSandbox }

func validAPNsToken(t string) bool {
	if len(t) != apnsTokenLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func validFCMToken(t string) bool {
	if len(t) < fcmTokenMinLen || len(t) > fcmTokenMaxLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || c == '-') {
			return false
		}
	}
	return true
}

// Locale is the language of a device's notifications.
type Locale string

// The locales (SPEC §14: Korean first).
const (
	Korean  Locale = "ko"
	English Locale = "en"
	// DefaultLocale is a device's locale when it names none.
	DefaultLocale = Korean
)

// Locales lists every locale.
func Locales() []Locale { return []Locale{Korean, English} }

// ParseLocale reads a locale; false for anything else.
func ParseLocale(s string) (Locale, bool) {
	switch l := Locale(s); l {
	case Korean, English:
		return l, true
	}
	return "", false
}

// Device is an app install on one platform as a sender sees it.
type Device struct {
	Platform Platform
	Token    string
	// Endpoint is the sender's handle for the device (an SNS platform
	// endpoint ARN), "" for a sender that needs none (the webhook).
	Endpoint string
}

// Message is one notification in one language (SPEC §16.3): its JSON form
// is the inbox's entry (which adds "read"), the webhook's "notification"
// and the custom data of every platform payload.
type Message struct {
	ID     string `json:"notificationId"`
	Kind   string `json:"kind"`
	GameID string `json:"gameId"`
	// At is when it happened, Unix milliseconds.
	At    int64  `json:"at"`
	Title string `json:"title"`
	Body  string `json:"body"`
	// Data holds the kind's own fields, a JSON object (the player stream
	// event's: move, deadline, result, ratingChange, rematchOf).
	Data json.RawMessage `json:"data"`
}

// CollapseKey is what replaces an earlier notification on the device
// (APNs apns-collapse-id, FCM collapse_key): the game, so a phone shows
// one notification per game, the latest (SPEC §16.3).
func (m Message) CollapseKey() string { return m.GameID }

// Errors of the senders.
var (
	// ErrDeviceGone: the platform no longer delivers to the device (its
	// app was removed, its token replaced): the device is to be forgotten.
	ErrDeviceGone = errors.New("notify: device no longer registered with its platform")
	// ErrPlatformUnavailable: the deployment cannot send to the platform
	// (SNS: no platform application for it).
	ErrPlatformUnavailable = errors.New("notify: platform not available")
)

// Sender delivers notifications to devices: Amazon SNS on AWS, the local
// webhook (and nothing else) in development.
type Sender interface {
	// Available reports whether the sender can deliver to platform p.
	Available(p Platform) bool
	// Register prepares d for sending and returns it with its Endpoint
	// set. It is idempotent on the token: registering the same token again
	// gives the same endpoint, enabled. ErrPlatformUnavailable if
	// !Available(d.Platform).
	Register(ctx context.Context, d Device) (Device, error)
	// Send delivers m to d. ErrDeviceGone (wrapped) when the platform no
	// longer delivers to d; other errors may be retried.
	Send(ctx context.Context, d Device, m Message) error
	// Unregister releases what Register made (the SNS endpoint); no error
	// when there is nothing to release.
	Unregister(ctx context.Context, d Device) error
}
