package game

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// The delta of every version, completed for each viewer, turns that
// viewer's view of the version before into its view of the version: every
// change of every scripted game (FuzzApply, TestRandomGames and the other
// scripts) is checked by checkDeltas.

// viewers are the three kinds of viewer of a game.
var viewers = []*chess.Color{nil, colorPtr(chess.White), colorPtr(chess.Black)}

// checkDeltas checks next's change log entry against prev for every viewer:
// applying the stored delta (DeltaFor) to the viewer's view of prev gives
// its view of next, and so does the delta made from the two views
// (DeltaBetween, for one viewer in turn).
func checkDeltas(t *testing.T, prev, next *State, now time.Time) {
	t.Helper()
	c, ok := next.LastChange()
	if !ok {
		t.Fatalf("version %d has no change log entry", next.Version)
	}
	for _, seat := range viewers {
		pv, err := ViewOf(prev, seat, now)
		if err != nil {
			t.Fatal(err)
		}
		nv, err := ViewOf(next, seat, now)
		if err != nil {
			t.Fatal(err)
		}
		want := viewMap(t, nv)
		checkSame(t, pv, nv)
		d, err := next.DeltaFor(c, seat)
		if err != nil {
			t.Fatalf("version %d: DeltaFor(%v): %v", next.Version, seat, err)
		}
		if got := ApplyDeltaJSON(t, viewMap(t, pv), d); !reflect.DeepEqual(got, want) {
			t.Fatalf("version %d, viewer %v: the stored delta %s gives\n%s\nwant\n%s", next.Version, seatName(seat), deltaJSON(t, d), mustJSON(t, got), mustJSON(t, want))
		}
		// The deltas made from two views (DeltaBetween, on DiffViews) for
		// one viewer a version, in turn: the stored ones are checked for
		// all three.
		if seat == viewers[next.Version%int64(len(viewers))] {
			between, err := DeltaBetween(prev, next, seat, now)
			if err != nil {
				t.Fatal(err)
			}
			if got := ApplyDeltaJSON(t, viewMap(t, pv), between); !reflect.DeepEqual(got, want) {
				t.Fatalf("version %d, viewer %v: DeltaBetween %s does not rebuild the view", next.Version, seatName(seat), deltaJSON(t, between))
			}
		}
		if _, ok := d.Get("moves"); ok {
			t.Fatalf("version %d: the delta carries the move list", next.Version)
		}
		if raw, ok := d.Get("legalMoves"); ok && string(raw) != "null" && (seat == nil || *seat != next.Turn()) {
			t.Fatalf("version %d: viewer %v, not to move, gets legal moves", next.Version, seatName(seat))
		}
	}
}

// checkLogDeltas checks every delta still in final's change log against
// the states the game went through: each rebuilds its version's view from
// the one before, read from final (after any take-back since).
func checkLogDeltas(t *testing.T, final *State, history map[int64]*State) {
	t.Helper()
	kept := 0
	for _, c := range final.Changes {
		if len(c.Delta) == 0 {
			continue
		}
		kept++
		prev, next := history[c.Version-1], history[c.Version]
		if prev == nil || next == nil {
			continue // a version made before the script started
		}
		for _, seat := range viewers {
			now := time.UnixMilli(c.At)
			pv, _ := ViewOf(prev, seat, now)
			nv, _ := ViewOf(next, seat, now)
			d, err := final.DeltaFor(c, seat)
			if err != nil {
				t.Fatalf("version %d read at %d: %v", c.Version, final.Version, err)
			}
			if got, want := ApplyDeltaJSON(t, viewMap(t, pv), d), viewMap(t, nv); !reflect.DeepEqual(got, want) {
				t.Fatalf("version %d read at version %d, viewer %s: the delta %s does not rebuild the view", c.Version, final.Version, seatName(seat), deltaJSON(t, d))
			}
		}
	}
	if n := len(final.Changes); kept > ChangeLogDeltas || (n > ChangeLogDeltas && kept < ChangeLogDeltas) && final.Version > ChangeLogDeltas+1 {
		t.Fatalf("%d of %d log entries keep a delta; want the newest %d", kept, n, ChangeLogDeltas)
	}
}

