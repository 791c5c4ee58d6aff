package service

import (
	"log/slog"
	"slices"
	"testing"

	"chessapi/shared/game"
)

func TestFailedCommitsMergeOwingEveryVersion(t *testing.T) {
	newEffectsQueue := func() *effects {
		s := &Service{log: slog.New(slog.DiscardHandler), retries: retriesOf(Config{})}
		return &effects{s: s, pending: map[string]pendingEffect{}, wake: make(chan struct{}, 1)}
	}
	states := make([]*game.State, 80)
	for v := range states {
		states[v] = &game.State{GameID: "g", Version: int64(v)}
	}
	commitOf := func(v int) commit { return commit{prev: states[v-1], next: states[v]} }
	versions := func(c commit) (out []int64) {
		for _, st := range c.notificationSteps() {
			if st.prev.Version+1 != st.next.Version {
				t.Errorf("step %d → %d is not one version", st.prev.Version, st.next.Version)
			}
			out = append(out, st.next.Version)
		}
		return out
	}

	for name, order := range map[string][]int{"newer second": {3, 5}, "older second (a late retry)": {5, 3}} {
		e := newEffectsQueue()
		for i, v := range order {
			e.enqueue(commitOf(v), i+1)
		}
		p := e.pending["g"]
		if p.c.next.Version != 5 || p.c.prev.Version != 2 || !slices.Equal(versions(p.c), []int64{3, 5}) || p.attempts != 2 {
			t.Errorf("%s: pending %d → %d owing %v, %d attempts; want 2 → 5 owing [3 5], 2 attempts",
				name, p.c.prev.Version, p.c.next.Version, versions(p.c), p.attempts)
		}
	}

	e := newEffectsQueue()
	for v := 1; v < len(states); v++ {
		e.enqueue(commitOf(v), 1)
	}
	got := versions(e.pending["g"].c)
	if len(got) != maxOwedSteps || got[0] != int64(len(states)-maxOwedSteps) || got[len(got)-1] != int64(len(states)-1) {
		t.Errorf("after %d failed commits the retry owes versions %d..%d (%d); want the newest %d", len(states)-1, got[0], got[len(got)-1], len(got), maxOwedSteps)
	}
}
