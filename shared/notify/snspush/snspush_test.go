package snspush_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/smithy-go/middleware"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/notify"
	"chessapi/shared/notify/snspush"
)

// The SNS adapter against moto_server's SNS: platform applications made
// as an operator would (CreatePlatformApplication), endpoints registered,
// payloads published and read back from moto's recorded messages, an
// endpoint disabled as SNS does for a dead token (SetEndpointAttributes
// Enabled=false).

const gameID = "g8VbqXk2QnS0t1u2v3w4xA"

// Tokens differ per subtest: the subtests share one moto, whose endpoints
// are found by token.
var tokenSeq atomic.Int64

func apnsToken() string { return fmt.Sprintf("%064x", 0xabc000+tokenSeq.Add(1)) }

func fcmToken() string { return fmt.Sprintf("fcm%d:", tokenSeq.Add(1)) + strings.Repeat("AbC-_9", 30) }

// TestAgainstMoto runs the adapter's tests on one moto_server.
func TestAgainstMoto(t *testing.T) {
	endpoint := emulatortest.StartMoto(t)
	for _, tt := range []struct {
		name string
		test func(t *testing.T, f *fixture)
	}{
		{"RegisterIdempotent", testRegisterIdempotent},
		{"APNsPayload", testAPNsPayload},
		{"FCMPayload", testFCMPayload},
		{"DisabledEndpoint", testDisabledEndpoint},
		{"PlatformUnavailable", testPlatformUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.test(t, newFixture(t, endpoint)) })
	}
}

// fixture is moto with one application per platform and a sender over it.
type fixture struct {
	endpoint string
	client   *sns.Client
	apps     snspush.Applications
	sender   *snspush.Sender
	// published records every PublishInput the client sent.
	mu        sync.Mutex
	published []*sns.PublishInput
}

