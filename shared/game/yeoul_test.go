package game

import (
	"testing"
	"time"

	"chessapi/shared/chess"
)

// The rooms' game (seeds/003, SPEC §16.5): options, the ready step, and
// every rule where it differs from seeds/000's game, each checked under
// both rules where it matters.

// yeoulOpts are the free room's options under the yeoul rules, with js
// over them.
func yeoulOpts(t testing.TB, js string) Options {
	t.Helper()
	if js == "" {
		js = "{}"
	}
	in, err := optsInput(js)
	if err != nil {
		t.Fatal(err)
	}
	rules := "yeoul"
	in.Rules = &rules
	o, err := BuildOptions(in)
	if err != nil {
		t.Fatalf("BuildOptions(%s, yeoul) = %v", js, err)
	}
	return o
}

func TestYeoulOptions(t *testing.T) {
	fixed := func(o Options, perMove int) bool {
		return o.Rules == RulesYeoul && o.TimeControl == (TimeControl{Kind: TimePerMove, PerMoveSec: perMove}) &&
			!o.DrawOffer && o.Undo == UndoOff && o.DrawMode == DrawAuto && o.DisconnectGraceSec == YeoulGraceSec
	}
	for _, tc := range []struct {
		name    string
		js      string
		perMove int    // the per-move time the options have (0: standard rules)
		field   string // the field named by the refusal ("": accepted)
	}{
		// A rated room plays yeoul by itself; the free room only when asked.
		{"rated room defaults", `{"room":"intermediate"}`, 60, ""},
		{"beginner", `{"room":"beginner"}`, 60, ""},
		{"expert asks for it", `{"room":"expert","rules":"yeoul"}`, 60, ""},
		{"free room is standard", `{}`, 0, ""},
		{"free room asks", `{"rules":"yeoul"}`, 60, ""},
		{"standard asked", `{"rules":"standard"}`, 0, ""},
		{"standard in a rated room", `{"room":"expert","rules":"standard"}`, 0, "options.rules"},
		{"unknown rules", `{"rules":"blitz"}`, 0, "options.rules"},
		// The per-move times of seeds/003, and the values its rules fix.
		{"30 s", `{"rules":"yeoul","timeControl":"perMove:30"}`, 30, ""},
		{"120 s in a room", `{"room":"beginner","timeControl":"perMove:120"}`, 120, ""},
		{"Fischer", `{"rules":"yeoul","timeControl":"10+5"}`, 0, "options.timeControl"},
		{"Fischer in a room", `{"room":"intermediate","timeControl":"3+2"}`, 0, "options.timeControl"},
		{"no clock", `{"rules":"yeoul","timeControl":"none"}`, 0, "options.timeControl"},
		{"correspondence", `{"room":"expert","timeControl":"days:3"}`, 0, "options.timeControl"},
		{"bad per-move time", `{"rules":"yeoul","timeControl":"perMove:45"}`, 0, "options.timeControl"},
		{"draw offers on", `{"rules":"yeoul","drawOffer":true}`, 0, "options.drawOffer"},
		{"draw offers off", `{"rules":"yeoul","drawOffer":false}`, 60, ""},
		{"undo 1", `{"room":"intermediate","undo":1}`, 0, "options.undo"},
		{"undo unlimited", `{"rules":"yeoul","undo":"unlimited"}`, 0, "options.undo"},
		{"undo off", `{"rules":"yeoul","undo":"off"}`, 60, ""},
		{"fide draws", `{"rules":"yeoul","drawMode":"fide"}`, 0, "options.drawMode"},
		{"auto draws", `{"rules":"yeoul","drawMode":"auto"}`, 60, ""},
		{"a grace", `{"rules":"yeoul","disconnectGraceSec":60}`, 0, "options.disconnectGraceSec"},
		{"the grace it has", `{"room":"beginner","disconnectGraceSec":90}`, 60, ""},
		{"90 s under the standard rules", `{"disconnectGraceSec":90}`, 0, "options.disconnectGraceSec"},
		// What a view shows reads back as it is.
		{"a view's options", `{"rules":"yeoul","timeControl":"perMove:30","drawOffer":false,"undo":"off","drawMode":"auto","disconnectGraceSec":90}`, 30, ""},
		// The others keep their meaning.
		{"the rest", `{"rules":"yeoul","firstMoveSec":15,"colorAssignment":"hostBlack","variant":"chess960","hints":"off","autoQueen":true}`, 60, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, err := optsInput(tc.js)
			if err != nil {
				t.Fatal(err)
			}
			o, err := BuildOptions(in)
			switch {
			case tc.field != "":
				if !isField(err, tc.field) {
					t.Errorf("BuildOptions(%s) = %+v, %v; want an error naming %s", tc.js, o, err, tc.field)
				}
			case err != nil:
				t.Errorf("BuildOptions(%s) = %v", tc.js, err)
			case tc.perMove == 0:
				if o.Rules != RulesStandard || o.DisconnectGraceSec == YeoulGraceSec {
					t.Errorf("BuildOptions(%s) = %+v; want the standard rules", tc.js, o)
				}
			case !fixed(o, tc.perMove):
				t.Errorf("BuildOptions(%s) = %+v; want the yeoul rules with perMove:%d", tc.js, o, tc.perMove)
			case o.validate() != nil:
				t.Errorf("validate(%+v) = %v", o, o.validate())
			}
		})
	}
	rest := yeoulOpts(t, `{"firstMoveSec":15,"colorAssignment":"hostBlack","variant":"chess960","hints":"off"}`)
	if rest.FirstMoveSec != 15 || rest.ColorAssignment != ColorsHostBlack || rest.Variant != VariantChess960 || rest.Hints != HintsOff {
		t.Errorf("the options yeoul leaves alone: %+v", rest)
	}
	if d := DefaultOptionsFor(RoomExpert); !fixed(d, 60) || d.Room != RoomExpert {
		t.Errorf("DefaultOptionsFor(expert) = %+v", d)
	}
	if d := DefaultOptionsFor(RoomFree); d != DefaultOptions() {
		t.Errorf("DefaultOptionsFor(free) = %+v; want the defaults", d)
	}
	// A rated room's game is never made under the standard rules, but one
	// stored that way (before the rooms played seeds/003) still restores.
	legacy := DefaultOptions()
	legacy.Room = RoomIntermediate
	host := ratedPlayers[chess.White]
	if _, _, err := New(NewGame{GameID: "g", Options: legacy, Host: host}, t0); !isField(err, "options.rules") {
		t.Errorf("New(standard rules in a rated room) = %v; want options.rules", err)
	}
	if err := legacy.validate(); err != nil {
		t.Errorf("a stored rated-room game of the standard rules: %v", err)
	}
}

