package game

import (
	"encoding/json"
	"strings"
	"testing"

	"chessapi/shared/chess"
)

// The test checklist of seeds/000 §10, one named test per item, all played
// through the reducer (Apply, ApplyTimeout, SetPresence, ViewOf). Perft is
// covered by shared/chess.

// step is one move attempt in a scripted game: UCI text and the refusal
// expected (0: the move must be played).
type step struct {
	uci  string
	want Code
}

// runSteps plays steps from s, checking each outcome, and returns the last
// state.
func runSteps(t *testing.T, s *State, steps []step) *State {
	t.Helper()
	for i, st := range steps {
		next, _, err := Apply(s, s.Turn(), moveAction(st.uci), at(int64(i+1)*1000))
		if got := ruleCode(err); got != st.want {
			t.Fatalf("step %d: Apply(move %s) error = %v (code %s); want code %s", i+1, st.uci, err, got, st.want)
		}
		if err == nil {
			s = next
		}
	}
	return s
}

func TestCastlingBans(t *testing.T) {
	standard := DefaultOptions()
	tests := []struct {
		name  string
		fen   string
		steps []step
	}{
		{"king in check", "4k3/8/8/8/4r3/8/8/R3K2R w KQ - 0 1",
			[]step{{"e1g1", CodeKingInCheck}, {"e1c1", CodeKingInCheck}}},
		{"passed square attacked", "4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			[]step{{"e1g1", CodeKingInCheck}, {"e1c1", 0}}},
		{"destination attacked", "4k1r1/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			[]step{{"e1g1", CodeKingInCheck}, {"e1c1", 0}}},
		{"queen side with only b1 attacked is allowed", "1r2k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			[]step{{"e1c1", 0}}},
		{"queen side with d1 attacked is refused", "3rk3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			[]step{{"e1c1", CodeKingInCheck}, {"e1g1", 0}}},
		{"path blocked", "4k3/8/8/8/8/8/8/R3KB1R w KQ - 0 1",
			[]step{{"e1g1", CodeIllegalMove}, {"e1c1", 0}}},
		{"rook has moved", "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			[]step{{"h1h2", 0}, {"e8e7", 0}, {"h2h1", 0}, {"e7e8", 0}, {"e1g1", CodeIllegalMove}, {"e1c1", 0}}},
		{"king has moved", "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			[]step{{"e1f1", 0}, {"e8e7", 0}, {"f1e1", 0}, {"e7e8", 0}, {"e1g1", CodeIllegalMove}, {"e1c1", CodeIllegalMove}}},
		{"king to rook square is not castling in standard", "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
			[]step{{"e1h1", CodeIllegalMove}, {"e1a1", CodeIllegalMove}, {"e1g1", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, gameFromFEN(t, tt.fen, standard), tt.steps)
		})
	}
}

func TestCastlingMovesRookAndIsRecorded(t *testing.T) {
	s := gameFromFEN(t, "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", DefaultOptions())
	s, events := mustApply(t, s, white, moveAction("e1g1"), at(1000))
	if got, want := s.FEN, "4k3/8/8/8/8/8/8/R4RK1 b - - 1 1"; got != want {
		t.Errorf("FEN after e1g1 = %q; want %q", got, want)
	}
	if got := s.Moves[0]; got.UCI != "e1g1" || got.SAN != "O-O" {
		t.Errorf("move record = %+v; want UCI e1g1, SAN O-O", got)
	}
	if !hasEvent(events, EventCastled) {
		t.Errorf("events %v lack castled", events)
	}
}

func TestEnPassant(t *testing.T) {
	const fen = "4k3/3p4/8/4P3/8/8/8/4K3 w - - 0 1"
	tests := []struct {
		name  string
		fen   string
		steps []step
	}{
		{"right after the double step", fen, []step{{"e1d1", 0}, {"d7d5", 0}, {"e5d6", 0}}},
		{"one move late", fen, []step{{"e1d1", 0}, {"d7d5", 0}, {"d1e1", 0}, {"e8f8", 0}, {"e5d6", CodeIllegalMove}}},
		{"not after a single step", fen, []step{{"e1d1", 0}, {"d7d6", 0}, {"d1e1", 0}, {"d6d5", 0}, {"e5d6", CodeIllegalMove}}},
		{"exposing the king on the rank", "4k3/3p4/8/K3P2r/8/8/8/8 w - - 0 1",
			[]step{{"a5b5", 0}, {"d7d5", 0}, {"e5d6", CodeKingInCheck}, {"b5b4", 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, gameFromFEN(t, tt.fen, DefaultOptions()), tt.steps)
		})
	}
	t.Run("captures the pawn", func(t *testing.T) {
		s := runSteps(t, gameFromFEN(t, fen, DefaultOptions()), []step{{"e1d1", 0}, {"d7d5", 0}})
		s, events := mustApply(t, s, white, moveAction("e5d6"), at(5000))
		if got, want := s.FEN, "4k3/8/3P4/8/8/8/8/3K4 b - - 0 2"; got != want {
			t.Errorf("FEN after e5d6 = %q; want %q", got, want)
		}
		if !hasEvent(events, EventEnPassant) || events[0].Captured != "p" || events[0].SAN != "exd6" {
			t.Errorf("events = %+v; want moved exd6 capturing p, then enPassant", events)
		}
	})
}

func TestPromotion(t *testing.T) {
	const fen = "1r5k/P7/8/8/8/8/8/K7 w - - 0 1"
	for _, tt := range []struct {
		name        string
		input       MoveInput
		autoQueen   bool
		wantCode    Code
		wantSAN     string
		wantPromote string
	}{
		{"queen", MoveInput{From: chess.A7, To: chess.A8, Promotion: chess.Queen}, false, 0, "a8=Q", "q"},
		{"rook", MoveInput{From: chess.A7, To: chess.A8, Promotion: chess.Rook}, false, 0, "a8=R", "r"},
		{"bishop", MoveInput{From: chess.A7, To: chess.A8, Promotion: chess.Bishop}, false, 0, "a8=B", "b"},
		{"knight", MoveInput{From: chess.A7, To: chess.A8, Promotion: chess.Knight}, false, 0, "a8=N", "n"},
		{"capturing", MoveInput{UCI: "a7b8q"}, false, 0, "axb8=Q+", "q"},
		{"by SAN", MoveInput{SAN: "axb8=N"}, false, 0, "axb8=N", "n"},
		{"missing piece", MoveInput{From: chess.A7, To: chess.A8}, false, CodePromotionRequired, "", ""},
		{"missing piece in UCI", MoveInput{UCI: "a7a8"}, false, CodePromotionRequired, "", ""},
		{"missing piece in SAN", MoveInput{SAN: "a8"}, false, CodePromotionRequired, "", ""},
		{"autoQueen squares", MoveInput{From: chess.A7, To: chess.A8}, true, 0, "a8=Q", "q"},
		{"autoQueen UCI", MoveInput{UCI: "a7b8"}, true, 0, "axb8=Q+", "q"},
		{"autoQueen SAN", MoveInput{SAN: "axb8+"}, true, 0, "axb8=Q+", "q"},
		{"autoQueen keeps a chosen piece", MoveInput{From: chess.A7, To: chess.A8, Promotion: chess.Knight}, true, 0, "a8=N", "n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.AutoQueen = tt.autoQueen
			s := gameFromFEN(t, fen, o)
			next, events, err := Apply(s, white, Action{Type: ActionMove, Move: tt.input}, at(1000))
			if got := ruleCode(err); got != tt.wantCode {
				t.Fatalf("Apply(%v) error = %v; want code %s", tt.input, err, tt.wantCode)
			}
			if err != nil {
				if re := err.(*RuleError); re.Code != CodePromotionRequired {
					t.Errorf("code = %v; want promotion_required", re.Code)
				}
				return
			}
			if got := next.Moves[0].SAN; got != tt.wantSAN {
				t.Errorf("SAN = %q; want %q", got, tt.wantSAN)
			}
			if !hasEvent(events, EventPromoted) || events[1].Promotion != tt.wantPromote {
				t.Errorf("events = %+v; want promoted to %s", events, tt.wantPromote)
			}
		})
	}
	t.Run("piece ignored for a non-promotion", func(t *testing.T) {
		s := gameFromFEN(t, fen, DefaultOptions())
		next, _ := mustApply(t, s, white, Action{Type: ActionMove, Move: MoveInput{From: chess.A1, To: chess.A2, Promotion: chess.Queen}}, at(1000))
		if got := next.Moves[0].UCI; got != "a1a2" {
			t.Errorf("UCI = %q; want a1a2", got)
		}
	})
}

func TestCheckmateAndStalemate(t *testing.T) {
	t.Run("scholar's mate", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s = play(t, s, 1000, "e2e4", "e7e5", "d1h5", "b8c6", "f1c4", "g8f6")
		s, events := mustApply(t, s, white, moveAction("h5f7"), at(9000))
		r := s.Result
		if s.Phase != PhaseFinished || r == nil || r.Reason != ReasonCheckmate || r.Winner == nil || *r.Winner != white {
			t.Fatalf("after Qxf7# phase %s result %+v; want white wins by checkmate", s.Phase, r)
		}
		if r.MoveCount != 4 || r.Winner == nil || *r.Winner != white {
			t.Errorf("moveCount %d winner %v; want 4, white", r.MoveCount, r.Winner)
		}
		if want := []Rank{{"alice", 1}, {"bob", 2}}; !equalRanks(r.Ranking, want) {
			t.Errorf("ranking = %v; want %v", r.Ranking, want)
		}
		if s.Moves[6].SAN != "Qxf7#" || !hasEvent(events, EventCheckmate) || hasEvent(events, EventCheck) {
			t.Errorf("SAN %q events %+v; want Qxf7#, checkmate and no plain check", s.Moves[6].SAN, events)
		}
		if _, _, err := Apply(s, black, moveAction("e8e7"), at(10000)); ruleCode(err) != CodeGameNotPlaying {
			t.Errorf("move after mate: error %v; want game_not_playing", err)
		}
	})
	t.Run("queen stalemate", func(t *testing.T) {
		s := gameFromFEN(t, "7k/8/8/6Q1/8/8/8/K7 w - - 0 1", DefaultOptions())
		s, events := mustApply(t, s, white, moveAction("g5g6"), at(1000))
		if s.Result == nil || s.Result.Reason != ReasonStalemate || s.Result.Winner != nil {
			t.Fatalf("result %+v; want a stalemate draw", s.Result)
		}
		if !hasEvent(events, EventStalemate) {
			t.Errorf("events %v lack stalemate", events)
		}
		if want := []Rank{{"alice", 1}, {"bob", 1}}; !equalRanks(s.Result.Ranking, want) {
			t.Errorf("ranking = %v; want %v", s.Result.Ranking, want)
		}
	})
	t.Run("check event", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s = play(t, s, 1000, "e2e4", "f7f6")
		_, events := mustApply(t, s, white, moveAction("d1h5"), at(3000))
		if !hasEvent(events, EventCheck) || !events[0].Check {
			t.Errorf("events %+v; want moved with check and a check event", events)
		}
	})
}

func equalRanks(a, b []Rank) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestThreefoldRepetition(t *testing.T) {
	knights := []string{"g1f3", "g8f6", "f3g1", "f6g8"}
	t.Run("en-passant square without a capture is the same position", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		// After 1.e4 the old FEN rule wrote e3; no black pawn can take, so
		// the position is the one after 3.Ng1 and 5.Ng1.
		s = play(t, s, 1000, "e2e4", "g8f6", "g1f3", "f6g8", "f3g1", "g8f6", "g1f3", "f6g8")
		if s.Phase != PhasePlaying {
			t.Fatalf("finished early: %+v", s.Result)
		}
		s = play(t, s, 20000, "f3g1")
		if s.Result == nil || s.Result.Reason != ReasonThreefold {
			t.Fatalf("after the third occurrence: result %+v; want threefold", s.Result)
		}
	})
	t.Run("a capturable en-passant square makes a different position", func(t *testing.T) {
		// 1.e4 (no capture) ... then with a black pawn on d4 the position
		// after e2e4 differs from the same placement later.
		s := gameFromFEN(t, "4k3/8/8/8/3p4/8/4P3/4K1N1 w - - 0 1", DefaultOptions())
		s = play(t, s, 1000, "e2e4", "e8d8", "g1f3", "d8e8", "f3g1", "e8d8", "g1f3", "d8e8", "f3g1")
		// Position after e2e4 (black to move, d4xe3 possible) occurred once;
		// the position after each Ng1 ... with white to move is another.
		if s.Phase != PhasePlaying {
			t.Fatalf("finished: %+v; the en-passant position must not count with the later ones", s.Result)
		}
		key := repetitionKey(s.Moves[0].FENAfter)
		if !strings.HasSuffix(key, " e3") || repetitionTable(s)[key] != 1 {
			t.Errorf("key %q count %d; want an e3 key seen once", key, repetitionTable(s)[key])
		}
	})
	t.Run("changed castling rights make a different position", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s = play(t, s, 1000, "e2e4", "e7e5", "e1e2", "e8e7", "e2e1", "e7e8", "e1e2", "e8e7", "e2e1", "e7e8")
		if s.Phase != PhasePlaying {
			t.Fatalf("finished at ply %d (%+v); the position after 1...e5 had castling rights", s.Ply(), s.Result)
		}
		s = play(t, s, 20000, "e1e2", "e8e7")
		if s.Result == nil || s.Result.Reason != ReasonThreefold || s.Ply() != 12 {
			t.Fatalf("ply %d result %+v; want threefold at ply 12", s.Ply(), s.Result)
		}
	})
	t.Run("fide: claimable, claimed, fivefold automatic", func(t *testing.T) {
		s := newGame(t, opts(t, `{"drawMode":"fide"}`))
		s = play(t, s, 1000, append(knights, knights...)...)
		if s.Claimable == nil || *s.Claimable != ClaimThreefold || s.Phase != PhasePlaying {
			t.Fatalf("claimable %v phase %s; want threefold claimable while playing", s.Claimable, s.Phase)
		}
		if _, _, err := Apply(s, black, Action{Type: ActionClaimDraw}, at(20000)); ruleCode(err) != CodeNotYourTurn {
			t.Errorf("claim by the side not to move: %v; want not_your_turn", err)
		}
		claimed, events := mustApply(t, s, white, Action{Type: ActionClaimDraw}, at(20000))
		if claimed.Result == nil || claimed.Result.Reason != ReasonThreefold || !hasEvent(events, EventDrawClaimed) {
			t.Errorf("claim: result %+v events %v; want threefold by claim", claimed.Result, events)
		}
		s = play(t, s, 30000, append(knights, knights...)...)
		if s.Result == nil || s.Result.Reason != ReasonFivefold || s.Ply() != 16 {
			t.Errorf("ply %d result %+v; want fivefold at ply 16", s.Ply(), s.Result)
		}
	})
	t.Run("auto mode has nothing to claim", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		if _, _, err := Apply(s, white, Action{Type: ActionClaimDraw}, at(1000)); ruleCode(err) != CodeClaimDisabled {
			t.Errorf("claimDraw in auto mode: %v; want claim_disabled", err)
		}
		s = newGame(t, opts(t, `{"drawMode":"fide"}`))
		if _, _, err := Apply(s, white, Action{Type: ActionClaimDraw}, at(1000)); ruleCode(err) != CodeNotClaimable {
			t.Errorf("claimDraw with nothing to claim: %v; want not_claimable", err)
		}
	})
}

