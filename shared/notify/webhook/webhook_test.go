package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/shared/notify"
	"chessapi/shared/notify/webhook"
	"chessapi/shared/retry"
)

// receiver is a webhook server run by the test: it answers with the
// statuses given, in order (then 204), and keeps every body.
type receiver struct {
	mu       sync.Mutex
	statuses []int
	bodies   [][]byte
	got      chan struct{}
}

func newReceiver(t *testing.T, statuses ...int) (*receiver, string) {
	r := &receiver{statuses: statuses, got: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		status := http.StatusNoContent
		if len(r.statuses) > 0 {
			status, r.statuses = r.statuses[0], r.statuses[1:]
		}
		if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
			status = http.StatusMethodNotAllowed
		}
		r.bodies = append(r.bodies, body)
		r.mu.Unlock()
		w.WriteHeader(status)
		r.got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL + "/hook"
}

func (r *receiver) posts() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.bodies...)
}

// fast is retry.NotifyWebhook's number of attempts with millisecond waits.
var fast = retry.Policy{Attempts: retry.NotifyWebhook.Attempts, Base: time.Millisecond}

// logBuffer is a logger whose lines a test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newSender(t *testing.T, target string, logs *logBuffer) *webhook.Sender {
	t.Helper()
	s, err := webhook.New(target, webhook.Options{Retry: fast, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("New(%q): %v", target, err)
	}
	t.Cleanup(func() { s.Close(5 * time.Second) })
	return s
}

var (
	device  = notify.Device{Platform: notify.APNs, Token: strings.Repeat("ab", 32)}
	message = notify.Message{ID: "n1", Kind: "disconnectGraceStarted", GameID: "g1234567890", At: 1_760_000_000_000,
		Title: "돌아오세요", Body: "30초 안에 돌아오지 않으면 져요", Data: json.RawMessage(`{"deadline":1760000030000}`)}
)

// settle waits until the sender has nothing in flight.
func settle(t *testing.T, s *webhook.Sender) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d notifications still pending", s.Pending())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPostsTheDocument(t *testing.T) {
	r, target := newReceiver(t)
	s := newSender(t, target, &logBuffer{})
	if err := s.Send(context.Background(), device, message); err != nil {
		t.Fatalf("Send: %v", err)
	}
	settle(t, s)
	posts := r.posts()
	if len(posts) != 1 {
		t.Fatalf("%d posts; want 1", len(posts))
	}
	var got struct {
		Device       map[string]string `json:"device"`
		Notification map[string]any    `json:"notification"`
	}
	if err := json.Unmarshal(posts[0], &got); err != nil {
		t.Fatalf("body %s: %v", posts[0], err)
	}
	if got.Device["platform"] != "apns" || got.Device["token"] != device.Token || len(got.Device) != 2 {
		t.Errorf("device = %v; want {platform apns, token}", got.Device)
	}
	n := got.Notification
	want := map[string]any{"notificationId": "n1", "kind": "disconnectGraceStarted", "gameId": "g1234567890", "at": 1.76e12,
		"title": message.Title, "body": message.Body, "data": map[string]any{"deadline": 1.76000003e12}}
	if b, w := mustJSON(t, n), mustJSON(t, want); b != w {
		t.Errorf("notification = %s; want %s", b, w)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRetriesThenDelivers(t *testing.T) {
	r, target := newReceiver(t, 503, 500, 429)
	s := newSender(t, target, &logBuffer{})
	if err := s.Send(context.Background(), device, message); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	if n := len(r.posts()); n != 4 {
		t.Errorf("%d posts for three failures and a success; want 4", n)
	}
}

func TestThreeRetriesThenDropped(t *testing.T) {
	r, target := newReceiver(t, 500, 500, 500, 500, 500, 500)
	logs := &logBuffer{}
	s := newSender(t, target, logs)
	if err := s.Send(context.Background(), device, message); err != nil {
		t.Fatalf("Send = %v; a notification the webhook refuses is dropped, not an error of the caller", err)
	}
	settle(t, s)
	if n := len(r.posts()); n != 4 {
		t.Errorf("%d posts; want 4 (one and 3 retries), then dropped", n)
	}
	if out := logs.String(); !strings.Contains(out, "level=ERROR") || !strings.Contains(out, "dropped") || !strings.Contains(out, "notification=n1") {
		t.Errorf("log = %q; want an error naming the dropped notification", out)
	}
	if strings.Contains(logs.String(), device.Token) {
		t.Error("the log shows the device token")
	}
}

func TestRefusalNotRetried(t *testing.T) {
	r, target := newReceiver(t, 400)
	s := newSender(t, target, &logBuffer{})
	if err := s.Send(context.Background(), device, message); err != nil {
		t.Fatal(err)
	}
	settle(t, s)
	if n := len(r.posts()); n != 1 {
		t.Errorf("%d posts after a 400; want 1", n)
	}
}

func TestEveryPlatformAvailable(t *testing.T) {
	_, target := newReceiver(t)
	s := newSender(t, target, &logBuffer{})
	for _, p := range notify.Platforms() {
		if !s.Available(p) {
			t.Errorf("Available(%s) = false", p)
		}
		d, err := s.Register(context.Background(), notify.Device{Platform: p, Token: "t"})
		if err != nil || d.Endpoint != "" {
			t.Errorf("Register(%s) = %+v, %v; want the device as it is", p, d, err)
		}
	}
	if s.Available("adm") {
		t.Error(`Available("adm") = true`)
	}
}

func TestNewRefusesBadURLs(t *testing.T) {
	for _, u := range []string{"", "hook", "ftp://example.com/x", "http://", "://x"} {
		if _, err := webhook.New(u, webhook.Options{}); err == nil {
			t.Errorf("New(%q) = nil error; want one", u)
		}
	}
}