// TestYeoulReadyStep: after the join the game waits for both seats' ready,
// starts 3 s after the second one with White to move, and refuses play
// before that with not_started.
func TestYeoulReadyStep(t *testing.T) {
	s := newRatedGame(t, RoomIntermediate, `{}`)
	if s.Phase != PhaseReady || s.Clock.StartsAt != 0 {
		t.Fatalf("after the join: phase %s, starts %d; want ready", s.Phase, s.Clock.StartsAt)
	}
	if d, ok := Deadline(s); !ok || d.UnixMilli() != t0.UnixMilli()+ReadyLimitSec*1000 {
		t.Errorf("deadline of the ready step = %v, %v; want the ready limit", d, ok)
	}
	v, _ := ViewOf(s, ptr(white), at(100))
	if v.Rules != RulesYeoul || v.StartsAt != nil || v.Ready == nil || *v.DeadlineReason != "ready" || v.LegalMoves != nil {
		t.Errorf("view in the ready step: rules %s, startsAt %v, ready %v, reason %s, %d legal moves",
			v.Rules, v.StartsAt, v.Ready, *v.DeadlineReason, len(v.LegalMoves))
	}
	for _, a := range []Action{moveAction("e2e4"), {Type: ActionCastle, Castle: chess.KingSide}, {Type: ActionOfferDraw},
		{Type: ActionRequestUndo}, {Type: ActionClaimDraw}, {Type: ActionCancelOffer}} {
		if _, _, err := Reduce(s, Act{By: white, Action: a}, at(100)); ruleCode(err) != CodeNotStarted {
			t.Errorf("%s in the ready step: %v; want not_started", a.Type, err)
		}
	}
	s, evs, err := Reduce(s, Act{By: white, Action: Action{Type: ActionReady}}, at(2000))
	if err != nil || !s.Ready[white] || s.Ready[black] || len(evs) != 1 || evs[0].Type != EventPlayerReady || evs[0].StartsAt != 0 {
		t.Fatalf("white ready: %+v, %v, %+v", s.Ready, err, evs)
	}
	again, evs, err := Reduce(s, Act{By: white, Action: Action{Type: ActionReady}}, at(2500))
	if err != nil || again != s || evs != nil {
		t.Errorf("white ready again: a new version %v, events %v, %v; want nothing", again != s, evs, err)
	}
	s, evs, err = Reduce(s, Act{By: black, Action: Action{Type: ActionReady}}, at(5000))
	startsAt := at(5000 + StartDelayMs).UnixMilli()
	if err != nil || s.Phase != PhaseReady || s.Clock.StartsAt != startsAt || evs[0].StartsAt != startsAt {
		t.Fatalf("black ready: phase %s, starts %d, %+v, %v; want the start 3 s later", s.Phase, s.Clock.StartsAt, evs, err)
	}
	v, _ = ViewOf(s, ptr(white), at(5500))
	if v.StartsAt == nil || *v.StartsAt != startsAt || *v.Deadline != startsAt+30_000 || *v.DeadlineReason != "firstMove" || v.Clock.Running != nil {
		t.Errorf("view counting down: startsAt %v, deadline %v (%s), running %v; want White's first move from the start",
			v.StartsAt, *v.Deadline, *v.DeadlineReason, v.Clock.Running)
	}
	if d, _ := Deadline(s); d.UnixMilli() != startsAt {
		t.Errorf("the timer during the countdown = %v; want the start", d)
	}
	if _, _, err := Reduce(s, Act{By: white, Action: moveAction("e2e4")}, at(5000+StartDelayMs-1)); ruleCode(err) != CodeNotStarted {
		t.Errorf("a move 1 ms before the start: %v; want not_started", err)
	}
	// At the start (no Timeout step needed: the move applies the start
	// first) White moves; its first-move limit ran from the start.
	played, evs, err := Reduce(s, Act{By: white, Action: moveAction("e2e4")}, at(5000+StartDelayMs+200))
	if err != nil || played.Phase != PhasePlaying || evs[0].Type != EventGameStarted || evs[0].At != startsAt || evs[1].Type != EventMoved {
		t.Fatalf("the first move after the start: %v, %+v", err, evs)
	}
	started, _, _ := Reduce(s, Timeout{}, time.UnixMilli(startsAt))
	if started.Phase != PhasePlaying || started.Clock.TurnStartedAt != startsAt {
		t.Fatalf("the start: phase %s, turn from %d", started.Phase, started.Clock.TurnStartedAt)
	}
	if d, _ := Deadline(started); d.UnixMilli() != startsAt+30_000 {
		t.Errorf("White's first-move deadline = %v; want the start + 30 s", d)
	}
	// Nobody moving from the start: the first-move limit calls it off, in
	// one step even when nothing ran the start.
	off, evs, _ := Reduce(s, Timeout{}, time.UnixMilli(startsAt+31_000))
	if off.Phase != PhaseFinished || off.Result.Reason != ReasonAborted || !hasEvent(evs, EventGameStarted) || off.Rated() {
		t.Errorf("no first move: %+v, %+v; want started then aborted, unrated", off.Result, evs)
	}
	roundTrip(t, s)
	roundTrip(t, started)

	// A ready after the start changes nothing.
	if next, _, err := Reduce(started, Act{By: black, Action: Action{Type: ActionReady}}, time.UnixMilli(startsAt+10)); err != nil || next != started {
		t.Errorf("ready while playing: %v, changed %v", err, next != started)
	}
}