func newFixture(t *testing.T, endpoint string) *fixture {
	t.Helper()
	f := &fixture{endpoint: endpoint}
	f.client = sns.NewFromConfig(emulator.Config(f.endpoint), func(o *sns.Options) {
		o.APIOptions = append(o.APIOptions, func(st *middleware.Stack) error {
			return st.Initialize.Add(middleware.InitializeMiddlewareFunc("recordPublish", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if p, ok := in.Parameters.(*sns.PublishInput); ok {
					f.mu.Lock()
					f.published = append(f.published, p)
					f.mu.Unlock()
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	})
	f.apps = snspush.Applications{}
	for p, platform := range map[notify.Platform]string{notify.APNs: "APNS", notify.APNsSandbox: "APNS_SANDBOX", notify.FCM: "GCM"} {
		out, err := f.client.CreatePlatformApplication(ctx(t), &sns.CreatePlatformApplicationInput{
			Name: aws.String("chess-" + platform + "-" + strings.ReplaceAll(t.Name(), "/", "-")), Platform: aws.String(platform),
			Attributes: map[string]string{"PlatformCredential": "test-credential"},
		})
		if err != nil {
			t.Fatalf("CreatePlatformApplication(%s): %v", platform, err)
		}
		f.apps[p] = aws.ToString(out.PlatformApplicationArn)
	}
	s, err := snspush.New(f.client, f.apps)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	f.sender = s
	return f
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// mobileEndpoint is one endpoint as moto's model dump shows it.
type mobileEndpoint struct {
	ARN        string            `json:"arn"`
	Token      string            `json:"token"`
	Attributes map[string]any    `json:"attributes"`
	Messages   map[string]string `json:"messages"`
}

// endpoints reads moto's endpoints (its /moto-api/data.json dump).
func (f *fixture) endpoints(t *testing.T) map[string]mobileEndpoint {
	t.Helper()
	resp, err := http.Get(f.endpoint + "/moto-api/data.json")
	if err != nil {
		t.Fatalf("moto data: %v", err)
	}
	defer resp.Body.Close()
	var dump struct {
		SNS struct {
			PlatformEndpoint []mobileEndpoint `json:"PlatformEndpoint"`
		} `json:"sns"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&dump); err != nil {
		t.Fatalf("moto data: %v", err)
	}
	out := map[string]mobileEndpoint{}
	for _, e := range dump.SNS.PlatformEndpoint {
		out[e.ARN] = e
	}
	return out
}

// live reports whether moto still has the endpoint (its model dump keeps
// deleted instances, the backend does not).
func (f *fixture) live(t *testing.T, arn string) bool {
	_, err := f.client.GetEndpointAttributes(ctx(t), &sns.GetEndpointAttributesInput{EndpointArn: aws.String(arn)})
	return err == nil
}

func message(kind string) notify.Message {
	return notify.Message{
		ID: "n0000000001-abc", Kind: kind, GameID: gameID, At: 1_760_000_000_123,
		Title: "내 차례예요", Body: "상대가 e4를 두었어요",
		Data: json.RawMessage(`{"move":{"san":"e4","uci":"e2e4"},"deadline":1760000600123}`),
	}
}

// onlyMessage returns the one message moto recorded for the endpoint.
func onlyMessage(t *testing.T, e mobileEndpoint) map[string]string {
	t.Helper()
	if len(e.Messages) != 1 {
		t.Fatalf("endpoint %s has %d messages; want 1", e.ARN, len(e.Messages))
	}
	for _, raw := range e.Messages {
		var m map[string]string
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("message %q is not a JSON object of strings: %v", raw, err)
		}
		return m
	}
	return nil
}

func testRegisterIdempotent(t *testing.T, f *fixture) {
	for _, d := range []notify.Device{{Platform: notify.APNs, Token: apnsToken()}, {Platform: notify.FCM, Token: fcmToken()}} {
		first, err := f.sender.Register(ctx(t), d)
		if err != nil {
			t.Fatalf("Register(%s): %v", d.Platform, err)
		}
		if !strings.Contains(first.Endpoint, ":endpoint/") {
			t.Fatalf("Register(%s).Endpoint = %q; want an endpoint ARN", d.Platform, first.Endpoint)
		}
		again, err := f.sender.Register(ctx(t), d)
		if err != nil || again.Endpoint != first.Endpoint {
			t.Fatalf("Register(%s) again = %q, %v; want the same endpoint %q", d.Platform, again.Endpoint, err, first.Endpoint)
		}
		e := f.endpoints(t)[first.Endpoint]
		if e.Token != d.Token {
			t.Errorf("endpoint token = %q; want %q", e.Token, d.Token)
		}
	}
}

func testAPNsPayload(t *testing.T, f *fixture) {
	for _, p := range []notify.Platform{notify.APNs, notify.APNsSandbox} {
		t.Run(string(p), func(t *testing.T) {
			d, err := f.sender.Register(ctx(t), notify.Device{Platform: p, Token: apnsToken()})
			if err != nil {
				t.Fatal(err)
			}
			want := message("yourTurn")
			if err := f.sender.Send(ctx(t), d, want); err != nil {
				t.Fatalf("Send: %v", err)
			}
			m := onlyMessage(t, f.endpoints(t)[d.Endpoint])
			if m["default"] != want.Body {
				t.Errorf("default = %q; want the body %q", m["default"], want.Body)
			}
			var payload struct {
				Aps struct {
					Alert    struct{ Title, Body string } `json:"alert"`
					Sound    string                       `json:"sound"`
					ThreadID string                       `json:"thread-id"`
				} `json:"aps"`
				Notification notify.Message `json:"notification"`
			}
			if err := json.Unmarshal([]byte(m[p.SNSKey()]), &payload); err != nil {
				t.Fatalf("%s payload %q: %v", p.SNSKey(), m[p.SNSKey()], err)
			}
			if payload.Aps.Alert.Title != want.Title || payload.Aps.Alert.Body != want.Body || payload.Aps.ThreadID != gameID || payload.Aps.Sound != "default" {
				t.Errorf("aps = %+v; want the title, body, sound and the game as thread", payload.Aps)
			}
			got := payload.Notification
			if got.ID != want.ID || got.Kind != want.Kind || got.GameID != want.GameID || got.At != want.At || string(got.Data) != string(want.Data) {
				t.Errorf("notification = %+v; want %+v", got, want)
			}
			f.mu.Lock()
			in := f.published[len(f.published)-1]
			f.mu.Unlock()
			attr := func(name string) string { return aws.ToString(in.MessageAttributes[name].StringValue) }
			if attr("AWS.SNS.MOBILE.APNS.COLLAPSE_ID") != gameID || attr("AWS.SNS.MOBILE.APNS.PUSH_TYPE") != "alert" {
				t.Errorf("message attributes = %v; want the game as collapse id, push type alert", in.MessageAttributes)
			}
			if aws.ToString(in.MessageStructure) != "json" {
				t.Errorf("MessageStructure = %q; want json", aws.ToString(in.MessageStructure))
			}
		})
	}
}

func testFCMPayload(t *testing.T, f *fixture) {
	d, err := f.sender.Register(ctx(t), notify.Device{Platform: notify.FCM, Token: fcmToken()})
	if err != nil {
		t.Fatal(err)
	}
	want := message("gameEnded")
	if err := f.sender.Send(ctx(t), d, want); err != nil {
		t.Fatalf("Send: %v", err)
	}
	m := onlyMessage(t, f.endpoints(t)[d.Endpoint])
	var payload struct {
		V1 struct {
			Message struct {
				Notification struct{ Title, Body string } `json:"notification"`
				Data         map[string]string            `json:"data"`
				Android      struct {
					CollapseKey  string `json:"collapse_key"`
					Notification struct {
						Tag string `json:"tag"`
					} `json:"notification"`
				} `json:"android"`
				APNs struct {
					Headers map[string]string `json:"headers"`
				} `json:"apns"`
			} `json:"message"`
		} `json:"fcmV1Message"`
	}
	if err := json.Unmarshal([]byte(m["GCM"]), &payload); err != nil {
		t.Fatalf("GCM payload %q: %v", m["GCM"], err)
	}
	msg := payload.V1.Message
	if msg.Notification.Title != want.Title || msg.Notification.Body != want.Body {
		t.Errorf("notification = %+v; want the title and body", msg.Notification)
	}
	if msg.Android.CollapseKey != gameID || msg.Android.Notification.Tag != gameID || msg.APNs.Headers["apns-collapse-id"] != gameID {
		t.Errorf("collapse keys = %q, tag %q, apns %q; want the game %q", msg.Android.CollapseKey, msg.Android.Notification.Tag, msg.APNs.Headers["apns-collapse-id"], gameID)
	}
	wantData := map[string]string{"notificationId": want.ID, "kind": want.Kind, "gameId": want.GameID, "at": "1760000000123", "data": string(want.Data)}
	for k, v := range wantData {
		if msg.Data[k] != v {
			t.Errorf("data[%q] = %q; want %q", k, msg.Data[k], v)
		}
	}
	if len(msg.Data) != len(wantData) {
		t.Errorf("data = %v; want exactly %v", msg.Data, wantData)
	}
}

// TestDisabledEndpoint: an endpoint SNS disabled is a gone device; a
// device registering its token again gets a working endpoint.
func testDisabledEndpoint(t *testing.T, f *fixture) {
	token := fcmToken()
	d, err := f.sender.Register(ctx(t), notify.Device{Platform: notify.FCM, Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.SetEndpointAttributes(ctx(t), &sns.SetEndpointAttributesInput{
		EndpointArn: aws.String(d.Endpoint), Attributes: map[string]string{"Enabled": "false"},
	}); err != nil {
		t.Fatal(err)
	}
	err = f.sender.Send(ctx(t), d, message("yourTurn"))
	if !errors.Is(err, notify.ErrDeviceGone) {
		t.Fatalf("Send to a disabled endpoint = %v; want ErrDeviceGone", err)
	}

	// The app starts again and registers the same token: a fresh endpoint.
	again, err := f.sender.Register(ctx(t), notify.Device{Platform: notify.FCM, Token: token})
	if err != nil {
		t.Fatalf("Register after disable: %v", err)
	}
	if again.Endpoint == d.Endpoint || f.live(t, d.Endpoint) {
		t.Errorf("Register after disable kept the disabled endpoint %s", d.Endpoint)
	}
	if err := f.sender.Send(ctx(t), again, message("yourTurn")); err != nil {
		t.Fatalf("Send to the new endpoint: %v", err)
	}

	// Unregister deletes the endpoint; twice is fine.
	for range 2 {
		if err := f.sender.Unregister(ctx(t), again); err != nil {
			t.Fatalf("Unregister: %v", err)
		}
	}
	if f.live(t, again.Endpoint) {
		t.Errorf("endpoint %s still exists after Unregister", again.Endpoint)
	}
	if err := f.sender.Send(ctx(t), again, message("yourTurn")); !errors.Is(err, notify.ErrDeviceGone) {
		t.Errorf("Send to a deleted endpoint = %v; want ErrDeviceGone", err)
	}
}

func testPlatformUnavailable(t *testing.T, f *fixture) {
	apnsOnly, err := snspush.New(f.client, snspush.Applications{notify.APNs: f.apps[notify.APNs], notify.FCM: ""})
	if err != nil {
		t.Fatal(err)
	}
	if !apnsOnly.Available(notify.APNs) || apnsOnly.Available(notify.FCM) || apnsOnly.Available(notify.APNsSandbox) {
		t.Errorf("Available = apns %v, fcm %v, sandbox %v; want only apns", apnsOnly.Available(notify.APNs), apnsOnly.Available(notify.FCM), apnsOnly.Available(notify.APNsSandbox))
	}
	if _, err := apnsOnly.Register(ctx(t), notify.Device{Platform: notify.FCM, Token: fcmToken()}); !errors.Is(err, notify.ErrPlatformUnavailable) {
		t.Errorf("Register(fcm) without an application = %v; want ErrPlatformUnavailable", err)
	}
}

func TestNewChecksApplications(t *testing.T) {
	tests := []struct {
		name string
		apps snspush.Applications
	}{
		{"apns app given for fcm", snspush.Applications{notify.FCM: "arn:aws:sns:us-east-1:123456789012:app/APNS/chess"}},
		{"sandbox app given for apns", snspush.Applications{notify.APNs: "arn:aws:sns:us-east-1:123456789012:app/APNS_SANDBOX/chess"}},
		{"topic", snspush.Applications{notify.APNs: "arn:aws:sns:us-east-1:123456789012:chess-topic"}},
		{"not an ARN", snspush.Applications{notify.FCM: "chess"}},
		{"unknown platform", snspush.Applications{"adm": "arn:aws:sns:us-east-1:123456789012:app/ADM/chess"}},
	}
	for _, tt := range tests {
		if _, err := snspush.New(&sns.Client{}, tt.apps); err == nil {
			t.Errorf("New(%s: %v) = nil error; want one", tt.name, tt.apps)
		}
	}
	if _, err := snspush.New(nil, nil); err == nil {
		t.Error("New(nil client) = nil error; want one")
	}
}

func TestPayloadUnknownPlatform(t *testing.T) {
	if _, err := snspush.Payload("adm", message("yourTurn")); err == nil {
		t.Error(`Payload("adm") = nil error; want one`)
	}
}
