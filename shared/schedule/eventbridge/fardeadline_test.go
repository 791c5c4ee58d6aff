package eventbridge

import (
	"strconv"
	"testing"
	"time"
)

// TestFarDeadlines: a correspondence game's deadline is days ahead (up to
// 14, SPEC §16.3); the schedule fires at it, the expression and the name
// carry its date, and nothing caps it.
func TestFarDeadlines(t *testing.T) {
	now := time.Date(2026, 12, 25, 18, 30, 0, 250_000_000, time.UTC)
	for _, tc := range []struct {
		ahead time.Duration
		at    string
	}{
		{24 * time.Hour, "at(2026-12-26T18:30:01)"},
		{7 * 24 * time.Hour, "at(2027-01-01T18:30:01)"}, // across the year's end
		{14 * 24 * time.Hour, "at(2027-01-08T18:30:01)"},
		{14*24*time.Hour - 12*time.Hour, "at(2027-01-08T06:30:01)"},
	} {
		deadline := now.Add(tc.ahead)
		fire := FireTime(deadline, now)
		if fire.Sub(deadline) < 0 || fire.Sub(deadline) >= time.Second {
			t.Errorf("FireTime(%v ahead) = %v; want the deadline rounded up to the second", tc.ahead, fire)
		}
		if got := AtExpression(fire); got != tc.at {
			t.Errorf("AtExpression(%v ahead) = %q; want %q", tc.ahead, got, tc.at)
		}
		if name := ScheduleName("g1", fire); len(name) > maxNameLen || name != "t-g1."+strconv.FormatInt(fire.Unix(), 10) {
			t.Errorf("ScheduleName = %q", name)
		}
	}
}
