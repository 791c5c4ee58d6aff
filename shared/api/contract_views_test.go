package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"chessapi/internal/apispec"
)

// Games played through HTTP to reach every shape of the views, events and
// stateless answers that openapi.yaml describes: each answer is validated
// against it by the test helper, so a field the code writes and the file
// does not describe (or the reverse) fails here. The checks below are about
// what the contract says in words (which events, which members when).

// eventTypes returns the types of an action answer's events.
func eventTypes(r response) []string {
	var out []string
	evs, _ := r.json["events"].([]any)
	for _, e := range evs {
		out = append(out, e.(map[string]any)["type"].(string))
	}
	return out
}

// eventOf returns the first event of type typ in an action answer.
func eventOf(r response, typ string) map[string]any {
	evs, _ := r.json["events"].([]any)
	for _, e := range evs {
		if m := e.(map[string]any); m["type"] == typ {
			return m
		}
	}
	return nil
}

// play plays UCI moves alternately from white.
func (a *testAPI) play(white, black seat, moves ...string) response {
	a.t.Helper()
	var last response
	for i, m := range moves {
		a.clock.Advance(time.Second)
		last = a.move([]seat{white, black}[i%2], m).expect(a.t, http.StatusOK)
	}
	return last
}

func TestContractMoveEvents(t *testing.T) {
	a := newTestAPI(t)
	white, black := a.createHumanGame(map[string]any{"timeControl": "5+3", "drawMode": "fide"})
	want := []struct {
		uci    string
		events []string
	}{
		{"e2e4", []string{"moved"}},
		{"d7d5", []string{"moved"}},
		{"e4d5", []string{"moved"}},
		{"c7c5", []string{"moved"}},
		{"d5c6", []string{"moved", "enPassant"}},
		{"g8f6", []string{"moved"}},
		{"c6b7", []string{"moved"}},
		{"e7e6", []string{"moved"}},
		{"b7a8q", []string{"moved", "promoted"}},
		{"f8c5", []string{"moved"}},
		{"g1f3", []string{"moved"}},
		{"e8g8", []string{"moved", "castled"}},
		{"f1c4", []string{"moved"}},
		{"d8b6", []string{"moved"}},
		{"e1g1", []string{"moved", "castled"}},
		{"c5f2", []string{"moved", "check"}},
		{"f1f2", []string{"moved"}},
	}
	var r response
	for i, m := range want {
		a.clock.Advance(time.Second)
		r = a.move([]seat{white, black}[i%2], m.uci).expect(t, http.StatusOK)
		if got := eventTypes(r); !slices.Equal(got, m.events) {
			t.Errorf("%s: events %q; want %q", m.uci, got, m.events)
		}
	}
	g := r.game()
	if c := g["captured"].(map[string]any); !slices.Equal(c["white"].([]any), []any{"r", "b", "p", "p", "p"}) || !slices.Equal(c["black"].([]any), []any{"p"}) {
		t.Errorf("captured = %v", c)
	}
	promo := a.do("GET", "/v1/games/"+white.gameID+"/events?afterVersion=10", "", nil).expect(t, 200)
	if promo.json["version"] != g["version"] {
		t.Errorf("events version %v; game version %v", promo.json["version"], g["version"])
	}
	spectator := a.do("GET", "/v1/games/"+white.gameID, "", nil).expect(t, 200).game()
	if spectator["you"] != nil || spectator["legalMoves"] != nil {
		t.Errorf("spectator view: you %v, legalMoves %v", spectator["you"], spectator["legalMoves"])
	}
	a.do("GET", "/v1/games/"+white.gameID+"/pgn", "", nil).expect(t, 200)
}