func TestFiftyMoveRule(t *testing.T) {
	const quiet = "7k/8/6K1/8/8/8/8/R7 w - - 99 80"
	tests := []struct {
		name       string
		options    string
		fen        string
		move       string
		wantPhase  Phase
		wantReason Reason
		wantClaim  *Claim
	}{
		{"auto draws at ply 100", `{}`, quiet, "a1a2", PhaseFinished, ReasonFiftyMove, nil},
		{"checkmate on ply 100 wins", `{}`, quiet, "a1a8", PhaseFinished, ReasonCheckmate, nil},
		{"fide makes it claimable", `{"drawMode":"fide"}`, quiet, "a1a2", PhasePlaying, "", ptr(ClaimFiftyMove)},
		{"fide checkmate on ply 100 wins", `{"drawMode":"fide"}`, quiet, "a1a8", PhaseFinished, ReasonCheckmate, nil},
		{"fide draws at ply 150", `{"drawMode":"fide"}`, "7k/8/6K1/8/8/8/8/R7 w - - 149 90", "a1a2", PhaseFinished, ReasonSeventyFiveMove, nil},
		{"a pawn move resets", `{}`, "7k/8/6K1/8/8/8/P7/R7 w - - 99 80", "a2a3", PhasePlaying, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gameFromFEN(t, tt.fen, opts(t, tt.options))
			s, _ = mustApply(t, s, white, moveAction(tt.move), at(1000))
			if s.Phase != tt.wantPhase {
				t.Fatalf("phase = %s (%+v); want %s", s.Phase, s.Result, tt.wantPhase)
			}
			if s.Result != nil && s.Result.Reason != tt.wantReason {
				t.Errorf("reason = %s; want %s", s.Result.Reason, tt.wantReason)
			}
			if (s.Claimable == nil) != (tt.wantClaim == nil) || (s.Claimable != nil && *s.Claimable != *tt.wantClaim) {
				t.Errorf("claimable = %v; want %v", s.Claimable, tt.wantClaim)
			}
		})
	}
	t.Run("fide claim", func(t *testing.T) {
		s := gameFromFEN(t, quiet, opts(t, `{"drawMode":"fide"}`))
		s, events := mustApply(t, s, white, moveAction("a1a2"), at(1000))
		if !hasEvent(events, EventDrawClaimable) {
			t.Errorf("events %v lack drawClaimable", events)
		}
		s, _ = mustApply(t, s, black, Action{Type: ActionClaimDraw}, at(2000))
		if s.Result == nil || s.Result.Reason != ReasonFiftyMove || s.Result.Winner != nil || s.Result.MoveCount != 1 {
			t.Errorf("result %+v; want a fifty-move draw", s.Result)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestInsufficientMaterial(t *testing.T) {
	tests := []struct {
		name     string
		fen      string
		wantDraw bool
	}{
		{"K v K", "7k/8/8/8/8/8/8/Kr6 w - - 0 1", true},
		{"KB v K", "7k/8/8/8/8/8/8/KrB5 w - - 0 1", true},
		{"KN v K", "7k/8/8/8/8/8/8/KrN5 w - - 0 1", true},
		{"bishops on one colour", "5b1k/8/8/8/8/8/8/KrB5 w - - 0 1", true},
		{"bishops on both colours", "6bk/8/8/8/8/8/8/KrB5 w - - 0 1", false},
		{"KNN v K is not a draw", "7k/8/8/8/8/8/8/KrNN4 w - - 0 1", false},
		{"KB v KN is not a draw", "6nk/8/8/8/8/8/8/KrB5 w - - 0 1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gameFromFEN(t, tt.fen, DefaultOptions())
			s, _ = mustApply(t, s, white, moveAction("a1b1"), at(1000))
			gotDraw := s.Result != nil && s.Result.Reason == ReasonInsufficientMaterial
			if gotDraw != tt.wantDraw || (!tt.wantDraw && s.Phase != PhasePlaying) {
				t.Errorf("after Kxb1: phase %s result %+v; want insufficient-material draw %v", s.Phase, s.Result, tt.wantDraw)
			}
		})
	}
}

func TestTimeLossExceptions(t *testing.T) {
	tests := []struct {
		name       string
		fen        string
		flagged    chess.Color
		wantReason Reason
		wantWinner *chess.Color
	}{
		{"opponent has a lone king", "7k/8/8/8/8/8/8/KQ6 w - - 0 1", white, ReasonTimeoutVsInsufficient, nil},
		{"opponent has K+N, flagged side K+Q", "6nk/8/8/8/8/8/8/KQ6 w - - 0 1", white, ReasonTimeLoss, ptr(black)},
		{"opponent has K+N against a lone king", "6nk/8/8/8/8/8/8/K7 w - - 0 1", white, ReasonTimeoutVsInsufficient, nil},
		{"opponent has a queen", "7k/8/8/8/8/8/8/KQ6 w - - 0 1", black, ReasonTimeLoss, ptr(white)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gameFromFEN(t, tt.fen, opts(t, `{"timeControl":"1+0"}`))
			if tt.flagged == black {
				s, _ = mustApply(t, s, white, moveAction("a1a2"), at(1000))
			}
			deadline, ok := Deadline(s)
			if !ok {
				t.Fatal("Deadline() = none; want one")
			}
			s, events, ok := ApplyTimeout(s, deadline.Add(5*1e9))
			if !ok || s.Result == nil {
				t.Fatalf("ApplyTimeout did nothing")
			}
			if s.Result.Reason != tt.wantReason || !sameColor(s.Result.Winner, tt.wantWinner) {
				t.Errorf("result %+v; want %s won by %v", s.Result, tt.wantReason, tt.wantWinner)
			}
			if !hasEvent(events, EventTimeout) || s.Result.EndedAt != deadline.UnixMilli() {
				t.Errorf("events %v endedAt %d; want a timeout at the deadline %d", events, s.Result.EndedAt, deadline.UnixMilli())
			}
			if s.Clock.RemainingMs[tt.flagged] != 0 {
				t.Errorf("flagged clock = %d; want 0", s.Clock.RemainingMs[tt.flagged])
			}
		})
	}
}

func sameColor(a, b *chess.Color) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func TestFirstMoveAbort(t *testing.T) {
	tests := []struct {
		name  string
		moves []string
		first int64 // ms after the last move (or the start) that the limit ends
	}{
		{"white never moves", nil, 30000},
		{"black never answers", []string{"e2e4"}, 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newGame(t, DefaultOptions())
			s = play(t, s, 1000, tt.moves...)
			start := s.Clock.TurnStartedAt
			deadline, _ := Deadline(s)
			if got, want := deadline.UnixMilli(), start+tt.first; got != want {
				t.Fatalf("first-move deadline = %d; want %d", got, want)
			}
			if _, _, ok := ApplyTimeout(s, deadline.Add(-1e6)); ok {
				t.Fatal("ApplyTimeout before the deadline applied")
			}
			s, _, ok := ApplyTimeout(s, deadline)
			if !ok || s.Result == nil || s.Result.Reason != ReasonAborted {
				t.Fatalf("result %+v; want aborted", s.Result)
			}
			if len(s.Result.Ranking) != 0 || s.Result.Winner != nil {
				t.Errorf("ranking %v winner %v; want empty, none", s.Result.Ranking, s.Result.Winner)
			}
			js, _ := json.Marshal(s.Result)
			if !strings.Contains(string(js), `"ranking":[]`) {
				t.Errorf("result JSON %s; want an empty ranking array", js)
			}
			pgn, err := PGN(s)
			if err != nil || !strings.HasSuffix(strings.TrimSpace(pgn), "*") {
				t.Errorf("PGN = %q, %v; want result *", pgn, err)
			}
		})
	}
}

