package game

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// Test helpers shared by the test files.

// t0 is the creation time of test games.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus ms milliseconds.
func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

const (
	white = chess.White
	black = chess.Black
)

// opts returns the default options changed by the given JSON object (the
// request decoding is the edge's; tests read the object plainly).
func opts(t testing.TB, js string) Options {
	t.Helper()
	in, err := optsInput(js)
	if err != nil {
		t.Fatalf("opts(%s): %v", js, err)
	}
	o, err := BuildOptions(in)
	if err != nil {
		t.Fatalf("BuildOptions(%s) = %v", js, err)
	}
	return o
}

// optsInput reads an options object plainly into an OptionsInput.
func optsInput(js string) (OptionsInput, error) {
	var raw struct {
		Rules, Room                                            *string
		Variant, TimeControl, DrawMode, ColorAssignment, Hints *string
		AutoQueen, DrawOffer                                   *bool
		Undo                                                   json.RawMessage
		FirstMoveSec, IdleLimitSec, DisconnectGraceSec         *int64
	}
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		return OptionsInput{}, err
	}
	in := OptionsInput{Rules: raw.Rules, Room: raw.Room, Variant: raw.Variant, TimeControl: raw.TimeControl, DrawMode: raw.DrawMode,
		ColorAssignment: raw.ColorAssignment, Hints: raw.Hints, AutoQueen: raw.AutoQueen, DrawOffer: raw.DrawOffer,
		FirstMoveSec: raw.FirstMoveSec, IdleLimitSec: raw.IdleLimitSec, DisconnectGraceSec: raw.DisconnectGraceSec}
	if len(raw.Undo) > 0 {
		var u UndoInput
		if json.Unmarshal(raw.Undo, &u.Number) == nil {
			u.IsNumber = true
		} else if err := json.Unmarshal(raw.Undo, &u.Text); err != nil {
			return OptionsInput{}, err
		}
		in.Undo = &u
	}
	return in, nil
}

// newGame creates a human-vs-human game with the host ("alice") as White
// unless the options say otherwise, joined by "bob" at t0.
func newGame(t testing.TB, o Options) *State {
	t.Helper()
	if o.ColorAssignment == ColorsRandom {
		o.ColorAssignment = ColorsHostWhite
	}
	s, _, err := New(NewGame{GameID: "g1", Options: o, Host: Player{ID: "alice", Name: "Alice", TokenHash: "hash-alice"}, Seed: 7}, t0)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	s, _, err = joinGame(s, Player{ID: "bob", Name: "Bob", TokenHash: "hash-bob"}, t0)
	if err != nil {
		t.Fatalf("Join = %v", err)
	}
	return s
}

func moveAction(uci string) Action { return Action{Type: ActionMove, Move: MoveInput{UCI: uci}} }

// mustApply applies a and fails the test on error.
func mustApply(t testing.TB, s *State, by chess.Color, a Action, now time.Time) (*State, []Event) {
	t.Helper()
	next, events, err := Apply(s, by, a, now)
	if err != nil {
		t.Fatalf("Apply(%s %v by %s) = %v", a.Type, a.Move, by, err)
	}
	return next, events
}

// play plays UCI moves alternately starting with the side to move, one
// second apart starting at ms.
func play(t testing.TB, s *State, ms int64, ucis ...string) *State {
	t.Helper()
	for i, u := range ucis {
		s, _ = mustApply(t, s, s.Turn(), moveAction(u), at(ms+int64(i)*1000))
	}
	return s
}

// ruleCode returns the Code of a *RuleError, or 0.
func ruleCode(err error) Code {
	if re, ok := err.(*RuleError); ok {
		return re.Code
	}
	return 0
}