func TestContractCheckmate(t *testing.T) {
	a := newTestAPI(t)
	white, black := a.createHumanGame(nil)
	r := a.play(white, black, "f2f3", "e7e5", "g2g4", "d8h4")
	if got := eventTypes(r); !slices.Equal(got, []string{"moved", "checkmate", "gameEnded"}) {
		t.Errorf("mate events %q", got)
	}
	res := r.game()["result"].(map[string]any)
	if res["winner"] != "black" || res["reason"] != "checkmate" || res["moveCount"] != float64(2) || len(res["ranking"].([]any)) != 2 {
		t.Errorf("result %v", res)
	}
	en := a.doHeaders("GET", "/v1/games/"+white.gameID, http.Header{"Accept-Language": {"en"}}, nil).expect(t, 200)
	if s := en.game()["result"].(map[string]any); s["summary"] != "Black won (checkmate, 2 moves)" || s["summaryKo"] != "흑 승 (체크메이트, 2수)" {
		t.Errorf("summaries %q / %q", s["summary"], s["summaryKo"])
	}
	if en.header.Get("Content-Language") != "en" {
		t.Errorf("Content-Language %q", en.header.Get("Content-Language"))
	}
}

func TestContractUndoAndDraws(t *testing.T) {
	a := newTestAPI(t)
	white, black := a.createHumanGame(map[string]any{"undo": "unlimited"})
	step := func(s seat, body map[string]any, events ...string) response {
		t.Helper()
		a.clock.Advance(time.Second)
		r := a.act(s, nil, body).expect(t, http.StatusOK)
		if got := eventTypes(r); !slices.Equal(got, events) {
			t.Errorf("%v: events %q; want %q", body, got, events)
		}
		return r
	}
	undo := map[string]any{"type": "requestUndo"}
	respond := func(typ string, accept bool) map[string]any {
		return map[string]any{"type": typ, "payload": map[string]any{"accept": accept}}
	}
	step(white, moveBody("e2e4"), "moved")
	r := step(white, undo, "undoRequested")
	if p := r.game()["pending"].(map[string]any)["undo"].(map[string]any); p["by"] != "white" || p["plies"] != float64(1) {
		t.Errorf("pending undo %v", p)
	}
	step(black, respond("respondUndo", false), "undoDeclined")
	step(white, undo, "undoRequested")
	r = step(black, moveBody("e7e5"), "moved", "undoDeclined")
	if e := eventOf(r, "undoDeclined"); e["auto"] != true {
		t.Errorf("auto decline %v", e)
	}
	step(white, moveBody("d2d4"), "moved")
	step(white, undo, "undoRequested")
	step(white, map[string]any{"type": "cancelOffer"}, "undoCancelled")
	r = step(black, undo, "undoRequested")
	if p := r.game()["pending"].(map[string]any)["undo"].(map[string]any); p["plies"] != float64(2) {
		t.Errorf("black's take-back of its move and the reply: %v", p)
	}
	r = step(white, respond("respondUndo", true), "undoAccepted")
	if e := eventOf(r, "undoAccepted"); e["ply"] != float64(1) || e["plies"] != float64(2) {
		t.Errorf("undoAccepted %v", e)
	}
	step(white, undo, "undoRequested")
	r = step(black, respond("respondUndo", true), "undoAccepted")
	if e := eventOf(r, "undoAccepted"); e["ply"] != nil {
		t.Errorf("undoAccepted back to the start has ply %v; want none", e["ply"])
	}

	// Draw offers: one declined by a move, one accepted.
	step(white, map[string]any{"type": "offerDraw"}, "drawOffered")
	step(white, moveBody("e2e4"), "moved")
	r = step(black, moveBody("e7e5"), "moved", "drawDeclined")
	if e := eventOf(r, "drawDeclined"); e["auto"] != true {
		t.Errorf("auto decline %v", e)
	}
	step(black, map[string]any{"type": "offerDraw"}, "drawOffered")
	r = step(white, respond("respondDraw", true), "drawAccepted", "gameEnded")
	res := r.game()["result"].(map[string]any)
	if res["winner"] != nil || res["reason"] != "drawAgreed" || len(res["ranking"].([]any)) != 2 {
		t.Errorf("draw result %v", res)
	}
	log := a.do("GET", "/v1/games/"+white.gameID+"/events?afterVersion=1", black.token, nil).expect(t, 200)
	if changes := log.json["changes"].([]any); len(changes) != int(log.json["version"].(float64))-1 {
		t.Errorf("%d changes after version 1 of %v", len(changes), log.json["version"])
	}
	// The first version has no delta: a client without it starts over.
	if log := a.do("GET", "/v1/games/"+white.gameID+"/events?afterVersion=0", black.token, nil).expect(t, 200); log.json["reset"] != true || log.json["game"] == nil {
		t.Errorf("events after version 0: %s; want a reset with the view", log.body)
	}
}

