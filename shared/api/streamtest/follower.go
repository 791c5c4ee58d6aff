// Package streamtest is a stream client for tests: it follows games from
// the stream's messages as docs/push.md tells an app to (the whole view on
// subscribed, a delta per change, the version rules), so that tests of
// either transport can compare what a client ends up with against the
// view GET /v1/games/{id} returns.
package streamtest

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"
)

// Follower keeps one client's games. Safe for concurrent use.
type Follower struct {
	mu    sync.Mutex
	games map[string]*Game
}

// Game is one followed game: the view as of Version, and what was applied.
type Game struct {
	View    map[string]any
	Version int64
	// Events lists each version's events as they came: in a change, or in
	// a subscribed's missed list (or none: a view given whole).
	Events map[int64][]any
	// Changes counts the changes applied, Ignored those dropped by the
	// version rule (duplicates, older ones), Subscribed the whole views.
	Changes, Ignored, Subscribed int
	// early holds changes that came before the game's first subscribed (on
	// AWS the two are posted by different invocations).
	early []map[string]any
}

// New returns a follower of no game.
func New() *Follower { return &Follower{games: map[string]*Game{}} }

// Apply takes one server message (decoded JSON). Messages of other types
// than subscribed and change are ignored. A change past the next version
// is an error: a gap the server must never leave.
func (f *Follower) Apply(m map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	id, _ := m["gameId"].(string)
	switch m["type"] {
	case "subscribed":
		if id == "" {
			return nil // the account-wide subscription
		}
		return f.subscribed(id, m)
	case "change":
		g := f.games[id]
		if g == nil || g.View == nil {
			if g == nil {
				g = &Game{Events: map[int64][]any{}}
				f.games[id] = g
			}
			g.early = append(g.early, m)
			return nil
		}
		return g.change(m)
	}
	return nil
}

func (f *Follower) subscribed(id string, m map[string]any) error {
	g := f.games[id]
	if g == nil {
		g = &Game{Events: map[int64][]any{}}
		f.games[id] = g
	}
	v, err := version(m)
	if err != nil {
		return err
	}
	if g.View != nil && v < g.Version {
		g.Ignored++
		return nil // older than what we have
	}
	view, ok := m["game"].(map[string]any)
	if !ok {
		return fmt.Errorf("subscribed to %s without a view: %v", id, m)
	}
	missed, _ := m["missed"].([]any)
	for _, e := range missed {
		mc, _ := e.(map[string]any)
		mv, err := version(mc)
		if err != nil {
			return err
		}
		events, _ := mc["events"].([]any)
		g.Events[mv] = events
	}
	g.View, g.Version = view, v
	g.Subscribed++
	early := g.early
	g.early = nil
	for _, c := range early {
		if err := g.change(c); err != nil {
			return err
		}
	}
	return nil
}

func (g *Game) change(m map[string]any) error {
	v, err := version(m)
	if err != nil {
		return err
	}
	switch {
	case v <= g.Version:
		g.Ignored++
		return nil
	case v > g.Version+1:
		return fmt.Errorf("change %d after version %d: versions were skipped", v, g.Version)
	}
	delta, ok := m["delta"].(map[string]any)
	if !ok {
		return fmt.Errorf("change %d without a delta: %v", v, m)
	}
	view, err := ApplyDelta(g.View, delta)
	if err != nil {
		return fmt.Errorf("change %d: %w", v, err)
	}
	if got, _ := view["version"].(float64); int64(got) != v {
		return fmt.Errorf("change %d gives a view of version %v", v, view["version"])
	}
	events, _ := m["events"].([]any)
	g.View, g.Version = view, v
	g.Events[v] = events
	g.Changes++
	return nil
}

func version(m map[string]any) (int64, error) {
	v, ok := m["version"].(float64)
	if !ok {
		return 0, fmt.Errorf("message without a version: %v", m)
	}
	return int64(v), nil
}

// Game returns a copy of the game's state (nil when not followed).
func (f *Follower) Game(id string) *Game {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.games[id]
	if g == nil {
		return nil
	}
	c := *g
	c.View = maps.Clone(g.View)
	c.Events = maps.Clone(g.Events)
	return &c
}

// ApplyDelta applies a change's delta to a view (SPEC §16.1): each named
// field replaced, the move list cut to movesLength, then move appended.
// The view is not modified.
func ApplyDelta(view, delta map[string]any) (map[string]any, error) {
	out := maps.Clone(view)
	moves, _ := view["moves"].([]any)
	moves = slices.Clone(moves)
	for k, v := range delta {
		switch k {
		case "movesLength":
			n, ok := v.(float64)
			if !ok || int(n) < 0 || int(n) > len(moves) {
				return nil, fmt.Errorf("movesLength %v of %d moves", v, len(moves))
			}
			moves = moves[:int(n)]
		case "move":
		case "moves":
			return nil, fmt.Errorf("a delta carries the move list")
		default:
			out[k] = v
		}
	}
	if m, ok := delta["move"]; ok {
		moves = append(moves, m)
	}
	if _, had := view["moves"]; had || moves != nil {
		if moves == nil {
			moves = []any{}
		}
		out["moves"] = moves
	}
	return out, nil
}

// Equal reports whether two views are the same JSON.
func Equal(a, b map[string]any) bool { return reflect.DeepEqual(a, b) }

// Decode reads a JSON object.
func Decode(data []byte) (map[string]any, error) {
	var m map[string]any
	err := json.Unmarshal(data, &m)
	return m, err
}

// Diff names the top-level fields in which two views differ (for test
// failures).
func Diff(got, want map[string]any) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if !reflect.DeepEqual(got[k], want[k]) {
			a, _ := json.Marshal(got[k])
			b, _ := json.Marshal(want[k])
			out = append(out, fmt.Sprintf("%s: got %s, want %s", k, a, b))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: not in the view", k))
		}
	}
	return fmt.Sprint(out)
}

// WithClockAt returns a copy of view whose clock is read at ms (Unix
// ms): the running side's time as it would be then (views read at
// different instants show the same clock at different moments: a client
// counts its copy down from the last message, GET reads it now).
func WithClockAt(view map[string]any, ms int64) map[string]any {
	out := maps.Clone(view)
	clock, ok := view["clock"].(map[string]any)
	if !ok {
		return out
	}
	c := maps.Clone(clock)
	asOf, _ := c["asOf"].(float64)
	if running, ok := c["running"].(string); ok {
		rem := maps.Clone(c["remainingMs"].(map[string]any))
		left := rem[running].(float64) - (float64(ms) - asOf)
		rem[running] = max(0, left)
		c["remainingMs"] = rem
	}
	c["asOf"] = float64(ms)
	out["clock"] = c
	return out
}

// SameAt compares a followed view with a GET view of the same version read
// later, when no version came in between: the followed clock is read at
// the GET view's instant first (at the same instant, exactly).
func SameAt(followed, got map[string]any) bool {
	return Equal(WithClockAt(followed, asOf(got)), got)
}

// DiffAt is Diff after the same reading.
func DiffAt(followed, got map[string]any) string {
	return Diff(WithClockAt(followed, asOf(got)), got)
}

func asOf(view map[string]any) int64 {
	c, _ := view["clock"].(map[string]any)
	f, _ := c["asOf"].(float64)
	return int64(f)
}