func TestFischerIncrement(t *testing.T) {
	s := newGame(t, opts(t, `{"timeControl":"3+2"}`))
	// First moves cost nothing and earn nothing.
	s = play(t, s, 20000, "e2e4", "e7e5")
	if got := s.Clock.RemainingMs; got != (PerColor[int64]{180000, 180000}) {
		t.Fatalf("clocks after first moves = %v; want 180000 each", got)
	}
	// White thinks 10 s: 180 - 10 + 2.
	s, _ = mustApply(t, s, white, moveAction("g1f3"), at(21000+10000))
	if got := s.Clock.RemainingMs[white]; got != 172000 {
		t.Errorf("white clock = %d; want 172000 (increment after the move)", got)
	}
	// Black lets the clock run out: a move at the flag or later is refused.
	flag := s.Clock.TurnStartedAt + s.Clock.RemainingMs[black]
	if _, _, err := Apply(s, black, moveAction("b8c6"), at(flag-t0.UnixMilli())); ruleCode(err) != CodeTimeExpired {
		t.Fatalf("move at 0 ms left: %v; want time_expired", err)
	}
	ok, _, err := Apply(s, black, moveAction("b8c6"), at(flag-t0.UnixMilli()-1))
	if err != nil || ok.Clock.RemainingMs[black] != 1+2000 {
		t.Fatalf("move with 1 ms left: %v, clock %d; want played with 2001 ms", err, ok.Clock.RemainingMs[black])
	}
	ended, events, applied := ApplyTimeout(s, at(flag-t0.UnixMilli()+5000))
	if !applied || ended.Result.Reason != ReasonTimeLoss || *ended.Result.Winner != white {
		t.Fatalf("ApplyTimeout: %v %+v; want black loses on time", applied, ended.Result)
	}
	if ended.Result.EndedAt != flag || ended.Clock.RemainingMs[black] != 0 || events[0].Reason != causeClock {
		t.Errorf("ended at %d clock %d cause %q; want at the flag %d, 0, clock", ended.Result.EndedAt, ended.Clock.RemainingMs[black], events[0].Reason, flag)
	}
}

