package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/notify"
	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// Devices and their tokens' owners in the data table (service.NotificationStore):
//
//	pk "dev#<player>"   sk "dev"     devices (L of M: id, session, platform, token, locale, endpoint?, createdAt ms), version
//	pk "devtok#<key>"   sk "devtok"  playerId
//
// A player's devices are one item written conditionally on its version,
// so the bound on their number and the one-device-per-token rule hold
// under concurrency without transactions (ten devices of the longest FCM
// tokens are about 45 KB, far below the item limit). Each key prefix is a
// LeadingKeys grant of its own in template.yaml.

var _ service.NotificationStore = (*Data)(nil)

const (
	devicesPrefix     = "dev#"
	deviceTokenPrefix = "devtok#"
	devicesSK         = "dev"
	deviceTokenSK     = "devtok"

	attrDevices  = "devices"
	attrDVersion = "version"
)

// DeviceKeyPrefixes are the data table's key prefixes of devices, for the
// template's LeadingKeys grants (and its test).
var DeviceKeyPrefixes = []string{devicesPrefix, deviceTokenPrefix}

// maxDeviceWriteAttempts bounds the rounds of a device write that lost to
// a concurrent one; between rounds it waits a random pause of up to
// deviceBackoff, doubling, so that racers spread out (each round has one
// winner), as AcquireLease does.
const (
	maxDeviceWriteAttempts = 10
	deviceBackoff          = 10 * time.Millisecond
)

func deviceItem(d service.DeviceRecord) types.AttributeValue {
	m := map[string]types.AttributeValue{
		"id": s(d.ID), "session": s(d.Session), "platform": s(string(d.Platform)), "token": s(d.Token),
		"locale": s(string(d.Locale)), "createdAt": n(d.CreatedAt.UnixMilli()),
	}
	if d.Endpoint != "" {
		m["endpoint"] = s(d.Endpoint)
	}
	return &types.AttributeValueMemberM{Value: m}
}

func decodeDevices(playerID string, item map[string]types.AttributeValue) ([]service.DeviceRecord, error) {
	out := []service.DeviceRecord{}
	if item == nil {
		return out, nil
	}
	list, ok := item[attrDevices].(*types.AttributeValueMemberL)
	if !ok {
		return nil, &DataItemError{PK: devicesPrefix + playerID, SK: devicesSK, Reason: "no list of devices"}
	}
	for _, v := range list.Value {
		m, ok := v.(*types.AttributeValueMemberM)
		if !ok {
			return nil, &DataItemError{PK: devicesPrefix + playerID, SK: devicesSK, Reason: "a device is not a map"}
		}
		out = append(out, service.DeviceRecord{
			ID: str(m.Value, "id"), PlayerID: playerID, Session: str(m.Value, "session"), Platform: notify.Platform(str(m.Value, "platform")),
			Token: str(m.Value, "token"), Locale: notify.Locale(str(m.Value, "locale")), Endpoint: str(m.Value, "endpoint"),
			CreatedAt: rules.Millis(num(m.Value, "createdAt")),
		})
	}
	return out, nil
}

// readDevices reads a player's devices and their item's version (0: no
// item).
func (d *Data) readDevices(ctx context.Context, playerID string) ([]service.DeviceRecord, int64, error) {
	item, err := d.getItem(ctx, devicesPrefix+playerID, devicesSK)
	if err != nil {
		return nil, 0, err
	}
	ds, err := decodeDevices(playerID, item)
	if err != nil {
		return nil, 0, err
	}
	return ds, num(item, attrDVersion), nil
}

// writeDevices replaces the player's devices if their item is still at
// version (0: absent); false when another write came first.
func (d *Data) writeDevices(ctx context.Context, playerID string, ds []service.DeviceRecord, version int64) (bool, error) {
	k := key(devicesPrefix+playerID, devicesSK)
	var err error
	if len(ds) == 0 {
		_, err = d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(d.table), Key: k,
			ConditionExpression:       aws.String("#v = :v"),
			ExpressionAttributeNames:  map[string]string{"#v": attrDVersion},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": n(version)},
		})
	} else {
		list := make([]types.AttributeValue, len(ds))
		for i, dev := range ds {
			list[i] = deviceItem(dev)
		}
		k[attrDevices] = &types.AttributeValueMemberL{Value: list}
		k[attrDVersion] = n(version + 1)
		if version == 0 {
			err = d.put(ctx, k, "attribute_not_exists(#pk)", map[string]string{"#pk": attrPK}, nil)
		} else {
			err = d.put(ctx, k, "#v = :v", map[string]string{"#v": attrDVersion}, map[string]types.AttributeValue{":v": n(version)})
		}
	}
	if isConditionFailed(err) {
		return false, nil
	}
	return err == nil, err
}

