package service

import (
	"context"

	"chessapi/shared/game"
)

// DeliverNotification runs the delivery of one notification (the inbox,
// and the devices as the decision says), for the external tests.
func (s *Service) DeliverNotification(ctx context.Context, n Notification, seatWatching bool) error {
	return s.deliver(ctx, outgoing{n: n, seatWatching: seatWatching, onAccountStream: n.Kind != string(PlayerTimeRunningOut)})
}

// NotificationID is notificationID, for the external tests.
var NotificationID = notificationID

// NotificationDecision is the decision of one committed version without
// I/O (notificationsOf), for the benchmark: how many notifications it
// makes and how many of them may go to devices.
func NotificationDecision(prev, next *game.State) (notifications, toDevices int) {
	for _, o := range notificationsOf(prev, next) {
		notifications++
		if !o.seatWatching {
			toDevices++
		}
	}
	return notifications, toDevices
}
