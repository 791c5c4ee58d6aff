package dynamostore_test

import (
	"testing"

	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/service"
	"chessapi/shared/store/storetest"
)

// TestNotificationsAgainstEmulators holds the data table's devices and
// inboxes to the conformance suite on moto and dynalite.
func TestNotificationsAgainstEmulators(t *testing.T) {
	for _, kind := range emulators {
		t.Run(string(kind), func(t *testing.T) {
			endpoint := emulatortest.Start(t, kind)
			storetest.RunNotifications(t, func(t *testing.T) service.NotificationStore {
				return newData(t, endpoint)
			})
		})
	}
}
