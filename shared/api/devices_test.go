package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// The device routes on the real service and the embedded store; every
// answer is validated against openapi.yaml by the helper.

func TestDeviceRegistration(t *testing.T) {
	a := newTestAPI(t)
	p := a.newPlayer("지우")
	first := a.do("POST", "/v1/players/me/devices", p, deviceBody(1)).expect(t, http.StatusCreated)
	id, _ := first.json["deviceId"].(string)
	if !strings.HasPrefix(id, "dev_") || first.json["platform"] != "apns" || first.json["locale"] != "ko" || first.header.Get("Location") != "/v1/players/me/devices/"+id {
		t.Fatalf("register = %v, Location %q; want a dev_ id, apns, the default locale ko", first.json, first.header.Get("Location"))
	}
	if _, leaks := first.json["token"]; leaks {
		t.Error("the answer shows the token")
	}
	again := a.do("POST", "/v1/players/me/devices", p, map[string]any{"platform": "apns", "token": deviceBody(1)["token"], "locale": "en"}).expect(t, http.StatusOK)
	if again.json["deviceId"] != id || again.json["locale"] != "en" {
		t.Errorf("the same token again = %v; want 200 with the same device, its locale now en", again.json)
	}
	kept := a.do("POST", "/v1/players/me/devices", p, deviceBody(1)).expect(t, http.StatusOK)
	if kept.json["locale"] != "en" {
		t.Errorf("the same token without a locale = %v; want the locale it had (en)", kept.json)
	}
	a.clock.Advance(time.Second)
	fcm := a.do("POST", "/v1/players/me/devices", p, map[string]any{"platform": "fcm", "token": "dQw4w9WgXcQ:" + strings.Repeat("APA91b-_", 20)}).expect(t, http.StatusCreated)
	list := a.do("GET", "/v1/players/me/devices", p, nil).expect(t, http.StatusOK)
	devices, _ := list.json["devices"].([]any)
	if len(devices) != 2 || devices[0].(map[string]any)["deviceId"] != id || devices[1].(map[string]any)["deviceId"] != fcm.json["deviceId"] {
		t.Fatalf("list = %v; want the two devices, oldest first", list.json)
	}
	a.do("DELETE", "/v1/players/me/devices/"+id, p, nil).expect(t, http.StatusNoContent)
	a.do("DELETE", "/v1/players/me/devices/"+id, p, nil).expect(t, http.StatusNotFound)
	if n := len(a.do("GET", "/v1/players/me/devices", p, nil).expect(t, http.StatusOK).json["devices"].([]any)); n != 1 {
		t.Errorf("%d devices after a delete; want 1", n)
	}
	// Another player's device cannot be deleted: it is not the caller's.
	other := a.newPlayer("Ben")
	a.do("DELETE", "/v1/players/me/devices/"+fcm.json["deviceId"].(string), other, nil).expect(t, http.StatusNotFound)
}

func TestDeviceLimit(t *testing.T) {
	a := newTestAPI(t)
	p := a.newPlayer("many")
	for i := range service.MaxDevices {
		a.do("POST", "/v1/players/me/devices", p, deviceBody(i)).expect(t, http.StatusCreated)
	}
	r := a.do("POST", "/v1/players/me/devices", p, deviceBody(service.MaxDevices)).expect(t, http.StatusConflict)
	if code, _ := r.errorCode(); code != "too_many_devices" {
		t.Errorf("the 11th device = %s; want too_many_devices", code)
	}
	// A token registered before is no 11th device.
	a.do("POST", "/v1/players/me/devices", p, deviceBody(3)).expect(t, http.StatusOK)
}

// TestDeviceChangesHands: a token registered by a second player leaves
// the first one's devices.
func TestDeviceChangesHands(t *testing.T) {
	a := newTestAPI(t)
	first, second := a.newPlayer("first"), a.newPlayer("second")
	a.do("POST", "/v1/players/me/devices", first, deviceBody(7)).expect(t, http.StatusCreated)
	a.do("POST", "/v1/players/me/devices", second, deviceBody(7)).expect(t, http.StatusCreated)
	if n := len(a.do("GET", "/v1/players/me/devices", first, nil).expect(t, http.StatusOK).json["devices"].([]any)); n != 0 {
		t.Errorf("the first player still has %d devices; want none", n)
	}
	if n := len(a.do("GET", "/v1/players/me/devices", second, nil).expect(t, http.StatusOK).json["devices"].([]any)); n != 1 {
		t.Errorf("the second player has %d devices; want 1", n)
	}
}