func TestChess960(t *testing.T) {
	o960 := opts(t, `{"variant":"chess960"}`)
	t.Run("518 is the standard setup", func(t *testing.T) {
		fen, err := chess.Chess960StartFEN(518)
		if err != nil || !strings.HasPrefix(fen, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w ") {
			t.Fatalf("Chess960StartFEN(518) = %q, %v; want the standard placement", fen, err)
		}
		s := newGame(t, o960)
		s.StartFEN, s.FEN = fen, fen
		s.Chess960Index = ptr(518)
		if err := s.replayLive(); err != nil {
			t.Fatal(err)
		}
		s = play(t, s, 1000, "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6")
		s, _ = mustApply(t, s, white, moveAction("e1h1"), at(9000))
		if got := s.Moves[6]; got.UCI != "e1h1" || got.SAN != "O-O" {
			t.Errorf("castling in 960 #518 = %+v; want king→rook UCI e1h1, O-O", got)
		}
		if !strings.Contains(s.FEN, " b ha ") {
			t.Errorf("FEN %q; want Shredder castling field ha", s.FEN)
		}
	})
	t.Run("all 960 setups", func(t *testing.T) {
		seen := map[string]bool{}
		for n := range 960 {
			rank, err := chess.Chess960BackRank(n)
			if err != nil {
				t.Fatalf("Chess960BackRank(%d) = %v", n, err)
			}
			b1, b2 := strings.IndexByte(rank, 'B'), strings.LastIndexByte(rank, 'B')
			r1, k, r2 := strings.IndexByte(rank, 'R'), strings.IndexByte(rank, 'K'), strings.LastIndexByte(rank, 'R')
			if b1%2 == b2%2 || !(r1 < k && k < r2) || seen[rank] {
				t.Errorf("setup %d = %s: bishops on one colour, king not between rooks, or a duplicate", n, rank)
			}
			seen[rank] = true
		}
	})
	tests := []struct {
		name  string
		fen   string
		steps []step
	}{
		{"king already on g1 castles without moving", "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1",
			[]step{{"g1h1", 0}}},
		{"king to g1 from b1", "6k1/8/8/8/8/8/8/1K5R w H - 0 1",
			[]step{{"b1g1", 0}}},
		{"adjacent destination is a king move", "r3k3/8/8/8/8/8/8/RK5R w HA - 0 1",
			[]step{{"b1c1", 0}, {"e8e7", 0}, {"c1a1", CodeIllegalMove}}},
		{"king path attacked", "4kr2/8/8/8/8/8/8/1K5R w H - 0 1",
			[]step{{"b1h1", CodeKingInCheck}, {"b1g1", CodeKingInCheck}}},
		{"king destination attacked", "4k1r1/8/8/8/8/8/8/1K5R w H - 0 1",
			[]step{{"b1h1", CodeKingInCheck}}},
		{"king path blocked", "4k3/8/8/8/8/8/8/1K1N3R w H - 0 1",
			[]step{{"b1h1", CodeIllegalMove}}},
		{"rook path blocked", "4k3/8/8/8/8/8/8/RN1K4 w A - 0 1",
			[]step{{"d1a1", CodeIllegalMove}, {"d1c1", 0}}},
		{"rook shields the king's destination", "4k3/8/8/8/8/8/8/r1RK4 w C - 0 1",
			[]step{{"d1c1", CodeKingInCheck}}},
		{"rights lost after the rook moves", "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1",
			[]step{{"h1h2", 0}, {"b8b7", 0}, {"h2h1", 0}, {"b7b8", 0}, {"g1h1", CodeIllegalMove}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runSteps(t, gameFromFEN(t, tt.fen, o960), tt.steps)
		})
	}
	t.Run("adjacent destination keeps the rook", func(t *testing.T) {
		s := gameFromFEN(t, "r3k3/8/8/8/8/8/8/RK5R w HA - 0 1", o960)
		s, _ = mustApply(t, s, white, moveAction("b1c1"), at(1000))
		if got := s.Moves[0].SAN; got != "Kc1" || !strings.HasPrefix(s.FEN, "r3k3/8/8/8/8/8/8/R1K4R b ") {
			t.Errorf("b1c1 gave %s, FEN %q; want the king move Kc1", got, s.FEN)
		}
		s = gameFromFEN(t, "r3k3/8/8/8/8/8/8/RK5R w HA - 0 1", o960)
		s, _ = mustApply(t, s, white, moveAction("b1a1"), at(1000))
		if got := s.Moves[0].SAN; got != "O-O-O" || !strings.HasPrefix(s.FEN, "r3k3/8/8/8/8/8/8/2KR3R b ") {
			t.Errorf("b1a1 gave %s, FEN %q; want O-O-O", got, s.FEN)
		}
	})
	t.Run("castle action and king-on-g1 result", func(t *testing.T) {
		s := gameFromFEN(t, "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1", o960)
		s, _ = mustApply(t, s, white, Action{Type: ActionCastle, Castle: chess.KingSide}, at(1000))
		if got, want := s.FEN, "1r4kr/8/8/8/8/8/8/1R3RK1 b hb - 1 1"; got != want {
			t.Errorf("FEN = %q; want %q", got, want)
		}
		if got := s.Moves[0]; got.UCI != "g1h1" || got.SAN != "O-O" {
			t.Errorf("move = %+v; want g1h1 O-O", got)
		}
		if _, _, err := Apply(s, black, Action{Type: ActionCastle, Castle: chess.QueenSide}, at(2000)); ruleCode(err) != CodeKingInCheck {
			t.Errorf("O-O-O through the attacked f8: %v; want king_in_check", err)
		}
		s, _ = mustApply(t, s, black, Action{Type: ActionCastle, Castle: chess.KingSide}, at(2000))
		if got, want := s.FEN, "1r3rk1/8/8/8/8/8/8/1R3RK1 w - - 2 2"; got != want {
			t.Errorf("FEN = %q; want %q", got, want)
		}
	})
	t.Run("undo restores castling rights", func(t *testing.T) {
		s := gameFromFEN(t, "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1", o960)
		before := s.FEN
		s, _ = mustApply(t, s, white, moveAction("h1h2"), at(1000))
		if strings.Contains(strings.Fields(s.FEN)[2], "H") {
			t.Fatalf("FEN %q still has the H right", s.FEN)
		}
		s, _ = mustApply(t, s, white, Action{Type: ActionRequestUndo}, at(2000))
		s, _ = mustApply(t, s, black, Action{Type: ActionRespondUndo, Accept: true}, at(3000))
		if s.FEN != before {
			t.Errorf("FEN after undo = %q; want %q", s.FEN, before)
		}
		runSteps(t, s, []step{{"g1h1", 0}})
	})
	t.Run("random 960 games keep the rules' invariants", func(t *testing.T) {
		for seed := range uint64(20) {
			states := randomGame(t, unlimitedClock(t, "chess960"), seed, 200)
			first := states[0]
			if first.Chess960Index == nil || *first.Chess960Index < 0 || *first.Chess960Index > 959 {
				t.Fatalf("seed %d: chess960Index %v", seed, first.Chess960Index)
			}
			checkReplay(t, states[len(states)-1])
		}
	})
}