func TestContractClaimThreefold(t *testing.T) {
	a := newTestAPI(t)
	white, black := a.createHumanGame(map[string]any{"drawMode": "fide"})
	r := a.play(white, black, "g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8")
	if e := eventOf(r, "drawClaimable"); e == nil || e["reason"] != "threefold" || e["color"] != "white" {
		t.Fatalf("no threefold claim offered: %s", r.body)
	}
	if r.game()["claimable"] != "threefold" {
		t.Errorf("claimable %v", r.game()["claimable"])
	}
	r = a.act(white, nil, map[string]any{"type": "claimDraw"}).expect(t, 200)
	if got := eventTypes(r); !slices.Equal(got, []string{"drawClaimed", "gameEnded"}) {
		t.Errorf("claim events %q", got)
	}
}

func TestContractTimeouts(t *testing.T) {
	t.Run("first move", func(t *testing.T) {
		a := newTestAPI(t)
		white, black := a.createHumanGame(map[string]any{"timeControl": "1+0"})
		a.play(white, black, "e2e4")
		a.clock.Advance(31 * time.Second)
		log := a.do("GET", "/v1/games/"+white.gameID+"/events?afterVersion=3", "", nil).expect(t, 200)
		changes := log.json["changes"].([]any)
		if len(changes) != 1 {
			t.Fatalf("changes %s", log.body)
		}
		evs := changes[0].(map[string]any)["events"].([]any)
		if len(evs) != 2 || evs[0].(map[string]any)["reason"] != "firstMove" || evs[1].(map[string]any)["reason"] != "aborted" {
			t.Errorf("timeout events %v", evs)
		}
	})
	t.Run("clock", func(t *testing.T) {
		a := newTestAPI(t)
		white, black := a.createHumanGame(map[string]any{"timeControl": "1+0"})
		a.play(white, black, "e2e4", "e7e5")
		a.clock.Advance(61 * time.Second)
		g := a.do("GET", "/v1/games/"+white.gameID, white.token, nil).expect(t, 200).game()
		if res := g["result"].(map[string]any); res["reason"] != "timeLoss" || res["winner"] != "black" {
			t.Errorf("result %v", res)
		}
		if g["deadline"] != nil || g["clock"].(map[string]any)["running"] != nil {
			t.Errorf("finished game: deadline %v, running %v", g["deadline"], g["clock"].(map[string]any)["running"])
		}
	})
	t.Run("per-move extension", func(t *testing.T) {
		a := newTestAPI(t)
		white, black := a.createHumanGame(map[string]any{"timeControl": "perMove:30"})
		a.play(white, black, "e2e4", "e7e5")
		a.clock.Advance(31 * time.Second)
		g := a.do("GET", "/v1/games/"+white.gameID, "", nil).expect(t, 200).game()
		clock := g["clock"].(map[string]any)
		if left := clock["extensionsLeft"].(map[string]any); left["white"] != float64(2) || left["black"] != float64(3) {
			t.Errorf("extensions left %v", left)
		}
		if g["phase"] != "playing" || clock["type"] != "perMove" {
			t.Errorf("phase %v, clock %v", g["phase"], clock)
		}
	})
}

