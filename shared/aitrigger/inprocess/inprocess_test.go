package inprocess

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"chessapi/shared/service"
)

func TestTriggerRunsAndDrains(t *testing.T) {
	var ran atomic.Int32
	tr := New(func(ctx context.Context, task service.AITask) error {
		time.Sleep(20 * time.Millisecond)
		ran.Add(1)
		return nil
	}, nil)
	for i := 0; i < 5; i++ {
		if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "g", Version: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	tr.Close(time.Second)
	if n := ran.Load(); n != 5 {
		t.Errorf("ran %d turns before Close returned; want 5", n)
	}
	if err := tr.TriggerAI(context.Background(), service.AITask{}); !errors.Is(err, context.Canceled) {
		t.Errorf("trigger after Close: %v", err)
	}
}

func TestCloseCancelsSlowTurns(t *testing.T) {
	tr := New(func(ctx context.Context, task service.AITask) error {
		<-ctx.Done()
		return ctx.Err()
	}, nil)
	_ = tr.TriggerAI(context.Background(), service.AITask{GameID: "g"})
	start := time.Now()
	tr.Close(50 * time.Millisecond)
	if time.Since(start) > 2*time.Second {
		t.Errorf("Close took %v", time.Since(start))
	}
}