// updateDevices runs change on the player's devices until its write wins:
// change returns the list to write (nil: nothing to write).
func (d *Data) updateDevices(ctx context.Context, playerID string, change func([]service.DeviceRecord) ([]service.DeviceRecord, error)) error {
	pause := deviceBackoff
	for attempt := range maxDeviceWriteAttempts {
		if attempt > 0 {
			if err := sleepCtx(ctx, rand.N(pause)+time.Millisecond); err != nil {
				return err
			}
			pause *= 2
		}
		cur, version, err := d.readDevices(ctx, playerID)
		if err != nil {
			return err
		}
		next, err := change(cur)
		if err != nil || next == nil {
			return err
		}
		if ok, err := d.writeDevices(ctx, playerID, next, version); ok || err != nil {
			return err
		}
	}
	return &ThrottledError{Err: errors.New("the devices item changed under every attempt")}
}

// Devices lists a player's devices, oldest first.
func (d *Data) Devices(ctx context.Context, playerID string) ([]service.DeviceRecord, error) {
	err := rules.ValidateKey("player id", playerID)
	var ds []service.DeviceRecord
	if err == nil {
		ds, _, err = d.readDevices(ctx, playerID)
	}
	if err != nil {
		return nil, fmt.Errorf("dynamostore: devices of %q: %w", playerID, err)
	}
	return ds, nil
}

// AddDevice stores dev unless the player has its token already (that
// device is returned, with dev's locale) or max devices
// (service.ErrTooManyDevices).
func (d *Data) AddDevice(ctx context.Context, dev service.DeviceRecord, max int) (service.DeviceRecord, bool, error) {
	var stored service.DeviceRecord
	var added bool
	err := rules.ValidateDevice(dev)
	if err == nil {
		err = rules.ValidateMax(max)
	}
	if err == nil {
		err = d.updateDevices(ctx, dev.PlayerID, func(cur []service.DeviceRecord) ([]service.DeviceRecord, error) {
			next, st, add, err := rules.AddDevice(cur, dev, max)
			stored, added = st, add
			return next, err
		})
	}
	if err != nil {
		return service.DeviceRecord{}, false, fmt.Errorf("dynamostore: add device for %q: %w", dev.PlayerID, err)
	}
	return stored, added, nil
}

// DeleteDevices removes the player's devices m selects and returns them.
func (d *Data) DeleteDevices(ctx context.Context, playerID string, m service.DeviceMatch) ([]service.DeviceRecord, error) {
	var gone []service.DeviceRecord
	err := rules.ValidateKey("player id", playerID)
	if err == nil {
		err = d.updateDevices(ctx, playerID, func(cur []service.DeviceRecord) ([]service.DeviceRecord, error) {
			var kept []service.DeviceRecord
			gone, kept = rules.SplitDevices(cur, m)
			if len(gone) == 0 {
				return nil, nil
			}
			if kept == nil {
				kept = []service.DeviceRecord{} // an empty list deletes the item
			}
			return kept, nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("dynamostore: delete devices of %q: %w", playerID, err)
	}
	return gone, nil
}

// ClaimToken makes playerID the token's owner (one PutItem returning the
// item it replaced) and returns the previous one.
func (d *Data) ClaimToken(ctx context.Context, tokenKey, playerID string) (string, error) {
	err := rules.ValidateKey("token key", tokenKey)
	if err == nil {
		err = rules.ValidateKey("player id", playerID)
	}
	if err != nil {
		return "", fmt.Errorf("dynamostore: claim device token: %w", err)
	}
	item := key(deviceTokenPrefix+tokenKey, deviceTokenSK)
	item[attrPlayerID] = s(playerID)
	out, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(d.table), Item: item, ReturnValues: types.ReturnValueAllOld})
	if err != nil {
		return "", fmt.Errorf("dynamostore: claim device token: %w", err)
	}
	return str(out.Attributes, attrPlayerID), nil
}

// ReleaseToken removes the token's owner if it is playerID.
func (d *Data) ReleaseToken(ctx context.Context, tokenKey, playerID string) (bool, error) {
	err := rules.ValidateKey("token key", tokenKey)
	if err == nil {
		err = rules.ValidateKey("player id", playerID)
	}
	if err == nil {
		_, err = d.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(d.table), Key: key(deviceTokenPrefix+tokenKey, deviceTokenSK),
			ConditionExpression:       aws.String("#p = :p"),
			ExpressionAttributeNames:  map[string]string{"#p": attrPlayerID},
			ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(playerID)},
		})
		if isConditionFailed(err) {
			return false, nil
		}
	}
	if err != nil {
		return false, fmt.Errorf("dynamostore: release device token: %w", err)
	}
	return true, nil
}
