package service

import "context"

// DeliverNotification runs the delivery of one notification (the inbox,
// and the devices as the decision says), for the external tests.
func (s *Service) DeliverNotification(ctx context.Context, n Notification, seatWatching bool) error {
	return s.deliver(ctx, outgoing{n: n, seatWatching: seatWatching})
}

// NotificationID is notificationID, for the external tests.
var NotificationID = notificationID
