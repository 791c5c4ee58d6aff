package service

import (
	"slices"
	"sync"

	"chessapi/shared/game"
)

// Change is one committed version of a game, as the in-process feed
// announces it: the committed state and the one it replaced (nil for a new
// game; both shared, read-only), and its events.
type Change struct {
	Prev   *game.State
	State  *game.State
	Events []game.Event
}

// feed announces every commit made by this process to whoever watches it:
// long polls and the local stream's subscriptions watch a game, the local
// stream's account-wide subscriptions a registered player (every commit of
// a game in which the player holds a seat, or is invited to). A watcher that falls behind
// (its buffer is full) misses announcements, the oldest first (the newest
// is always kept): a game's watcher notices the gap in the versions when it
// reads on and catches up from the stored change log; a player's is told
// (Lost) and ends. Publishing never blocks a writer.
type feed struct {
	mu       sync.Mutex
	byGame   map[string]map[*watcher]struct{}
	byPlayer map[string]map[*watcher]struct{}
}

type watcher struct {
	ch   chan Change
	lost chan struct{} // closed when an announcement was dropped
	once sync.Once
}

func newFeed() *feed {
	return &feed{byGame: map[string]map[*watcher]struct{}{}, byPlayer: map[string]map[*watcher]struct{}{}}
}

// watch returns a channel of the game's next commits (buffered by buf) and
// a function to stop watching, which closes the channel.
func (f *feed) watch(gameID string, buf int) (<-chan Change, func()) {
	w := f.add(f.byGame, gameID, buf)
	return w.ch, f.remover(f.byGame, gameID, w)
}

func (f *feed) add(index map[string]map[*watcher]struct{}, key string, buf int) *watcher {
	w := &watcher{ch: make(chan Change, max(buf, 1)), lost: make(chan struct{})}
	f.mu.Lock()
	set := index[key]
	if set == nil {
		set = map[*watcher]struct{}{}
		index[key] = set
	}
	set[w] = struct{}{}
	f.mu.Unlock()
	return w
}

func (f *feed) remover(index map[string]map[*watcher]struct{}, key string, w *watcher) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			if set, ok := index[key]; ok {
				delete(set, w)
				if len(set) == 0 {
					delete(index, key)
				}
			}
			close(w.ch)
		})
	}
}

// publish announces c to the game's watchers and to those of the
// registered players seated in it, without blocking.
func (f *feed) publish(c Change) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.byGame[c.State.GameID] {
		w.offer(c) // behind: it will catch up from the change log
	}
	for _, id := range seatedPlayers(c.Prev, c.State) {
		for w := range f.byPlayer[id] {
			w.offer(c)
		}
	}
}

// offer buffers c. A full buffer drops its oldest announcement instead of
// c: had the newest been dropped, a game's watcher that then reads the rest
// would wait for a version nobody announces again (a burst that ends a game
// would leave it on the version before). Only publish sends, under the
// feed's lock, so the slot the receive frees stays free for c.
func (w *watcher) offer(c Change) {
	select {
	case w.ch <- c:
		return
	default:
	}
	w.once.Do(func() { close(w.lost) })
	select {
	case <-w.ch:
	default: // the reader took one meanwhile
	}
	w.ch <- c
}

// seatedPlayers lists the registered players seated in next (or in prev,
// which a game never loses) and the one a waiting game is reserved for
// (a rematch), each once: those PlayerEvents may speak to.
func seatedPlayers(prev, next *game.State) []string {
	var ids []string
	add := func(id string) {
		if id != "" && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	for _, st := range []*game.State{next, prev} {
		if st == nil {
			continue
		}
		for _, seat := range st.Seats {
			if seat.Bound {
				add(seat.PlayerID)
			}
		}
		if st.Invite.Mode == game.InviteReserved {
			add(st.Invite.PlayerID)
		}
	}
	return ids
}

// Watch returns a channel announcing the commits this process makes to the
// game from now on, in the order they are announced (which may skip or
// reorder versions under load: compare versions and catch up with Changes),
// and a function that stops watching and closes the channel.
func (s *Service) Watch(gameID string, buffer int) (<-chan Change, func()) {
	return s.feed.watch(gameID, buffer)
}

// PlayerWatch follows the commits of every game a registered player is
// seated in (the local account-wide stream).
type PlayerWatch struct {
	// Changes announces the commits, in the order they are announced.
	Changes <-chan Change
	// Lost is closed when an announcement did not fit in the buffer: the
	// watcher has missed commits and cannot know which.
	Lost <-chan struct{}
	// Stop stops watching and closes Changes.
	Stop func()
}

// WatchPlayer follows the commits this process makes to the games of the
// registered player playerID from now on (buffered by buffer).
func (s *Service) WatchPlayer(playerID string, buffer int) PlayerWatch {
	w := s.feed.add(s.feed.byPlayer, playerID, buffer)
	return PlayerWatch{Changes: w.ch, Lost: w.lost, Stop: s.feed.remover(s.feed.byPlayer, playerID, w)}
}
