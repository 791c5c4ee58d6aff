package storedgame

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// Games for the tests, made through the reducer's own API.

// t0 is the creation time of test games.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// at returns t0 plus ms milliseconds.
func at(ms int64) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

const (
	white = chess.White
	black = chess.Black
)

// opts returns the default options changed by the given JSON object.
func opts(t testing.TB, js string) game.Options {
	t.Helper()
	var raw struct {
		Variant, TimeControl, DrawMode, ColorAssignment, Hints *string
		AutoQueen, DrawOffer                                   *bool
		Undo                                                   *string
	}
	if err := json.Unmarshal([]byte(js), &raw); err != nil {
		t.Fatalf("opts(%s): %v", js, err)
	}
	in := game.OptionsInput{Variant: raw.Variant, TimeControl: raw.TimeControl, DrawMode: raw.DrawMode,
		ColorAssignment: raw.ColorAssignment, Hints: raw.Hints, AutoQueen: raw.AutoQueen, DrawOffer: raw.DrawOffer}
	if raw.Undo != nil {
		in.Undo = &game.UndoInput{Text: *raw.Undo}
	}
	o, err := game.BuildOptions(in)
	if err != nil {
		t.Fatalf("BuildOptions(%s) = %v", js, err)
	}
	return o
}

// newGame creates a human-vs-human game, the host ("alice") White unless
// the options say otherwise, joined by "bob" at t0.
func newGame(t testing.TB, o game.Options) *game.State {
	t.Helper()
	if o.ColorAssignment == game.ColorsRandom {
		o.ColorAssignment = game.ColorsHostWhite
	}
	s, _, err := game.New(game.NewGame{GameID: "g1", Options: o, Host: game.Player{ID: "alice", Name: "Alice", TokenHash: "hash-alice"}, Seed: 7}, t0)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	return reduce(t, s, game.Join{Player: game.Player{ID: "bob", Name: "Bob", TokenHash: "hash-bob"}}, t0)
}

// reduce applies step and fails the test on a refusal.
func reduce(t testing.TB, s *game.State, step game.Step, now time.Time) *game.State {
	t.Helper()
	next, _, err := game.Reduce(s, step, now)
	if err != nil {
		t.Fatalf("Reduce(%T %+v) = %v", step, step, err)
	}
	return next
}

// act is a seat's action.
func act(by chess.Color, a game.Action) game.Act { return game.Act{By: by, Action: a} }

func move(uci string) game.Action {
	return game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}
}

// play plays UCI moves alternately starting with the side to move, one
// second apart starting at ms.
func play(t testing.TB, s *game.State, ms int64, ucis ...string) *game.State {
	t.Helper()
	for i, u := range ucis {
		s = reduce(t, s, act(s.Turn(), move(u)), at(ms+int64(i)*1000))
	}
	return s
}

// randomGame plays up to maxPlies random legal moves (1-3 s each, each
// with a request id) in a new game with options o.
func randomGame(t testing.TB, o game.Options, seed uint64, maxPlies int) *game.State {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	s, _, err := game.New(game.NewGame{GameID: "rg", Options: o, Host: game.Player{ID: "h", TokenHash: "x"}, Seed: seed}, t0)
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	s = reduce(t, s, game.Join{Player: game.Player{ID: "j", TokenHash: "y"}}, t0)
	ms := int64(0)
	for s.Phase == game.PhasePlaying && s.Ply() < maxPlies {
		ms += 1000 + rng.Int64N(2000)
		pos := s.Position()
		moves := pos.LegalMoves()
		u := pos.UCI(moves[rng.IntN(len(moves))])
		a := move(u)
		a.RequestID = "r" + u
		s = reduce(t, s, act(s.Turn(), a), at(ms))
	}
	return s
}

