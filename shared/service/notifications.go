package service

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/notify"
)

// Notifications (SPEC §16.3): every player event of a registered player
// (the account stream's, PlayerEvents) becomes a notification that goes
// to the player's inbox always, and to the player's devices only when the
// player follows neither that game (the seat's presence: an open stream
// connection) nor their account (AccountFollowers) on the stream — an app
// in the foreground hears it there — and at most once per game and kind
// in PushWindow. Every platform collapses a game's notifications into one
// (notify.Message.CollapseKey).
//
// It is an effect of the commit (effects.go), retried like the others: a
// notification's id comes from the version and the event, so a retried
// effect finds its entry in the inbox (nothing added twice) and, if the
// entry says it was pushed, sends nothing again; the push claim of a
// game and kind is granted again to the same notification.

// Bounds of the inbox and the pushes (SPEC §16.3).
const (
	// InboxSize is how many notifications the inbox shows: the last 100.
	InboxSize = 100
	// InboxTTL is how long an entry is kept.
	InboxTTL = 30 * 24 * time.Hour
	// PushWindow is the least time between two pushes of one game and
	// kind to one player.
	PushWindow = time.Minute
)

// ErrNotificationNotFound: no notification of the caller has that id.
var ErrNotificationNotFound = errors.New("notification not found")

// Notification is one notification of a player: a player event (SPEC
// §16.1) with what its texts need.
type Notification struct {
	ID       string
	PlayerID string
	// Kind is the player event's kind (gameStarted, yourTurn, ...).
	Kind    string
	GameID  string
	Version int64
	// At is when it happened, Unix ms.
	At int64
	// Move is the opponent's move (yourTurn).
	Move *NotificationMove
	// Deadline is when the player's turn, or grace, ends (Unix ms).
	Deadline *int64
	// Result is the game's result (gameEnded), RatingChange the player's
	// own change in a rated game.
	Result       *NotificationResult
	RatingChange *game.RatingMove
	// RematchOf is the finished game a rematch is of (rematchOffered).
	RematchOf string
	// Left is the time a timeRunningOut notification announces.
	Left time.Duration
	// Opponent is the other seat as the game shows it (empty when none).
	Opponent Opponent
	// Read is set when listed: the player marked it read.
	Read bool
}

// NotificationMove names a move.
type NotificationMove struct {
	SAN, UCI string
}

// NotificationResult is what a notification tells of a result.
type NotificationResult struct {
	Winner    *chess.Color
	Reason    game.Reason
	MoveCount int
}

// Opponent is the other side of a notification's game.
type Opponent struct {
	Name string
	// AI is the AI seat's level ("" for a human), for the edge to name.
	AI string
}

// notificationIDLen is the form of notification ids: 11 hex digits of the
// time (Unix ms; sortable until the year 2527), "-", 12 hex digits of a
// hash of what made it.
var notificationIDForm = regexp.MustCompile(`^[0-9a-f]{11}-[0-9a-f]{12}$`)

// notificationID names a notification by what made it: its player, game,
// version, kind and (a reminder) its due time. Ids sort by time.
func notificationID(at int64, parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return fmt.Sprintf("%011x-%s", max(at, 0), hex.EncodeToString(h[:6]))
}

// storedNotification is a notification as the inbox keeps it (Body):
// short keys, only what is set.
type storedNotification struct {
	Kind      string           `json:"k"`
	GameID    string           `json:"g"`
	Version   int64            `json:"v"`
	At        int64            `json:"t"`
	SAN       string           `json:"san,omitempty"`
	UCI       string           `json:"uci,omitempty"`
	Deadline  *int64           `json:"d,omitempty"`
	Winner    *chess.Color     `json:"w,omitempty"`
	Reason    game.Reason      `json:"r,omitempty"`
	Moves     int              `json:"n,omitempty"`
	Ended     bool             `json:"e,omitempty"`
	Rating    *game.RatingMove `json:"rc,omitempty"`
	RematchOf string           `json:"rm,omitempty"`
	LeftMs    int64            `json:"l,omitempty"`
	Opponent  string           `json:"o,omitempty"`
	AI        string           `json:"ai,omitempty"`
}

