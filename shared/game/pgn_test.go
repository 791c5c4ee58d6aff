package game

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"chessapi/shared/chess"
)

// The PGN of SPEC §16.2, read back with the rules package's PGN reader and
// checked against the PGN standard's export format.

// checkExportFormat checks the export format of the PGN standard: tag pairs
// one a line as [Name "Value"], the Seven Tag Roster first in its order,
// then the other tags in ASCII order of their names; an empty line; then
// movetext lines of less than 80 characters. It returns the tags in order.
func checkExportFormat(t *testing.T, pgn string) []chess.PGNTag {
	t.Helper()
	head, movetext, ok := strings.Cut(pgn, "\n\n")
	if !ok {
		t.Fatalf("no empty line after the tags:\n%s", pgn)
	}
	tagLine := regexp.MustCompile(`^\[([A-Za-z0-9_]+) "((?:[^"\\]|\\.)*)"\]$`)
	var tags []chess.PGNTag
	for _, line := range strings.Split(head, "\n") {
		m := tagLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("not a tag pair in export format: %q", line)
		}
		tags = append(tags, chess.PGNTag{Name: m[1], Value: m[2]})
	}
	roster := []string{"Event", "Site", "Date", "Round", "White", "Black", "Result"}
	if len(tags) < len(roster) {
		t.Fatalf("%d tags; want the Seven Tag Roster first", len(tags))
	}
	for i, name := range roster {
		if tags[i].Name != name {
			t.Errorf("tag %d is %s; want %s (the Seven Tag Roster's order)", i+1, tags[i].Name, name)
		}
	}
	rest := tags[len(roster):]
	if !slices.IsSortedFunc(rest, func(a, b chess.PGNTag) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("tags after the roster not in ASCII order: %v", rest)
	}
	for _, line := range strings.Split(strings.TrimSuffix(movetext, "\n"), "\n") {
		if len(line) >= 80 || line == "" {
			t.Errorf("movetext line of %d characters: %q", len(line), line)
		}
	}
	return tags
}

func tagValue(tags []chess.PGNTag, name string) (string, bool) {
	for _, tg := range tags {
		if tg.Name == name {
			return tg.Value, true
		}
	}
	return "", false
}

// TestPGNOfARatedGame: a rated game (a rated room: the yeoul rules'
// per-move clock) says so, with both ratings as before the game.
func TestPGNOfARatedGame(t *testing.T) {
	s := readyBoth(t, newRatedGame(t, RoomIntermediate, `{}`), 0)
	s = play(t, s, 5000, "f2f3", "e7e5", "g2g4")
	players := PerColor[PlayerRating]{{Rating: 1012, RatedGames: 3}, {Rating: 1190, RatedGames: 40}}
	s, _, err := Reduce(s, Rated{Step: Act{By: black, Action: moveAction("d8h4")}, Players: players}, at(9000))
	if err != nil || s.Result.RatingChange == nil {
		t.Fatalf("mate: %v, %+v", err, s.Result)
	}
	pgn, err := PGN(s)
	if err != nil {
		t.Fatal(err)
	}
	tags := checkExportFormat(t, pgn)
	want := []chess.PGNTag{
		{Name: "Event", Value: "Rated game"},
		{Name: "Site", Value: "chessapi"},
		{Name: "Date", Value: "2025.03.01"},
		{Name: "Round", Value: "-"},
		{Name: "White", Value: "W"},
		{Name: "Black", Value: "B"},
		{Name: "Result", Value: "0-1"},
		{Name: "BlackElo", Value: "1190"},
		{Name: "GameId", Value: "g"},
		{Name: "Termination", Value: "normal"},
		{Name: "TimeControl", Value: "1/60"},
		{Name: "WhiteElo", Value: "1012"},
	}
	if !slices.Equal(tags, want) {
		t.Errorf("tags\n got %v\nwant %v", tags, want)
	}
	g, err := chess.ParsePGN(pgn)
	if err != nil {
		t.Fatalf("ParsePGN: %v\n%s", err, pgn)
	}
	if g.Result != "0-1" || len(g.Moves) != 4 || strings.Contains(pgn, "%clk") {
		t.Errorf("read back: result %s, %d moves; a per-move game has no clock comments:\n%s", g.Result, len(g.Moves), pgn)
	}
	// While it is played: the ratings the players sat down with, and the
	// game not terminated.
	playing := readyBoth(t, newRatedGame(t, RoomBeginner, `{"timeControl":"perMove:120"}`), 0)
	tags = checkExportFormat(t, mustPGN(t, playing))
	for name, value := range map[string]string{"WhiteElo": "1000", "BlackElo": "1200", "Termination": "unterminated", "TimeControl": "1/120", "Result": "*", "Event": "Rated game"} {
		if got, _ := tagValue(tags, name); got != value {
			t.Errorf("playing: %s = %q; want %q", name, got, value)
		}
	}
	// Casual games have no Elo.
	tags = checkExportFormat(t, mustPGN(t, newGame(t, DefaultOptions())))
	if ev, _ := tagValue(tags, "Event"); ev != "Casual game" {
		t.Errorf("Event = %q", ev)
	}
	if _, ok := tagValue(tags, "WhiteElo"); ok {
		t.Error("a casual game has Elo tags")
	}
}

