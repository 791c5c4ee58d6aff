package game

import (
	"errors"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// FuzzApply drives a game with random actions from random seats at random
// times (moves, bad moves, requests, answers, resignations, timeouts,
// presence changes) and checks after every step that nothing panics and the
// invariants hold, among them that the state restores from what a stored
// form keeps of it (storedParts; the stored form itself is fuzzed in
// shared/game/storedgame).
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 0, 1, 5, 0, 2, 7, 0, 3, 1, 0, 9, 200, 4, 0, 1})
	f.Add([]byte{0x5a, 3, 1, 0, 3, 0, 0, 4, 1, 0, 5, 0, 0, 6, 1, 0, 10, 0, 0, 11, 0, 0})
	f.Add([]byte{0xff, 0, 0, 0, 0, 1, 1, 0, 2, 2, 12, 0, 250, 13, 1, 250, 14, 0, 250})
	f.Add([]byte{0x21, 7, 0, 1, 8, 1, 1, 0, 0, 30, 0, 1, 30, 9, 0, 0})
	f.Fuzz(runScript)
}

// FuzzApplyRooms is FuzzApply for the games of SPEC §16.3 and §16.5: the
// yeoul rules (with their ready step) and correspondence, with ready among
// the operations.
func FuzzApplyRooms(f *testing.F) {
	f.Add([]byte{0x00, 11, 7, 0, 11, 6, 0, 12, 0, 5, 0, 0, 1, 1, 1, 1})
	f.Add([]byte{0x03, 11, 6, 1, 11, 7, 1, 12, 0, 4, 0, 3, 1, 14, 0, 130, 12, 0, 255})
	f.Add([]byte{0x45, 11, 6, 0, 12, 0, 5, 0, 0, 1, 1, 0, 1, 12, 1, 255, 12, 0, 255})
	f.Add([]byte{0x82, 11, 6, 0, 0, 0, 1, 9, 0, 0, 7, 1, 0, 12, 0, 200})
	f.Fuzz(func(t *testing.T, script []byte) { runScriptOn(t, script, fuzzRoomGame, fuzzRoomStep, func(*State) {}) })
}

func runScript(t *testing.T, script []byte) { runScriptWith(t, script, func(*State) {}) }

// runScriptWith runs a script of FuzzApply's games (fuzzGame, fuzzStep).
func runScriptWith(t *testing.T, script []byte, final func(*State)) {
	runScriptOn(t, script, fuzzGame, fuzzStep, final)
}

// stepFunc performs one scripted operation.
type stepFunc func(t *testing.T, s *State, op byte, by chess.Color, arg byte, now time.Time) (*State, bool, error)

// runScriptOn runs a script: the first byte makes the game (newGame), then
// each three bytes are an operation (step), its argument and a wait. final
// receives the last state.
func runScriptOn(t *testing.T, script []byte, newGame func(*testing.T, byte) *State, step stepFunc, final func(*State)) {
	{
		if len(script) == 0 {
			return
		}
		s := newGame(t, script[0])
		history := map[int64]*State{s.Version: s}
		defer func() {
			checkLogDeltas(t, s, history)
			final(s)
		}()
		now := t0.UnixMilli()
		for i := 1; i+2 < len(script) && i < 1800; i += 3 {
			op, arg, wait := script[i], script[i+1], script[i+2]
			now += int64(wait) * 700
			by := chess.Color(arg & 1)
			before := s.clone()
			next, changed, err := step(t, s, op, by, arg, time.UnixMilli(now))
			assertSameState(t, s, before, "input state after a step")
			if err != nil {
				var ie *InputError
				var re *RuleError
				if !errors.As(err, &ie) && !errors.As(err, &re) {
					t.Fatalf("step %d: unexpected error type %T: %v", i, err, err)
				}
				if s.Phase == PhaseFinished && op%16 < 12 && ruleCode(err) != CodeGameNotPlaying {
					t.Fatalf("step %d: finished game refused an action with %v; want game_not_playing", i, err)
				}
				continue
			}
			if !changed {
				continue
			}
			if s.Phase == PhaseFinished {
				t.Fatalf("step %d: finished game accepted op %d", i, op)
			}
			checkInvariants(t, s, next)
			checkDeltas(t, s, next, time.UnixMilli(now))
			s = next
			history[s.Version] = s
		}
	}
}