func encodeNotification(n Notification) []byte {
	v := storedNotification{Kind: n.Kind, GameID: n.GameID, Version: n.Version, At: n.At, Deadline: n.Deadline,
		Rating: n.RatingChange, RematchOf: n.RematchOf, LeftMs: n.Left.Milliseconds(), Opponent: n.Opponent.Name, AI: n.Opponent.AI}
	if n.Move != nil {
		v.SAN, v.UCI = n.Move.SAN, n.Move.UCI
	}
	if r := n.Result; r != nil {
		v.Ended, v.Winner, v.Reason, v.Moves = true, r.Winner, r.Reason, r.MoveCount
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("service: encoding a notification cannot fail: %v", err))
	}
	return b
}

func decodeNotification(rec NotificationRecord) (Notification, error) {
	var v storedNotification
	if err := json.Unmarshal(rec.Body, &v); err != nil {
		return Notification{}, fmt.Errorf("service: notification %s of %s: %w", rec.ID, rec.PlayerID, err)
	}
	n := Notification{ID: rec.ID, PlayerID: rec.PlayerID, Kind: v.Kind, GameID: v.GameID, Version: v.Version, At: v.At,
		Deadline: v.Deadline, RatingChange: v.Rating, RematchOf: v.RematchOf, Left: time.Duration(v.LeftMs) * time.Millisecond,
		Opponent: Opponent{Name: v.Opponent, AI: v.AI}}
	if v.SAN != "" || v.UCI != "" {
		n.Move = &NotificationMove{SAN: v.SAN, UCI: v.UCI}
	}
	if v.Ended {
		n.Result = &NotificationResult{Winner: v.Winner, Reason: v.Reason, MoveCount: v.Moves}
	}
	return n, nil
}

// outgoing is one notification to deliver, with the decision's input that
// needs no I/O.
type outgoing struct {
	n Notification
	// seatWatching: the player's seat in the game has an open stream
	// connection (its presence).
	seatWatching bool
	// onAccountStream: the account-wide stream tells it too (a player
	// event of a version); a reminder is not on the stream, so a player
	// following their account still gets it on the devices.
	onAccountStream bool
}

