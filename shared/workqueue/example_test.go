package workqueue_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"chessapi/shared/retry"
	"chessapi/shared/workqueue"
)

// A queue of AI turns keyed by game: the first run of a turn fails, its
// retry succeeds; Close drains it before returning.
func Example() {
	q := workqueue.New[string](workqueue.Options{
		Name:    "AI turn",
		Workers: 2,
		Retry:   retry.Policy{Attempts: 3, Base: time.Millisecond},
		GiveUp:  "the game's deadline check triggers it again",
		Logger:  slog.New(slog.DiscardHandler),
	})
	failed := false
	done := make(chan error, 1)
	q.Add("game-1", workqueue.Job{
		Attrs: []any{"game", "game-1"},
		Run: func(ctx context.Context) error {
			if !failed {
				failed = true
				return errors.New("engine busy")
			}
			return nil
		},
		Done: func(err error) { done <- err },
	})
	q.Close(time.Second)
	fmt.Println("outcome:", <-done)
	// Output: outcome: <nil>
}
