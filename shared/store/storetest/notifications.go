package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"chessapi/shared/notify"
	"chessapi/shared/service"
)

// RunNotifications runs the conformance suite of service.NotificationStore.
// newStore is called once per subtest and returns a store holding none of
// the ids the suite generates.
//
// Besides the contract written on service.NotificationStore, the suite
// pins down:
//   - A device reads back as written, CreatedAt to the millisecond in UTC;
//     a player without devices has an empty (non-nil) list.
//   - An inbox entry reads back as written, At to the millisecond and
//     ExpiresAt rounded up to the second, both in UTC; one player's
//     entries never appear in another's inbox, whatever their ids.
//   - A push claim held by the same notification is granted again (a
//     retried effect must not lose to itself); a claim exactly window old
//     is free.
//   - Empty ids and keys are errors, never panics.
func RunNotifications(t *testing.T, newStore func(t *testing.T) service.NotificationStore) {
	t.Run("DevicesRoundTrip", func(t *testing.T) { testDevicesRoundTrip(t, newStore(t)) })
	t.Run("DeviceTokenOnce", func(t *testing.T) { testDeviceTokenOnce(t, newStore(t)) })
	t.Run("DeviceLimit", func(t *testing.T) { testDeviceLimit(t, newStore(t)) })
	t.Run("DeviceLimitConcurrent", func(t *testing.T) { testDeviceLimitConcurrent(t, newStore(t)) })
	t.Run("DeleteDevices", func(t *testing.T) { testDeleteDevices(t, newStore(t)) })
	t.Run("TokenOwners", func(t *testing.T) { testTokenOwners(t, newStore(t)) })
	t.Run("InboxIdempotent", func(t *testing.T) { testInboxIdempotent(t, newStore(t)) })
	t.Run("InboxPaging", func(t *testing.T) { testInboxPaging(t, newStore(t)) })
	t.Run("ReadMark", func(t *testing.T) { testReadMark(t, newStore(t)) })
	t.Run("PushClaims", func(t *testing.T) { testPushClaims(t, newStore(t)) })
	t.Run("PushClaimConcurrent", func(t *testing.T) { testPushClaimConcurrent(t, newStore(t)) })
	t.Run("DeleteInbox", func(t *testing.T) { testDeleteInbox(t, newStore(t)) })
	t.Run("EmptyArguments", func(t *testing.T) { testNotificationsEmptyArguments(t, newStore(t)) })
}

// apnsToken and fcmToken make distinct well-formed tokens.
func apnsToken(i int) string { return fmt.Sprintf("%064x", 0xa000+i) }

func fcmToken(i int) string { return fmt.Sprintf("fcm-%d:%0120d", i, i) }

func newDevice(player string, i int) service.DeviceRecord {
	return service.DeviceRecord{
		ID: fmt.Sprintf("dev_%s_%d", newID(), i), PlayerID: player, Session: "session-" + player,
		Platform: notify.APNs, Token: apnsToken(i), Locale: notify.Korean,
		Endpoint:  fmt.Sprintf("arn:aws:sns:us-east-1:123456789012:endpoint/APNS/chess/%d", i),
		CreatedAt: indexEpoch.Add(time.Duration(i)*time.Second + 987654*time.Nanosecond).In(time.FixedZone("KST", 9*3600)),
	}
}

func storedDevice(d service.DeviceRecord) service.DeviceRecord {
	d.CreatedAt = d.CreatedAt.Truncate(time.Millisecond).UTC()
	return d
}

func deviceDiff(got, want service.DeviceRecord) string {
	if got.ID != want.ID || got.PlayerID != want.PlayerID || got.Session != want.Session || got.Platform != want.Platform ||
		got.Token != want.Token || got.Locale != want.Locale || got.Endpoint != want.Endpoint ||
		!got.CreatedAt.Equal(want.CreatedAt) || got.CreatedAt.Location() != time.UTC {
		return fmt.Sprintf("%+v, want %+v", got, want)
	}
	return ""
}