func TestYeoulReadyRefusalsAndBound(t *testing.T) {
	// Nobody ready: the step's bound calls the game off, unrated.
	s := newRatedGame(t, RoomIntermediate, `{}`)
	off, evs, _ := Reduce(s, Timeout{}, at(ReadyLimitSec*1000))
	if off.Phase != PhaseFinished || off.Result.Reason != ReasonAborted || off.Rated() || evs[0].Reason != "ready" || evs[0].Color != "" {
		t.Errorf("nobody ready: %+v, %+v", off.Result, evs)
	}
	if _, _, err := Reduce(s, Timeout{}, at(ReadyLimitSec*1000-1)); err != nil {
		t.Error(err)
	} else if still, _, _ := Reduce(s, Timeout{}, at(ReadyLimitSec*1000-1)); still != s {
		t.Error("the ready step ended before its bound")
	}
	// One ready: the event names the other.
	one, _, _ := Reduce(s, Act{By: black, Action: Action{Type: ActionReady}}, at(1000))
	off, evs, _ = Reduce(one, Timeout{}, at(ReadyLimitSec*1000))
	if off.Result.Reason != ReasonAborted || evs[0].Color != "white" {
		t.Errorf("white never ready: %+v, %+v", off.Result, evs)
	}
	if _, _, err := Reduce(one, Act{By: white, Action: Action{Type: ActionReady}}, at(ReadyLimitSec*1000)); ruleCode(err) != CodeGameNotPlaying {
		t.Errorf("ready at the bound: %v; want game_not_playing (called off first)", err)
	}
	// Leaving before the start calls the game off.
	left, evs, err := Reduce(one, Act{By: white, Action: Action{Type: ActionResign}}, at(2000))
	if err != nil || left.Result.Reason != ReasonAborted || left.Result.Winner != nil || !hasEvent(evs, EventResigned) {
		t.Errorf("resign in the ready step: %+v, %v", left.Result, err)
	}
	// Ready where there is none: the standard rules, a waiting game.
	std := newGame(t, DefaultOptions())
	if _, _, err := Reduce(std, Act{By: white, Action: Action{Type: ActionReady}}, at(1000)); ruleCode(err) != CodeNoReadyStep {
		t.Errorf("ready under the standard rules: %v; want no_ready_step", err)
	}
	waiting, _, _ := New(NewGame{GameID: "w", Options: yeoulOpts(t, ""), Host: Player{ID: "h", TokenHash: "x"}}, t0)
	if waiting.Phase != PhaseWaiting {
		t.Fatalf("a yeoul game before the join: %s", waiting.Phase)
	}
	for c := range 2 {
		if _, _, err := Reduce(waiting, Act{By: chess.Color(c), Action: Action{Type: ActionReady}}, at(1000)); ruleCode(err) != CodeGameNotPlaying {
			t.Errorf("ready while waiting: %v; want game_not_playing", err)
		}
	}
	if _, _, err := joinGame(s, Player{ID: "third", TokenHash: "z", Bound: true, Rating: 1000}, at(10)); ruleCode(err) != CodeGameFull {
		t.Errorf("a third player joining in the ready step: %v; want game_full", err)
	}
}

