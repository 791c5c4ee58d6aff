package apikey_test

import (
	"testing"

	"chessapi/shared/apikey"
	"chessapi/shared/apikey/apikeytest"
)

func TestMemoryStoreConformance(t *testing.T) {
	apikeytest.Run(t, func(*testing.T) apikey.Store { return apikey.NewMemoryStore() })
}
