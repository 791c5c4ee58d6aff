package boltstore

import (
	"context"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"chessapi/shared/notify"
	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// Devices and their tokens' owners (service.NotificationStore), each in
// its own bucket, created by the first write that needs it:
//
//	devices        player id → JSON [deviceValue…], oldest first
//	device.tokens  token key → player id
//
// A player's devices are one value, so the bound on their number and the
// one-device-per-token rule hold in the write's transaction, as the data
// table's conditional write on the player's one devices item does.
var (
	devicesBucket      = []byte("devices")
	deviceTokensBucket = []byte("device.tokens")
)

var _ service.NotificationStore = (*Store)(nil)

// deviceValue is one device as stored.
type deviceValue struct {
	ID        string `json:"id"`
	Session   string `json:"session"`
	Platform  string `json:"platform"`
	Token     string `json:"token"`
	Locale    string `json:"locale"`
	Endpoint  string `json:"endpoint,omitempty"`
	CreatedAt int64  `json:"createdAtMs"`
}

func encodeDevices(ds []service.DeviceRecord) []byte {
	vs := make([]deviceValue, len(ds))
	for i, d := range ds {
		vs[i] = deviceValue{ID: d.ID, Session: d.Session, Platform: string(d.Platform), Token: d.Token, Locale: string(d.Locale),
			Endpoint: d.Endpoint, CreatedAt: d.CreatedAt.UnixMilli()}
	}
	b, err := json.Marshal(vs)
	if err != nil {
		panic(fmt.Sprintf("boltstore: encoding devices cannot fail: %v", err))
	}
	return b
}

func readDevices(tx *bolt.Tx, playerID string) ([]service.DeviceRecord, error) {
	value := get(tx, devicesBucket, playerID)
	out := []service.DeviceRecord{}
	if value == nil {
		return out, nil
	}
	var vs []deviceValue
	if err := json.Unmarshal(value, &vs); err != nil {
		return nil, fmt.Errorf("%w: devices of %q: %v", errCorrupt, playerID, err)
	}
	for _, v := range vs {
		out = append(out, service.DeviceRecord{ID: v.ID, PlayerID: playerID, Session: v.Session, Platform: notify.Platform(v.Platform),
			Token: v.Token, Locale: notify.Locale(v.Locale), Endpoint: v.Endpoint, CreatedAt: rules.Millis(v.CreatedAt)})
	}
	return out, nil
}

func writeDevices(tx *bolt.Tx, playerID string, ds []service.DeviceRecord) error {
	if len(ds) == 0 {
		return del(tx, devicesBucket, playerID)
	}
	return put(tx, devicesBucket, playerID, encodeDevices(ds))
}

// Devices lists a player's devices, oldest first.
func (s *Store) Devices(ctx context.Context, playerID string) ([]service.DeviceRecord, error) {
	var out []service.DeviceRecord
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = s.view(ctx, func(tx *bolt.Tx) (err error) {
			out, err = readDevices(tx, playerID)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: devices of %q: %w", playerID, err)
	}
	return out, nil
}

// AddDevice stores d unless the player has its token already (then that
// device is returned, with d's locale) or max devices
// (service.ErrTooManyDevices).
func (s *Store) AddDevice(ctx context.Context, d service.DeviceRecord, max int) (service.DeviceRecord, bool, error) {
	var stored service.DeviceRecord
	var added bool
	err := rules.ValidateDevice(d)
	if err == nil {
		err = rules.ValidateMax(max)
	}
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			cur, err := readDevices(tx, d.PlayerID)
			if err != nil {
				return err, nil
			}
			next, st, add, refusal := rules.AddDevice(cur, d, max)
			if refusal != nil {
				return refusal, nil
			}
			stored, added = st, add
			if next == nil {
				return nil, nil
			}
			return nil, writeDevices(tx, d.PlayerID, next)
		})
	}
	if err != nil {
		return service.DeviceRecord{}, false, fmt.Errorf("boltstore: add device for %q: %w", d.PlayerID, err)
	}
	return stored, added, nil
}

// DeleteDevices removes the player's devices m selects and returns them.
func (s *Store) DeleteDevices(ctx context.Context, playerID string, m service.DeviceMatch) ([]service.DeviceRecord, error) {
	var gone []service.DeviceRecord
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			cur, err := readDevices(tx, playerID)
			if err != nil {
				return err, nil
			}
			var kept []service.DeviceRecord
			gone, kept = rules.SplitDevices(cur, m)
			if len(gone) == 0 {
				return nil, nil
			}
			return nil, writeDevices(tx, playerID, kept)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: delete devices of %q: %w", playerID, err)
	}
	return gone, nil
}

// ClaimToken makes playerID the token's owner and returns the previous one.
func (s *Store) ClaimToken(ctx context.Context, tokenKey, playerID string) (string, error) {
	var previous string
	err := rules.ValidateKey("token key", tokenKey)
	if err == nil {
		err = rules.ValidateKey("player id", playerID)
	}
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			previous = string(get(tx, deviceTokensBucket, tokenKey))
			return nil, put(tx, deviceTokensBucket, tokenKey, []byte(playerID))
		})
	}
	if err != nil {
		return "", fmt.Errorf("boltstore: claim device token: %w", err)
	}
	return previous, nil
}

// ReleaseToken removes the token's owner if it is playerID.
func (s *Store) ReleaseToken(ctx context.Context, tokenKey, playerID string) (bool, error) {
	released := false
	err := rules.ValidateKey("token key", tokenKey)
	if err == nil {
		err = rules.ValidateKey("player id", playerID)
	}
	if err == nil {
		err = s.run(ctx, func(tx *bolt.Tx) (error, error) {
			if string(get(tx, deviceTokensBucket, tokenKey)) != playerID {
				return nil, nil
			}
			released = true
			return nil, del(tx, deviceTokensBucket, tokenKey)
		})
	}
	if err != nil {
		return false, fmt.Errorf("boltstore: release device token: %w", err)
	}
	return released, nil
}
