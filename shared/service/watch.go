package service

import "sync"

// watchers wakes long polls waiting for a game to change. Every write made
// by this process notifies it; writes by other processes (other Lambda
// instances) are found by re-reading the store (Config.PollInterval).
type watchers struct {
	mu   sync.Mutex
	byID map[string]map[chan struct{}]struct{}
}

func newWatchers() *watchers {
	return &watchers{byID: map[string]map[chan struct{}]struct{}{}}
}

// watch returns a channel that is closed at the next write of the game, and a
// function to stop watching.
func (w *watchers) watch(gameID string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	w.mu.Lock()
	set := w.byID[gameID]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		w.byID[gameID] = set
	}
	set[ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if set, ok := w.byID[gameID]; ok {
			if _, live := set[ch]; live {
				delete(set, ch)
				close(ch)
			}
			if len(set) == 0 {
				delete(w.byID, gameID)
			}
		}
	}
}

// notify wakes every watcher of the game.
func (w *watchers) notify(gameID string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ch := range w.byID[gameID] {
		close(ch)
	}
	delete(w.byID, gameID)
}
