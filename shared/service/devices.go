package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/notify"
)

// Devices (SPEC §16.3): a player's phones, each registered with its push
// platform's token, at most MaxDevices, each tied to the session that
// registered it (revoking the session removes them).
//
// A token belongs to one player at a time: a phone that changes hands (a
// log-out, another account) registers its token again, and the token
// leaves the old player's devices — or the old player's games would
// notify the new one. The owner is kept per token (ClaimToken); the
// provider's endpoint is released only by the token's last owner.

// MaxDevices is how many devices a player may register.
const MaxDevices = 10

// Errors of the device routes (besides ErrTooManyDevices).
var (
	// ErrDeviceNotFound: no device of the caller has that id.
	ErrDeviceNotFound = errors.New("device not found")
	// ErrPlatformUnavailable: the deployment cannot send to the platform
	// (SNS: no platform application for it).
	ErrPlatformUnavailable = notify.ErrPlatformUnavailable
	// ErrNoNotifications: this process keeps no devices or inboxes.
	ErrNoNotifications = errors.New("notifications are not configured")
)

// PushError is a push provider that failed a registration (SNS
// throttled, or down): the request may be tried again.
type PushError struct {
	Platform notify.Platform
	Err      error
}

func (e *PushError) Error() string {
	return fmt.Sprintf("service: register %s device: %v", e.Platform, e.Err)
}

func (e *PushError) Unwrap() error { return e.Err }

// DeviceInput is a device registration as the edge decoded it.
type DeviceInput struct {
	Platform string
	Token    string
	// Locale is "" for the default.
	Locale string
}

// notifications returns the notification store or ErrNoNotifications.
func (s *Service) notifications() (NotificationStore, error) {
	if s.cfg.Notifications == nil || s.cfg.Players == nil {
		return nil, ErrNoNotifications
	}
	return s.cfg.Notifications, nil
}

// checkDevice validates a registration: the platform, its token's form,
// the locale.
func checkDevice(in DeviceInput) (notify.Platform, string, notify.Locale, error) {
	platform, ok := notify.ParsePlatform(in.Platform)
	if !ok {
		names := make([]string, 0, 3)
		for _, p := range notify.Platforms() {
			names = append(names, string(p))
		}
		return "", "", "", game.FieldOneOf("platform", names...)
	}
	if !platform.ValidToken(in.Token) {
		return "", "", "", game.FieldFormat("token", platform.TokenFormat(), nil)
	}
	locale := notify.DefaultLocale
	if in.Locale != "" {
		l, ok := notify.ParseLocale(in.Locale)
		if !ok {
			return "", "", "", game.FieldOneOf("locale", string(notify.Korean), string(notify.English))
		}
		locale = l
	}
	return platform, in.Token, locale, nil
}

// tokenKey is how a device token is named in the token owners: a hash,
// since an FCM token may be 4 KB long.
func tokenKey(p notify.Platform, token string) string {
	sum := sha256.Sum256([]byte(string(p) + "\x00" + token))
	return hex.EncodeToString(sum[:])
}

// sessionOf is the session a caller's token is (its hash names it).
func sessionOf(c Caller) string { return c.hash() }

// RegisterDevice registers the caller's device. added is false when the
// caller had registered the same token already (its device is returned,
// with the locale given now, or the one it had when none is given).
func (s *Service) RegisterDevice(ctx context.Context, c Caller, in DeviceInput) (dev DeviceRecord, added bool, err error) {
	ns, err := s.notifications()
	if err != nil {
		return DeviceRecord{}, false, err
	}
	platform, token, locale, err := checkDevice(in)
	if err != nil {
		return DeviceRecord{}, false, err
	}
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return DeviceRecord{}, false, err
	}
	if s.cfg.Sender != nil && !s.cfg.Sender.Available(platform) {
		return DeviceRecord{}, false, ErrPlatformUnavailable
	}
	devices, err := ns.Devices(ctx, p.ID)
	if err != nil {
		return DeviceRecord{}, false, err
	}
	known := false
	for _, d := range devices {
		if d.Platform == platform && d.Token == token {
			if in.Locale == "" {
				locale = d.Locale // not given again: kept
			}
			if d.Locale == locale {
				return d, false, nil
			}
			known = true
		}
	}
	if !known && len(devices) >= MaxDevices {
		return DeviceRecord{}, false, ErrTooManyDevices
	}
	key := tokenKey(platform, token)
	previous, err := ns.ClaimToken(ctx, key, p.ID)
	if err != nil {
		return DeviceRecord{}, false, err
	}
	if previous != "" && previous != p.ID {
		// The phone changed hands: it leaves the other player's devices
		// (its endpoint stays, it is the new owner's now).
		if _, err := ns.DeleteDevices(ctx, previous, DeviceMatch{Platform: platform, Token: token}); err != nil {
			return DeviceRecord{}, false, err
		}
	}
	registered := notify.Device{Platform: platform, Token: token}
	if s.cfg.Sender != nil {
		if registered, err = s.cfg.Sender.Register(ctx, registered); errors.Is(err, notify.ErrPlatformUnavailable) {
			return DeviceRecord{}, false, ErrPlatformUnavailable
		} else if err != nil {
			return DeviceRecord{}, false, &PushError{Platform: platform, Err: err}
		}
	}
	id, err := s.newDeviceID()
	if err != nil {
		return DeviceRecord{}, false, err
	}
	rec := DeviceRecord{ID: id, PlayerID: p.ID, Session: sessionOf(c), Platform: platform, Token: token, Locale: locale,
		Endpoint: registered.Endpoint, CreatedAt: s.now().UTC().Truncate(time.Millisecond)}
	stored, added, err := ns.AddDevice(ctx, rec, MaxDevices)
	if errors.Is(err, ErrTooManyDevices) {
		// Ten others came first: the token is not this player's after all.
		s.releaseDevices(ctx, []DeviceRecord{rec})
	}
	return stored, added, err
}