// TestYeoulAgainstTheAI: in the free room the yeoul rules may be played
// against the AI, whose seat is ready at once.
func TestYeoulAgainstTheAI(t *testing.T) {
	o := yeoulOpts(t, `{"colorAssignment":"hostBlack"}`)
	s, evs, err := New(NewGame{GameID: "ai", Options: o, Host: Player{ID: "h", TokenHash: "x"}, AI: "easy"}, t0)
	if err != nil || s.Phase != PhaseReady || !s.Ready[white] || s.Ready[black] || !hasEvent(evs, EventPlayerReady) {
		t.Fatalf("New(yeoul vs AI) = phase %s, ready %+v, %v", s.Phase, s.Ready, err)
	}
	if _, ok := s.AITurn(); ok {
		t.Error("the AI is to move before the start")
	}
	s, _, err = Reduce(s, Act{By: black, Action: Action{Type: ActionReady}}, at(1000))
	if err != nil || s.Clock.StartsAt != at(1000+StartDelayMs).UnixMilli() {
		t.Fatalf("the human's ready: starts %d, %v", s.Clock.StartsAt, err)
	}
	s, _, _ = Reduce(s, Timeout{}, at(1000+StartDelayMs))
	if level, ok := s.AITurn(); !ok || level != "easy" {
		t.Errorf("after the start: AI turn %q, %v; want the AI (White) to move", level, ok)
	}
	if _, _, err := New(NewGame{GameID: "r", Options: DefaultOptionsFor(RoomBeginner), Host: ratedPlayers[chess.White], AI: "easy"}, t0); !isField(err, "opponent") {
		t.Errorf("the AI in a rated room: %v; want invalid opponent", err)
	}
}