func TestDeviceBadInput(t *testing.T) {
	a := newTestAPI(t)
	p := a.newPlayer("typo")
	fcm := func(s string) map[string]any { return map[string]any{"platform": "fcm", "token": s} }
	tests := []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"unknown platform", map[string]any{"platform": "adm", "token": "x"}, "invalid_field", "platform"},
		{"platform of another case", map[string]any{"platform": "APNS", "token": deviceBody(1)["token"]}, "invalid_field", "platform"},
		{"short APNs token", map[string]any{"platform": "apns", "token": strings.Repeat("a", 63)}, "invalid_field", "token"},
		{"APNs token not hex", map[string]any{"platform": "apns_sandbox", "token": strings.Repeat("g", 64)}, "invalid_field", "token"},
		{"short FCM token", fcm(strings.Repeat("a", 99)), "invalid_field", "token"},
		{"FCM token with a space", fcm(strings.Repeat("a", 99) + " "), "invalid_field", "token"},
		{"FCM token too long", fcm(strings.Repeat("a", 4097)), "invalid_field", "token"},
		{"locale", map[string]any{"platform": "apns", "token": deviceBody(1)["token"], "locale": "fr"}, "invalid_field", "locale"},
		{"empty locale", map[string]any{"platform": "apns", "token": deviceBody(1)["token"], "locale": ""}, "invalid_field", "locale"},
		{"no token", map[string]any{"platform": "apns"}, "missing_field", "token"},
		{"no platform", map[string]any{"token": "x"}, "missing_field", "platform"},
		{"token not text", map[string]any{"platform": "apns", "token": 7}, "invalid_field", "token"},
		{"unknown field", map[string]any{"platform": "apns", "token": deviceBody(1)["token"], "sound": "on"}, "unknown_field", "sound"},
		{"not an object", `["apns"]`, "invalid_json", ""},
	}
	for _, tt := range tests {
		r := a.do("POST", "/v1/players/me/devices", p, tt.body).expect(t, http.StatusBadRequest)
		if code, field := r.errorCode(); code != tt.code || field != tt.field {
			t.Errorf("%s: %s %q; want %s %q", tt.name, code, field, tt.code, tt.field)
		}
	}
	seat, _ := a.createHumanGame(nil)
	if code, _ := a.do("POST", "/v1/players/me/devices", seat.token, deviceBody(1)).expect(t, http.StatusUnauthorized).errorCode(); code != "player_required" {
		t.Errorf("a seat token = %s; want player_required", code)
	}
	a.do("GET", "/v1/players/me/devices", "", nil).expect(t, http.StatusUnauthorized)
}

func TestPlatformUnavailable(t *testing.T) {
	a := newTestAPIWith(t, func(c *service.Config) { c.Sender = apnsOnlySender{} })
	p := a.newPlayer("android")
	r := a.do("POST", "/v1/players/me/devices", p, map[string]any{"platform": "fcm", "token": strings.Repeat("f", 152)}).expect(t, http.StatusUnprocessableEntity)
	if code, field := r.errorCode(); code != "platform_unavailable" || field != "platform" {
		t.Errorf("fcm without an application = %s %q; want platform_unavailable on platform", code, field)
	}
	a.do("POST", "/v1/players/me/devices", p, deviceBody(1)).expect(t, http.StatusCreated)
}

func TestPushProviderDown(t *testing.T) {
	a := newTestAPIWith(t, func(c *service.Config) { c.Sender = downSender{} })
	r := a.do("POST", "/v1/players/me/devices", a.newPlayer("down"), deviceBody(1)).expect(t, http.StatusServiceUnavailable)
	if code, _ := r.errorCode(); code != "unavailable" {
		t.Errorf("a failing provider = %s; want unavailable (retry later)", code)
	}
}

// FuzzRegisterDevice posts any body to the registration: the answer is a
// 2xx or a 4xx naming its problem, never a 5xx or a panic.
func FuzzRegisterDevice(f *testing.F) {
	for _, seed := range []string{
		`{"platform":"apns","token":"` + strings.Repeat("ab", 32) + `"}`,
		`{"platform":"fcm","token":"` + strings.Repeat("x:", 60) + `","locale":"en"}`,
		`{"platform":"apns_sandbox","token":"` + strings.Repeat("A", 64) + `","locale":"ko"}`,
		`{"platform":"fcm","token":""}`, `{"platform":null}`, `{}`, `[]`, `{"token":"\u0000"}`,
		`{"platform":"apns","token":"` + strings.Repeat("ab", 32) + `","platform":"fcm"}`,
	} {
		f.Add(seed)
	}
	a := newFuzzAPI(f)
	var token string
	f.Fuzz(func(t *testing.T, body string) {
		a.t = t
		if token == "" {
			token = a.newPlayer("fuzz")
		}
		r := a.do("POST", "/v1/players/me/devices", token, body)
		switch {
		case r.status == http.StatusCreated || r.status == http.StatusOK:
			var d deviceJSON
			if err := json.Unmarshal(r.body, &d); err != nil || d.DeviceID == "" {
				t.Fatalf("%d %s: not a device", r.status, r.body)
			}
			// Keep the player under the limit: each accepted device goes.
			a.do("DELETE", "/v1/players/me/devices/"+d.DeviceID, token, nil).expect(t, http.StatusNoContent)
		case r.status >= 400 && r.status < 500:
			if code, _ := r.errorCode(); code == "" {
				t.Fatalf("%d %s: no error code", r.status, r.body)
			}
		default:
			t.Fatalf("body %q: %d %s", body, r.status, r.body)
		}
	})
}

// newFuzzAPI is the test API on a store that lasts the whole fuzz run
// (each input's t is set on it before use).
func newFuzzAPI(f *testing.F) *testAPI {
	store, err := boltstore.Open(filepath.Join(f.TempDir(), "games.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { store.Close() })
	svc, err := service.New(service.Config{Store: store, Players: store, Lister: store, Notifications: store})
	if err != nil {
		f.Fatal(err)
	}
	return &testAPI{handler: NewHandler(Deps{Games: svc}), svc: svc}
}

func TestDeviceRoutesNameTheirField(t *testing.T) {
	// The token field's error text says the platform's form, in both
	// languages.
	a := newTestAPI(t)
	p := a.newPlayer("texts")
	for lang, want := range map[string]string{"ko": "16진수 64자", "en": "64 hexadecimal characters"} {
		r := a.doHeaders("POST", "/v1/players/me/devices", with(http.Header{"Accept-Language": {lang}}, p), map[string]any{"platform": "apns", "token": "abc"})
		msg := fmt.Sprint(r.json["error"].(map[string]any)["message"])
		if r.status != http.StatusBadRequest || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %q; want 400 saying %q", lang, r.status, msg, want)
		}
	}
}
