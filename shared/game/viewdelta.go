package game

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"time"

	"chessapi/shared/chess"
)

// Deltas (SPEC §16.1): what one version changed in a viewer's view — the
// top-level fields whose JSON differs, with their new values; for the move
// list only the new move ("move", appended) or, after a take-back, the
// list's new length ("movesLength", the entries after it dropped). Applying
// a version's delta to the view of the version before (replace each named
// field, drop the moves past movesLength, append move) gives that viewer's
// view of the version.
//
// Each version's delta is made once, when the version is committed, from
// the two spectator views of the versions read at that moment (DiffViews:
// by construction the difference of two views), with the clock always (a
// view's clock is a reading as of its asOf: the subscriber's was taken
// when the version before came), and kept in the change log with the
// version's events. The seat-specific part, the legal moves of the seat to move, is
// recorded as which seat had them before and after; DeltaFor completes the
// delta for one viewer from that. The human texts (AI names, result
// summaries) are the edge's to fill, as in a view.

// DeltaField is one changed top-level field of a view: its JSON key and
// its new value.
type DeltaField struct {
	Key   string
	Value json.RawMessage
}

// Delta is one version's changes of one viewer's view, in the view's field
// order. Its JSON is an object.
type Delta []DeltaField

// MarshalJSON writes the object {key: value, ...}.
func (d Delta) MarshalJSON() ([]byte, error) {
	size := 2
	for _, f := range d {
		size += len(f.Key) + len(f.Value) + 4
	}
	b := make([]byte, 0, size)
	b = append(b, '{')
	for i, f := range d {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.Key)
		b = append(b, ':')
		b = append(b, f.Value...)
	}
	return append(b, '}'), nil
}