// TestYeoulPromotion: a promotion without a piece is a queen under the
// yeoul rules whatever autoQueen says; the standard rules ask for one.
func TestYeoulPromotion(t *testing.T) {
	const fen = "4k3/P7/8/8/8/8/8/4K3 w - - 0 1"
	for _, tc := range []struct {
		name string
		o    Options
		want Code // 0: promotes to a queen
	}{
		{"yeoul", yeoulOpts(t, ""), 0},
		{"yeoul with autoQueen off", yeoulOpts(t, `{"autoQueen":false}`), 0},
		{"standard", DefaultOptions(), CodePromotionRequired},
		{"standard with autoQueen", opts(t, `{"autoQueen":true}`), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, in := range []MoveInput{{UCI: "a7a8"}, {SAN: "a8"}, {From: chess.A7, To: chess.A8}} {
				s := gameFromFEN(t, fen, tc.o)
				next, _, err := Reduce(s, Act{By: white, Action: Action{Type: ActionMove, Move: in}}, at(5000))
				switch {
				case tc.want != 0 && ruleCode(err) != tc.want:
					t.Errorf("%v: %v; want %s", in, err, tc.want)
				case tc.want == 0 && (err != nil || next.Moves[0].UCI != "a7a8q"):
					t.Errorf("%v: %v; want a7a8q", in, err)
				}
			}
			// A piece chosen is that piece, under either rules.
			s := gameFromFEN(t, fen, tc.o)
			if next, _, err := Reduce(s, Act{By: white, Action: moveAction("a7a8n")}, at(5000)); err != nil || next.Moves[0].UCI != "a7a8n" {
				t.Errorf("a7a8n: %v", err)
			}
		})
	}
}

