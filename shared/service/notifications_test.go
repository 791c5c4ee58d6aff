package service_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/game"
	"chessapi/shared/notify"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// Delivery and the inbox (SPEC §16.3) on the embedded store, with a
// recording sender: where a notification goes, how often, in which
// language, what a retried effect does, and how the inbox pages.

// sentMessage is one message a device got.
type sentMessage struct {
	device notify.Device
	msg    notify.Message
}

// recordingSender records what it sends; failing makes the next sends to
// a token fail (gone: the device is no longer registered).
type recordingSender struct {
	mu        sync.Mutex
	sent      []sentMessage
	failing   map[string]error
	available func(notify.Platform) bool
	released  []notify.Device
}

func (r *recordingSender) Available(p notify.Platform) bool {
	return r.available == nil || r.available(p)
}

func (r *recordingSender) Register(_ context.Context, d notify.Device) (notify.Device, error) {
	d.Endpoint = "endpoint/" + string(d.Platform) + "/" + d.Token[:8]
	return d, nil
}

func (r *recordingSender) Send(_ context.Context, d notify.Device, m notify.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.failing[d.Token]; err != nil {
		return err
	}
	r.sent = append(r.sent, sentMessage{d, m})
	return nil
}

func (r *recordingSender) Unregister(_ context.Context, d notify.Device) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.released = append(r.released, d)
	return nil
}

func (r *recordingSender) take() []sentMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.sent = nil
	return out
}

// followers says who follows their account.
type followers map[string]bool

func (f followers) FollowsAccount(_ context.Context, id string) (bool, error) { return f[id], nil }

type notifyFixture struct {
	svc       *service.Service
	clock     *fakeclock.Clock
	sender    *recordingSender
	followers followers
	store     *boltstore.Store
	sched     *recorder
}

// render words a notification with its locale in the title, so a test
// sees which language each device got.
func render(n service.Notification, l notify.Locale) notify.Message {
	return notify.Message{ID: n.ID, Kind: n.Kind, GameID: n.GameID, At: n.At, Title: string(l) + ":" + n.Kind, Body: n.Opponent.Name}
}

