package api

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"chessapi/shared/chess"
)

// The rooms' game (SPEC §16.5) and correspondence (SPEC §16.3) through the
// HTTP API: every answer is validated against openapi.yaml by the helper.

// TestYeoulReadyFlowOverHTTP: a rated room's game waits for both seats'
// ready, starts 3 s after the second one with White to move, refuses moves
// before that with 409 not_started, and then plays.
func TestYeoulReadyFlowOverHTTP(t *testing.T) {
	a := newTestAPI(t)
	host, guest := a.newPlayer("지우"), a.newPlayer("Ben")
	created := a.do("POST", "/v1/games", host, map[string]any{"options": map[string]any{"room": "intermediate", "colorAssignment": "hostWhite"}}).expect(t, http.StatusCreated)
	g := created.game()
	opts := g["options"].(map[string]any)
	if g["rules"] != "yeoul" || opts["rules"] != "yeoul" || opts["timeControl"] != "perMove:60" || opts["drawOffer"] != false ||
		opts["undo"] != "off" || opts["disconnectGraceSec"] != float64(90) || g["phase"] != "waiting" {
		t.Fatalf("a rated room's game: rules %v, options %v, phase %v", g["rules"], opts, g["phase"])
	}
	id := created.json["gameId"].(string)
	white := seat{gameID: id, token: created.json["token"].(string)}
	joined := a.do("POST", "/v1/games/"+id+"/join", guest, nil).expect(t, http.StatusOK)
	black := seat{gameID: id, token: joined.json["token"].(string)}
	if g := joined.game(); g["phase"] != "ready" || g["startsAt"] != nil || g["deadlineReason"] != "ready" {
		t.Fatalf("after the join: phase %v, startsAt %v, deadline %v", g["phase"], g["startsAt"], g["deadlineReason"])
	}

	a.move(white, "e2e4").expectCode(t, http.StatusConflict, "not_started")
	a.clock.Advance(2 * time.Second)
	r := a.do("POST", "/v1/games/"+id+"/actions", white.token, map[string]any{"type": "ready", "requestId": "ready-1"}).expect(t, http.StatusOK)
	if evs := r.json["events"].([]any); len(evs) != 1 || evs[0].(map[string]any)["type"] != "playerReady" {
		t.Errorf("white's ready: events %v", evs)
	}
	a.do("POST", "/v1/games/"+id+"/actions", white.token, map[string]any{"type": "ready", "requestId": "ready-1"}).expect(t, http.StatusOK) // a retry
	a.clock.Advance(time.Second)
	r = a.do("POST", "/v1/games/"+id+"/actions", black.token, map[string]any{"type": "ready"}).expect(t, http.StatusOK)
	startsAt := a.clock.Now().Add(3 * time.Second).UnixMilli()
	if g := r.game(); g["phase"] != "ready" || g["startsAt"] != float64(startsAt) || g["deadline"] != float64(startsAt+30_000) || g["deadlineReason"] != "firstMove" {
		t.Fatalf("both ready: phase %v, startsAt %v (want %d), deadline %v %v", g["phase"], g["startsAt"], startsAt, g["deadline"], g["deadlineReason"])
	}
	a.clock.Advance(2999 * time.Millisecond)
	a.move(white, "e2e4").expectCode(t, http.StatusConflict, "not_started")

	// "대국 시작": White moves first; its first-move limit ran from the start.
	a.clock.Advance(time.Millisecond)
	v := a.do("GET", "/v1/games/"+id, white.token, nil).expect(t, http.StatusOK).game()
	if v["phase"] != "playing" || v["turn"] != "white" || v["deadline"] != float64(startsAt+30_000) || v["legalMoves"] == nil {
		t.Fatalf("at the start: phase %v, turn %v, deadline %v", v["phase"], v["turn"], v["deadline"])
	}
	a.move(black, "e7e5").expectCode(t, http.StatusUnprocessableEntity, "not_your_turn")
	a.move(white, "e2e4").expect(t, http.StatusOK)
	a.clock.Advance(time.Second)
	a.move(black, "e7e5").expect(t, http.StatusOK)
	a.do("POST", "/v1/games/"+id+"/actions", white.token, map[string]any{"type": "offerDraw"}).expectCode(t, http.StatusUnprocessableEntity, "draw_offer_disabled")

	// The events of the game tell the same story (after its creation:
	// version 1 has no view before it to be a delta of, so asking from 0
	// answers a reset).
	log := a.do("GET", "/v1/games/"+id+"/events?afterVersion=1", white.token, nil).expect(t, http.StatusOK)
	var types []string
	for _, c := range log.json["changes"].([]any) {
		for _, e := range c.(map[string]any)["events"].([]any) {
			types = append(types, e.(map[string]any)["type"].(string))
		}
	}
	if got := strings.Join(types, " "); got != "playerJoined playerReady playerReady gameStarted moved moved" {
		t.Errorf("events: %s", got)
	}
	pgn := a.do("GET", "/v1/games/"+id+"/pgn", "", nil).expect(t, http.StatusOK)
	if g, err := chess.ParsePGN(string(pgn.body)); err != nil || len(g.Moves) != 2 ||
		!strings.Contains(string(pgn.body), `[Event "Rated game"]`) || !strings.Contains(string(pgn.body), `[WhiteElo "1000"]`) {
		t.Errorf("PGN: %v\n%s", err, pgn.body)
	}
}