func mustDevices(t *testing.T, ns service.NotificationStore, player string, want ...service.DeviceRecord) {
	t.Helper()
	got, err := ns.Devices(ctxFor(t), player)
	if err != nil {
		t.Fatalf("Devices(%q): %v", player, err)
	}
	if got == nil {
		t.Fatalf("Devices(%q) = nil; want an empty list", player)
	}
	if len(got) != len(want) {
		t.Fatalf("Devices(%q) = %d devices %+v; want %d", player, len(got), got, len(want))
	}
	for i := range want {
		if d := deviceDiff(got[i], storedDevice(want[i])); d != "" {
			t.Errorf("Devices(%q)[%d] = %s", player, i, d)
		}
	}
}

func mustAdd(t *testing.T, ns service.NotificationStore, d service.DeviceRecord, max int) (service.DeviceRecord, bool) {
	t.Helper()
	stored, added, err := ns.AddDevice(ctxFor(t), d, max)
	if err != nil {
		t.Fatalf("AddDevice(%s): %v", d.ID, err)
	}
	return stored, added
}

func testDevicesRoundTrip(t *testing.T, ns service.NotificationStore) {
	player := newPlayerID("devices")
	mustDevices(t, ns, player)
	b := newDevice(player, 2)
	a := newDevice(player, 1)
	a.Platform, a.Token, a.Locale, a.Endpoint = notify.FCM, fcmToken(1), notify.English, ""
	for _, d := range []service.DeviceRecord{b, a} {
		stored, added := mustAdd(t, ns, d, 10)
		if !added {
			t.Errorf("AddDevice(%s) added = false; want true", d.ID)
		}
		if diff := deviceDiff(stored, storedDevice(d)); diff != "" {
			t.Errorf("AddDevice returned %s", diff)
		}
	}
	mustDevices(t, ns, player, a, b) // oldest first
	mustDevices(t, ns, newPlayerID("other"))
}

func testDeviceTokenOnce(t *testing.T, ns service.NotificationStore) {
	player := newPlayerID("token-once")
	first := newDevice(player, 1)
	mustAdd(t, ns, first, 10)
	again := newDevice(player, 1) // same platform and token, another id and locale
	again.Locale = notify.English
	stored, added := mustAdd(t, ns, again, 10)
	want := first
	want.Locale = notify.English
	if added || deviceDiff(stored, storedDevice(want)) != "" {
		t.Fatalf("AddDevice(same token) = %+v, added %v; want the first device with the new locale, not added", stored, added)
	}
	mustDevices(t, ns, player, want)
	sandbox := newDevice(player, 1)
	sandbox.Platform = notify.APNsSandbox // the same text on another platform is another token
	if _, added := mustAdd(t, ns, sandbox, 10); !added {
		t.Error("AddDevice(same token, other platform) added = false; want true")
	}
}

func testDeviceLimit(t *testing.T, ns service.NotificationStore) {
	player := newPlayerID("limit")
	var kept []service.DeviceRecord
	for i := range 3 {
		d := newDevice(player, i)
		mustAdd(t, ns, d, 3)
		kept = append(kept, d)
	}
	if _, _, err := ns.AddDevice(ctxFor(t), newDevice(player, 3), 3); !errors.Is(err, service.ErrTooManyDevices) {
		t.Fatalf("AddDevice(a 4th of 3) = %v; want ErrTooManyDevices", err)
	}
	if _, added := mustAdd(t, ns, newDevice(player, 1), 3); added {
		t.Error("AddDevice(a known token at the limit) added = true")
	}
	mustDevices(t, ns, player, kept...)
}