// deliver puts a notification in its player's inbox and, unless the
// player follows it on the stream or it was pushed already (a retried
// effect) or its game and kind were pushed less than PushWindow ago,
// sends it to the player's devices.
func (s *Service) deliver(ctx context.Context, o outgoing) error {
	ns := s.cfg.Notifications
	n := o.n
	at := time.UnixMilli(n.At)
	stored, _, err := ns.AddNotification(ctx, NotificationRecord{PlayerID: n.PlayerID, ID: n.ID, At: at,
		Body: encodeNotification(n), ExpiresAt: at.Add(InboxTTL)})
	if err != nil {
		return fmt.Errorf("inbox of %s: %w", n.PlayerID, err)
	}
	if stored.Pushed || o.seatWatching || s.cfg.Sender == nil || s.cfg.RenderNotification == nil {
		return nil
	}
	devices, err := ns.Devices(ctx, n.PlayerID)
	if err != nil || len(devices) == 0 {
		return err
	}
	if s.cfg.Followers != nil && o.onAccountStream {
		following, err := s.cfg.Followers.FollowsAccount(ctx, n.PlayerID)
		if err != nil {
			return fmt.Errorf("account followers of %s: %w", n.PlayerID, err)
		}
		if following {
			return nil
		}
	}
	granted, err := ns.ClaimPush(ctx, n.PlayerID, n.GameID+"#"+n.Kind, n.ID, PushWindow, s.now())
	if err != nil || !granted {
		return err
	}
	var errs []error
	for _, d := range devices {
		msg := s.cfg.RenderNotification(n, d.Locale)
		err := s.cfg.Sender.Send(ctx, notify.Device{Platform: d.Platform, Token: d.Token, Endpoint: d.Endpoint}, msg)
		switch {
		case errors.Is(err, notify.ErrDeviceGone):
			// The platform gave the token up (the app was removed): so do we.
			s.log.InfoContext(ctx, "device gone; removed", "player", d.PlayerID, "device", d.ID, "platform", d.Platform)
			if err := s.deleteDevices(ctx, d.PlayerID, DeviceMatch{ID: d.ID}); err != nil {
				errs = append(errs, err)
			}
		case err != nil:
			errs = append(errs, fmt.Errorf("send to device %s: %w", d.ID, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return ns.SetPushed(ctx, n.PlayerID, n.ID)
}

// NotificationPage is one page of a player's inbox.
type NotificationPage struct {
	Items []Notification
	// Next is the cursor of the next page; "" on the last one.
	Next string
}

// inboxCursor is where a page of the inbox starts: after the entry with
// ID before, the offset-th from the newest (the inbox shows InboxSize).
type inboxCursor struct {
	offset int
	before string
}

func (c inboxCursor) encode() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(c.offset) + "." + c.before))
}

func decodeInboxCursor(s string) (inboxCursor, error) {
	if s == "" {
		return inboxCursor{}, nil
	}
	bad := game.FieldFormat("cursor", "cursor", nil)
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return inboxCursor{}, bad
	}
	off, before, ok := strings.Cut(string(raw), ".")
	n, err := strconv.Atoi(off)
	if !ok || err != nil || n < 1 || n >= InboxSize || !notificationIDForm.MatchString(before) {
		return inboxCursor{}, bad
	}
	return inboxCursor{offset: n, before: before}, nil
}

// Notifications lists the caller's inbox, newest first, limit at a time
// (the last InboxSize in all), each with its read mark.
func (s *Service) Notifications(ctx context.Context, c Caller, limit int, cursor string) (NotificationPage, error) {
	ns, err := s.notifications()
	if err != nil {
		return NotificationPage{}, err
	}
	cur, err := decodeInboxCursor(cursor)
	if err != nil {
		return NotificationPage{}, err
	}
	if limit < 1 || limit > MaxPageSize {
		return NotificationPage{}, game.FieldRange("limit", 1, MaxPageSize)
	}
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return NotificationPage{}, err
	}
	want := min(limit, InboxSize-cur.offset)
	// One more than the page tells whether another page follows.
	recs, err := ns.Notifications(ctx, p.ID, cur.before, min(want+1, MaxPageSize))
	if err != nil {
		return NotificationPage{}, err
	}
	mark, err := ns.ReadUpTo(ctx, p.ID)
	if err != nil {
		return NotificationPage{}, err
	}
	page := NotificationPage{Items: make([]Notification, 0, min(len(recs), want))}
	for _, rec := range recs[:min(len(recs), want)] {
		n, err := decodeNotification(rec)
		if err != nil {
			return NotificationPage{}, err
		}
		n.Read = n.ID <= mark
		page.Items = append(page.Items, n)
	}
	if len(recs) > want && cur.offset+want < InboxSize {
		page.Next = inboxCursor{offset: cur.offset + want, before: page.Items[len(page.Items)-1].ID}.encode()
	}
	return page, nil
}

// MarkNotificationsRead marks the caller's notifications up to upTo (one
// of them) read; an older upTo than the mark changes nothing.
func (s *Service) MarkNotificationsRead(ctx context.Context, c Caller, upTo string) error {
	ns, err := s.notifications()
	if err != nil {
		return err
	}
	if !notificationIDForm.MatchString(upTo) {
		return game.FieldFormat("upTo", "notificationId", nil)
	}
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return err
	}
	if _, err := ns.Notification(ctx, p.ID, upTo); errors.Is(err, ErrNotFound) {
		return ErrNotificationNotFound
	} else if err != nil {
		return err
	}
	return ns.MarkRead(ctx, p.ID, upTo)
}