// Get returns the value of key (false: the field did not change).
func (d Delta) Get(key string) (json.RawMessage, bool) {
	for _, f := range d {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key, or adds the field in view order.
func (d Delta) Set(key string, value json.RawMessage) Delta {
	for i, f := range d {
		if f.Key == key {
			d[i].Value = value
			return d
		}
	}
	d = append(d, DeltaField{Key: key, Value: value})
	for i := len(d) - 1; i > 0 && fieldRank[d[i].Key] < fieldRank[d[i-1].Key]; i-- {
		d[i], d[i-1] = d[i-1], d[i]
	}
	return d
}

// Delta keys that are not view fields.
const (
	// DeltaMove is the move a version added, as MoveView: appended to the
	// move list.
	DeltaMove = "move"
	// DeltaMovesLength is the move list's new length after a take-back:
	// the entries after it are dropped (before move is appended).
	DeltaMovesLength = "movesLength"
)

// viewFields lists the top-level fields of View in its order with their
// values and how two views' values compare; TestViewFieldsCoverTheView
// checks it against the struct. The move list stands at its place for move
// and movesLength. The fields fixed when a game is made (its id, options,
// start, the viewer) are not compared: two views of one game and viewer
// always agree on them (checkDeltas would see a delta that missed one).
//
// The comparisons are typed (reflect.DeepEqual over the boxed values cost
// as much as the rest of a version's delta): same reports whether the two
// values marshal alike. A nil and an empty slice marshal differently
// (null, []), so they differ here too.
var viewFields = []struct {
	key   string
	get   func(*View) any
	same  func(a, b *View) bool
	fixed bool
}{
	{"gameId", func(v *View) any { return v.GameID }, nil, true},
	{"version", func(v *View) any { return v.Version }, func(a, b *View) bool { return a.Version == b.Version }, false},
	{"stateVersion", func(v *View) any { return v.StateVersion }, nil, true},
	{"phase", func(v *View) any { return v.Phase }, func(a, b *View) bool { return a.Phase == b.Phase }, false},
	{"rules", func(v *View) any { return v.Rules }, nil, true},
	{"options", func(v *View) any { return v.Options }, nil, true},
	{"variant", func(v *View) any { return v.Variant }, nil, true},
	{"chess960Index", func(v *View) any { return v.Chess960Index }, nil, true},
	{"createdAt", func(v *View) any { return v.CreatedAt }, nil, true},
	{"startFen", func(v *View) any { return v.StartFEN }, nil, true},
	{"fen", func(v *View) any { return v.FEN }, func(a, b *View) bool { return a.FEN == b.FEN }, false},
	{"players", func(v *View) any { return v.Players }, func(a, b *View) bool {
		return samePlayer(a.Players[0], b.Players[0]) && samePlayer(a.Players[1], b.Players[1])
	}, false},
	{"you", func(v *View) any { return v.You }, nil, true},
	{"turn", func(v *View) any { return v.Turn }, func(a, b *View) bool { return a.Turn == b.Turn }, false},
	{"check", func(v *View) any { return v.Check }, func(a, b *View) bool { return a.Check == b.Check }, false},
	{"moves", nil, nil, false},
	{"lastMove", func(v *View) any { return v.LastMove }, func(a, b *View) bool { return samePtr(a.LastMove, b.LastMove) }, false},
	{"clock", func(v *View) any { return v.Clock }, func(a, b *View) bool { return sameClock(&a.Clock, &b.Clock) }, false},
	{"deadline", func(v *View) any { return v.Deadline }, func(a, b *View) bool { return samePtr(a.Deadline, b.Deadline) }, false},
	{"deadlineReason", func(v *View) any { return v.DeadlineReason }, func(a, b *View) bool { return samePtr(a.DeadlineReason, b.DeadlineReason) }, false},
	{"startsAt", func(v *View) any { return v.StartsAt }, func(a, b *View) bool { return samePtr(a.StartsAt, b.StartsAt) }, false},
	{"ready", func(v *View) any { return v.Ready }, func(a, b *View) bool { return samePtr(a.Ready, b.Ready) }, false},
	{"captured", func(v *View) any { return v.Captured }, func(a, b *View) bool {
		return sameSlice(a.Captured[0], b.Captured[0]) && sameSlice(a.Captured[1], b.Captured[1])
	}, false},
	{"materialDiff", func(v *View) any { return v.MaterialDiff }, func(a, b *View) bool { return a.MaterialDiff == b.MaterialDiff }, false},
	{"pending", func(v *View) any { return v.Pending }, func(a, b *View) bool {
		return samePtr(a.Pending.Undo, b.Pending.Undo) && samePtr(a.Pending.Draw, b.Pending.Draw)
	}, false},
	{"claimable", func(v *View) any { return v.Claimable }, func(a, b *View) bool { return samePtr(a.Claimable, b.Claimable) }, false},
	{"legalMoves", func(v *View) any { return v.LegalMoves }, func(a, b *View) bool { return sameSlice(a.LegalMoves, b.LegalMoves) }, false},
	{"result", func(v *View) any { return v.Result }, func(a, b *View) bool {
		// Rare (once a game), and the deepest value: compared as a whole.
		return a.Result == b.Result || a.Result != nil && b.Result != nil && reflect.DeepEqual(*a.Result, *b.Result)
	}, false},
	{"rematch", func(v *View) any { return v.Rematch }, func(a, b *View) bool {
		return a.Rematch == b.Rematch || a.Rematch != nil && b.Rematch != nil &&
			samePtr(a.Rematch.Of, b.Rematch.Of) && samePtr(a.Rematch.Next, b.Rematch.Next)
	}, false},
}

// samePtr reports whether a and b are both nil or point to equal values.
func samePtr[T comparable](a, b *T) bool { return a == b || a != nil && b != nil && *a == *b }

// sameSlice reports whether a and b hold equal elements and are both nil or
// both not (null and [] are different JSON).
func sameSlice[T comparable](a, b []T) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }

func samePlayer(a, b *PlayerView) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.PlayerID == b.PlayerID && a.Name == b.Name && samePtr(a.AI, b.AI) && a.Connected == b.Connected &&
		a.Presence.Connected == b.Presence.Connected && samePtr(a.Presence.Since, b.Presence.Since) && samePtr(a.Rating, b.Rating)
}

func sameClock(a, b *ClockView) bool {
	return a.Type == b.Type && a.RemainingMs == b.RemainingMs && a.IncrementMs == b.IncrementMs &&
		samePtr(a.Running, b.Running) && a.Started == b.Started && samePtr(a.ExtensionsLeft, b.ExtensionsLeft) && a.AsOf == b.AsOf
}

// fieldRank ranks the delta keys in view order (movesLength, then move,
// where the move list stands).
var fieldRank = func() map[string]int {
	m := map[string]int{}
	for i, f := range viewFields {
		m[f.key] = 2 * i
		if f.key == "moves" {
			m[DeltaMovesLength] = 2 * i
			m[DeltaMove] = 2*i + 1
		}
	}
	return m
}()

// errManyMoves: one version adds at most one move (every step is one
// action); a delta cannot carry more.
var errManyMoves = errors.New("game: a version added more than one move")