func testDeviceLimitConcurrent(t *testing.T, ns service.NotificationStore) {
	player := newPlayerID("concurrent")
	const max, writers = 10, 14
	var wg sync.WaitGroup
	results := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, results[i] = ns.AddDevice(ctxFor(t), newDevice(player, i), max)
		}()
	}
	// And the same token from several writers at once.
	sameToken := newPlayerID("same-token")
	addedSame := make([]bool, 6)
	for i := range addedSame {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := newDevice(sameToken, 7)
			d.ID = fmt.Sprintf("dev_same_%d", i)
			_, added, err := ns.AddDevice(ctxFor(t), d, max)
			if err != nil {
				t.Errorf("AddDevice(same token): %v", err)
			}
			addedSame[i] = added
		}()
	}
	wg.Wait()
	ok, refused := 0, 0
	for _, err := range results {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, service.ErrTooManyDevices):
			refused++
		default:
			t.Errorf("AddDevice: %v", err)
		}
	}
	if ok != max || refused != writers-max {
		t.Errorf("%d concurrent AddDevice: %d added, %d refused; want %d and %d", writers, ok, refused, max, writers-max)
	}
	if got, err := ns.Devices(ctxFor(t), player); err != nil || len(got) != max {
		t.Errorf("Devices = %d, %v; want %d", len(got), err, max)
	}
	if n := countTrue(addedSame); n != 1 {
		t.Errorf("concurrent AddDevice of one token added %d devices; want 1", n)
	}
	if got, err := ns.Devices(ctxFor(t), sameToken); err != nil || len(got) != 1 {
		t.Errorf("Devices after concurrent adds of one token = %d, %v; want 1", len(got), err)
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func testDeleteDevices(t *testing.T, ns service.NotificationStore) {
	player := newPlayerID("delete")
	ds := make([]service.DeviceRecord, 5)
	for i := range ds {
		ds[i] = newDevice(player, i)
		if i >= 3 {
			ds[i].Session = "session-other"
		}
		mustAdd(t, ns, ds[i], 10)
	}
	del := func(m service.DeviceMatch, want ...service.DeviceRecord) {
		t.Helper()
		gone, err := ns.DeleteDevices(ctxFor(t), player, m)
		if err != nil {
			t.Fatalf("DeleteDevices(%+v): %v", m, err)
		}
		if gone == nil || len(gone) != len(want) {
			t.Fatalf("DeleteDevices(%+v) = %+v; want %d devices", m, gone, len(want))
		}
		for i := range want {
			if d := deviceDiff(gone[i], storedDevice(want[i])); d != "" {
				t.Errorf("DeleteDevices(%+v)[%d] = %s", m, i, d)
			}
		}
	}
	del(service.DeviceMatch{ID: ds[1].ID}, ds[1])
	del(service.DeviceMatch{ID: ds[1].ID}) // again: nothing, no error
	del(service.DeviceMatch{Platform: notify.APNs, Token: ds[2].Token}, ds[2])
	del(service.DeviceMatch{Session: "session-other"}, ds[3], ds[4])
	mustDevices(t, ns, player, ds[0])
	del(service.DeviceMatch{}, ds[0])
	mustDevices(t, ns, player)
	if _, added := mustAdd(t, ns, ds[0], 10); !added {
		t.Error("AddDevice after deleting every device: added = false")
	}
}

func testTokenOwners(t *testing.T, ns service.NotificationStore) {
	key, a, b := "tokenkey-"+newID(), newPlayerID("a"), newPlayerID("b")
	ctx := ctxFor(t)
	for _, step := range []struct {
		claimer, wantPrevious string
	}{{a, ""}, {a, a}, {b, a}} {
		prev, err := ns.ClaimToken(ctx, key, step.claimer)
		if err != nil || prev != step.wantPrevious {
			t.Fatalf("ClaimToken(%s) = %q, %v; want %q", step.claimer, prev, err, step.wantPrevious)
		}
	}
	if ok, err := ns.ReleaseToken(ctx, key, a); err != nil || ok {
		t.Errorf("ReleaseToken(not the owner) = %v, %v; want false", ok, err)
	}
	if ok, err := ns.ReleaseToken(ctx, key, b); err != nil || !ok {
		t.Errorf("ReleaseToken(the owner) = %v, %v; want true", ok, err)
	}
	if ok, err := ns.ReleaseToken(ctx, key, b); err != nil || ok {
		t.Errorf("ReleaseToken(again) = %v, %v; want false", ok, err)
	}
	if prev, err := ns.ClaimToken(ctx, key, a); err != nil || prev != "" {
		t.Errorf("ClaimToken(released) = %q, %v; want no previous owner", prev, err)
	}
}

// entryID makes ids that sort as i does.
func entryID(i int) string { return fmt.Sprintf("%011x-%012x", 1_760_000_000_000+i, i) }

func newEntry(player string, i int) service.NotificationRecord {
	at := indexEpoch.Add(time.Duration(i)*time.Minute + 987654*time.Nanosecond).In(time.FixedZone("KST", 9*3600))
	return service.NotificationRecord{PlayerID: player, ID: entryID(i), At: at, Body: append(allBytes()[:64], byte(i)),
		ExpiresAt: at.Add(30*24*time.Hour + 1)}
}

func storedEntry(n service.NotificationRecord) service.NotificationRecord {
	n.At = n.At.Truncate(time.Millisecond).UTC()
	n.ExpiresAt = ceil(n.ExpiresAt, time.Second).UTC()
	return n
}

func entryDiff(got, want service.NotificationRecord) string {
	if got.PlayerID != want.PlayerID || got.ID != want.ID || !got.At.Equal(want.At) || got.At.Location() != time.UTC ||
		string(got.Body) != string(want.Body) || got.Pushed != want.Pushed || !got.ExpiresAt.Equal(want.ExpiresAt) {
		return fmt.Sprintf("%+v, want %+v", got, want)
	}
	return ""
}

func testInboxIdempotent(t *testing.T, ns service.NotificationStore) {
	ctx := ctxFor(t)
	player := newPlayerID("inbox")
	n := newEntry(player, 1)
	stored, added, err := ns.AddNotification(ctx, n)
	if err != nil || !added || entryDiff(stored, storedEntry(n)) != "" {
		t.Fatalf("AddNotification = %+v, %v, %v; want it added as written", stored, added, err)
	}
	again := n
	again.Body = []byte("another body")
	stored, added, err = ns.AddNotification(ctx, again)
	if err != nil || added || entryDiff(stored, storedEntry(n)) != "" {
		t.Fatalf("AddNotification(same id) = %+v, %v, %v; want the first entry, not added", stored, added, err)
	}
	if err := ns.SetPushed(ctx, player, n.ID); err != nil {
		t.Fatalf("SetPushed: %v", err)
	}
	want := storedEntry(n)
	want.Pushed = true
	got, err := ns.Notification(ctx, player, n.ID)
	if err != nil || entryDiff(got, want) != "" {
		t.Errorf("Notification after SetPushed = %+v, %v; want %+v", got, err, want)
	}
	if stored, _, _ := ns.AddNotification(ctx, n); !stored.Pushed {
		t.Error("AddNotification(same id) after SetPushed: Pushed = false")
	}
	if err := ns.SetPushed(ctx, player, entryID(99)); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("SetPushed(unknown) = %v; want ErrNotFound", err)
	}
	if _, err := ns.Notification(ctx, player, entryID(99)); !errors.Is(err, service.ErrNotFound) {
		t.Errorf("Notification(unknown) = %v; want ErrNotFound", err)
	}
}

