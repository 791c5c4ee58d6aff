package aiplayer

import (
	"context"
	"testing"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/service"
)

func TestChooseMovePacesWeakLevels(t *testing.T) {
	pool := NewPool(1, 1)
	pos := chess.StartingPosition()
	for _, tt := range []struct {
		level   string
		atLeast time.Duration
	}{
		{"easy", 150 * time.Millisecond},
		{"normal", 800 * time.Millisecond},
	} {
		start := time.Now()
		m, err := pool.ChooseMove(context.Background(), service.AIMoveRequest{Position: pos, Level: tt.level, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if !contains(pos.LegalMoves(), m) {
			t.Fatalf("%s: illegal move %v", tt.level, m)
		}
		if took := time.Since(start); took < tt.atLeast {
			t.Errorf("%s answered after %v; want about its think time (≥ %v)", tt.level, took, tt.atLeast)
		}
	}
	// The clock wins over the pace: with 2 s left, no long wait.
	start := time.Now()
	if _, err := pool.ChooseMove(context.Background(), service.AIMoveRequest{Position: pos, Level: "hard", Remaining: 2 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("hard with 2 s on its clock took %v", took)
	}
	if _, err := pool.ChooseMove(context.Background(), service.AIMoveRequest{Position: pos, Level: "grandmaster"}); err == nil {
		t.Error("unknown level accepted")
	}
}

func contains(moves []chess.Move, m chess.Move) bool {
	for _, x := range moves {
		if x == m {
			return true
		}
	}
	return false
}