// TestYeoulInsufficientMaterial: seeds/003 draws only K v K, K+N v K and
// K+B v K; seeds/000 also draws kings and bishops all on one colour.
func TestYeoulInsufficientMaterial(t *testing.T) {
	for _, tc := range []struct {
		name string
		fen  string // White to move; the move (the king takes a rook) reaches the position
		move string
		std  bool // drawn under the standard rules
		yeo  bool // drawn under the yeoul rules
	}{
		{"K v K", "4k3/8/8/8/8/8/3r4/3K4 w - - 0 1", "d1d2", true, true},
		{"K+N v K", "4k3/8/8/8/8/8/3r4/3K2N1 w - - 0 1", "d1d2", true, true},
		{"K+B v K", "4k3/8/8/8/8/8/3r4/3K1B2 w - - 0 1", "d1d2", true, true},
		{"K+B v K+B same colour", "4k3/8/8/1b6/8/8/3r4/3K1B2 w - - 0 1", "d1d2", true, false},
		{"K+B v K+B other colours", "4k3/8/8/2b5/8/8/3r4/3K1B2 w - - 0 1", "d1d2", false, false},
		{"K+B+B same colour v K", "4k3/8/8/8/8/7B/3r4/3K1B2 w - - 0 1", "d1d2", true, false},
		{"K+N+N v K", "4k3/8/8/8/8/8/3r4/3K1NN1 w - - 0 1", "d1d2", false, false},
		{"K+N v K+N", "n3k3/8/8/8/8/8/3r4/3K1N2 w - - 0 1", "d1d2", false, false},
	} {
		for _, rules := range []struct {
			name string
			o    Options
			want bool
		}{{"standard", DefaultOptions(), tc.std}, {"yeoul", yeoulOpts(t, ""), tc.yeo}} {
			t.Run(tc.name+"/"+rules.name, func(t *testing.T) {
				s := gameFromFEN(t, tc.fen, rules.o)
				next, _, err := Reduce(s, Act{By: white, Action: moveAction(tc.move)}, at(5000))
				if err != nil {
					t.Fatal(err)
				}
				drawn := next.Phase == PhaseFinished && next.Result.Reason == ReasonInsufficientMaterial
				if drawn != rules.want {
					t.Errorf("after %s: phase %s %+v; want drawn %v", tc.move, next.Phase, next.Result, rules.want)
				}
				if !drawn {
					roundTrip(t, next) // a yeoul game plays on where the standard rules would stop
				}
			})
		}
	}
}

// TestYeoulNoOffersNoUndoAutoDraws: no draw offers, no take-backs, and
// repetition ends the game by itself (seeds/003 "자동으로 무승부").
func TestYeoulNoOffersNoUndoAutoDraws(t *testing.T) {
	s := readyBoth(t, newGame(t, yeoulOpts(t, "")), 0)
	s = play(t, s, 5000, "g1f3", "g8f6")
	for _, tc := range []struct {
		a    Action
		want Code
	}{
		{Action{Type: ActionOfferDraw}, CodeDrawOfferDisabled},
		{Action{Type: ActionRequestUndo}, CodeUndoDisabled},
		{Action{Type: ActionClaimDraw}, CodeClaimDisabled},
	} {
		if _, _, err := Reduce(s, Act{By: white, Action: tc.a}, at(8000)); ruleCode(err) != tc.want {
			t.Errorf("%s: %v; want %s", tc.a.Type, err, tc.want)
		}
	}
	s = play(t, s, 8000, "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8")
	if s.Phase != PhaseFinished || s.Result.Reason != ReasonThreefold {
		t.Errorf("threefold under the yeoul rules: %s %+v; want drawn at once", s.Phase, s.Result)
	}
}