// DiffViews returns the delta from view prev to view next of the same game
// and viewer: the fields whose JSON differs, and the move list's change.
func DiffViews(prev, next *View) (Delta, error) {
	var d Delta
	for _, f := range viewFields {
		if f.fixed {
			continue
		}
		if f.get == nil {
			moves, err := diffMoves(prev.Moves, next.Moves)
			if err != nil {
				return nil, err
			}
			d = append(d, moves...)
			continue
		}
		// Most fields do not change from one version to the next: only the
		// others are marshalled (each marshal costs more than the
		// comparison), and only their new value.
		if f.same(prev, next) {
			continue
		}
		b, err := json.Marshal(f.get(next))
		if err != nil {
			return nil, fmt.Errorf("game: delta of %s: %w", f.key, err)
		}
		d = append(d, DeltaField{Key: f.key, Value: b})
	}
	return d, nil
}

// diffMoves is the move list's part of a delta: its new length when it
// shrank or changed, and the move appended.
func diffMoves(prev, next MoveList) (Delta, error) {
	p := 0
	for p < len(prev) && p < len(next) && prev[p] == next[p] {
		p++
	}
	var d Delta
	if p < len(prev) {
		d = append(d, DeltaField{Key: DeltaMovesLength, Value: strconv.AppendInt(nil, int64(p), 10)})
	}
	switch len(next) - p {
	case 0:
	case 1:
		d = append(d, DeltaField{Key: DeltaMove, Value: appendMoveView(nil, &next[p])})
	default:
		return nil, errManyMoves
	}
	return d, nil
}

// legalMovesMark is the stored form of the legal moves' change: which
// seat had them before and has them after (null: nobody), and the
// position to list them from when the delta's fen does not say it.
type legalMovesMark struct {
	Before *chess.Color `json:"before"`
	After  *chess.Color `json:"after"`
	FEN    string       `json:"fen,omitempty"`
}

// holder is the seat that gets legal moves in st: the side to move while
// the game is played.
func holder(st *State) *chess.Color {
	if st.Phase != PhasePlaying {
		return nil
	}
	return colorPtr(st.Turn())
}

// The stored form of a version's delta (Change.Delta) is the spectators'
// delta without what the state rebuilds: no version (the entry's); for a
// move, no fen, turn or lastMove (the move's), and the move itself as
// {"ply", "uci"}, found again in the state's move list — or, once a
// take-back has removed it from the list, the whole record as it was. The
// legal moves are the mark above. Only the last ChangeLogDeltas entries
// keep their delta: a client further behind gets the whole view.

// storedMove is a move in a stored delta: its ply and UCI, and the rest of
// its record when the move list no longer holds it.
type storedMove struct {
	Ply      int          `json:"ply"`
	UCI      string       `json:"uci"`
	SAN      string       `json:"san,omitempty"`
	Color    *chess.Color `json:"color,omitempty"`
	At       int64        `json:"at,omitempty"`
	FENAfter string       `json:"fenAfter,omitempty"`
}

// versionDelta is the stored delta of version next after prev, both
// viewed at now.
func versionDelta(prev, next *State, now time.Time) (json.RawMessage, error) {
	d, nv, err := viewsDelta(prev, next, nil, now)
	if err != nil {
		return nil, err
	}
	before, after := holder(prev), holder(next)
	if !sameSeat(before, after) || (after != nil && prev.FEN != next.FEN) {
		mark := legalMovesMark{Before: before, After: after}
		if _, ok := d.Get("fen"); !ok && after != nil {
			mark.FEN = next.FEN
		}
		js, err := json.Marshal(mark)
		if err != nil {
			return nil, err
		}
		d = d.Set("legalMoves", js)
	}
	stored := make(Delta, 0, len(d))
	_, moved := d.Get(DeltaMove)
	n := len(next.Moves)
	for _, f := range d {
		switch {
		case f.Key == "version":
		case moved && f.Key == DeltaMove:
			js, err := json.Marshal(storedMove{Ply: n, UCI: next.Moves[n-1].UCI})
			if err != nil {
				return nil, err
			}
			stored = append(stored, DeltaField{Key: DeltaMove, Value: js})
		case moved && f.Key == "fen" && bytes.Equal(f.Value, quoted(next.FEN)) && next.FEN == next.Moves[n-1].FENAfter:
		case moved && f.Key == "turn" && nv.Turn == chess.Color(n&1):
		case moved && f.Key == "lastMove" && lastMoveDerivable(nv):
		default:
			stored = append(stored, f)
		}
	}
	return stored.MarshalJSON()
}

