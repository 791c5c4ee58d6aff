// Package webhook is the local notify.Sender (SPEC §16.3): every device
// notification is POSTed as JSON to one URL (NOTIFY_WEBHOOK_URL, or the
// local server's -notify-webhook), so an app team can bridge development
// builds to its own push provider, and tests can see what a phone would
// get:
//
//	POST <url>
//	Content-Type: application/json
//	{"device":{"platform":"apns","token":"…"},
//	 "notification":{"notificationId","kind","gameId","at","title","body","data"}}
//
// Posts leave the request path: Send queues them (shared/workqueue) and
// returns. A post that fails (no answer, or a status other than 2xx) is
// tried again as retry.NotifyWebhook says — 3 more times — and then
// dropped, with an error logged; a 4xx other than 408 and 429 is not
// tried again (the receiver refuses the document). Every platform is
// available and a registration needs nothing from the receiver.
package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"chessapi/shared/notify"
	"chessapi/shared/retry"
	"chessapi/shared/workqueue"
)

// Options tune a Sender; zero values take the defaults.
type Options struct {
	// Client posts (default: a client with a 10 s timeout).
	Client *http.Client
	// Retry spaces the posts of one notification (default
	// retry.NotifyWebhook).
	Retry retry.Policy
	// Workers is how many posts run at once (default 2); QueueSize bounds
	// the notifications waiting (default workqueue.DefaultCapacity).
	Workers, QueueSize int
	Logger             *slog.Logger
}

// Sender posts notifications to a webhook.
type Sender struct {
	url    string
	client *http.Client
	posts  *workqueue.Queue[postKey]
	log    *slog.Logger
}

var _ notify.Sender = (*Sender)(nil)

// postKey coalesces a notification sent to a device twice (a retried
// effect) while the first post is still queued.
type postKey struct {
	notificationID string
	platform       notify.Platform
	token          string
}

// Body is the document posted for one device notification.
type Body struct {
	Device       Device         `json:"device"`
	Notification notify.Message `json:"notification"`
}

// Device is the device a notification is for, as posted.
type Device struct {
	Platform notify.Platform `json:"platform"`
	Token    string          `json:"token"`
}

// New returns a sender to target, an http or https URL.
func New(target string, opts Options) (*Sender, error) {
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("webhook: %q is not an http(s) URL", target)
	}
	if opts.Client == nil {
		opts.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if opts.Retry.IsZero() {
		opts.Retry = retry.NotifyWebhook
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Sender{url: u.String(), client: opts.Client, log: opts.Logger}
	s.posts = workqueue.New[postKey](workqueue.Options{
		Name: "notification webhook post", Workers: opts.Workers, Capacity: opts.QueueSize, Retry: opts.Retry,
		GiveUp: "the notification is dropped", Abandon: "the notification is dropped", Logger: opts.Logger,
	})
	return s, nil
}

// Available is true for every platform: the receiver decides what to do.
func (s *Sender) Available(p notify.Platform) bool { return p.Valid() }

// Register needs nothing of the receiver.
func (s *Sender) Register(_ context.Context, d notify.Device) (notify.Device, error) {
	if !d.Platform.Valid() {
		return d, notify.ErrPlatformUnavailable
	}
	return d, nil
}

// Unregister has nothing to release.
func (s *Sender) Unregister(context.Context, notify.Device) error { return nil }

// Send queues the post of m for d and returns. A full queue drops the
// notification (logged): the receiver is too far behind to matter.
func (s *Sender) Send(_ context.Context, d notify.Device, m notify.Message) error {
	body, err := json.Marshal(Body{Device: Device{Platform: d.Platform, Token: d.Token}, Notification: m})
	if err != nil {
		return fmt.Errorf("webhook: encode notification: %w", err)
	}
	attrs := []any{"notification", m.ID, "kind", m.Kind, "game", m.GameID, "platform", d.Platform}
	_, err = s.posts.Add(postKey{m.ID, d.Platform, d.Token}, workqueue.Job{
		Run:   func(ctx context.Context) error { return s.post(ctx, body) },
		Attrs: attrs,
	})
	if err != nil {
		s.log.Error("notification webhook queue refused a notification; dropped", append(attrs, "err", err)...)
	}
	return nil
}

// post sends one document; a refusal the receiver will repeat is permanent.
func (s *Sender) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return retry.Permanent(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("webhook: post: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return nil
	case code >= 400 && code < 500 && code != http.StatusRequestTimeout && code != http.StatusTooManyRequests:
		return retry.Permanent(&StatusError{Code: code})
	default:
		return &StatusError{Code: code}
	}
}

// StatusError is a webhook answer other than 2xx.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("webhook: answered %d", e.Code) }

// Pending is the number of notifications queued, being posted or waiting
// for a retry.
func (s *Sender) Pending() int { return s.posts.Stats().Accepted }

// Close stops posting, waiting up to drain for the posts in flight and
// their retries.
func (s *Sender) Close(drain time.Duration) { s.posts.Close(drain) }
