package lambdafn

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"chessapi/deploy"
	"chessapi/shared/notify"
	"chessapi/shared/service"
)

// eventsSender is the fixture's push provider: every platform available,
// an endpoint named after the token, nothing sent anywhere.
type eventsSender struct{}

func (eventsSender) Available(notify.Platform) bool { return true }
func (eventsSender) Register(_ context.Context, d notify.Device) (notify.Device, error) {
	d.Endpoint = "endpoint/" + string(d.Platform) + "/" + d.Token[:8]
	return d, nil
}
func (eventsSender) Send(context.Context, notify.Device, notify.Message) error { return nil }
func (eventsSender) Unregister(context.Context, notify.Device) error           { return nil }

// TestNotificationEvents replays the device and inbox events (SPEC §16.3)
// through the move function, as the sample player: registration (and the
// same token again), the list, a deletion, the inbox and its read mark.
func TestNotificationEvents(t *testing.T) {
	f := newFixture(t, "")
	seedSamplePlayer(t, f)
	ctx := context.Background()
	raw := func(name string) (int, map[string]any) {
		t.Helper()
		req := httpRequest(t, sent(loadEvents(t), name))
		resp, err := f.move.HandleHTTP(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkContract(t, req, resp)
		var body map[string]any
		if resp.Body != "" {
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
				t.Fatalf("%s: %q: %v", name, resp.Body, err)
			}
		}
		return resp.StatusCode, body
	}
	status, first := raw("move/player-device-register.json")
	if status != http.StatusCreated || !strings.HasPrefix(first["deviceId"].(string), "dev_") {
		t.Fatalf("player-device-register: %d %v; want 201 with a device id", status, first)
	}
	if status, again := raw("move/player-device-register.json"); status != 200 || again["deviceId"] != first["deviceId"] {
		t.Errorf("the same token again: %d %v; want 200 with %v", status, again, first["deviceId"])
	}
	// The device the delete event names: the sample player's second phone.
	second := service.DeviceRecord{ID: deploy.SampleDeviceID, PlayerID: samplePlayerID, Session: service.HashToken(deploy.SamplePlayerToken),
		Platform: notify.FCM, Token: strings.Repeat("f", 152), Locale: notify.English, CreatedAt: eventsStart.Add(time.Minute)}
	if _, _, err := f.store.AddDevice(ctx, second, service.MaxDevices); err != nil {
		t.Fatal(err)
	}
	if status, b := raw("move/player-devices.json"); status != 200 || len(b["devices"].([]any)) != 2 {
		t.Errorf("player-devices: %d %v; want both", status, b)
	}
	if status, b := raw("move/player-device-delete.json"); status != http.StatusNoContent {
		t.Errorf("player-device-delete: %d %v; want 204", status, b)
	}
	if status, b := raw("move/player-device-delete.json"); status != http.StatusNotFound || b["error"].(map[string]any)["code"] != "device_not_found" {
		t.Errorf("player-device-delete again: %d %v; want 404 device_not_found", status, b)
	}

	// The read event's notification, in the inbox as the service keeps it.
	at := time.UnixMilli(0x1a2272d2600)
	if _, _, err := f.store.AddNotification(ctx, service.NotificationRecord{PlayerID: samplePlayerID, ID: deploy.SampleNotificationID, At: at,
		Body: []byte(`{"k":"gameStarted","g":"` + deploy.SampleGameID + `","v":2,"t":1795953600000,"o":"Ben"}`), ExpiresAt: at.Add(service.InboxTTL)}); err != nil {
		t.Fatal(err)
	}
	status, inbox := raw("move/player-notifications.json")
	items, _ := inbox["notifications"].([]any)
	if status != 200 || len(items) != 1 || items[0].(map[string]any)["read"] != false {
		t.Fatalf("player-notifications: %d %v; want the one unread", status, inbox)
	}
	if status, b := raw("move/player-notifications-read.json"); status != http.StatusNoContent {
		t.Errorf("player-notifications-read: %d %v; want 204", status, b)
	}
	if _, inbox := raw("move/player-notifications.json"); inbox["notifications"].([]any)[0].(map[string]any)["read"] != true {
		t.Errorf("after the read mark: %v; want it read", inbox)
	}
}