// keepUndoneMoves rewrites the stored deltas of the log's moves that a
// take-back removed from the move list (the plies after the list's new
// length) with their whole records, taken from the state before it.
func keepUndoneMoves(log []Change, prev *State, length int) error {
	for i, c := range log {
		if len(c.Delta) == 0 {
			continue
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(c.Delta, &fields); err != nil {
			return fmt.Errorf("game: stored delta of version %d: %w", c.Version, err)
		}
		js, ok := fields[DeltaMove]
		if !ok {
			continue
		}
		var m storedMove
		if err := json.Unmarshal(js, &m); err != nil {
			return fmt.Errorf("game: stored move of version %d: %w", c.Version, err)
		}
		if m.Ply <= length || m.FENAfter != "" || m.Ply > len(prev.Moves) || prev.Moves[m.Ply-1].UCI != m.UCI {
			continue
		}
		rec := prev.Moves[m.Ply-1]
		m.SAN, m.Color, m.At, m.FENAfter = rec.SAN, colorPtr(rec.Color), rec.At, rec.FENAfter
		whole, err := json.Marshal(m)
		if err != nil {
			return err
		}
		fields[DeltaMove] = whole
		d := make(Delta, 0, len(fields))
		for k, v := range fields {
			d = d.Set(k, v)
		}
		if log[i].Delta, err = d.MarshalJSON(); err != nil {
			return err
		}
	}
	return nil
}

func sameSeat(a, b *chess.Color) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func quoted(s string) []byte { return appendJSONString(nil, s) }

// appendJSONString appends s as a JSON string (as encoding/json writes it,
// without its HTML escaping).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// appendLegalMoves appends list as encoding/json writes it (a delta of
// the seat to move carries it on every move: without reflection it costs
// a third as much).
func appendLegalMoves(b []byte, list []LegalMove) []byte {
	if list == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i := range list {
		m := &list[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"from":`...)
		b = appendJSONString(b, m.From)
		b = append(b, `,"to":`...)
		b = appendJSONString(b, m.To)
		if m.Promotion != "" {
			b = append(b, `,"promotion":`...)
			b = appendJSONString(b, m.Promotion)
		}
		if m.Castle != "" {
			b = append(b, `,"castle":`...)
			b = appendJSONString(b, m.Castle)
		}
		b = append(b, `,"uci":`...)
		b = appendJSONString(b, m.UCI)
		b = append(b, `,"san":`...)
		b = appendJSONString(b, m.SAN)
		b = append(b, '}')
	}
	return append(b, ']')
}

// lastMoveDerivable reports whether the view's lastMove is what
// lastMoveOf makes of its last move (always, as ViewOf writes it).
func lastMoveDerivable(v *View) bool {
	n := len(v.Moves)
	return n > 0 && v.LastMove != nil && *v.LastMove == lastMoveOf(&v.Moves[n-1])
}

// lastMoveOf is the lastMove of a view whose last move is m.
func lastMoveOf(m *MoveRecord) LastMove {
	return LastMove{From: m.UCI[0:2], To: m.UCI[2:4], UCI: m.UCI, SAN: m.SAN, Color: m.Color}
}

// ErrNoDelta: the change log entry has no delta (the game's first version,
// a version older than the deltas the log keeps, or one stored before
// deltas existed); a client behind it needs the whole view.
var ErrNoDelta = errors.New("game: the change has no delta")

// DeltaFor is the delta of change c of s's log (c is s's version or an
// older one) for the viewer in seat (nil: a spectator): the stored delta
// with what it left out rebuilt (the version; for a move, the move, fen,
// turn and last move), and the viewer's legal moves (the list when the
// seat is to move after the version, null when it had them before and not
// now, absent otherwise). The human texts are left to the edge, as in
// ViewOf.
func (s *State) DeltaFor(c Change, seat *chess.Color) (Delta, error) {
	if len(c.Delta) == 0 {
		return nil, ErrNoDelta
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(c.Delta, &fields); err != nil {
		return nil, fmt.Errorf("game: stored delta of version %d: %w", c.Version, err)
	}
	d := make(Delta, 0, len(fields)+4)
	for key, value := range fields {
		if key != "legalMoves" && key != DeltaMove {
			d = d.Set(key, value)
		}
	}
	d = d.Set("version", strconv.AppendInt(nil, c.Version, 10))
	if js, ok := fields[DeltaMove]; ok {
		rec, err := s.storedMoveRecord(c.Version, js)
		if err != nil {
			return nil, err
		}
		d = d.Set(DeltaMove, appendMoveView(nil, &rec))
		if _, ok := d.Get("fen"); !ok {
			d = d.Set("fen", quoted(rec.FENAfter))
		}
		if _, ok := d.Get("turn"); !ok {
			d = d.Set("turn", quoted(rec.Color.Other().String()))
		}
		if _, ok := d.Get("lastMove"); !ok {
			last, err := json.Marshal(lastMoveOf(&rec))
			if err != nil {
				return nil, err
			}
			d = d.Set("lastMove", last)
		}
	}
	js, ok := fields["legalMoves"]
	if !ok || seat == nil {
		return d, nil
	}
	var mark legalMovesMark
	if err := json.Unmarshal(js, &mark); err != nil {
		return nil, fmt.Errorf("game: stored legal moves of version %d: %w", c.Version, err)
	}
	switch {
	case mark.After != nil && *mark.After == *seat&1:
		fen := mark.FEN
		if fen == "" {
			raw, _ := d.Get("fen")
			if err := json.Unmarshal(raw, &fen); err != nil {
				return nil, fmt.Errorf("game: stored fen of version %d: %w", c.Version, err)
			}
		}
		pos, err := chess.ParseFENVariant(fen, s.Options.Variant.chess())
		if err != nil {
			return nil, fmt.Errorf("game: stored position of version %d: %w", c.Version, err)
		}
		list := LegalMoves(pos)
		d = d.Set("legalMoves", appendLegalMoves(make([]byte, 0, 2+64*len(list)), list))
	case mark.Before != nil && *mark.Before == *seat&1:
		d = d.Set("legalMoves", json.RawMessage("null"))
	}
	return d, nil
}

// storedMoveRecord is the record of a stored delta's move: its own, or the
// move list's at its ply. A move the list no longer holds and the delta
// does not keep is ErrNoDelta.
func (s *State) storedMoveRecord(version int64, js json.RawMessage) (MoveRecord, error) {
	var m storedMove
	if err := json.Unmarshal(js, &m); err != nil || m.Ply < 1 || len(m.UCI) < 4 {
		return MoveRecord{}, fmt.Errorf("game: stored move of version %d: %q", version, js)
	}
	if m.FENAfter != "" && m.Color != nil {
		return MoveRecord{UCI: m.UCI, SAN: m.SAN, Color: *m.Color, At: m.At, FENAfter: m.FENAfter}, nil
	}
	if m.Ply > len(s.Moves) || s.Moves[m.Ply-1].UCI != m.UCI {
		return MoveRecord{}, ErrNoDelta
	}
	return s.Moves[m.Ply-1], nil
}

// DeltaBetween is the delta of version next for the viewer in seat, made
// from the viewer's two views of prev (the version before) and next read
// at now, the clock always: the delta of a version stored without one (by
// a writer older than deltas). DeltaFor gives the same from the log.
func DeltaBetween(prev, next *State, seat *chess.Color, now time.Time) (Delta, error) {
	if prev == nil || prev.Version != next.Version-1 || prev.GameID != next.GameID {
		return nil, ErrNoDelta
	}
	d, _, err := viewsDelta(prev, next, seat, now)
	return d, err
}

// viewsDelta is the difference of the viewer's views of prev and next read
// at now, with the clock always (it is read as of the version, its asOf,
// and a subscriber's copy was read earlier, when the version before came);
// it also returns the view of next.
func viewsDelta(prev, next *State, seat *chess.Color, now time.Time) (Delta, *View, error) {
	pv, err := ViewOf(prev, seat, now)
	if err != nil {
		return nil, nil, err
	}
	nv, err := ViewOf(next, seat, now)
	if err != nil {
		return nil, nil, err
	}
	d, err := DiffViews(pv, nv)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := d.Get("clock"); !ok {
		js, err := json.Marshal(nv.Clock)
		if err != nil {
			return nil, nil, err
		}
		d = d.Set("clock", js)
	}
	return d, nv, nil
}

// WithoutMoves is v without its move list and PGN (GET ?moves=false), a
// copy.
func (v *View) WithoutMoves() *View {
	out := *v
	out.Moves = nil
	if v.Result != nil {
		r := *v.Result
		r.PGN = ""
		out.Result = &r
	}
	return &out
}