func mustPGN(t *testing.T, s *State) string {
	t.Helper()
	pgn, err := PGN(s)
	if err != nil {
		t.Fatal(err)
	}
	return pgn
}

var clkComment = regexp.MustCompile(`\{\[%clk (\d+):([0-5]\d):([0-5]\d)\]\}`)

// clocksOf reads the clock comments of a PGN, in milliseconds.
func clocksOf(pgn string) []int64 {
	var out []int64
	for _, m := range clkComment.FindAllStringSubmatch(pgn, -1) {
		h, _ := strconv.ParseInt(m[1], 10, 64)
		mi, _ := strconv.ParseInt(m[2], 10, 64)
		sec, _ := strconv.ParseInt(m[3], 10, 64)
		out = append(out, ((h*60+mi)*60+sec)*1000)
	}
	return out
}

// TestPGNClockComments: after each move of a Fischer game the mover's
// clock after the move (the increment added), as the clock showed it, also
// across take-backs (the clock is not rewound) and a restore.
func TestPGNClockComments(t *testing.T) {
	s := newGame(t, opts(t, `{"timeControl":"1+2","undo":"unlimited"}`))
	var want []int64
	moveAt := func(uci string, ms int64) {
		t.Helper()
		mover := s.Turn()
		s, _ = mustApply(t, s, mover, moveAction(uci), at(ms))
		want = append(want, s.Clock.RemainingMs[mover])
	}
	moveAt("e2e4", 1000)   // first moves cost nothing: 1:00
	moveAt("e7e5", 4000)   // 1:00
	moveAt("g1f3", 14_500) // 60 − 10.5 + 2 = 51.5 → 0:00:51
	moveAt("b8c6", 20_000) // 60 − 5.5 + 2 = 56.5
	checkClocks := func(context string) {
		t.Helper()
		pgn := mustPGN(t, s)
		checkExportFormat(t, pgn)
		got := clocksOf(pgn)
		if len(got) != len(want) {
			t.Fatalf("%s: %d clock comments for %d moves:\n%s", context, len(got), len(want), pgn)
		}
		for i := range want {
			if got[i] != want[i]/1000*1000 {
				t.Errorf("%s: clock after move %d = %d ms; want %d (rounded down)", context, i+1, got[i], want[i])
			}
		}
		if g, err := chess.ParsePGN(pgn); err != nil || len(g.Moves) != len(s.Moves) {
			t.Errorf("%s: ParsePGN: %v", context, err)
		}
	}
	checkClocks("no take-back")
	if clocksOf(mustPGN(t, s))[2] != 51_000 {
		t.Errorf("clock after Nf3 = %v; want 0:00:51", clocksOf(mustPGN(t, s)))
	}
	// White asks to take back its Nf3 and Black's reply; the clock is not
	// rewound: the moves' times no longer tell it.
	s, _ = mustApply(t, s, white, Action{Type: ActionRequestUndo, Plies: 2}, at(30_000))
	s, _ = mustApply(t, s, black, Action{Type: ActionRespondUndo, Accept: true}, at(31_000))
	want = want[:2]
	moveAt("d2d4", 40_000)
	moveAt("d7d5", 45_000)
	checkClocks("after a take-back")
	checkClocks("restored")
	s = roundTrip(t, s)
	checkClocks("after a round trip")
	if len(s.Clock.Resets) != 1 || s.Clock.Resets[0].Ply != 2 {
		t.Errorf("resets after one take-back to ply 2: %+v", s.Clock.Resets)
	}
}

// TestPGNTimeControlAndTermination: every time control and every result
// reason has its tag.
func TestPGNTimeControlAndTermination(t *testing.T) {
	for text, want := range map[string]string{
		"10+5": "600+5", "1+0": "60+0", "90+60": "5400+60", "perMove:30": "1/30", "perMove:120": "1/120",
		"days:1": "1/86400", "days:3": "1/259200", "days:14": "1/1209600", "none": "-",
	} {
		tc, err := ParseTimeControl(text)
		if err != nil || pgnTimeControl(tc) != want {
			t.Errorf("TimeControl of %s = %q, %v; want %q", text, pgnTimeControl(tc), err, want)
		}
	}
	want := map[Reason]string{
		ReasonCheckmate: "normal", ReasonResign: "normal", ReasonStalemate: "normal", ReasonInsufficientMaterial: "normal",
		ReasonThreefold: "normal", ReasonFivefold: "normal", ReasonFiftyMove: "normal", ReasonSeventyFiveMove: "normal",
		ReasonDrawAgreed: "normal", ReasonTimeLoss: "time forfeit", ReasonTimeoutVsInsufficient: "time forfeit",
		ReasonAborted: "abandoned", ReasonExpired: "abandoned", ReasonCancelled: "abandoned",
	}
	for reason := range reasons {
		got, ok := pgnTermination[reason]
		if !ok {
			t.Errorf("result reason %s has no Termination", reason)
		} else if w, ok := want[reason]; ok && got != w {
			t.Errorf("Termination of %s = %q; want %q", reason, got, w)
		}
		s := newGame(t, DefaultOptions())
		s.Phase, s.Result = PhaseFinished, s.makeResult(nil, reason, t0.UnixMilli())
		if v, _ := tagValue(checkExportFormat(t, mustPGN(t, s)), "Termination"); v != got {
			t.Errorf("PGN of a game ended by %s: Termination %q; want %q", reason, v, got)
		}
	}
}