func hasEvent(events []Event, typ EventType) bool {
	for _, e := range events {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// randomMove returns a random legal move of the current position as UCI,
// or "" when there is none.
func randomMove(t testing.TB, s *State, rng *rand.Rand) string {
	t.Helper()
	pos := s.Position()
	moves := pos.LegalMoves()
	if len(moves) == 0 {
		return ""
	}
	return pos.UCI(moves[rng.IntN(len(moves))])
}

// randomGame plays up to maxPlies random moves (1-3 s each) in a new game
// with options o and returns every state on the way.
func randomGame(t testing.TB, o Options, seed uint64, maxPlies int) []*State {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	o.ColorAssignment = ColorsRandom
	s, _, err := New(NewGame{GameID: "rg", Options: o, Host: Player{ID: "h", TokenHash: "x"}, Seed: seed}, t0)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	states := []*State{s}
	s, _, err = joinGame(s, Player{ID: "j", TokenHash: "y"}, t0)
	if err != nil {
		t.Fatalf("Join = %v", err)
	}
	states = append(states, s)
	ms := int64(0)
	for s.Phase == PhasePlaying && s.Ply() < maxPlies {
		ms += 1000 + rng.Int64N(2000)
		u := randomMove(t, s, rng)
		s, _ = mustApply(t, s, s.Turn(), Action{Type: ActionMove, Move: MoveInput{UCI: u}, RequestID: "r" + u}, at(ms))
		states = append(states, s)
	}
	return states
}

// unlimitedClock returns options with a clock that never runs out in a
// random game of a few hundred seconds per side.
func unlimitedClock(t testing.TB, variant string) Options {
	return opts(t, `{"timeControl":"90+60","variant":"`+variant+`"}`)
}

// assertSameState fails when two states differ.
func assertSameState(t testing.TB, got, want *State, context string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("%s: state differs\n got: %s\nwant: %s", context, gj, wj)
	}
}

// gameFromFEN returns a playing game (alice White, bob Black) that starts
// from fen, which must have White to move, with both first moves counted
// as made so the main clocks run. A game of the yeoul rules goes through
// its ready step first and is played from 4 s on.
func gameFromFEN(t testing.TB, fen string, o Options) *State {
	t.Helper()
	s := newGame(t, o)
	if s.Phase == PhaseReady {
		s = readyBoth(t, s, 0) // playing from 4 s on
	}
	pos, err := chess.ParseFENVariant(fen, o.Variant.chess())
	if err != nil {
		t.Fatalf("ParseFENVariant(%q) = %v", fen, err)
	}
	if pos.Turn() != chess.White {
		t.Fatalf("gameFromFEN(%q): White must be to move", fen)
	}
	s.StartFEN = pos.FEN()
	s.FEN = s.StartFEN
	s.pos = *pos
	s.hashes = []uint64{pos.Hash()}
	s.Clock.Started = PerColor[bool]{true, true}
	return s
}

func newTestRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

// The transitions one at a time, each committed as its own version: the
// tests' shorthand for what Reduce does with one step, without applying a
// due timeout first (so a test can see CodeTimeExpired).

// Apply performs an action and commits it.
func Apply(s *State, by chess.Color, a Action, now time.Time) (*State, []Event, error) {
	next, events, err := s.act(by, a, now)
	if err != nil {
		return nil, nil, err
	}
	if next == s {
		return s, nil, nil // nothing changed (a ready again)
	}
	var req *Act
	if a.RequestID != "" {
		req = &Act{By: by, Action: a}
	}
	next, err = s.commit(next, req, events, now)
	return next, events, err
}

// ApplyTimeout applies a due timeout and commits it (false: none due).
func ApplyTimeout(s *State, now time.Time) (*State, []Event, bool) {
	next, events, ok := s.timeout(now)
	if !ok {
		return s, nil, false
	}
	next, err := s.commit(next, nil, events, now)
	if err != nil {
		panic(err)
	}
	return next, events, true
}

// SetPresence reports a seat's presence as its app does over HTTP (POST
// presence, a sign of life) and commits it (false: no change).
func SetPresence(s *State, c chess.Color, connected bool, now time.Time) (*State, []Event, bool) {
	return ReportPresence(s, Presence{Seat: c, Connected: connected}, now)
}

// StreamPresence reports that a stream connection of the seat opened
// (connected) or that its last one closed, and commits it.
func StreamPresence(s *State, c chess.Color, connected bool, now time.Time) (*State, []Event, bool) {
	return ReportPresence(s, Presence{Seat: c, Connected: connected, Stream: true}, now)
}

// ReportPresence applies p and commits it (false: no change).
func ReportPresence(s *State, p Presence, now time.Time) (*State, []Event, bool) {
	next, events := s.setPresence(p, now)
	if next == s {
		return s, nil, false
	}
	next, err := s.commit(next, nil, events, now)
	if err != nil {
		panic(err)
	}
	return next, events, true
}

// joinGame seats p and commits it.
func joinGame(s *State, p Player, now time.Time) (*State, []Event, error) {
	next, events, err := s.join(Join{Player: p}, now)
	if err != nil {
		return nil, nil, err
	}
	next, err = s.commit(next, nil, events, now)
	return next, events, err
}

// linkRematchGame links the rematch and commits it.
func linkRematchGame(s *State, nextGameID string) (*State, []Event, error) {
	next, events, err := s.linkRematch(nextGameID)
	if err != nil {
		return nil, nil, err
	}
	next, err = s.commit(next, nil, events, t0)
	return next, events, err
}

// repetitionCount is how often the position with repetition key key has
// occurred in the game so far.
func repetitionCount(s *State, key string) int {
	n := 0
	pos, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		panic(err)
	}
	if pos.RepetitionKey() == key {
		n++
	}
	for _, m := range s.Moves {
		mv, err := pos.ParseUCI(m.UCI)
		if err != nil {
			panic(err)
		}
		pos.Play(mv)
		if pos.RepetitionKey() == key {
			n++
		}
	}
	return n
}