// TestRoomOptionsOverHTTP: options that contradict the yeoul rules are 400
// naming them; the rest keep their meaning; a standard game has no ready.
func TestRoomOptionsOverHTTP(t *testing.T) {
	a := newTestAPI(t)
	p := a.newPlayer("지우")
	for options, field := range map[string]string{
		`{"room":"beginner","timeControl":"10+5"}`:        "options.timeControl",
		`{"room":"beginner","drawOffer":true}`:            "options.drawOffer",
		`{"room":"beginner","undo":1}`:                    "options.undo",
		`{"room":"beginner","drawMode":"fide"}`:           "options.drawMode",
		`{"room":"beginner","disconnectGraceSec":30}`:     "options.disconnectGraceSec",
		`{"room":"beginner","rules":"standard"}`:          "options.rules",
		`{"rules":"yeoul","timeControl":"days:1"}`:        "options.timeControl",
		`{"room":"expert","timeControl":"days:3"}`:        "options.timeControl",
		`{"rules":"chess","timeControl":"perMove:60"}`:    "options.rules",
		`{"timeControl":"days:9"}`:                        "options.timeControl",
		`{"rules":"yeoul","disconnectGraceSec":"ninety"}`: "options.disconnectGraceSec",
	} {
		r := a.do("POST", "/v1/games", p, `{"options":`+options+`}`).expectCode(t, http.StatusBadRequest, "invalid_field")
		if f, _ := r.json["error"].(map[string]any)["field"].(string); f != field {
			t.Errorf("%s: field %q; want %q (%s)", options, f, field, r.body)
		}
	}
	// The others keep their meaning, against the AI in the free room too.
	r := a.do("POST", "/v1/games", "", map[string]any{"opponent": map[string]any{"type": "ai", "level": "easy"},
		"options": map[string]any{"rules": "yeoul", "timeControl": "perMove:30", "firstMoveSec": 15, "variant": "chess960", "colorAssignment": "hostBlack", "hints": "off"}}).expect(t, http.StatusCreated)
	g := r.game()
	if g["phase"] != "ready" || g["variant"] != "chess960" || g["you"] != "black" || g["ready"].(map[string]any)["white"] != true ||
		g["options"].(map[string]any)["firstMoveSec"] != float64(15) {
		t.Errorf("yeoul against the AI: %v", g)
	}
	w, _ := a.createHumanGame(nil)
	a.do("POST", "/v1/games/"+w.gameID+"/actions", w.token, map[string]any{"type": "ready"}).expectCode(t, http.StatusUnprocessableEntity, "no_ready_step")
}

// TestCorrespondenceOverHTTP: a days:N game shows its days, and the lobby
// lists correspondence games apart when asked.
func TestCorrespondenceOverHTTP(t *testing.T) {
	a := newTestAPI(t)
	p := a.newPlayer("지우")
	created := a.do("POST", "/v1/games", p, map[string]any{"options": map[string]any{"timeControl": "days:2"}}).expect(t, http.StatusCreated)
	daysID := created.json["gameId"].(string)
	a.do("POST", "/v1/games", a.newPlayer("Ben"), map[string]any{"options": map[string]any{"timeControl": "5+3"}}).expect(t, http.StatusCreated)
	lobby := func(query string) []string {
		r := a.do("GET", "/v1/lobby?room=free"+query, "", nil).expect(t, http.StatusOK)
		var ids []string
		for _, item := range r.json["items"].([]any) {
			ids = append(ids, item.(map[string]any)["options"].(map[string]any)["timeControl"].(string))
		}
		return ids
	}
	if got := strings.Join(lobby("&correspondence=true"), " "); got != "days:2" {
		t.Errorf("correspondence=true: %s", got)
	}
	if got := strings.Join(lobby("&correspondence=false"), " "); got != "5+3" {
		t.Errorf("correspondence=false: %s", got)
	}
	if got := len(lobby("")); got != 2 {
		t.Errorf("no filter: %d games", got)
	}
	r := a.do("GET", "/v1/lobby?room=free&correspondence=yes", "", nil).expectCode(t, http.StatusBadRequest, "invalid_field")
	if f := r.json["error"].(map[string]any)["field"]; f != "correspondence" {
		t.Errorf("bad filter: field %v", f)
	}

	joined := a.do("POST", "/v1/games/"+daysID+"/join", a.newPlayer("Cho"), nil).expect(t, http.StatusOK)
	g := joined.game()
	day := float64(24 * 60 * 60 * 1000)
	if g["clock"].(map[string]any)["type"] != "correspondence" || g["deadline"] != float64(a.clock.Now().UnixMilli())+2*day || g["deadlineReason"] != "firstMove" {
		t.Errorf("a days:2 game: clock %v, deadline %v (%v)", g["clock"], g["deadline"], g["deadlineReason"])
	}
}

// expectCode checks the status and the error code of an answer.
func (r response) expectCode(t *testing.T, status int, code string) response {
	t.Helper()
	r.expect(t, status)
	if got, _ := r.errorCode(); got != code {
		t.Errorf("error code %q; want %q (%s)", got, code, r.body)
	}
	return r
}
