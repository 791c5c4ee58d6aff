package service

import (
	"testing"
	"time"
)

func TestStoredTimeRounding(t *testing.T) {
	tests := []struct {
		t         time.Time
		wantMilli int64
		wantSec   int64
	}{
		{time.Unix(100, 0), 100_000, 100},
		{time.Unix(100, 1), 100_001, 101},
		{time.Unix(100, 999_999), 100_001, 101},
		{time.Unix(100, 1_000_000), 100_001, 101},
		{time.Unix(100, 1_000_001), 100_002, 101},
		{time.Unix(-1, 500_000_000), -500, 0}, // before 1970: still up
		{time.Unix(-2, 1), -1_999, -1},
	}
	for _, tt := range tests {
		if got := DeadlineMillis(tt.t); got != tt.wantMilli {
			t.Errorf("DeadlineMillis(%v) = %d; want %d", tt.t, got, tt.wantMilli)
		}
		if got := ExpirySeconds(tt.t); got != tt.wantSec {
			t.Errorf("ExpirySeconds(%v) = %d; want %d", tt.t, got, tt.wantSec)
		}
	}
}
