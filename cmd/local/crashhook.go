package main

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"

	"chessapi/shared/service"
)

// crashAfterWritesEnv, for tests only, makes the server exit abruptly (as a
// SIGKILL would) right after its Nth committed update: after the write,
// before any effect of the commit (wake-ups, the stream, the timer). The
// crash tests use it to show a subscriber still gets that change, from the
// game's change log, when it reconnects.
const crashAfterWritesEnv = "CHESSAPI_TEST_CRASH_AFTER_WRITES"

// crashingStore is a service.Store that exits the process after its Nth
// successful Update.
type crashingStore struct {
	service.Store
	left atomic.Int64
}

func withCrashHook(s service.Store) service.Store {
	n, err := strconv.Atoi(os.Getenv(crashAfterWritesEnv))
	if err != nil || n <= 0 {
		return s
	}
	c := &crashingStore{Store: s}
	c.left.Store(int64(n))
	return c
}

func (c *crashingStore) Update(ctx context.Context, rec service.GameRecord, expected int64) error {
	err := c.Store.Update(ctx, rec, expected)
	if err == nil && c.left.Add(-1) == 0 {
		os.Exit(137) // like SIGKILL: no deferred work, no effects
	}
	return err
}
