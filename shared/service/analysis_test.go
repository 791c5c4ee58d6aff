package service

import (
	"testing"
	"time"

	"chessapi/shared/engine"
)

// TestSearchParams: the search policy of POST /v1/ai/move.
func TestSearchParams(t *testing.T) {
	tests := []struct {
		level             engine.Level
		movetimeMs, depth int64
		wantTime          time.Duration
		wantDepth         int
	}{
		{engine.LevelMax, 0, 0, engine.DefaultMoveTime, 0},
		{engine.LevelEasy, 0, 0, 200 * time.Millisecond, 0},
		{engine.LevelMax, 1, 0, engine.MinMoveTime, 0},
		{engine.LevelMax, 50000, 0, engine.MaxMoveTime, 0},
		{engine.LevelMax, 0, 12, engine.MaxMoveTime, 12},
		{engine.LevelMax, 300, 500, 300 * time.Millisecond, engine.MaxDepth},
		{engine.LevelHard, -5, -1, 2200 * time.Millisecond, 0},
	}
	for _, tc := range tests {
		p := searchParams(tc.level, tc.movetimeMs, tc.depth)
		if p.MoveTime != tc.wantTime || p.Depth != tc.wantDepth || p.Level != tc.level {
			t.Errorf("searchParams(%s, %d, %d) = time %v depth %d; want %v, %d", tc.level, tc.movetimeMs, tc.depth,
				p.MoveTime, p.Depth, tc.wantTime, tc.wantDepth)
		}
	}
}