// fuzzGame makes the game a script starts from; the first byte picks the
// options and whether Black is an AI.
func fuzzGame(t *testing.T, b byte) *State {
	o := DefaultOptions()
	if b&1 != 0 {
		o.Variant = VariantChess960
	}
	if b&2 != 0 {
		o.DrawMode = DrawFIDE
	}
	o.TimeControl = []TimeControl{Fischer(1, 0), Fischer(3, 2), {Kind: TimePerMove, PerMoveSec: 30}, {Kind: TimeNone}}[b>>2&3]
	o.Undo = []UndoAllowance{UndoOff, 1, 3, UndoUnlimited}[b>>4&3]
	o.ColorAssignment = ColorsHostWhite
	ng := NewGame{GameID: "fz", Options: o, Host: Player{ID: "h", TokenHash: "x"}, Seed: uint64(b)}
	if b&0x40 != 0 {
		ng.AI = "easy"
	}
	s, _, err := New(ng, t0)
	if err != nil {
		t.Fatal(err)
	}
	if b&0x80 == 0 && ng.AI == "" {
		s, _, err = joinGame(s, Player{ID: "j", TokenHash: "y"}, t0)
		if err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// fuzzStep performs one scripted operation.
func fuzzStep(t *testing.T, s *State, op byte, by chess.Color, arg byte, now time.Time) (*State, bool, error) {
	var a Action
	switch op % 16 {
	case 0, 1, 2, 3: // a legal move, when there is one
		pos := s.Position()
		moves := pos.LegalMoves()
		if len(moves) == 0 {
			a = moveAction("e2e4")
		} else {
			a = moveAction(pos.UCI(moves[int(arg)%len(moves)]))
		}
		by = s.Turn()
	case 4:
		a = Action{Type: ActionMove, Move: MoveInput{From: chess.Square(arg % 64), To: chess.Square(arg * 7 % 64), Promotion: chess.PieceType(arg % 7)}}
	case 5:
		a = Action{Type: ActionMove, Move: MoveInput{SAN: []string{"O-O", "O-O-O", "e8", "Nf3", "Qxf7#", "exd6"}[arg%6]}}
	case 6:
		a = Action{Type: ActionCastle, Castle: chess.CastleSide(1 + arg%2)}
	case 7:
		a = Action{Type: ActionRequestUndo, Plies: int(arg % 3)}
	case 8:
		a = Action{Type: ActionRespondUndo, Accept: arg&2 != 0}
	case 9:
		a = Action{Type: ActionOfferDraw}
	case 10:
		a = Action{Type: ActionRespondDraw, Accept: arg&2 != 0}
	case 11:
		a = Action{Type: []ActionType{ActionCancelOffer, ActionClaimDraw, ActionResign, ActionResign}[arg>>1&3]}
	case 12, 13:
		next, _, ok := ApplyTimeout(s, now)
		if ok && next.Phase != PhaseFinished && next.Options.TimeControl.Kind != TimePerMove && s.Phase != PhaseReady {
			t.Fatalf("a timeout left the game %s without a per-move clock or a start", next.Phase)
		}
		return next, ok, nil
	default:
		next, _, ok := ReportPresence(s, Presence{Seat: by, Connected: arg&2 != 0, Stream: arg&4 != 0}, now)
		return next, ok, nil
	}
	if arg&0x80 != 0 {
		a.RequestID = string(rune('a' + arg%26))
	}
	next, _, err := Apply(s, by, a, now)
	return next, err == nil, err
}

// fuzzRoomGame makes the game a FuzzApplyRooms script starts from: the
// yeoul rules (a rated room's, or asked for in the free room, possibly
// against the AI) or a correspondence game, by the first byte.
func fuzzRoomGame(t *testing.T, b byte) *State {
	o := DefaultOptionsFor(RoomFree)
	host, guest := Player{ID: "h", TokenHash: "x"}, Player{ID: "j", TokenHash: "y"}
	switch b & 3 {
	case 0, 1:
		o.yeoul()
		o.TimeControl = TimeControl{Kind: TimePerMove, PerMoveSec: []int{30, 60, 120}[int(b>>2&3)%3]}
		if b&1 != 0 {
			o = DefaultOptionsFor(RoomIntermediate)
			host.Bound, guest.Bound = true, true
		}
	case 2, 3:
		o.TimeControl = TimeControl{Kind: TimeDays, Days: CorrespondenceDays[int(b>>2&7)%len(CorrespondenceDays)]}
		o.Undo = []UndoAllowance{UndoOff, 1, 3, UndoUnlimited}[b>>5&3]
	}
	if b&0x10 != 0 {
		o.Variant = VariantChess960
	}
	o.ColorAssignment = ColorsHostWhite
	ng := NewGame{GameID: "fr", Options: o, Host: host, Seed: uint64(b)}
	if b&0x40 != 0 && !o.Room.Rated() {
		ng.AI = "easy"
	}
	s, _, err := New(ng, t0)
	if err != nil {
		t.Fatal(err)
	}
	if b&0x80 == 0 && ng.AI == "" {
		if s, _, err = joinGame(s, guest, t0); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// fuzzRoomStep is fuzzStep with ready: operation 11 with argument bits
// 1-2 set is a ready.
func fuzzRoomStep(t *testing.T, s *State, op byte, by chess.Color, arg byte, now time.Time) (*State, bool, error) {
	if op%16 != 11 || arg>>1&3 != 3 {
		return fuzzStep(t, s, op, by, arg, now)
	}
	next, _, err := Apply(s, by, Action{Type: ActionReady}, now)
	return next, err == nil && next != s, err
}

// checkInvariants compares a state with the one before a successful change.
func checkInvariants(t *testing.T, prev, s *State) {
	t.Helper()
	if phaseRank(s.Phase) < phaseRank(prev.Phase) {
		t.Fatalf("phase went back from %s to %s", prev.Phase, s.Phase)
	}
	if s.Version != prev.Version+1 {
		t.Fatalf("version %d after %d", s.Version, prev.Version)
	}
	if (s.Phase == PhaseFinished) != (s.Result != nil) {
		t.Fatalf("phase %s with result %+v", s.Phase, s.Result)
	}
	pos := s.Position()
	if pos.Turn() != s.Turn() || pos.FEN() != s.FEN {
		t.Fatalf("FEN %q, position %q, turn %s at ply %d", s.FEN, pos.FEN(), s.Turn(), s.Ply())
	}
	if n := s.Ply(); n > 0 && s.Moves[n-1].FENAfter != s.FEN {
		t.Fatalf("last fenAfter %q differs from fen %q", s.Moves[n-1].FENAfter, s.FEN)
	}
	total := 0
	for _, c := range repetitionTable(s) {
		total += c
	}
	if total != s.Ply()+1 {
		t.Fatalf("repetition counts sum to %d at ply %d", total, s.Ply())
	}
	for c := range s.Clock.RemainingMs {
		if s.Clock.RemainingMs[c] < 0 || s.Clock.ExtensionsUsed[c] > PerMoveExtensions {
			t.Fatalf("clock %+v", s.Clock)
		}
		if s.Clock.Started[c] != (s.ownMovesSince(chess.Color(c), 0) > 0) && s.Phase == PhasePlaying {
			t.Fatalf("started %v does not match the moves", s.Clock.Started)
		}
	}
	for i := 1; i < len(s.Moves); i++ {
		if s.Moves[i].At < s.Moves[i-1].At {
			t.Fatalf("move times go back at ply %d", i+1)
		}
	}
	if s.Phase == PhasePlaying && (pos.CountMoves() == 0 || s.insufficientMaterial()) {
		t.Fatalf("still playing in a %s position", pos.Status())
	}
	if s.Phase == PhaseReady && (s.Ply() > 0 || s.Options.Rules != RulesYeoul) {
		t.Fatalf("ready step with %d moves under the %s rules", s.Ply(), s.Options.Rules)
	}
	if s.Options.Rules == RulesYeoul && s.Phase == PhasePlaying && (!s.Ready[chess.White] || !s.Ready[chess.Black] || s.Clock.StartsAt == 0) {
		t.Fatalf("yeoul game playing without both ready: %+v, starts %d", s.Ready, s.Clock.StartsAt)
	}
	if clocks := s.ClocksAfterMoves(); s.Options.TimeControl.Kind == TimeFischer && s.Ply() > 0 {
		// The clock after the last move is the mover's main time now,
		// unless the mover's turn has come round again (a take-back).
		last := s.Moves[s.Ply()-1]
		resets := s.Clock.Resets
		movedSince := len(resets) == 0 || resets[len(resets)-1].Ply < s.Ply()
		if len(clocks) != s.Ply() || movedSince && clocks[s.Ply()-1] != s.Clock.RemainingMs[last.Color] {
			t.Fatalf("clocks after moves %v; the last mover has %d", clocks, s.Clock.RemainingMs[last.Color])
		}
	}
	if _, err := PGN(s); err != nil {
		t.Fatalf("PGN = %v", err)
	}
	TimeRunningOut(s) // no panic
	roundTrip(t, s)   // what a stored form keeps restores to s
	for _, you := range []*chess.Color{nil, ptr(chess.White), ptr(chess.Black)} {
		v, err := ViewOf(s, you, time.UnixMilli(s.Clock.TurnStartedAt))
		if err != nil {
			t.Fatalf("ViewOf = %v", err)
		}
		if v.Clock.RemainingMs[0] < 0 || v.Clock.RemainingMs[1] < 0 {
			t.Fatalf("view clock %+v", v.Clock)
		}
	}
}

// phaseRank orders phases: waiting, ready, playing, finished.
func phaseRank(p Phase) int {
	switch p {
	case PhaseWaiting:
		return 0
	case PhaseReady:
		return 1
	case PhasePlaying:
		return 2
	}
	return 3
}