func newNotifyFixture(t *testing.T) *notifyFixture {
	t.Helper()
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &notifyFixture{clock: fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)), sender: &recordingSender{failing: map[string]error{}},
		followers: followers{}, store: store, sched: &recorder{}}
	f.svc, err = service.New(service.Config{Store: store, Players: store, Lister: store, Notifications: store, Scheduler: f.sched,
		Sender: f.sender, RenderNotification: render, Followers: f.followers, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// player registers a player and returns it and its id.
func (f *notifyFixture) player(t *testing.T, name string) (service.Caller, string) {
	t.Helper()
	np, err := f.svc.CreatePlayer(t.Context(), service.NewPlayerInput{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	return service.Caller{Token: np.Token}, np.Player.PlayerID
}

func apnsToken(i int) string { return fmt.Sprintf("%064x", 0xbeef00+i) }

func (f *notifyFixture) device(t *testing.T, c service.Caller, i int, locale string) service.DeviceRecord {
	t.Helper()
	d, _, err := f.svc.RegisterDevice(t.Context(), c, service.DeviceInput{Platform: "apns", Token: apnsToken(i), Locale: locale})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// event is a yourTurn of game for player, at the fixture's now.
func (f *notifyFixture) event(player, game string, version int64, kind string) service.Notification {
	at := f.clock.Now().UnixMilli()
	return service.Notification{ID: service.NotificationID(at, player, game, fmt.Sprint(version), kind), PlayerID: player, Kind: kind,
		GameID: game, Version: version, At: at, Opponent: service.Opponent{Name: "Ben"}}
}

func (f *notifyFixture) deliver(t *testing.T, n service.Notification, watching bool) {
	t.Helper()
	if err := f.svc.DeliverNotification(t.Context(), n, watching); err != nil {
		t.Fatalf("deliver %s: %v", n.ID, err)
	}
}

func (f *notifyFixture) inbox(t *testing.T, c service.Caller) []service.Notification {
	t.Helper()
	page, err := f.svc.Notifications(t.Context(), c, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return page.Items
}

func TestDeliveryDecides(t *testing.T) {
	f := newNotifyFixture(t)
	jiwoo, id := f.player(t, "지우")
	f.device(t, jiwoo, 1, "ko")
	f.device(t, jiwoo, 2, "en")

	// Away from the game and the account: the inbox and both devices, each
	// in its locale.
	n := f.event(id, "game1", 2, "yourTurn")
	f.deliver(t, n, false)
	sent := f.sender.take()
	var titles []string
	for _, s := range sent {
		titles = append(titles, s.msg.Title)
		if s.msg.ID != n.ID || !strings.HasPrefix(s.device.Endpoint, "endpoint/apns/") {
			t.Errorf("sent %+v; want %s to the registered endpoint", s, n.ID)
		}
	}
	slices.Sort(titles)
	if !slices.Equal(titles, []string{"en:yourTurn", "ko:yourTurn"}) {
		t.Errorf("sent titles %v; want one per device in its locale", titles)
	}

	// The same notification again (a retried effect): nothing new.
	f.deliver(t, n, false)
	if s := f.sender.take(); len(s) != 0 {
		t.Errorf("a retried delivery sent %d more messages", len(s))
	}

	// The seat watches the game: the inbox only.
	f.clock.Advance(2 * time.Minute)
	watched := f.event(id, "game1", 4, "yourTurn")
	f.deliver(t, watched, true)
	if s := f.sender.take(); len(s) != 0 {
		t.Errorf("a watched game's notification went to %d devices", len(s))
	}
	// The player follows the account: the inbox only.
	f.followers[id] = true
	other := f.event(id, "game2", 2, "gameStarted")
	f.deliver(t, other, false)
	if s := f.sender.take(); len(s) != 0 {
		t.Errorf("a followed account's notification went to %d devices", len(s))
	}
	if got := len(f.inbox(t, jiwoo)); got != 3 {
		t.Errorf("inbox holds %d notifications; want all 3", got)
	}
}

func TestDeliveryOncePerGameKindMinute(t *testing.T) {
	f := newNotifyFixture(t)
	c, id := f.player(t, "Ben")
	f.device(t, c, 1, "")
	steps := []struct {
		after   time.Duration
		game    string
		kind    string
		wantOne bool
	}{
		{0, "g1", "yourTurn", true},
		{20 * time.Second, "g1", "yourTurn", false},               // the same game and kind within a minute
		{1 * time.Second, "g1", "gameEnded", true},                // another kind
		{1 * time.Second, "g2", "yourTurn", true},                 // another game
		{40 * time.Second, "g1", "yourTurn", true},                // a minute after the first
		{time.Minute - time.Millisecond, "g1", "yourTurn", false}, // a minute after the last push, 1 ms short
		{time.Millisecond, "g1", "yourTurn", true},
	}
	for i, st := range steps {
		f.clock.Advance(st.after)
		n := f.event(id, st.game, int64(i+2), st.kind)
		f.deliver(t, n, false)
		got := f.sender.take()
		if (len(got) == 1) != st.wantOne {
			t.Errorf("step %d (%s %s after %v): %d pushes; want one: %v", i, st.game, st.kind, st.after, len(got), st.wantOne)
		}
	}
	if n := len(f.inbox(t, c)); n != len(steps) {
		t.Errorf("inbox holds %d; want every one of the %d (the limit is the devices')", n, len(steps))
	}
}

// TestDeliveryRetriedAfterFailure: a send that fails fails the effect; the
// retry sends again (nothing is marked pushed until every device has it)
// and adds nothing to the inbox.
func TestDeliveryRetriedAfterFailure(t *testing.T) {
	f := newNotifyFixture(t)
	c, id := f.player(t, "retry")
	f.device(t, c, 1, "")
	f.sender.failing[apnsToken(1)] = errors.New("throttled")
	n := f.event(id, "g1", 2, "disconnectGraceStarted")
	if err := f.svc.DeliverNotification(t.Context(), n, false); err == nil {
		t.Fatal("a failed send: nil error; want the effect to fail (and be retried)")
	}
	delete(f.sender.failing, apnsToken(1))
	f.deliver(t, n, false)
	if got := f.sender.take(); len(got) != 1 {
		t.Errorf("the retry sent %d; want 1", len(got))
	}
	f.deliver(t, n, false)
	if got := f.sender.take(); len(got) != 0 {
		t.Errorf("a third delivery sent %d; want none (pushed)", len(got))
	}
	if inbox := f.inbox(t, c); len(inbox) != 1 || inbox[0].ID != n.ID {
		t.Errorf("inbox = %+v; want the one notification", inbox)
	}
}

// TestDeliveryForgetsGoneDevices: a device the platform gave up is removed
// (its endpoint released), the others still get the notification.
func TestDeliveryForgetsGoneDevices(t *testing.T) {
	f := newNotifyFixture(t)
	c, id := f.player(t, "gone")
	gone := f.device(t, c, 1, "")
	f.device(t, c, 2, "")
	f.sender.failing[apnsToken(1)] = fmt.Errorf("endpoint disabled: %w", notify.ErrDeviceGone)
	f.deliver(t, f.event(id, "g1", 2, "yourTurn"), false)
	if got := f.sender.take(); len(got) != 1 || got[0].device.Token != apnsToken(2) {
		t.Errorf("sent %+v; want the remaining device", got)
	}
	devices, err := f.svc.Devices(t.Context(), c)
	if err != nil || len(devices) != 1 || devices[0].ID == gone.ID {
		t.Errorf("devices = %+v, %v; want the gone one removed", devices, err)
	}
	if len(f.sender.released) != 1 || f.sender.released[0].Token != apnsToken(1) {
		t.Errorf("released endpoints %+v; want the gone device's", f.sender.released)
	}
}

func TestInboxPagesAndReadMarks(t *testing.T) {
	f := newNotifyFixture(t)
	c, id := f.player(t, "reader")
	const total = service.InboxSize + 15
	var ids []string
	for i := range total {
		f.clock.Advance(time.Second)
		n := f.event(id, fmt.Sprintf("game%03d", i), 2, "yourTurn")
		f.deliver(t, n, true)
		ids = append(ids, n.ID)
	}
	slices.Reverse(ids) // newest first
	var got []string
	cursor := ""
	for pages := 0; pages < 20; pages++ {
		page, err := f.svc.Notifications(t.Context(), c, 30, cursor)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		for _, n := range page.Items {
			got = append(got, n.ID)
			if n.Read {
				t.Errorf("%s read before any mark", n.ID)
			}
		}
		if cursor = page.Next; cursor == "" {
			break
		}
	}
	if !slices.Equal(got, ids[:service.InboxSize]) {
		t.Errorf("pages gave %d notifications; want the newest %d, newest first, each once", len(got), service.InboxSize)
	}

	// Read up to the 10th newest: it and the older ones are read.
	if err := f.svc.MarkNotificationsRead(t.Context(), c, ids[9]); err != nil {
		t.Fatal(err)
	}
	page, err := f.svc.Notifications(t.Context(), c, 20, "")
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range page.Items {
		if n.Read != (i >= 9) {
			t.Errorf("#%d read = %v; want %v", i, n.Read, i >= 9)
		}
	}
	// An older mark changes nothing.
	if err := f.svc.MarkNotificationsRead(t.Context(), c, ids[50]); err != nil {
		t.Fatal(err)
	}
	if page, _ := f.svc.Notifications(t.Context(), c, 20, ""); page.Items[9].Read != true || page.Items[8].Read {
		t.Error("an older read mark moved the mark back")
	}

	// Bad input.
	if err := f.svc.MarkNotificationsRead(t.Context(), c, "nope"); !isField(err, "upTo") {
		t.Errorf("MarkNotificationsRead(nope) = %v; want an error naming upTo", err)
	}
	if err := f.svc.MarkNotificationsRead(t.Context(), c, "1a2272d2600-000000000000"); !errors.Is(err, service.ErrNotificationNotFound) {
		t.Errorf("MarkNotificationsRead(unknown) = %v; want ErrNotificationNotFound", err)
	}
	for _, cur := range []string{"x", "bm90LWEtY3Vyc29y", "MTAwMC4xYTIyNzJkMjYwMC0wMDAwMDAwMDAwMDA"} {
		if _, err := f.svc.Notifications(t.Context(), c, 10, cur); !isField(err, "cursor") {
			t.Errorf("Notifications(cursor %q) = %v; want an error naming cursor", cur, err)
		}
	}
}

// isField reports whether err is a field error naming field.
func isField(err error, field string) bool {
	var in *game.InputError
	return errors.As(err, &in) && in.Field == field
}
