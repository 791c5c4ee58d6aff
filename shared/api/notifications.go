package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/notify"
	"chessapi/shared/service"
)

// The inbox routes (SPEC §16.3) and the words of a notification:
//
//	GET  /v1/players/me/notifications?cursor=&limit=  → {notifications:[…], cursor?}
//	POST /v1/players/me/notifications/read {upTo}     → 204
//
// A notification is worded when it is shown: in the inbox in the
// request's language, on a device in the device's locale, from the same
// catalogue (texts.go, notificationsKo/En below) by NotificationMessage.

// notificationJSON is an inbox entry: the notification as a device gets
// it, and whether it was read.
type notificationJSON struct {
	notify.Message
	Read bool `json:"read"`
}

// notificationData are the kind's own fields of a notification (its data),
// those of the player stream's event of the same kind.
type notificationData struct {
	Move         *notificationMove   `json:"move,omitempty"`
	Deadline     *int64              `json:"deadline,omitempty"`
	Result       *notificationResult `json:"result,omitempty"`
	RatingChange *game.RatingMove    `json:"ratingChange,omitempty"`
	RematchOf    string              `json:"rematchOf,omitempty"`
	// LeftMs is the time left a timeRunningOut announces.
	LeftMs *int64 `json:"leftMs,omitempty"`
}

type notificationMove struct {
	SAN string `json:"san"`
	UCI string `json:"uci"`
}

type notificationResult struct {
	Winner  *chess.Color `json:"winner"`
	Reason  game.Reason  `json:"reason"`
	Summary string       `json:"summary"`
}

// NotificationMessage words n in locale l: the message a device gets and
// the inbox shows (service.Config.RenderNotification).
func NotificationMessage(n service.Notification, l notify.Locale) notify.Message {
	lang := Korean
	if l == notify.English {
		lang = English
	}
	return notificationMessage(n, lang)
}

func notificationMessage(n service.Notification, l Lang) notify.Message {
	var d notificationData
	if n.Move != nil {
		d.Move = &notificationMove{SAN: n.Move.SAN, UCI: n.Move.UCI}
	}
	d.Deadline, d.RatingChange, d.RematchOf = n.Deadline, n.RatingChange, n.RematchOf
	if r := n.Result; r != nil {
		d.Result = &notificationResult{Winner: r.Winner, Reason: r.Reason, Summary: l.Summary(r.Winner, r.Reason, r.MoveCount)}
	}
	if n.Left > 0 {
		ms := n.Left.Milliseconds()
		d.LeftMs = &ms
	}
	data, err := json.Marshal(d)
	if err != nil {
		panic(fmt.Sprintf("api: encoding a notification's data cannot fail: %v", err))
	}
	t := catalogue(l)
	title, body := t.notification(n, t)
	return notify.Message{ID: n.ID, Kind: n.Kind, GameID: n.GameID, At: n.At, Title: title, Body: body, Data: data}
}

// opponentName is the name a notification gives the other side.
func (t *texts) opponentName(o service.Opponent) string {
	if o.AI != "" {
		return t.aiName(o.AI)
	}
	return o.Name
}

// resultSummary is a notification's one-line result.
func (t *texts) resultSummary(r *service.NotificationResult) string {
	if r == nil {
		return ""
	}
	return t.summary(r.Winner, t.reasons[r.Reason], r.MoveCount)
}

// graceSeconds is how long a disconnect grace that started at at gives,
// in whole seconds rounded up.
func graceSeconds(n service.Notification) int64 {
	if n.Deadline == nil {
		return 0
	}
	return (max(*n.Deadline-n.At, 0) + 999) / 1000
}

// notificationsKo and notificationsEn word each kind: a title and a body.
func notificationsKo(n service.Notification, t *texts) (string, string) {
	opp := t.opponentName(n.Opponent)
	if opp == "" {
		opp = "상대"
	}
	switch n.Kind {
	case "yourTurn":
		san := ""
		if n.Move != nil {
			san = n.Move.SAN
		}
		return "내 차례예요", opp + "의 수: " + san
	case "disconnectGraceStarted":
		return "대국으로 돌아오세요", strconv.FormatInt(graceSeconds(n), 10) + "초 안에 돌아오지 않으면 대국에서 져요"
	case "timeRunningOut":
		return "시간이 얼마 남지 않았어요", "남은 시간 " + durationKo(n.Left) + ", 상대: " + opp
	case "gameStarted":
		return "대국이 시작됐어요", "상대: " + opp
	case "gameEnded":
		body := t.resultSummary(n.Result)
		if rc := n.RatingChange; rc != nil {
			body += " · 레이팅 " + ratingMove(*rc)
		}
		return "대국이 끝났어요", body
	case "rematchOffered":
		return "재대국 신청이 왔어요", opp + "의 재대국 신청이에요"
	case "inviteAccepted":
		return "초대한 상대가 들어왔어요", "상대: " + opp
	}
	return "알림", ""
}