func TestContractAIGame(t *testing.T) {
	a := newTestAPI(t)
	en := http.Header{"Accept-Language": {"en"}}
	created := a.doHeaders("POST", "/v1/games", en, map[string]any{
		"opponent": map[string]any{"type": "ai", "level": "easy"},
		"options":  map[string]any{"variant": "chess960", "timeControl": "perMove:60", "colorAssignment": "hostWhite"},
	}).expect(t, http.StatusCreated)
	g := created.game()
	if g["chess960Index"] == nil || g["players"].(map[string]any)["black"].(map[string]any)["name"] != "AI (easy)" {
		t.Errorf("AI game: index %v, players %v", g["chess960Index"], g["players"])
	}
	host := seat{gameID: created.json["gameId"].(string), token: created.json["token"].(string)}
	var first string
	for _, m := range g["legalMoves"].([]any) {
		if mv := m.(map[string]any); mv["castle"] == nil && strings.Contains("abcdefgh", mv["from"].(string)[:1]) && mv["from"].(string)[1] == '2' {
			first = mv["uci"].(string)
			break
		}
	}
	a.move(host, first).expect(t, 200)
	for _, task := range a.ai.take() {
		if err := a.svc.PlayAITurn(t.Context(), task); err != nil {
			t.Fatal(err)
		}
	}
	view := a.doHeaders("GET", "/v1/games/"+host.gameID, with(en, host.token), nil).expect(t, 200).game()
	if n := len(view["moves"].([]any)); n != 2 {
		t.Errorf("%d moves after the AI's turn", n)
	}
	a.do("GET", "/v1/games/"+host.gameID+"/pgn", "", nil).expect(t, 200)
}

func TestContractChangeLog(t *testing.T) {
	a := newTestAPI(t)
	white, _ := a.createHumanGame(nil)
	for i := range 70 { // presence changes make versions cheaply (the clock stands still: no timeout)
		a.do("POST", "/v1/games/"+white.gameID+"/presence", white.token, map[string]any{"connected": i%2 == 1}).expect(t, 200)
	}
	r := a.do("GET", "/v1/games/"+white.gameID+"/events?afterVersion=1", white.token, nil).expect(t, 200)
	if r.json["reset"] != true || r.json["changes"] != nil {
		t.Errorf("a version older than the log: %v", r.json["reset"])
	}
	r = a.do("GET", "/v1/games/"+white.gameID+"/events?afterVersion=70", white.token, nil).expect(t, 200)
	if changes := r.json["changes"].([]any); len(changes) != 2 {
		t.Errorf("%d changes after 70 of %v", len(changes), r.json["version"])
	}
	a.do("GET", "/v1/games/"+white.gameID+"/events", "", nil).expect(t, 400)
	a.do("GET", "/v1/games/"+white.gameID+"/events?afterVersion=-1", "", nil).expect(t, 400)
}

