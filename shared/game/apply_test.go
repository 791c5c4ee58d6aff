package game

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"chessapi/shared/chess"
)

func TestNewAndJoin(t *testing.T) {
	t.Run("waiting until joined", func(t *testing.T) {
		s, events, err := New(NewGame{GameID: "g", Options: opts(t, `{"colorAssignment":"hostBlack"}`), Host: Player{ID: "h", Name: "Host", TokenHash: "th"}}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase != PhaseWaiting || s.Version != 1 || s.Seats[black].PlayerID != "h" || s.Seats[white].taken() || events[0].Type != EventGameCreated {
			t.Fatalf("New: phase %s version %d seats %+v events %v", s.Phase, s.Version, s.Seats, events)
		}
		if d, ok := Deadline(s); !ok || !d.Equal(t0.Add(DefaultWaitingExpirySec*1e9)) {
			t.Errorf("a waiting game's deadline = %v, %v; want its expiry, %d s after creation", d, ok, DefaultWaitingExpirySec)
		}
		if _, _, err := Apply(s, black, moveAction("e2e4"), at(1000)); ruleCode(err) != CodeGameNotPlaying {
			t.Errorf("move while waiting: %v; want game_not_playing", err)
		}
		if _, _, err := joinGame(s, Player{ID: "h"}, at(1000)); ruleCode(err) != CodeAlreadySeated {
			t.Errorf("host joins own game: %v; want already_seated", err)
		}
		joined, events, err := joinGame(s, Player{ID: "j", Name: "Joiner", TokenHash: "tj"}, at(2000))
		if err != nil {
			t.Fatal(err)
		}
		if joined.Phase != PhasePlaying || joined.Version != 2 || joined.Seats[white].PlayerID != "j" || joined.Clock.TurnStartedAt != at(2000).UnixMilli() {
			t.Errorf("Join: phase %s version %d seats %+v clock %+v", joined.Phase, joined.Version, joined.Seats, joined.Clock)
		}
		if !hasEvent(events, EventPlayerJoined) || !hasEvent(events, EventGameStarted) {
			t.Errorf("Join events %v", events)
		}
		if _, _, err := joinGame(joined, Player{ID: "third"}, at(3000)); ruleCode(err) != CodeGameFull {
			t.Errorf("third player: %v; want game_full", err)
		}
	})
	t.Run("AI opponent plays at once", func(t *testing.T) {
		s, events, err := New(NewGame{GameID: "g", Options: opts(t, `{"colorAssignment":"hostWhite"}`), Host: Player{ID: "h"}, AI: "easy"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Phase != PhasePlaying || s.Seats[black].AI != "easy" || !hasEvent(events, EventGameStarted) {
			t.Fatalf("New with AI: phase %s seats %+v events %v", s.Phase, s.Seats, events)
		}
		if _, ok := s.AITurn(); ok {
			t.Error("AITurn() on the human's turn")
		}
	})
	t.Run("bad input", func(t *testing.T) {
		// A request's values are *InputErrors; ids the service always
		// supplies are plain errors (a bug, never a client's mistake).
		for _, ng := range []NewGame{
			{GameID: "g", Options: DefaultOptions(), Host: Player{ID: "h"}, AI: "grandmaster"},
			{GameID: "g", Host: Player{ID: "h"}},
		} {
			var ie *InputError
			if _, _, err := New(ng, t0); !errors.As(err, &ie) {
				t.Errorf("New(%+v) = %v; want an *InputError", ng, err)
			}
		}
		for _, ng := range []NewGame{
			{Options: DefaultOptions(), Host: Player{ID: "h"}},
			{GameID: "g", Options: DefaultOptions()},
		} {
			if _, _, err := New(ng, t0); err == nil {
				t.Errorf("New(%+v) = nil error; want one", ng)
			}
		}
	})
}

func TestColorAssignment(t *testing.T) {
	hostColor := func(o Options, seed uint64, prev *PreviousGame) chess.Color {
		s, _, err := New(NewGame{GameID: "g", Options: o, Host: Player{ID: "h"}, Seed: seed, RematchOf: prev}, t0)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := s.SeatOf("h")
		return c
	}
	if got := hostColor(opts(t, `{"colorAssignment":"hostWhite"}`), 1, nil); got != white {
		t.Errorf("hostWhite gave %s", got)
	}
	if got := hostColor(opts(t, `{"colorAssignment":"hostBlack"}`), 1, nil); got != black {
		t.Errorf("hostBlack gave %s", got)
	}
	alt := opts(t, `{"colorAssignment":"alternate"}`)
	for _, prev := range []chess.Color{white, black} {
		if got := hostColor(alt, 1, &PreviousGame{GameID: "old", HostColor: prev}); got != prev.Other() {
			t.Errorf("alternate after %s gave %s", prev, got)
		}
	}
	seen := map[chess.Color]bool{}
	for seed := range uint64(16) {
		seen[hostColor(DefaultOptions(), seed, nil)] = true
	}
	if len(seen) != 2 {
		t.Errorf("random colours over 16 seeds: %v; want both", seen)
	}
	// Colours come first, then the 960 number: a fixed colour choice draws
	// the 960 number first, so it differs from the random-colour game's.
	s1, _, _ := New(NewGame{GameID: "g", Options: opts(t, `{"variant":"chess960"}`), Host: Player{ID: "h"}, Seed: 5}, t0)
	rng := RNG{State: 5}
	rng.next()
	if want := int(rng.intn(960)); *s1.Chess960Index != want {
		t.Errorf("960 number = %d; want the RNG's second draw %d", *s1.Chess960Index, want)
	}
}

func TestApplyIsPure(t *testing.T) {
	s := newGame(t, opts(t, `{"drawMode":"fide","undo":"unlimited"}`))
	s = play(t, s, 1000, "e2e4", "e7e5")
	s, _ = mustApply(t, s, white, Action{Type: ActionOfferDraw}, at(3000))
	actions := []struct {
		by chess.Color
		a  Action
	}{
		{white, moveAction("g1f3")},
		{black, Action{Type: ActionRespondDraw, Accept: true}},
		{black, Action{Type: ActionRespondDraw}},
		{white, Action{Type: ActionCancelOffer}},
		{black, Action{Type: ActionResign, RequestID: "r1"}},
		{white, Action{Type: ActionCastle, Castle: chess.KingSide}},
	}
	for _, act := range actions {
		before := s.clone()
		Apply(s, act.by, act.a, at(4000))
		assertSameState(t, s, before, "state after Apply("+act.a.Type.String()+")")
	}
	timed := s.clone()
	ApplyTimeout(s, at(1e9))
	SetPresence(s, black, false, at(5000))
	ViewOf(s, ptr(white), at(5000))
	PGN(s)
	assertSameState(t, s, timed, "state after ApplyTimeout, SetPresence, ViewOf, PGN")
}

func TestDrawOffers(t *testing.T) {
	t.Run("accept", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s = play(t, s, 1000, "e2e4", "e7e5")
		s, _ = mustApply(t, s, black, Action{Type: ActionOfferDraw}, at(3000))
		if s.Draw.PendingBy == nil || *s.Draw.PendingBy != black {
			t.Fatalf("pending %v; want black's offer", s.Draw.PendingBy)
		}
		if _, _, err := Apply(s, black, Action{Type: ActionRespondDraw, Accept: true}, at(4000)); ruleCode(err) != CodeNoPendingRequest {
			t.Errorf("accepting one's own offer: %v; want no_pending_request", err)
		}
		s, events := mustApply(t, s, white, Action{Type: ActionRespondDraw, Accept: true}, at(4000))
		if s.Result == nil || s.Result.Reason != ReasonDrawAgreed || s.Result.Winner != nil || s.Result.MoveCount != 1 || !hasEvent(events, EventDrawAccepted) {
			t.Errorf("result %+v events %v; want an agreed draw", s.Result, events)
		}
	})
	t.Run("three own moves after a decline", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s, _ = mustApply(t, s, white, Action{Type: ActionOfferDraw}, at(500))
		s, _ = mustApply(t, s, black, Action{Type: ActionRespondDraw, Accept: false}, at(800))
		for i, u := range []string{"e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"} {
			if s.Turn() == white {
				_, _, err := Apply(s, white, Action{Type: ActionOfferDraw}, at(int64(1000+i*1000)))
				if ruleCode(err) != CodeDrawOfferTooSoon {
					t.Fatalf("offer after %d own moves: %v; want draw_offer_too_soon", s.ownMovesSince(white, 0), err)
				}
			}
			s, _ = mustApply(t, s, s.Turn(), moveAction(u), at(int64(1000+i*1000)))
		}
		if _, _, err := Apply(s, white, Action{Type: ActionOfferDraw}, at(9000)); err != nil {
			t.Errorf("offer after three own moves: %v", err)
		}
		if _, _, err := Apply(s, black, Action{Type: ActionOfferDraw}, at(9000)); err != nil {
			t.Errorf("the other side's first offer: %v", err)
		}
	})
	t.Run("moving declines the opponent's offer, not one's own", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s = play(t, s, 1000, "e2e4")
		s, _ = mustApply(t, s, black, Action{Type: ActionOfferDraw}, at(2000))
		s, _ = mustApply(t, s, black, moveAction("e7e5"), at(3000))
		if s.Draw.PendingBy == nil {
			t.Fatal("black's own move withdrew its offer")
		}
		s, events := mustApply(t, s, white, moveAction("g1f3"), at(4000))
		if s.Draw.PendingBy != nil || !hasEvent(events, EventDrawDeclined) || s.Draw.LastOfferPly[black] != 3 {
			t.Errorf("pending %v events %v lastOfferPly %v; want declined at ply 3", s.Draw.PendingBy, events, s.Draw.LastOfferPly)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s, _ = mustApply(t, s, white, Action{Type: ActionOfferDraw}, at(500))
		if _, _, err := Apply(s, black, Action{Type: ActionCancelOffer}, at(600)); ruleCode(err) != CodeNoPendingRequest {
			t.Errorf("cancelling the opponent's offer: %v; want no_pending_request", err)
		}
		s, events := mustApply(t, s, white, Action{Type: ActionCancelOffer}, at(600))
		if s.Draw.PendingBy != nil || events[0].Type != EventDrawOfferCancelled {
			t.Errorf("pending %v events %v; want the offer withdrawn", s.Draw.PendingBy, events)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		s := newGame(t, opts(t, `{"drawOffer":false}`))
		if _, _, err := Apply(s, white, Action{Type: ActionOfferDraw}, at(500)); ruleCode(err) != CodeDrawOfferDisabled {
			t.Errorf("offer with drawOffer false: %v; want draw_offer_disabled", err)
		}
	})
}

func TestResign(t *testing.T) {
	tests := []struct {
		name       string
		moves      []string
		by         chess.Color
		wantReason Reason
		wantPGN    string
	}{
		{"before any move aborts", nil, black, ReasonAborted, "*"},
		{"before black's first move aborts", []string{"e2e4"}, white, ReasonAborted, "*"},
		{"after both moved", []string{"e2e4", "e7e5"}, white, ReasonResign, "0-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := play(t, newGame(t, DefaultOptions()), 1000, tt.moves...)
			s, events := mustApply(t, s, tt.by, Action{Type: ActionResign}, at(5000))
			if s.Result.Reason != tt.wantReason || s.pgnResult() != tt.wantPGN || !hasEvent(events, EventResigned) {
				t.Errorf("result %+v pgn %s events %v; want %s, %s", s.Result, s.pgnResult(), events, tt.wantReason, tt.wantPGN)
			}
		})
	}
	t.Run("host leaves a waiting game", func(t *testing.T) {
		s, _, _ := New(NewGame{GameID: "g", Options: DefaultOptions(), Host: Player{ID: "h"}}, t0)
		host, _ := s.SeatOf("h")
		s, _ = mustApply(t, s, host, Action{Type: ActionResign}, at(1000))
		if s.Phase != PhaseFinished || s.Result.Reason != ReasonAborted || len(s.Result.Ranking) != 0 {
			t.Errorf("phase %s result %+v; want aborted", s.Phase, s.Result)
		}
	})
}

func TestTurnAndPhaseRefusals(t *testing.T) {
	s := newGame(t, DefaultOptions())
	_, _, err := Apply(s, black, moveAction("e7e5"), at(1000))
	var re *RuleError
	if !errors.As(err, &re) || re.Code != CodeNotYourTurn {
		t.Errorf("black moves first: %v; want not_your_turn", err)
	}
	_, _, err = Apply(s, white, moveAction("e2e5"), at(1000))
	if !errors.As(err, &re) || re.Code != CodeIllegalMove {
		t.Errorf("e2e5: %v; want illegal_move", err)
	}
	pinned := gameFromFEN(t, "4r1k1/8/8/8/8/8/4N3/4K3 w - - 0 1", DefaultOptions())
	_, _, err = Apply(pinned, white, moveAction("e2c3"), at(1000))
	if !errors.As(err, &re) || re.Code != CodeKingInCheck {
		t.Errorf("pinned knight: %v; want king_in_check", err)
	}
	done, _ := mustApply(t, play(t, s, 1000, "e2e4", "e7e5"), white, Action{Type: ActionResign}, at(5000))
	for _, a := range []Action{moveAction("d2d4"), {Type: ActionOfferDraw}, {Type: ActionResign}, {Type: ActionRequestUndo}} {
		if _, _, err := Apply(done, black, a, at(6000)); ruleCode(err) != CodeGameNotPlaying {
			t.Errorf("%s after the end: %v; want game_not_playing", a.Type, err)
		}
	}
}

func TestRequestLog(t *testing.T) {
	s := newGame(t, DefaultOptions())
	s, events := mustApply(t, s, white, Action{Type: ActionMove, Move: MoveInput{UCI: "e2e4"}, RequestID: "req-1"}, at(1000))
	got, ok := s.AppliedRequest(white, "req-1")
	want, _ := json.Marshal(events)
	if !ok || got.Version != s.Version || string(got.Events) != string(want) {
		t.Fatalf("AppliedRequest(req-1) = %+v, %v; want version %d and events %s", got, ok, s.Version, want)
	}
	if _, ok := s.AppliedRequest(black, "req-1"); ok {
		t.Error("black's log has white's request")
	}
	// The log keeps the last RequestLogSize ids per seat.
	for i := range RequestLogSize {
		id := fmt.Sprint("u", i)
		s, _ = mustApply(t, s, white, Action{Type: ActionRequestUndo, RequestID: id + "-ask"}, at(int64(2000+i)))
		s, _ = mustApply(t, s, white, Action{Type: ActionCancelOffer, RequestID: id + "-cancel"}, at(int64(2000+i)))
	}
	if n := len(s.Requests[white]); n != RequestLogSize {
		t.Errorf("white's log holds %d entries; want %d", n, RequestLogSize)
	}
	if _, ok := s.AppliedRequest(white, "req-1"); ok {
		t.Error("the oldest id is still in the log")
	}
	if got, ok := s.AppliedRequest(white, fmt.Sprint("u", RequestLogSize-1, "-cancel")); !ok || got.Version != s.Version {
		t.Errorf("newest entry = %+v, %v; want version %d", got, ok, s.Version)
	}
	if _, ok := s.AppliedRequest(white, ""); ok {
		t.Error("the empty id matched")
	}
}

func TestAIOpponentAnswersRequests(t *testing.T) {
	s, _, err := New(NewGame{GameID: "g", Options: opts(t, `{"colorAssignment":"hostWhite"}`), Host: Player{ID: "h"}, AI: "normal"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	s = play(t, s, 1000, "e2e4", "e7e5")
	undone, events := mustApply(t, s, white, Action{Type: ActionRequestUndo}, at(3000))
	if undone.Ply() != 0 || !hasEvent(events, EventUndoAccepted) {
		t.Errorf("undo against the AI: ply %d events %v; want accepted at once", undone.Ply(), events)
	}
	offered, events := mustApply(t, s, white, Action{Type: ActionOfferDraw}, at(3000))
	if offered.Draw.PendingBy != nil || !hasEvent(events, EventDrawDeclined) || offered.Phase != PhasePlaying {
		t.Errorf("draw offer to the AI: pending %v events %v; want declined at once", offered.Draw.PendingBy, events)
	}
}

func TestLinkRematch(t *testing.T) {
	s := newGame(t, DefaultOptions())
	if _, _, err := linkRematchGame(s, "g2"); ruleCode(err) != CodeGameNotFinished {
		t.Errorf("rematch of a live game: %v; want game_not_finished", err)
	}
	done, _ := mustApply(t, s, white, Action{Type: ActionResign}, at(1000))
	linked, events, err := linkRematchGame(done, "g2")
	if err != nil || linked.Rematch.Next != "g2" || linked.Version != done.Version+1 || events[0].GameID != "g2" {
		t.Fatalf("LinkRematch = %+v, %v, %v", linked.Rematch, events, err)
	}
	if _, _, err := linkRematchGame(linked, "g3"); ruleCode(err) != CodeRematchLinked {
		t.Errorf("second rematch: %v; want rematch_exists", err)
	}
}

func TestEventAndCodeNames(t *testing.T) {
	for typ := EventGameCreated; int(typ) < len(eventNames); typ++ {
		text, err := typ.MarshalText()
		var back EventType
		if err != nil || back.UnmarshalText(text) != nil || back != typ {
			t.Errorf("event type %d: text %q, %v; does not round-trip", typ, text, err)
		}
	}
	for _, c := range Codes() {
		if strings.HasPrefix(c.String(), "code(") {
			t.Errorf("code %d has no name", c)
		}
	}
	// Codes are numbered 1, 2, ... without a gap: every one has a name.
	if codes := Codes(); int(codes[len(codes)-1]) != len(codes) {
		t.Errorf("Codes() lists %d codes, the last %d; want no gaps", len(codes), codes[len(codes)-1])
	}
}