func seatName(seat *chess.Color) string {
	if seat == nil {
		return "spectator"
	}
	return seat.String()
}

func viewMap(t testing.TB, v *View) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(mustJSON(t, v), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func deltaJSON(t testing.TB, d Delta) string {
	b, err := d.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ApplyDeltaJSON applies a delta to a view's JSON as a client does (SPEC
// §16.1): replace each named field; drop the moves past movesLength;
// append move.
func ApplyDeltaJSON(t testing.TB, view map[string]any, d Delta) map[string]any {
	t.Helper()
	var delta map[string]any
	if err := json.Unmarshal([]byte(deltaJSON(t, d)), &delta); err != nil {
		t.Fatalf("delta is not JSON: %v", err)
	}
	out := make(map[string]any, len(view))
	for k, v := range view {
		out[k] = v
	}
	moves, _ := out["moves"].([]any)
	moves = slices.Clone(moves)
	for k, v := range delta {
		switch k {
		case DeltaMovesLength:
			n := int(v.(float64))
			if n > len(moves) {
				t.Fatalf("movesLength %d past the %d moves", n, len(moves))
			}
			moves = moves[:n]
		case DeltaMove:
		default:
			out[k] = v
		}
	}
	if m, ok := delta[DeltaMove]; ok {
		moves = append(moves, m)
	}
	if moves == nil {
		moves = []any{}
	}
	out["moves"] = moves
	return out
}

func TestViewFieldsCoverTheView(t *testing.T) {
	var keys []string
	typ := reflect.TypeFor[View]()
	for i := range typ.NumField() {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		keys = append(keys, name)
	}
	var listed []string
	for _, f := range viewFields {
		listed = append(listed, f.key)
	}
	if !slices.Equal(keys, listed) {
		t.Errorf("viewFields lists %v; View has %v (in this order)", listed, keys)
	}
}

// checkSame: viewFields' typed comparisons agree with the fields' JSON,
// for the two views of every version the tests make.
func checkSame(t *testing.T, a, b *View) {
	t.Helper()
	for _, f := range viewFields {
		if f.same == nil {
			continue
		}
		x, y := mustJSON(t, f.get(a)), mustJSON(t, f.get(b))
		if f.same(a, b) != bytes.Equal(x, y) {
			t.Fatalf("viewFields %s: same = %v for %s and %s", f.key, f.same(a, b), x, y)
		}
	}
}

// TestViewFieldComparisonsCoverTheTypes: the typed comparisons name every
// field of the types they look into; a field added to one of them must be
// compared too (samePlayer, sameClock, the pending and rematch entries).
func TestViewFieldComparisonsCoverTheTypes(t *testing.T) {
	for _, tt := range []struct {
		typ    reflect.Type
		fields int
	}{
		{reflect.TypeFor[PlayerView](), 6},
		{reflect.TypeFor[PresenceView](), 2},
		{reflect.TypeFor[ClockView](), 7},
		{reflect.TypeFor[PendingView](), 2},
		{reflect.TypeFor[RematchView](), 2},
	} {
		if n := tt.typ.NumField(); n != tt.fields {
			t.Errorf("%s has %d fields; viewFields compares %d (update its comparison)", tt.typ, n, tt.fields)
		}
	}
	// The pointed-to values compared with == must stay comparable.
	for _, typ := range []reflect.Type{reflect.TypeFor[LastMove](), reflect.TypeFor[UndoRequest](), reflect.TypeFor[DrawOfferView](), reflect.TypeFor[LegalMove]()} {
		if !typ.Comparable() {
			t.Errorf("%s is not comparable", typ)
		}
	}
}

// TestDeltaOfAMove shows a move's delta as the stream sends it: the move,
// the position and clock after it, the deadline, and the legal moves only
// for the seat now to move (null for the one that had them).
func TestDeltaOfAMove(t *testing.T) {
	s := newGame(t, DefaultOptions())
	next := play(t, s, 1000, "e2e4")
	c, _ := next.LastChange()
	mover, err := next.DeltaFor(c, colorPtr(white))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range mover {
		keys = append(keys, f.Key)
	}
	want := []string{"version", "fen", "turn", DeltaMove, "lastMove", "clock", "deadline", "legalMoves"}
	if !slices.Equal(keys, want) {
		t.Errorf("delta keys %v; want %v (%s)", keys, want, deltaJSON(t, mover))
	}
	if lm, _ := mover.Get("legalMoves"); string(lm) != "null" {
		t.Errorf("the mover's legalMoves = %s; want null", lm)
	}
	opp, _ := next.DeltaFor(c, colorPtr(black))
	if lm, _ := opp.Get("legalMoves"); len(lm) < 100 {
		t.Errorf("the side to move's legalMoves = %s; want the list", lm)
	}
	spec, _ := next.DeltaFor(c, nil)
	if _, ok := spec.Get("legalMoves"); ok {
		t.Error("a spectator's delta has legalMoves")
	}
	move, _ := mover.Get(DeltaMove)
	if got := string(move); got != `{"uci":"e2e4","san":"e4","from":"e2","to":"e4","color":"white","at":1740830401000,"fenAfter":"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"}` {
		t.Errorf("move = %s", got)
	}
}

// TestDeltaSizeDoesNotGrowWithTheGame: the stored delta of a move late in a
// 1,000-ply game is as small as one early in it.
func TestDeltaSizeDoesNotGrowWithTheGame(t *testing.T) {
	s := longGame(t, 1000)
	longest := 0
	for _, c := range s.Changes {
		longest = max(longest, len(c.Delta))
	}
	if longest > 1024 {
		t.Errorf("a stored delta at ply 1,000 has %d bytes; want ≤ 1 KB", longest)
	}
}

func TestDiffViewsRefusesTwoMoves(t *testing.T) {
	s := play(t, newGame(t, DefaultOptions()), 1000, "e2e4", "e7e5")
	a, _ := ViewOf(s, nil, at(5000))
	b := *a
	a.Moves = a.Moves[:0]
	if _, err := DiffViews(a, &b); err == nil {
		t.Error("a delta of two added moves was made")
	}
}

// TestTakeBackDelta: a take-back's delta shortens the move list, and the
// deltas of the moves it removed still rebuild their versions (they keep
// the records the list no longer has).
func TestTakeBackDelta(t *testing.T) {
	o := DefaultOptions()
	o.Undo = 1
	s := newGame(t, o)
	history := map[int64]*State{s.Version: s}
	for i, uci := range []string{"e2e4", "e7e5", "g1f3"} {
		s, _ = mustApply(t, s, chess.Color(i&1), moveAction(uci), at(int64(1000*(i+1))))
		history[s.Version] = s
	}
	s, _ = mustApply(t, s, black, Action{Type: ActionRequestUndo, Plies: 2}, at(4000))
	history[s.Version] = s
	prev := s
	s, _ = mustApply(t, s, white, Action{Type: ActionRespondUndo, Accept: true}, at(5000))
	history[s.Version] = s
	checkDeltas(t, prev, s, at(5000))
	s, _ = mustApply(t, s, black, moveAction("b8c6"), at(6000))
	history[s.Version] = s
	checkLogDeltas(t, s, history)
	c := s.Changes[len(s.Changes)-2]
	d, _ := s.DeltaFor(c, nil)
	if n, ok := d.Get(DeltaMovesLength); !ok || mustAtoi(t, string(n)) != 1 {
		t.Errorf("take-back delta %s; want movesLength 1", deltaJSON(t, d))
	}
}

func mustAtoi(t *testing.T, s string) int {
	var n int
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeltaForWithoutDelta(t *testing.T) {
	s := newGame(t, DefaultOptions())
	first := s.Changes[0]
	if _, err := s.DeltaFor(first, nil); err != ErrNoDelta {
		t.Errorf("DeltaFor of the first version = %v; want ErrNoDelta", err)
	}
}

// BenchmarkSubscriberMessage300 is the work of telling one subscriber (the
// seat to move, with its legal moves) of a move at ply 300: the delta it
// gets now (DeltaFor, then its JSON) against the whole view it got before
// deltas (ViewOf, then its JSON).
//
//	go test -run '^$' -bench SubscriberMessage300 -benchtime 3000x -cpu 1 ./shared/game
func BenchmarkSubscriberMessage300(b *testing.B) {
	s := longGame(b, 300)
	c, _ := s.LastChange()
	seat := s.Turn()
	now := time.UnixMilli(c.At)
	b.Run("delta", func(b *testing.B) {
		b.ReportAllocs()
		size := 0
		for range b.N {
			d, err := s.DeltaFor(c, &seat)
			if err != nil {
				b.Fatal(err)
			}
			js, err := d.MarshalJSON()
			if err != nil {
				b.Fatal(err)
			}
			size = len(js)
		}
		b.ReportMetric(float64(size), "bytes")
	})
	b.Run("view", func(b *testing.B) {
		b.ReportAllocs()
		size := 0
		for range b.N {
			v, err := ViewOf(s, &seat, now)
			if err != nil {
				b.Fatal(err)
			}
			js, err := json.Marshal(v)
			if err != nil {
				b.Fatal(err)
			}
			size = len(js)
		}
		b.ReportMetric(float64(size), "bytes")
	})
}

// BenchmarkVersionDelta is what a commit adds to make its version's delta
// (the spectators' two views, their difference, its stored form), at ply
// 300 and 1,000.
//
//	go test -run '^$' -bench VersionDelta -benchtime 3000x -cpu 1 ./shared/game
func BenchmarkVersionDelta(b *testing.B) {
	for _, plies := range []int{300, 1000} {
		s := longGame(b, plies)
		pos := s.Position()
		next, _, err := Reduce(s, Act{By: s.Turn(), Action: moveAction(pos.UCI(pos.LegalMoves()[0]))}, time.UnixMilli(s.Clock.TurnStartedAt+1500))
		if err != nil {
			b.Fatal(err)
		}
		now := time.UnixMilli(s.Clock.TurnStartedAt + 1500)
		b.Run(fmt.Sprintf("ply%d", plies), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := versionDelta(s, next, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAppendLegalMovesIsJSON: the legal moves a delta carries are written
// by hand; they must be the bytes encoding/json writes, over random games
// of both variants (promotions, castling of both kinds, en passant come up).
func TestAppendLegalMovesIsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	positions := 0
	for g := range 40 {
		var pos *chess.Position
		var err error
		if g%2 == 0 {
			pos, err = chess.ParseFEN(chess.StartFEN)
		} else {
			pos, err = chess.Chess960Start(rng.IntN(960))
		}
		if err != nil {
			t.Fatal(err)
		}
		for range 200 {
			list := LegalMoves(pos)
			want, err := json.Marshal(list)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendLegalMoves(nil, list); !bytes.Equal(got, want) {
				t.Fatalf("%s:\n got %s\nwant %s", pos.FEN(), got, want)
			}
			positions++
			moves := pos.LegalMoves()
			if len(moves) == 0 {
				break
			}
			pos.Play(moves[rng.IntN(len(moves))])
		}
	}
	if got := appendLegalMoves(nil, nil); string(got) != "null" {
		t.Errorf("appendLegalMoves(nil) = %s; want null", got)
	}
	t.Logf("%d positions", positions)
}

// TestPerColorJSON: PerColor writes {"white": …, "black": …} with each
// value as encoding/json writes it, on its fast paths and off them.
func TestPerColorJSON(t *testing.T) {
	ref := func(w, b any) string {
		x, _ := json.Marshal(w)
		y, _ := json.Marshal(b)
		return `{"white":` + string(x) + `,"black":` + string(y) + `}`
	}
	name := "<&\u2028>"
	for _, tt := range []struct {
		v    json.Marshaler
		want string
	}{
		{PerColor[int64]{-9_007_199_254_740_993, 0}, ref(int64(-9_007_199_254_740_993), int64(0))},
		{PerColor[int]{3, -1}, ref(3, -1)},
		{PerColor[bool]{true, false}, ref(true, false)},
		{PerColor[[]string]{nil, {}}, ref([]string(nil), []string{})},
		{PerColor[[]string]{{"q", `"\`}, {name}}, ref([]string{"q", `"\`}, []string{name})},
		{PerColor[*PlayerView]{nil, {Name: name}}, ref((*PlayerView)(nil), &PlayerView{Name: name})},
	} {
		got, err := json.Marshal(tt.v)
		if err != nil || string(got) != tt.want {
			t.Errorf("%#v: %s, %v; want %s", tt.v, got, err, tt.want)
		}
	}
}