func (s *Service) newDeviceID() (string, error) {
	b, err := s.randomBytes(12)
	if err != nil {
		return "", err
	}
	return "dev_" + b64.EncodeToString(b), nil
}

// Devices lists the caller's devices, oldest first.
func (s *Service) Devices(ctx context.Context, c Caller) ([]DeviceRecord, error) {
	ns, err := s.notifications()
	if err != nil {
		return nil, err
	}
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return nil, err
	}
	return ns.Devices(ctx, p.ID)
}

// DeleteDevice removes one of the caller's devices.
func (s *Service) DeleteDevice(ctx context.Context, c Caller, deviceID string) error {
	ns, err := s.notifications()
	if err != nil {
		return err
	}
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return err
	}
	if deviceID == "" {
		return ErrDeviceNotFound
	}
	gone, err := ns.DeleteDevices(ctx, p.ID, DeviceMatch{ID: deviceID})
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return ErrDeviceNotFound
	}
	s.releaseDevices(ctx, gone)
	return nil
}

// DeleteDevicesOfSession removes the devices a session registered: its
// revocation (SPEC §16.2) takes them along. session is the session as the
// devices name it (DeviceRecord.Session). Idempotent.
func (s *Service) DeleteDevicesOfSession(ctx context.Context, playerID, session string) error {
	if session == "" {
		return errors.New("service: DeleteDevicesOfSession needs a session")
	}
	return s.deleteDevices(ctx, playerID, DeviceMatch{Session: session})
}

// devicesOfEndedSessions removes the devices each ended session
// registered (devices name their session by its token's hash).
func (s *Service) devicesOfEndedSessions(ctx context.Context, ended []Session) error {
	var errs []error
	for _, sess := range ended {
		if sess.TokenHash == "" || sess.PlayerID == "" {
			continue
		}
		if err := s.DeleteDevicesOfSession(ctx, sess.PlayerID, sess.TokenHash); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// DeletePlayerNotifications removes every device and the whole inbox of a
// player: part of the player's deletion (SPEC §16.2). Idempotent.
func (s *Service) DeletePlayerNotifications(ctx context.Context, playerID string) error {
	ns, err := s.notifications()
	if errors.Is(err, ErrNoNotifications) {
		return nil
	}
	if err := s.deleteDevices(ctx, playerID, DeviceMatch{}); err != nil {
		return err
	}
	return ns.DeleteInbox(ctx, playerID)
}

func (s *Service) deleteDevices(ctx context.Context, playerID string, m DeviceMatch) error {
	ns, err := s.notifications()
	if errors.Is(err, ErrNoNotifications) {
		return nil
	}
	if playerID == "" {
		return errors.New("service: deleting devices needs a player")
	}
	gone, err := ns.DeleteDevices(ctx, playerID, m)
	if err != nil {
		return err
	}
	s.releaseDevices(ctx, gone)
	return nil
}

// releaseDevices gives up the tokens of devices that are gone, and their
// endpoints where the token has no other owner now. Failures are logged:
// an endpoint left behind costs nothing until it is published to, and
// nobody will.
func (s *Service) releaseDevices(ctx context.Context, gone []DeviceRecord) {
	for _, d := range gone {
		released, err := s.cfg.Notifications.ReleaseToken(ctx, tokenKey(d.Platform, d.Token), d.PlayerID)
		if err != nil {
			s.log.WarnContext(ctx, "device token not released", "device", d.ID, "err", err)
			continue
		}
		if !released || s.cfg.Sender == nil {
			continue
		}
		if err := s.cfg.Sender.Unregister(ctx, notify.Device{Platform: d.Platform, Token: d.Token, Endpoint: d.Endpoint}); err != nil {
			s.log.WarnContext(ctx, "device endpoint not deleted", "device", d.ID, "platform", d.Platform, "err", err)
		}
	}
}
