package api

import (
	"context"
	"errors"
	"net/http"

	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The device routes (SPEC §16.3; the inbox routes are in notifications.go):
//
//	POST   /v1/players/me/devices {platform, token, locale?} → 201 (200 for a token registered before)
//	GET    /v1/players/me/devices                            → {devices:[…]}
//	DELETE /v1/players/me/devices/{id}                       → 204

// Notifying is what the device and inbox routes need of the service.
type Notifying interface {
	RegisterDevice(ctx context.Context, c service.Caller, in service.DeviceInput) (service.DeviceRecord, bool, error)
	Devices(ctx context.Context, c service.Caller) ([]service.DeviceRecord, error)
	DeleteDevice(ctx context.Context, c service.Caller, deviceID string) error
	Notifications(ctx context.Context, c service.Caller, limit int, cursor string) (service.NotificationPage, error)
	MarkNotificationsRead(ctx context.Context, c service.Caller, upTo string) error
}

// deviceJSON is a device as the routes show it (never its token).
type deviceJSON struct {
	DeviceID  string `json:"deviceId"`
	Platform  string `json:"platform"`
	Locale    string `json:"locale"`
	CreatedAt int64  `json:"createdAt"`
}

func deviceOf(d service.DeviceRecord) deviceJSON {
	return deviceJSON{DeviceID: d.ID, Platform: string(d.Platform), Locale: string(d.Locale), CreatedAt: d.CreatedAt.UnixMilli()}
}

// maxDeviceTokenBytes bounds the token text the decoder takes (FCM's
// longest is 4,096 characters); the service checks each platform's form.
const maxDeviceTokenBytes = 4096

// decodeDevice reads POST /v1/players/me/devices.
func decodeDevice(body []byte) (service.DeviceInput, error) {
	var in service.DeviceInput
	err := decodeBody(body, false, func(o *object) {
		platform, token, locale := o.str("platform"), o.str("token"), o.str("locale")
		o.require("platform", platform != nil)
		o.require("token", token != nil)
		if platform != nil {
			in.Platform = *platform
		}
		if token != nil {
			if len(*token) > maxDeviceTokenBytes {
				o.fail(game.FieldLength("token", maxDeviceTokenBytes))
			}
			in.Token = *token
		}
		if locale != nil {
			if *locale == "" {
				o.fail(game.FieldOneOf("locale", "ko", "en"))
			}
			in.Locale = *locale
		}
	})
	return in, err
}

func (h *handler) handleRegisterDevice(w http.ResponseWriter, r *request) error {
	caller, in, err := playerRequest(w, r, decodeDevice)
	if err != nil {
		return err
	}
	d, added, err := h.deps.Games.RegisterDevice(r.Context(), caller, in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if added {
		status = http.StatusCreated
	}
	w.Header().Set("Location", "/v1/players/me/devices/"+d.ID)
	writeJSON(w, status, deviceOf(d))
	return nil
}

func (h *handler) handleDevices(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	ds, err := h.deps.Games.Devices(r.Context(), caller)
	if err != nil {
		return err
	}
	out := struct {
		Devices []deviceJSON `json:"devices"`
	}{Devices: make([]deviceJSON, 0, len(ds))}
	for _, d := range ds {
		out.Devices = append(out.Devices, deviceOf(d))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) handleDeleteDevice(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	id := r.PathValue("id")
	if len(id) > 64 {
		return service.ErrDeviceNotFound
	}
	if err := h.deps.Games.DeleteDevice(r.Context(), caller, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// describeNotifications maps the errors of devices and inboxes (d words a
// status and code); false for any other error.
func describeNotifications(err error, d func(status int, code string) described) (described, bool) {
	switch {
	case errors.Is(err, service.ErrTooManyDevices):
		return d(http.StatusConflict, "too_many_devices"), true
	case errors.Is(err, service.ErrPlatformUnavailable):
		out := d(http.StatusUnprocessableEntity, "platform_unavailable")
		out.Field = "platform"
		return out, true
	case errors.Is(err, service.ErrDeviceNotFound):
		return d(http.StatusNotFound, "device_not_found"), true
	case errors.Is(err, service.ErrNotificationNotFound):
		return d(http.StatusNotFound, "notification_not_found"), true
	case errors.Is(err, service.ErrNoNotifications), errors.As(err, new(*service.PushError)):
		return d(http.StatusServiceUnavailable, "unavailable"), true
	}
	return described{}, false
}