// longGame plays a game of exactly plies moves, every move sent with a
// request id (so both request logs are full): knights and rooks shuffle
// (drawMode fide, so repetitions only become claimable) and pawns advance
// now and then to reset the 75-move count. It is the game the reducer's
// tests have always used for sizes and benchmarks.
func longGame(t testing.TB, plies int) *game.State {
	t.Helper()
	s := newGame(t, opts(t, `{"drawMode":"fide","timeControl":"90+60"}`))
	rng := rand.New(rand.NewPCG(1, 2))
	ms := int64(0)
	for s.Ply() < plies {
		if s.Phase != game.PhasePlaying {
			t.Fatalf("long game ended at ply %d: %+v", s.Ply(), s.Result)
		}
		pos := s.Position()
		var quiet, candidates []chess.Move
		for _, m := range pos.LegalMoves() {
			child := *pos
			child.Play(m)
			repeated := 0
			for _, h := range s.History() {
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
		a := move(pos.UCI(pick))
		a.RequestID = fmt.Sprintf("%08x-4b5a-4978-8796-%012x", s.Ply(), s.Ply()*7919)
		s = reduce(t, s, act(s.Turn(), a), at(ms))
	}
	return s
}

// sampleStates returns games that use every part of the stored form and
// every header field.
func sampleStates(t testing.TB) map[string]*game.State {
	t.Helper()
	waiting, _, err := game.New(game.NewGame{GameID: "w", Options: opts(t, `{"variant":"chess960"}`), Host: game.Player{ID: "h", Name: "한글 이름", TokenHash: "th"}, Seed: 3,
		RematchOf: &game.PreviousGame{GameID: "old", HostColor: black}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	playing := newGame(t, opts(t, `{"timeControl":"perMove:60","drawMode":"fide","undo":"3"}`))
	playing = play(t, playing, 1000, "e2e4", "c7c5", "e4e5", "d7d5")
	playing = reduce(t, playing, act(white, game.Action{Type: game.ActionRequestUndo, RequestID: "id with spaces:and colons\n", RequestHash: "0123456789abcdef"}), at(9000))
	playing = reduce(t, playing, game.Presence{Seat: black, Connected: false}, at(9500))
	offered := play(t, newGame(t, game.DefaultOptions()), 1000, "d2d4")
	offered = reduce(t, offered, game.Presence{Seat: white, Connected: true, Stream: true}, at(2000))
	offered = reduce(t, offered, game.Presence{Seat: black, Connected: true, Stream: true}, at(2500))
	offered = reduce(t, offered, act(white, game.Action{Type: game.ActionOfferDraw, RequestID: "o1"}), at(3000))
	finished := play(t, newGame(t, game.DefaultOptions()), 1000, "f2f3", "e7e5", "g2g4")
	finished = reduce(t, finished, act(black, game.Action{Type: game.ActionMove, Move: game.MoveInput{SAN: "Qh4#"}, RequestID: "mate"}), at(9000))
	finished = reduce(t, finished, game.LinkRematch{Next: "next"}, at(9500))
	aborted := reduce(t, newGame(t, game.DefaultOptions()), game.Timeout{}, at(60000))

	o := game.DefaultOptionsFor(game.RoomIntermediate)
	o.ColorAssignment = game.ColorsHostWhite
	o.WaitingExpirySec = 120
	rated, _, err := game.New(game.NewGame{GameID: "rated", Options: o, Host: game.Player{ID: "pl_w", Name: "W", TokenHash: "tw", Bound: true, Rating: 1000}}, t0)
	if err != nil {
		t.Fatal(err)
	}
	rated = reduce(t, rated, game.Join{Player: game.Player{ID: "pl_b", Name: "B", TokenHash: "tb", Bound: true, Rating: 1200}}, t0)
	readyStep := rated
	rated = reduce(t, rated, act(white, game.Action{Type: game.ActionReady}), at(500))
	rated = reduce(t, rated, act(black, game.Action{Type: game.ActionReady}), at(600))
	countdown := rated
	rated = reduce(t, rated, game.Timeout{}, at(600+game.StartDelayMs))
	rated = play(t, rated, 4000, "f2f3", "e7e5", "g2g4")
	players := game.PerColor[game.PlayerRating]{{Rating: 1005, RatedGames: 2}, {Rating: 1190, RatedGames: 40}}
	rated = reduce(t, rated, game.Rated{Step: act(black, move("d8h4")), Players: players}, at(8000))

	// Correspondence, and a Fischer game whose clock after each move is
	// kept after take-backs (all of its moves, then one).
	days := play(t, newGame(t, opts(t, `{"timeControl":"days:3"}`)), 1000, "e2e4", "e7e5", "g1f3")
	takenBack := play(t, newGame(t, opts(t, `{"timeControl":"3+2","undo":"unlimited"}`)), 1000, "e2e4", "e7e5", "g1f3")
	takenBack = reduce(t, takenBack, act(white, game.Action{Type: game.ActionRequestUndo, Plies: 1}), at(5000))
	takenBack = reduce(t, takenBack, act(black, game.Action{Type: game.ActionRespondUndo, Accept: true}), at(6000))
	takenBack = play(t, takenBack, 9000, "b1c3")
	allTakenBack := play(t, newGame(t, opts(t, `{"timeControl":"3+2","undo":"unlimited"}`)), 1000, "e2e4")
	allTakenBack = reduce(t, allTakenBack, act(white, game.Action{Type: game.ActionRequestUndo, Plies: 1}), at(5000))
	allTakenBack = reduce(t, allTakenBack, act(black, game.Action{Type: game.ActionRespondUndo, Accept: true}), at(6000))

	private, _, err := game.New(game.NewGame{GameID: "priv", Options: game.DefaultOptions(), Host: game.Player{ID: "h", Name: "back\\slash and\nnewline", TokenHash: "th"},
		Invite: game.Invite{Mode: game.InvitePrivate, CodeHash: "code-hash"}, Seed: 9}, t0)
	if err != nil {
		t.Fatal(err)
	}
	reserved, _, err := game.New(game.NewGame{GameID: "res", Options: game.DefaultOptions(), Host: game.Player{ID: "h", TokenHash: "th"},
		Invite: game.Invite{Mode: game.InviteReserved, PlayerID: "pl_x", TokenHash: "old-seat"}, RematchOf: &game.PreviousGame{GameID: "old", HostColor: white}, Seed: 10}, t0)
	if err != nil {
		t.Fatal(err)
	}
	ai, _, err := game.New(game.NewGame{GameID: "ai", Options: opts(t, `{"colorAssignment":"hostWhite","timeControl":"perMove:30"}`), Host: game.Player{ID: "h", TokenHash: "th"}, AI: "hard", Seed: 11}, t0)
	if err != nil {
		t.Fatal(err)
	}
	ai = play(t, ai, 1000, "e2e4", "e7e5")
	ai = reduce(t, ai, game.Timeout{}, at(1000+1000+31_000)) // the human's period runs out once: an extension
	aiWhite, _, err := game.New(game.NewGame{GameID: "aiw", Options: opts(t, `{"colorAssignment":"hostBlack"}`), Host: game.Player{ID: "h", TokenHash: "th"}, AI: "easy", Seed: 12}, t0)
	if err != nil {
		t.Fatal(err)
	}
	custom, err := decodeStateJSON([]byte(`{"options":{},"players":{"white":"alice","black":"bob"},"startFen":"4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
		"moves":[],"phase":"playing","clock":{"remainingMs":{"white":600000,"black":600000},"turnStartedAt":1740830400000,
		"started":{"white":true,"black":true}},"createdAt":1740830400000}`))
	if err != nil {
		t.Fatal(err)
	}
	custom.GameID, custom.Version = "custom", 1
	custom = play(t, custom, 1000, "e1g1")
	away := newGame(t, opts(t, `{"timeControl":"none","hints":"off","autoQueen":true,"drawOffer":false,"undo":"unlimited"}`))
	away = play(t, away, 1000, "g1f3", "g8f6")
	away = reduce(t, away, game.Presence{Seat: white, Connected: false}, at(4000))

	return map[string]*game.State{
		"waiting 960": waiting, "playing with requests": playing, "draw offered": offered,
		"finished": finished, "aborted": aborted, "rated finished": rated, "private invite": private,
		"reserved rematch": reserved, "ai per-move extension": ai, "ai white": aiWhite, "disconnected": away,
		"custom start": custom, "ready step": readyStep, "countdown": countdown,
		"correspondence": days, "taken back": takenBack, "all taken back": allTakenBack,
		"long 960": randomGame(t, opts(t, `{"variant":"chess960","timeControl":"90+60"}`), 11, 300),
	}
}

// sortedNames returns the keys of a map of states in order.
func sortedNames(m map[string]*game.State) []string {
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// assertSameState fails when two states differ (in anything, the live
// position and the repetition history included).
func assertSameState(t testing.TB, got, want *game.State, context string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		t.Fatalf("%s: state differs\n got: %s\nwant: %s", context, gj, wj)
	}
}
