package api

import (
	"context"
	"errors"
	"fmt"

	"chessapi/shared/notify"
)

// deviceBody is a registration of the i-th APNs test device.
func deviceBody(i int) map[string]any {
	return map[string]any{"platform": "apns", "token": fmt.Sprintf("%064x", 0xd0000+i)}
}

// apnsOnlySender is a sender of a deployment with an APNs application
// only; it sends nothing.
type apnsOnlySender struct{}

func (apnsOnlySender) Available(p notify.Platform) bool { return p == notify.APNs }
func (apnsOnlySender) Register(_ context.Context, d notify.Device) (notify.Device, error) {
	return d, nil
}
func (apnsOnlySender) Send(context.Context, notify.Device, notify.Message) error { return nil }
func (apnsOnlySender) Unregister(context.Context, notify.Device) error           { return nil }

// downSender is a push provider that fails every registration.
type downSender struct{ apnsOnlySender }

func (downSender) Available(notify.Platform) bool { return true }
func (downSender) Register(context.Context, notify.Device) (notify.Device, error) {
	return notify.Device{}, errors.New("sns: throttled")
}