func testInboxPaging(t *testing.T, ns service.NotificationStore) {
	ctx := ctxFor(t)
	player := newPlayerID("paging")
	// Players whose ids share a prefix with player's, or extend it.
	neighbours := []string{player + "0", player[:len(player)-1]}
	const total = 7
	for _, i := range []int{3, 0, 6, 1, 5, 2, 4} { // written out of order
		if _, _, err := ns.AddNotification(ctx, newEntry(player, i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, other := range neighbours {
		for _, i := range []int{2, 9} {
			if _, _, err := ns.AddNotification(ctx, newEntry(other, i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []string
	before := ""
	for page := 0; page < 5; page++ {
		items, err := ns.Notifications(ctx, player, before, 3)
		if err != nil {
			t.Fatalf("Notifications(before %q): %v", before, err)
		}
		if items == nil {
			t.Fatal("Notifications = nil; want an empty list")
		}
		for _, it := range items {
			if it.PlayerID != player {
				t.Fatalf("Notifications(%q) holds an entry of %q", player, it.PlayerID)
			}
			got = append(got, it.ID)
		}
		if len(items) < 3 {
			break
		}
		before = items[len(items)-1].ID
	}
	var want []string
	for i := total - 1; i >= 0; i-- {
		want = append(want, entryID(i))
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %v; want %v (newest first, each once)", got, want)
	}
	items, err := ns.Notifications(ctx, player, entryID(4), 100)
	if err != nil || len(items) != 4 || items[0].ID != entryID(3) {
		t.Errorf("Notifications(before #4) = %d entries, %v; want #3..#0", len(items), err)
	}
	if items, err := ns.Notifications(ctx, newPlayerID("nobody"), "", 10); err != nil || len(items) != 0 || items == nil {
		t.Errorf("Notifications(nobody) = %v, %v; want an empty list", items, err)
	}
}

func testReadMark(t *testing.T, ns service.NotificationStore) {
	ctx := ctxFor(t)
	player := newPlayerID("read")
	if mark, err := ns.ReadUpTo(ctx, player); err != nil || mark != "" {
		t.Fatalf("ReadUpTo(new) = %q, %v; want none", mark, err)
	}
	for _, step := range []struct{ upTo, want string }{{entryID(5), entryID(5)}, {entryID(2), entryID(5)}, {entryID(9), entryID(9)}, {entryID(9), entryID(9)}} {
		if err := ns.MarkRead(ctx, player, step.upTo); err != nil {
			t.Fatalf("MarkRead(%s): %v", step.upTo, err)
		}
		if mark, err := ns.ReadUpTo(ctx, player); err != nil || mark != step.want {
			t.Errorf("ReadUpTo after MarkRead(%s) = %q, %v; want %q", step.upTo, mark, err, step.want)
		}
	}
}

func testPushClaims(t *testing.T, ns service.NotificationStore) {
	ctx := ctxFor(t)
	player, key := newPlayerID("claims"), "game1#yourTurn"
	t0 := indexEpoch
	for _, step := range []struct {
		key, id string
		at      time.Duration
		want    bool
	}{
		{key, "n1", 0, true},
		{key, "n2", 30 * time.Second, false},
		{key, "n1", 30 * time.Second, true}, // a retry of the holder
		{"game2#yourTurn", "n3", 31 * time.Second, true},
		{key, "n4", 89 * time.Second, false}, // the holder renewed at 30 s
		{key, "n4", 90 * time.Second, true},  // exactly window old
		{key, "n1", 95 * time.Second, false},
	} {
		got, err := ns.ClaimPush(ctx, player, step.key, step.id, time.Minute, t0.Add(step.at))
		if err != nil || got != step.want {
			t.Errorf("ClaimPush(%s, %s, +%v) = %v, %v; want %v", step.key, step.id, step.at, got, err, step.want)
		}
	}
	if got, err := ns.ClaimPush(ctx, newPlayerID("other"), key, "n2", time.Minute, t0); err != nil || !got {
		t.Errorf("ClaimPush(another player, same key) = %v, %v; want granted", got, err)
	}
}

func testPushClaimConcurrent(t *testing.T, ns service.NotificationStore) {
	player := newPlayerID("claim-race")
	var wg sync.WaitGroup
	granted := make([]bool, 8)
	for i := range granted {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := ns.ClaimPush(ctxFor(t), player, "g#k", fmt.Sprintf("n%d", i), time.Minute, indexEpoch)
			if err != nil {
				t.Errorf("ClaimPush: %v", err)
			}
			granted[i] = ok
		}()
	}
	wg.Wait()
	if n := countTrue(granted); n != 1 {
		t.Errorf("%d concurrent claims of a free key granted %d; want 1", len(granted), n)
	}
}

func testDeleteInbox(t *testing.T, ns service.NotificationStore) {
	ctx := ctxFor(t)
	player, other := newPlayerID("delete-inbox"), newPlayerID("keeps")
	for _, p := range []string{player, other} {
		for i := range 30 { // more than one batch of deletes
			if _, _, err := ns.AddNotification(ctx, newEntry(p, i)); err != nil {
				t.Fatal(err)
			}
		}
		if err := ns.MarkRead(ctx, p, entryID(3)); err != nil {
			t.Fatal(err)
		}
		if _, err := ns.ClaimPush(ctx, p, "g#k", "n1", time.Hour, indexEpoch); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // idempotent
		if err := ns.DeleteInbox(ctx, player); err != nil {
			t.Fatalf("DeleteInbox: %v", err)
		}
	}
	if items, err := ns.Notifications(ctx, player, "", 100); err != nil || len(items) != 0 {
		t.Errorf("Notifications after DeleteInbox = %d, %v; want none", len(items), err)
	}
	if mark, err := ns.ReadUpTo(ctx, player); err != nil || mark != "" {
		t.Errorf("ReadUpTo after DeleteInbox = %q, %v; want none", mark, err)
	}
	if ok, err := ns.ClaimPush(ctx, player, "g#k", "n2", time.Hour, indexEpoch); err != nil || !ok {
		t.Errorf("ClaimPush after DeleteInbox = %v, %v; want granted (the claim went with the inbox)", ok, err)
	}
	if items, err := ns.Notifications(ctx, other, "", 100); err != nil || len(items) != 30 {
		t.Errorf("another player's inbox after DeleteInbox = %d, %v; want 30", len(items), err)
	}
}

func testNotificationsEmptyArguments(t *testing.T, ns service.NotificationStore) {
	ctx := ctxFor(t)
	player := newPlayerID("empty")
	d := newDevice(player, 1)
	noID, noPlayer, noToken := d, d, d
	noID.ID, noPlayer.PlayerID, noToken.Token = "", "", ""
	n := newEntry(player, 1)
	noEntryID, noBody := n, n
	noEntryID.ID, noBody.Body = "", nil
	calls := map[string]func() error{
		"Devices(\"\")":          func() error { _, err := ns.Devices(ctx, ""); return err },
		"AddDevice(no id)":       func() error { _, _, err := ns.AddDevice(ctx, noID, 10); return err },
		"AddDevice(no player)":   func() error { _, _, err := ns.AddDevice(ctx, noPlayer, 10); return err },
		"AddDevice(no token)":    func() error { _, _, err := ns.AddDevice(ctx, noToken, 10); return err },
		"AddDevice(max 0)":       func() error { _, _, err := ns.AddDevice(ctx, d, 0); return err },
		"DeleteDevices(\"\")":    func() error { _, err := ns.DeleteDevices(ctx, "", service.DeviceMatch{}); return err },
		"ClaimToken(no key)":     func() error { _, err := ns.ClaimToken(ctx, "", player); return err },
		"ReleaseToken(no owner)": func() error { _, err := ns.ReleaseToken(ctx, "k", ""); return err },
		"AddNotification(no id)": func() error { _, _, err := ns.AddNotification(ctx, noEntryID); return err },
		"AddNotification(empty body)": func() error {
			_, _, err := ns.AddNotification(ctx, noBody)
			return err
		},
		"SetPushed(no id)":        func() error { return ns.SetPushed(ctx, player, "") },
		"Notification(no player)": func() error { _, err := ns.Notification(ctx, "", "x"); return err },
		"Notifications(limit 0)":  func() error { _, err := ns.Notifications(ctx, player, "", 0); return err },
		"MarkRead(no upTo)":       func() error { return ns.MarkRead(ctx, player, "") },
		"ReadUpTo(\"\")":          func() error { _, err := ns.ReadUpTo(ctx, ""); return err },
		"ClaimPush(no key)":       func() error { _, err := ns.ClaimPush(ctx, player, "", "n", time.Minute, indexEpoch); return err },
		"ClaimPush(window 0)":     func() error { _, err := ns.ClaimPush(ctx, player, "k", "n", 0, indexEpoch); return err },
		"DeleteInbox(\"\")":       func() error { return ns.DeleteInbox(ctx, "") },
	}
	for name, call := range calls {
		if err := call(); err == nil {
			t.Errorf("%s = nil error; want one", name)
		}
	}
	mustDevices(t, ns, player)
}
