package service

import (
	"sync"

	"chessapi/shared/game"
)

// Change is one committed version of a game, as the in-process feed
// announces it: the committed state (shared, read-only) and its events.
type Change struct {
	State  *game.State
	Events []game.Event
}

// feed announces every commit made by this process to whoever watches the
// game: long polls and the local stream hub. A watcher that falls behind
// (its buffer is full) misses announcements; it notices the gap in the
// versions and catches up from the stored change log, so publishing never
// blocks a writer.
type feed struct {
	mu   sync.Mutex
	byID map[string]map[*watcher]struct{}
}

type watcher struct {
	ch chan Change
}

func newFeed() *feed {
	return &feed{byID: map[string]map[*watcher]struct{}{}}
}

// watch returns a channel of the game's next commits (buffered by buf) and
// a function to stop watching, which closes the channel.
func (f *feed) watch(gameID string, buf int) (<-chan Change, func()) {
	w := &watcher{ch: make(chan Change, max(buf, 1))}
	f.mu.Lock()
	set := f.byID[gameID]
	if set == nil {
		set = map[*watcher]struct{}{}
		f.byID[gameID] = set
	}
	set[w] = struct{}{}
	f.mu.Unlock()
	var once sync.Once
	return w.ch, func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if set, ok := f.byID[gameID]; ok {
				delete(set, w)
				if len(set) == 0 {
					delete(f.byID, gameID)
				}
			}
			close(w.ch)
		})
	}
}

// publish announces c to the game's watchers without blocking.
func (f *feed) publish(c Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.byID[c.State.GameID] {
		select {
		case w.ch <- c:
		default: // behind: it will catch up from the change log
		}
	}
}

// Watch returns a channel announcing the commits this process makes to the
// game from now on, in the order they are announced (which may skip or
// reorder versions under load: compare versions and catch up with Changes),
// and a function that stops watching and closes the channel.
func (s *Service) Watch(gameID string, buffer int) (<-chan Change, func()) {
	return s.feed.watch(gameID, buffer)
}