func notificationsEn(n service.Notification, t *texts) (string, string) {
	opp := t.opponentName(n.Opponent)
	if opp == "" {
		opp = "Your opponent"
	}
	switch n.Kind {
	case "yourTurn":
		san := ""
		if n.Move != nil {
			san = n.Move.SAN
		}
		return "Your move", opp + " played " + san
	case "disconnectGraceStarted":
		return "Back to your game", "Come back within " + strconv.FormatInt(graceSeconds(n), 10) + " s or you lose the game"
	case "timeRunningOut":
		return "Time is running out", durationEn(n.Left) + " left against " + opp
	case "gameStarted":
		return "Your game has started", "Against " + opp
	case "gameEnded":
		body := t.resultSummary(n.Result)
		if rc := n.RatingChange; rc != nil {
			body += " · rating " + ratingMove(*rc)
		}
		return "Game over", body
	case "rematchOffered":
		return "Rematch offered", opp + " wants a rematch"
	case "inviteAccepted":
		return "Invite accepted", opp + " joined your game"
	}
	return "Notification", ""
}

// ratingMove is "1000 → 1012 (+12)".
func ratingMove(m game.RatingMove) string {
	return fmt.Sprintf("%d → %d (%+d)", m.Before, m.After, m.Delta())
}

// durationKo is "12시간", "1시간 30분", "2분 30초", "45초".
func durationKo(d time.Duration) string {
	h, m, s := splitDuration(d)
	switch {
	case h > 0 && m > 0:
		return fmt.Sprintf("%d시간 %d분", h, m)
	case h > 0:
		return fmt.Sprintf("%d시간", h)
	case m > 0 && s > 0:
		return fmt.Sprintf("%d분 %d초", m, s)
	case m > 0:
		return fmt.Sprintf("%d분", m)
	}
	return fmt.Sprintf("%d초", s)
}

// durationEn is "12 h", "1 h 30 min", "2 min 30 s", "45 s".
func durationEn(d time.Duration) string {
	h, m, s := splitDuration(d)
	switch {
	case h > 0 && m > 0:
		return fmt.Sprintf("%d h %d min", h, m)
	case h > 0:
		return fmt.Sprintf("%d h", h)
	case m > 0 && s > 0:
		return fmt.Sprintf("%d min %d s", m, s)
	case m > 0:
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d s", s)
}

// splitDuration is d in hours, minutes and seconds, rounded up to the
// second (a reminder never says less is left than is).
func splitDuration(d time.Duration) (h, m, s int64) {
	secs := int64((d + time.Second - 1) / time.Second)
	return secs / 3600, secs % 3600 / 60, secs % 60
}

// decodeRead reads POST /v1/players/me/notifications/read: {upTo}.
func decodeRead(body []byte) (string, error) {
	var upTo string
	err := decodeBody(body, false, func(o *object) {
		u := o.str("upTo")
		o.require("upTo", u != nil)
		if u != nil {
			upTo = *u
		}
	})
	return upTo, err
}

func (h *handler) handleNotifications(w http.ResponseWriter, r *request) error {
	caller, err := playerCaller(r)
	if err != nil {
		return err
	}
	limit, cursor, err := pageParams(r)
	if err != nil {
		return err
	}
	page, err := h.deps.Games.Notifications(r.Context(), caller, limit, cursor)
	if err != nil {
		return err
	}
	out := struct {
		Notifications []notificationJSON `json:"notifications"`
		Cursor        string             `json:"cursor,omitempty"`
	}{Notifications: make([]notificationJSON, 0, len(page.Items)), Cursor: page.Next}
	for _, n := range page.Items {
		out.Notifications = append(out.Notifications, notificationJSON{Message: notificationMessage(n, r.lang), Read: n.Read})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (h *handler) handleMarkRead(w http.ResponseWriter, r *request) error {
	caller, upTo, err := playerRequest(w, r, decodeRead)
	if err != nil {
		return err
	}
	if err := h.deps.Games.MarkNotificationsRead(r.Context(), caller, upTo); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