// TestYeoulTimeAndDisconnect: running out (extensions and all) loses even
// against a lone king, and a reconnection that does not come within 90 s
// is a resignation; the standard rules draw the first (FIDE 6.9) and make
// the second a time loss.
func TestYeoulTimeAndDisconnect(t *testing.T) {
	const loneKing = "4k3/8/8/8/8/8/8/Q3K3 w - - 0 1" // White to move and flagged; Black, a lone king, cannot mate
	for _, tc := range []struct {
		name   string
		o      Options
		reason Reason
		winner *chess.Color
	}{
		{"yeoul", yeoulOpts(t, `{"timeControl":"perMove:30"}`), ReasonTimeLoss, ptr(black)},
		{"standard per-move", opts(t, `{"timeControl":"perMove:30"}`), ReasonTimeoutVsInsufficient, nil},
	} {
		t.Run("flag/"+tc.name, func(t *testing.T) {
			s := gameFromFEN(t, loneKing, tc.o)
			start := s.Clock.TurnStartedAt
			// The period and the three extensions, then the flag.
			flagged, evs, _ := Reduce(s, Timeout{}, time.UnixMilli(start+4*30_000))
			n := 0
			for _, e := range evs {
				if e.Type == EventExtensionUsed {
					n++
				}
			}
			if n != PerMoveExtensions || flagged.Result == nil || flagged.Result.Reason != tc.reason || !sameColor(flagged.Result.Winner, tc.winner) {
				t.Errorf("%d extensions, result %+v; want 3 and %s", n, flagged.Result, tc.reason)
			}
		})
	}
	for _, tc := range []struct {
		name   string
		o      Options
		grace  int64
		reason Reason
	}{
		{"yeoul", yeoulOpts(t, `{"timeControl":"perMove:120"}`), 90_000, ReasonResign},
		{"standard", opts(t, `{"timeControl":"perMove:120","disconnectGraceSec":60}`), 60_000, ReasonTimeLoss},
	} {
		t.Run("disconnect/"+tc.name, func(t *testing.T) {
			s := gameFromFEN(t, "r3k3/8/8/8/8/8/8/QR2K3 w - - 0 1", tc.o)
			start := s.Clock.TurnStartedAt
			s, _, _ = Reduce(s, Presence{Seat: white, Connected: false}, time.UnixMilli(start+1000))
			if d, _ := Deadline(s); d.UnixMilli() != start+1000+tc.grace {
				t.Errorf("deadline while disconnected = %d; want the grace, %d", d.UnixMilli()-start, 1000+tc.grace)
			}
			gone, evs, _ := Reduce(s, Timeout{}, time.UnixMilli(start+1000+tc.grace))
			if gone.Result == nil || gone.Result.Reason != tc.reason || *gone.Result.Winner != black || evs[len(evs)-2].Reason != "disconnect" {
				t.Errorf("grace over: %+v, %+v; want %s for Black", gone.Result, evs, tc.reason)
			}
		})
	}
	// Before its first move a seat that does not come back calls the game
	// off, under either rules (its first-move limit comes first anyway).
	s := readyBoth(t, newGame(t, yeoulOpts(t, "")), 0)
	s, _, _ = Reduce(s, Presence{Seat: white, Connected: false}, at(4100))
	off, _, _ := Reduce(s, Timeout{}, at(4000+30_000))
	if off.Result == nil || off.Result.Reason != ReasonAborted {
		t.Errorf("no first move, disconnected: %+v; want aborted", off.Result)
	}
}

// TestYeoulRematchKeepsItsRules: a rematch made from a finished game's
// options (what the service copies) is a yeoul game again, with its ready
// step.
func TestYeoulRematchKeepsItsRules(t *testing.T) {
	first := readyBoth(t, newGame(t, yeoulOpts(t, `{"timeControl":"perMove:120"}`)), 0)
	first, _, _ = Reduce(first, Act{By: white, Action: Action{Type: ActionResign}}, at(5000))
	next, _, err := New(NewGame{GameID: "g2", Options: first.Options, Host: Player{ID: "bob", TokenHash: "hash-bob"},
		RematchOf: &PreviousGame{GameID: first.GameID, HostColor: black}}, at(6000))
	if err != nil {
		t.Fatal(err)
	}
	next, _, _ = joinGame(next, Player{ID: "alice", TokenHash: "hash-alice"}, at(7000))
	if next.Options.Rules != RulesYeoul || next.Options.TimeControl.PerMoveSec != 120 || next.Phase != PhaseReady {
		t.Errorf("rematch: rules %s, %s, phase %s", next.Options.Rules, next.Options.TimeControl, next.Phase)
	}
}