// repetitionKey returns the first four fields of a FEN (the repetition
// key of the position it describes).
func repetitionKey(fen string) string {
	f := strings.Fields(fen)
	if len(f) < 4 {
		return fen
	}
	return strings.Join(f[:4], " ")
}

// repetitionTable counts every position of the game by repetition key, the
// rule's own definition, from a replay of the moves.
func repetitionTable(s *State) map[string]int {
	pos, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		panic(err)
	}
	table := map[string]int{pos.RepetitionKey(): 1}
	for _, m := range s.Moves {
		mv, err := pos.ParseUCI(m.UCI)
		if err != nil {
			panic(err)
		}
		pos.Play(mv)
		table[pos.RepetitionKey()]++
	}
	return table
}

// readyBoth sends ready from both seats of a game in its ready step, white
// at ms and black a second later, and returns the game as it starts
// (StartDelayMs after the second ready; a Timeout step commits the start).
func readyBoth(t testing.TB, s *State, ms int64) *State {
	t.Helper()
	for i, c := range []chess.Color{chess.White, chess.Black} {
		if s.Ready[c] {
			continue
		}
		s, _ = mustApply(t, s, c, Action{Type: ActionReady}, at(ms+int64(i)*1000))
	}
	if s.Clock.StartsAt == 0 {
		t.Fatalf("both ready but no start time: %+v", s.Ready)
	}
	next, _, err := Reduce(s, Timeout{}, time.UnixMilli(s.Clock.StartsAt))
	if err != nil || next.Phase != PhasePlaying {
		t.Fatalf("start at %d: phase %s, %v", s.Clock.StartsAt, next.Phase, err)
	}
	return next
}

// ratedPlayers are two registered players for rated-room games.
var ratedPlayers = PerColor[Player]{
	{ID: "pl_w", Name: "W", TokenHash: "tw", Bound: true, Rating: 1000},
	{ID: "pl_b", Name: "B", TokenHash: "tb", Bound: true, Rating: 1200},
}

// newRatedGame creates a game of room (rated) with the options of js over
// the room's defaults, hosted by ratedPlayers' White and joined by Black at
// t0: the game is in its ready step.
func newRatedGame(t testing.TB, room Room, js string) *State {
	t.Helper()
	in, err := optsInput(js)
	if err != nil {
		t.Fatal(err)
	}
	r := string(room)
	in.Room = &r
	o, err := BuildOptions(in)
	if err != nil {
		t.Fatalf("BuildOptions(%s in %s) = %v", js, room, err)
	}
	o.ColorAssignment = ColorsHostWhite
	s, _, err := New(NewGame{GameID: "g", Options: o, Host: ratedPlayers[chess.White]}, t0)
	if err != nil {
		t.Fatal(err)
	}
	s, _, err = joinGame(s, ratedPlayers[chess.Black], t0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// longGame plays a game of exactly plies moves with every move sent with a
// request id (so both request logs are full): knights and rooks shuffle
// (drawMode fide, so repetitions only become claimable) and pawns advance
// now and then to reset the 75-move count. storedgame's tests play the
// same game from outside the package for the stored form's sizes.
func longGame(t testing.TB, plies int) *State {
	t.Helper()
	s := newGame(t, opts(t, `{"drawMode":"fide","timeControl":"90+60"}`))
	rng := rand.New(rand.NewPCG(1, 2))
	ms := int64(0)
	for s.Ply() < plies {
		if s.Phase != PhasePlaying {
			t.Fatalf("long game ended at ply %d: %+v", s.Ply(), s.Result)
		}
		pos := s.Position()
		var quiet, candidates []chess.Move
		for _, m := range pos.LegalMoves() {
			child := *pos
			child.Play(m)
			repeated := 0
			for _, h := range s.hashes {
				if h == child.Hash() {
					repeated++
				}
			}
			if child.Status() != chess.StatusPlaying || repeated >= 2 || child.HalfmoveClock() >= 140 {
				continue
			}
			candidates = append(candidates, m)
			if pos.PieceAt(m.To()) == chess.NoPiece && (pos.HalfmoveClock() < 100 || pos.PieceAt(m.From()).Type() == chess.Pawn) {
				quiet = append(quiet, m)
			}
		}
		if len(quiet) > 0 {
			candidates = quiet
		}
		if len(candidates) == 0 {
			t.Fatalf("long game stuck at ply %d: %s", s.Ply(), s.FEN)
		}
		pick := candidates[rng.IntN(len(candidates))]
		ms += 500 + rng.Int64N(1000)
		id := fmt.Sprintf("%08x-4b5a-4978-8796-%012x", s.Ply(), s.Ply()*7919)
		s, _ = mustApply(t, s, s.Turn(), Action{Type: ActionMove, Move: MoveInput{UCI: pos.UCI(pick)}, RequestID: id}, at(ms))
	}
	return s
}