// checkReplay replays the recorded UCI moves with the rules package and
// compares every FEN and SAN with the record.
func checkReplay(t *testing.T, s *State) {
	t.Helper()
	pos, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		t.Fatal(err)
	}
	for i, rec := range s.Moves {
		m, err := pos.ParseUCI(rec.UCI)
		if err != nil {
			t.Fatalf("ply %d %s: %v", i+1, rec.UCI, err)
		}
		if san := pos.SAN(m); san != rec.SAN {
			t.Fatalf("ply %d: SAN %q; want %q", i+1, rec.SAN, san)
		}
		pos.Play(m)
		if pos.FEN() != rec.FENAfter {
			t.Fatalf("ply %d: FEN %q; want %q", i+1, rec.FENAfter, pos.FEN())
		}
	}
	if pos.FEN() != s.FEN {
		t.Fatalf("state FEN %q; want %q", s.FEN, pos.FEN())
	}
}

func TestUndo(t *testing.T) {
	t.Run("one ply", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		start := s.FEN
		s = play(t, s, 1000, "e2e4")
		s, events := mustApply(t, s, white, Action{Type: ActionRequestUndo}, at(2000))
		if s.Undo.Pending == nil || s.Undo.Pending.Plies != 1 || events[0].Type != EventUndoRequested {
			t.Fatalf("pending %+v events %v; want a 1-ply request", s.Undo.Pending, events)
		}
		s, _ = mustApply(t, s, black, Action{Type: ActionRespondUndo, Accept: true}, at(3000))
		if s.FEN != start || s.Ply() != 0 || s.Turn() != white || len(repetitionTable(s)) != 1 || repetitionTable(s)[repetitionKey(start)] != 1 {
			t.Errorf("after undo: FEN %q ply %d repetition %v; want the start", s.FEN, s.Ply(), repetitionTable(s))
		}
		if s.Undo.UsedBy[white] != 1 || s.Clock.Started[white] {
			t.Errorf("usedBy %v started %v; want white used 1, first move pending again", s.Undo.UsedBy, s.Clock.Started)
		}
		if _, _, err := Apply(s, white, Action{Type: ActionRequestUndo}, at(4000)); ruleCode(err) != CodeUndoLimit && ruleCode(err) != CodeNothingToUndo {
			t.Errorf("second request: %v; want a refusal", err)
		}
	})
	t.Run("two plies restore repetition counts", func(t *testing.T) {
		s := newGame(t, opts(t, `{"undo":"unlimited","drawMode":"fide"}`))
		s = play(t, s, 1000, "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6")
		wantRep := repetitionTable(s)
		wantFEN := s.FEN
		s = play(t, s, 10000, "f3g1", "f6g8")
		if s.Claimable == nil {
			t.Fatalf("no threefold claim after the third occurrence")
		}
		s, _ = mustApply(t, s, white, Action{Type: ActionRequestUndo}, at(20000))
		if s.Undo.Pending.Plies != 2 {
			t.Fatalf("default plies on own turn = %d; want 2", s.Undo.Pending.Plies)
		}
		s, _ = mustApply(t, s, black, Action{Type: ActionRespondUndo, Accept: true}, at(21000))
		if s.FEN != wantFEN || !equalCounts(repetitionTable(s), wantRep) || s.Claimable != nil {
			t.Errorf("after undo: FEN %q repetition %v claimable %v; want %q %v none", s.FEN, repetitionTable(s), s.Claimable, wantFEN, wantRep)
		}
	})
	t.Run("clock is not rewound", func(t *testing.T) {
		s := newGame(t, opts(t, `{"timeControl":"5+0"}`))
		s = play(t, s, 1000, "e2e4", "e7e5", "g1f3")
		// White spent 1 s on Nf3; black thinks 20 s, then white asks to
		// take Nf3 back and black accepts.
		s, _ = mustApply(t, s, white, Action{Type: ActionRequestUndo}, at(10000))
		s, _ = mustApply(t, s, black, Action{Type: ActionRespondUndo, Accept: true}, at(23000))
		if got := s.Clock.RemainingMs; got != (PerColor[int64]{299000, 280000}) {
			t.Errorf("clocks after undo = %v; want white 299000 (spent), black 280000 (charged)", got)
		}
		if s.Clock.TurnStartedAt != at(23000).UnixMilli() || s.Turn() != white {
			t.Errorf("turn %s started %d; want white at the acceptance", s.Turn(), s.Clock.TurnStartedAt)
		}
	})
	t.Run("declined changes nothing", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s = play(t, s, 1000, "e2e4", "e7e5")
		asked, _ := mustApply(t, s, black, Action{Type: ActionRequestUndo}, at(3000))
		declined, events := mustApply(t, asked, white, Action{Type: ActionRespondUndo, Accept: false}, at(4000))
		if events[0].Type != EventUndoDeclined {
			t.Errorf("events %v; want undoDeclined", events)
		}
		want := s.clone()
		want.Version, want.Changes = declined.Version, declined.Changes
		assertSameState(t, declined, want, "after a declined undo")
	})
	t.Run("refusals", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		if _, _, err := Apply(s, white, Action{Type: ActionRequestUndo}, at(1000)); ruleCode(err) != CodeNothingToUndo {
			t.Errorf("undo with no moves: %v; want nothing_to_undo", err)
		}
		s = play(t, s, 1000, "e2e4")
		if _, _, err := Apply(s, black, Action{Type: ActionRequestUndo, Plies: 1}, at(2000)); ruleCode(err) != CodeNothingToUndo {
			t.Errorf("1-ply undo of the opponent's move: %v; want nothing_to_undo", err)
		}
		if _, _, err := Apply(s, black, Action{Type: ActionRespondUndo, Accept: true}, at(2000)); ruleCode(err) != CodeNoPendingRequest {
			t.Errorf("respond with nothing pending: %v; want no_pending_request", err)
		}
		off := newGame(t, opts(t, `{"undo":"off"}`))
		off = play(t, off, 1000, "e2e4")
		if _, _, err := Apply(off, white, Action{Type: ActionRequestUndo}, at(2000)); ruleCode(err) != CodeUndoDisabled {
			t.Errorf("undo off: %v; want undo_disabled", err)
		}
		pending, _ := mustApply(t, s, white, Action{Type: ActionRequestUndo}, at(2000))
		if _, _, err := Apply(pending, white, Action{Type: ActionRespondUndo, Accept: true}, at(3000)); ruleCode(err) != CodeNoPendingRequest {
			t.Errorf("answering one's own request: %v; want no_pending_request", err)
		}
		if _, _, err := Apply(pending, black, Action{Type: ActionOfferDraw}, at(3000)); ruleCode(err) != CodeRequestPending {
			t.Errorf("offer while a request is pending: %v; want request_pending", err)
		}
	})
	t.Run("the requester moving withdraws it", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s = play(t, s, 1000, "e2e4", "e7e5")
		s, _ = mustApply(t, s, white, Action{Type: ActionRequestUndo}, at(3000))
		s, events := mustApply(t, s, white, moveAction("g1f3"), at(4000))
		if s.Undo.Pending != nil || !hasEvent(events, EventUndoCancelled) || s.Undo.UsedBy[white] != 0 {
			t.Errorf("pending %+v events %v used %v; want it withdrawn, nothing used", s.Undo.Pending, events, s.Undo.UsedBy)
		}
	})
	t.Run("the asked side moving declines it", func(t *testing.T) {
		s := newGame(t, DefaultOptions())
		s = play(t, s, 1000, "e2e4")
		s, _ = mustApply(t, s, white, Action{Type: ActionRequestUndo}, at(2000))
		s, events := mustApply(t, s, black, moveAction("e7e5"), at(3000))
		if s.Undo.Pending != nil || !hasEvent(events, EventUndoDeclined) {
			t.Errorf("pending %+v events %v; want it declined automatically", s.Undo.Pending, events)
		}
	})
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDisconnectGrace(t *testing.T) {
	t.Run("on own turn", func(t *testing.T) {
		s := newGame(t, opts(t, `{"timeControl":"10+0","disconnectGraceSec":30}`))
		s = play(t, s, 1000, "e2e4", "e7e5")
		s, _, ok := SetPresence(s, white, false, at(5000))
		if !ok {
			t.Fatal("SetPresence(disconnect) changed nothing")
		}
		deadline, _ := Deadline(s)
		if got, want := deadline.UnixMilli(), at(35000).UnixMilli(); got != want {
			t.Fatalf("deadline = %d; want disconnect + 30 s = %d", got, want)
		}
		ended, events, ok := ApplyTimeout(s, at(36000))
		if !ok || ended.Result.Reason != ReasonTimeLoss || *ended.Result.Winner != black {
			t.Fatalf("result %+v; want white loses", ended.Result)
		}
		if events[0].Reason != causeDisconnect || ended.Clock.RemainingMs[white] != 600000-33000 {
			t.Errorf("cause %q white clock %d; want disconnect, charged to the deadline (567000)", events[0].Reason, ended.Clock.RemainingMs[white])
		}
		back, _, ok := SetPresence(s, white, true, at(20000))
		if d, _ := Deadline(back); !ok || d.UnixMilli() != at(2000+600000).UnixMilli() {
			t.Errorf("deadline after reconnecting = %v; want the clock deadline", d)
		}
	})
	t.Run("during the opponent's turn counts from own turn", func(t *testing.T) {
		s := newGame(t, opts(t, `{"timeControl":"10+0","disconnectGraceSec":60}`))
		s = play(t, s, 1000, "e2e4", "e7e5")
		s, _, _ = SetPresence(s, black, false, at(3000))
		if d, _ := Deadline(s); d.UnixMilli() != at(2000+600000).UnixMilli() {
			t.Fatalf("white's deadline = %v; black's disconnection must not change it", d)
		}
		s, _ = mustApply(t, s, white, moveAction("g1f3"), at(50000))
		if d, _ := Deadline(s); d.UnixMilli() != at(50000+60000).UnixMilli() {
			t.Errorf("black's deadline = %d; want its turn start + 60 s = %d", d.UnixMilli(), at(110000).UnixMilli())
		}
	})
	t.Run("an AI seat is never flagged", func(t *testing.T) {
		s, _, err := New(NewGame{GameID: "ai", Options: opts(t, `{"colorAssignment":"hostBlack","timeControl":"1+0"}`),
			Host: Player{ID: "h", TokenHash: "x"}, AI: "hard"}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if level, ok := s.AITurn(); !ok || level != "hard" {
			t.Fatalf("AITurn() = %q, %v; want hard, true", level, ok)
		}
		d, _ := Deadline(s)
		if _, _, ok := ApplyTimeout(s, d.Add(3600e9)); ok {
			t.Fatal("ApplyTimeout flagged the AI")
		}
		s, _ = mustApply(t, s, white, moveAction("e2e4"), d.Add(3600e9))
		if s.Phase != PhasePlaying {
			t.Fatalf("late AI move ended the game: %+v", s.Result)
		}
	})
}

func TestInformationHiding(t *testing.T) {
	s := newGame(t, DefaultOptions())
	s = play(t, s, 1000, "e2e4")
	viewers := []struct {
		name          string
		you           *chess.Color
		wantLegalMove bool
	}{
		{"spectator", nil, false},
		{"seat not to move", ptr(white), false},
		{"seat to move", ptr(black), true},
	}
	for _, v := range viewers {
		t.Run(v.name, func(t *testing.T) {
			view, err := ViewOf(s, v.you, at(3000))
			if err != nil {
				t.Fatal(err)
			}
			js, err := json.Marshal(view)
			if err != nil {
				t.Fatal(err)
			}
			text := string(js)
			if got := !strings.Contains(text, `"legalMoves":null`); got != v.wantLegalMove {
				t.Errorf("legalMoves listed = %v; want %v", got, v.wantLegalMove)
			}
			for _, secret := range []string{"hash-alice", "hash-bob", "tokenHash", `"rng"`, "requests"} {
				if strings.Contains(text, secret) {
					t.Errorf("view JSON contains %q: %s", secret, text)
				}
			}
			if v.you == nil && !strings.Contains(text, `"you":null`) {
				t.Errorf("spectator view lacks you:null")
			}
		})
	}
	t.Run("finished game lists no legal moves", func(t *testing.T) {
		done, _ := mustApply(t, s, black, Action{Type: ActionResign}, at(3000))
		view, _ := ViewOf(done, ptr(black), at(4000))
		if len(view.LegalMoves) != 0 {
			t.Errorf("legalMoves = %v; want none", view.LegalMoves)
		}
	})
}

func TestReplayDeterminism(t *testing.T) {
	for _, variant := range []string{"standard", "chess960"} {
		t.Run(variant, func(t *testing.T) {
			a := randomGame(t, unlimitedClock(t, variant), 42, 120)
			b := randomGame(t, unlimitedClock(t, variant), 42, 120)
			if len(a) != len(b) {
				t.Fatalf("game lengths %d and %d differ", len(a), len(b))
			}
			for i := range a {
				assertSameState(t, b[i], a[i], "same seed, same actions")
			}
			if variant == "chess960" {
				indexes := map[int]bool{}
				for seed := range uint64(8) {
					s, _, _ := New(NewGame{GameID: "x", Options: unlimitedClock(t, variant), Host: Player{ID: "h"}, Seed: seed}, t0)
					again, _, _ := New(NewGame{GameID: "x", Options: unlimitedClock(t, variant), Host: Player{ID: "h"}, Seed: seed}, t0)
					if *s.Chess960Index != *again.Chess960Index {
						t.Errorf("seed %d gave setups %d and %d", seed, *s.Chess960Index, *again.Chess960Index)
					}
					indexes[*s.Chess960Index] = true
				}
				if len(indexes) < 2 {
					t.Errorf("8 seeds gave setups %v; want them to differ", indexes)
				}
			}
		})
	}
}