// TestContractChangeLogUpToDate: SPEC §11 answers {version, changes: [],
// game} when nothing changed after afterVersion. The code leaves changes
// out then (eventsResponse's omitempty); reported with issue 13. Skipped,
// with the reason, until that is fixed.
func TestContractChangeLogUpToDate(t *testing.T) {
	a := newTestAPI(t)
	white, _ := a.createHumanGame(nil)
	req := httptest.NewRequest("GET", "/v1/games/"+white.gameID+"/events?afterVersion=2", nil)
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, req)
	ex := apispec.Exchange{Request: req, Status: rec.Code, Header: rec.Header(), Answer: rec.Body.Bytes()}
	if err := apispec.MustLoad(t).ValidateResponse(ex); err != nil {
		t.Errorf("the change log of an up-to-date client breaks openapi.yaml: %v", err)
	}
	var body struct {
		Changes *[]any `json:"changes"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Changes == nil || len(*body.Changes) != 0 {
		t.Errorf("change log after the current version = %s; want changes: [] (SPEC §11)", rec.Body.Bytes())
	}
}

func TestContractRematch(t *testing.T) {
	a := newTestAPI(t)
	old, alice := a.finishedGameOf()
	next := a.do("POST", "/v1/games", alice, map[string]any{"rematchOf": old}).expect(t, http.StatusCreated)
	if rm := next.game()["rematch"].(map[string]any); rm["of"] != old || rm["next"] != nil {
		t.Errorf("new game's rematch %v", rm)
	}
	g := a.do("GET", "/v1/games/"+old, "", nil).expect(t, 200).game()
	if rm := g["rematch"].(map[string]any); rm["next"] != next.json["gameId"] || rm["of"] != nil {
		t.Errorf("old game's rematch %v", rm)
	}
	log := a.do("GET", "/v1/games/"+old+"/events?afterVersion=3", "", nil).expect(t, 200)
	evs := log.json["changes"].([]any)[0].(map[string]any)["events"].([]any)
	if e := evs[0].(map[string]any); e["type"] != "rematchLinked" || e["gameId"] != next.json["gameId"] {
		t.Errorf("rematch events %v", evs)
	}
}

func TestContractStateless(t *testing.T) {
	a := newTestAPI(t)
	r := a.do("POST", "/v1/positions", "", map[string]any{"fen": "rk4r1/8/8/8/8/8/8/RK4R1 w AGag - 0 1"}).expect(t, 200)
	var castles []string
	for _, m := range r.json["legalMoves"].([]any) {
		if mv := m.(map[string]any); mv["castle"] != nil {
			castles = append(castles, mv["uci"].(string)+">"+mv["to"].(string))
		}
	}
	if !slices.Equal(castles, []string{"b1a1>a1"}) {
		t.Errorf("castling entries %q", castles)
	}
	r = a.do("POST", "/v1/positions", "", map[string]any{"fen": "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1"}).expect(t, 200)
	castles = nil
	for _, m := range r.json["legalMoves"].([]any) {
		if mv := m.(map[string]any); mv["castle"] != nil {
			castles = append(castles, mv["uci"].(string)+">"+mv["to"].(string))
		}
	}
	if !slices.Equal(castles, []string{"g1b1>b1", "g1b1>c1", "g1h1>h1"}) {
		t.Errorf("Chess960 castling with both targets %q", castles)
	}
	a.do("POST", "/v1/positions", "", map[string]any{"variant": "chess960", "moves": []string{"e2e4"}}).expect(t, 200)
	a.do("POST", "/v1/positions", "", map[string]any{"fen": "4k3/8/8/8/8/8/8/4K3 w - - 0 1"}).expect(t, 200)

	r = a.do("POST", "/v1/ai/move", "", map[string]any{"level": "easy", "multiPv": 3, "moves": []string{"e2e4"}}).expect(t, 200)
	if lines := r.json["lines"].([]any); len(lines) != 1 || r.json["wdl"] != nil {
		t.Errorf("easy with multiPv: %d lines, wdl %v", len(lines), r.json["wdl"])
	}
	r = a.do("POST", "/v1/ai/move", "", map[string]any{"depth": 4, "multiPv": 3}).expect(t, 200)
	if lines := r.json["lines"].([]any); len(lines) != 3 || r.json["wdl"] == nil {
		t.Errorf("max with multiPv 3: %d lines, wdl %v", len(lines), r.json["wdl"])
	}
	if w := r.json["wdl"].(map[string]any); w["win"].(float64)+w["draw"].(float64)+w["loss"].(float64) != 1000 {
		t.Errorf("wdl %v does not sum to 1000", w)
	}
	r = a.do("POST", "/v1/ai/move", "", map[string]any{"fen": "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"}).expect(t, 422)
	if r.json["status"] != "stalemate" {
		t.Errorf("stalemate: %s", r.body)
	}
	r = a.do("POST", "/v1/ai/move", "", map[string]any{"moves": []string{"e2e4", "e7e4"}}).expect(t, 422)
	if code, field := r.errorCode(); code != "illegal_move" || field != "moves.1" || r.json["status"] != nil {
		t.Errorf("illegal move: %s", r.body)
	}
}

// TestContractRefusesWhatTheSpecRefuses sends requests that openapi.yaml
// does not allow and checks that the API refuses them too (4xx): the two
// agree at the edges the file names (maxima, enums, exclusive members).
// The test helper checks the other direction on every accepted request.
func TestContractRefusesWhatTheSpecRefuses(t *testing.T) {
	a := newTestAPI(t)
	white, _ := a.createHumanGame(nil)
	actions := "/v1/games/" + white.gameID + "/actions"
	tests := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/ai/move", map[string]any{"depth": 65}},
		{"POST", "/v1/ai/move", map[string]any{"depth": 0}},
		{"POST", "/v1/ai/move", map[string]any{"multiPv": 6}},
		{"POST", "/v1/ai/move", map[string]any{"multiPv": 0}},
		{"POST", "/v1/ai/move", map[string]any{"movetimeMs": 0}},
		{"POST", "/v1/ai/move", map[string]any{"level": "easy", "movetimeMs": 100}},
		{"POST", "/v1/ai/move", map[string]any{"level": "grandmaster"}},
		{"POST", "/v1/ai/move", map[string]any{"moves": []string{"e2e9"}}},
		{"POST", "/v1/positions", map[string]any{"variant": "crazyhouse"}},
		{"POST", "/v1/positions", map[string]any{"fen": ""}},
		{"POST", "/v1/games", map[string]any{"opponent": map[string]any{"type": "human", "level": "easy"}}},
		{"POST", "/v1/games", map[string]any{"opponent": map[string]any{"type": "ai"}}},
		{"POST", "/v1/games", map[string]any{"options": map[string]any{"timeControl": "0+5"}}},
		{"POST", "/v1/games", map[string]any{"options": map[string]any{"timeControl": "perMove:45"}}},
		{"POST", "/v1/games", map[string]any{"options": map[string]any{"undo": 2}}},
		{"POST", "/v1/games", map[string]any{"options": map[string]any{"firstMoveSec": 20}}},
		{"POST", "/v1/games", map[string]any{"player": map[string]any{"name": strings.Repeat("가", 41)}}},
		{"POST", "/v1/games", map[string]any{"rematchOf": ""}},
		{"POST", actions, map[string]any{"type": "move", "payload": map[string]any{"uci": "e2e4", "san": "e4"}}},
		{"POST", actions, map[string]any{"type": "move", "payload": map[string]any{"from": "e2", "to": "e4", "promotion": "k"}}},
		{"POST", actions, map[string]any{"type": "move"}},
		{"POST", actions, map[string]any{"type": "castle", "payload": map[string]any{"side": "long"}}},
		{"POST", actions, map[string]any{"type": "requestUndo", "payload": map[string]any{"plies": 3}}},
		{"POST", actions, map[string]any{"type": "respondDraw", "payload": map[string]any{}}},
		{"POST", actions, map[string]any{"type": "resign", "payload": map[string]any{"accept": true}}},
		{"POST", actions, map[string]any{"type": "timeout"}},
		{"POST", actions, map[string]any{"type": "resign", "requestId": ""}},
		{"POST", actions, map[string]any{"type": "resign", "requestId": strings.Repeat("r", 129)}},
		{"POST", "/v1/games/" + white.gameID + "/presence", map[string]any{"connected": "yes"}},
		{"POST", "/v1/games/" + white.gameID + "/join", map[string]any{"player": map[string]any{"nick": "x"}}},
	}
	spec := apispec.MustLoad(t)
	for _, tt := range tests {
		body := string(mustJSON(t, tt.body))
		t.Run(tt.method+" "+tt.path+" "+body, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if err := spec.ValidateRequest(apispec.Exchange{Request: req, Body: []byte(body)}); err == nil {
				t.Fatalf("openapi.yaml allows this request; the test expects it not to")
			}
			r := a.do(tt.method, tt.path, white.token, tt.body)
			if r.status < 400 || r.status > 499 {
				t.Errorf("the API answered %d; openapi.yaml does not allow the request\n%s", r.status, r.body)
			}
		})
	}
}
