package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/shared/chess"
)

func TestHealth(t *testing.T) {
	a := newTestAPI(t)
	r := a.do("GET", "/v1/health", "", nil).expect(t, http.StatusOK)
	if r.json["status"] != "ok" {
		t.Errorf("health = %s", r.body)
	}
}

func TestRoutingErrors(t *testing.T) {
	a := newTestAPI(t)
	r := a.do("GET", "/v1/nope", "", nil).expect(t, http.StatusNotFound)
	if code, _ := r.errorCode(); code != "not_found" {
		t.Errorf("unknown route code = %q", code)
	}
	r = a.do("DELETE", "/v1/positions", "", nil).expect(t, http.StatusMethodNotAllowed)
	if code, _ := r.errorCode(); code != "method_not_allowed" || r.header.Get("Allow") != "POST" {
		t.Errorf("405: code %q, Allow %q", code, r.header.Get("Allow"))
	}
}

func TestPositions(t *testing.T) {
	a := newTestAPI(t)
	tests := []struct {
		name   string
		body   any
		status int
		code   string
		field  string
		check  func(t *testing.T, r response)
	}{
		{name: "start position by default", body: "", status: 200, check: func(t *testing.T, r response) {
			if moves := r.json["legalMoves"].([]any); len(moves) != 20 || r.json["status"] != "playing" || r.json["turn"] != "white" {
				t.Errorf("start: %d moves, status %v", len(moves), r.json["status"])
			}
		}},
		{name: "moves applied", body: map[string]any{"moves": []string{"e2e4", "e7e5"}}, status: 200, check: func(t *testing.T, r response) {
			if r.json["fen"] != "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2" {
				t.Errorf("fen = %v", r.json["fen"])
			}
		}},
		{name: "checkmate", body: map[string]any{"moves": []string{"f2f3", "e7e5", "g2g4", "d8h4"}}, status: 200, check: func(t *testing.T, r response) {
			if r.json["status"] != "checkmate" || r.json["check"] != true || len(r.json["legalMoves"].([]any)) != 0 {
				t.Errorf("fool's mate: %s", r.body)
			}
		}},
		{name: "chess960 castling listed as king to rook", body: map[string]any{"fen": "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1"}, status: 200, check: func(t *testing.T, r response) {
			found := false
			for _, m := range r.json["legalMoves"].([]any) {
				mv := m.(map[string]any)
				if mv["uci"] == "g1h1" && mv["castle"] == "king" && mv["san"] == "O-O" {
					found = true
				}
			}
			if !found {
				t.Errorf("no g1h1 castling in %s", r.body)
			}
		}},
		{name: "standard castling written e1g1", body: map[string]any{"fen": "4k3/8/8/8/8/8/8/4K2R w K - 0 1"}, status: 200, check: func(t *testing.T, r response) {
			if !strings.Contains(string(r.body), `"from":"e1","to":"g1","castle":"king","uci":"e1g1","san":"O-O"`) {
				t.Errorf("castling entry missing: %s", r.body)
			}
		}},
		{name: "promotion fields", body: map[string]any{"fen": "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"}, status: 200, check: func(t *testing.T, r response) {
			if !strings.Contains(string(r.body), `"from":"b7","to":"b8","promotion":"q","uci":"b7b8q","san":"b8=Q+"`) {
				t.Errorf("promotion entry missing: %s", r.body)
			}
		}},
		{name: "insufficient material", body: map[string]any{"fen": "4k3/8/8/8/8/8/8/2B1K3 w - - 0 1"}, status: 200, check: func(t *testing.T, r response) {
			if r.json["status"] != "insufficientMaterial" {
				t.Errorf("status = %v", r.json["status"])
			}
		}},
		{name: "bad fen", body: map[string]any{"fen": "8/8/8/8/8/8/8/8 w - - 0 1"}, status: 400, code: "invalid_fen", field: "fen"},
		{name: "bad variant", body: map[string]any{"variant": "crazyhouse"}, status: 400, code: "invalid_field", field: "variant"},
		{name: "960 fen as standard", body: map[string]any{"fen": "1r4kr/8/8/8/8/8/8/1R4KR w HBhb - 0 1", "variant": "standard"}, status: 400, code: "invalid_fen", field: "fen"},
		{name: "illegal move", body: map[string]any{"moves": []string{"e2e4", "e7e4"}}, status: 422, code: "illegal_move", field: "moves.1"},
		{name: "move into check", body: map[string]any{"fen": "4k3/8/8/8/8/8/5r2/4K3 w - - 0 1", "moves": []string{"e1e2"}}, status: 422, code: "king_in_check", field: "moves.0"},
		{name: "malformed move", body: map[string]any{"moves": []string{"xx"}}, status: 400, code: "invalid_field", field: "moves.0"},
		{name: "unknown field", body: map[string]any{"fen2": "x"}, status: 400, code: "unknown_field", field: "fen2"},
		{name: "wrong type", body: map[string]any{"moves": "e2e4"}, status: 400, code: "invalid_field", field: "moves"},
		{name: "not json", body: "{", status: 400, code: "invalid_json"},
		{name: "not an object", body: "[1]", status: 400, code: "invalid_json"},
		{name: "trailing data", body: "{} {}", status: 400, code: "invalid_json"},
		{name: "too large", body: `{"fen":"` + strings.Repeat("a", 70<<10) + `"}`, status: 413, code: "body_too_large"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do("POST", "/v1/positions", "", tt.body).expect(t, tt.status)
			if tt.code != "" {
				if code, field := r.errorCode(); code != tt.code || field != tt.field {
					t.Errorf("error = %q field %q; want %q field %q (%s)", code, field, tt.code, tt.field, r.body)
				}
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestAIMove(t *testing.T) {
	a := newTestAPI(t)
	r := a.do("POST", "/v1/ai/move", "", map[string]any{"fen": "6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1", "movetimeMs": 200}).expect(t, 200)
	if r.json["bestMove"] != "a1a8" || r.json["san"] != "Ra8#" {
		t.Errorf("mate in one: %s", r.body)
	}
	if score := r.json["score"].(map[string]any); score["mate"] != float64(1) {
		t.Errorf("score = %v; want mate 1", score)
	}
	r = a.do("POST", "/v1/ai/move", "", map[string]any{"level": "easy", "moves": []string{"e2e4"}}).expect(t, 200)
	if pv, _ := r.json["pv"].([]any); len(pv) == 0 || pv[0] != r.json["bestMove"] {
		t.Errorf("pv does not start with the best move: %s", r.body)
	}
	r = a.do("POST", "/v1/ai/move", "", map[string]any{"level": "easy", "movetimeMs": 100}).expect(t, 400)
	if _, field := r.errorCode(); field != "movetimeMs" {
		t.Errorf("level+movetime field = %q", field)
	}
	r = a.do("POST", "/v1/ai/move", "", map[string]any{"level": "grandmaster"}).expect(t, 400)
	if _, field := r.errorCode(); field != "level" {
		t.Errorf("bad level field = %q", field)
	}
	r = a.do("POST", "/v1/ai/move", "", map[string]any{"moves": []string{"f2f3", "e7e5", "g2g4", "d8h4"}}).expect(t, 422)
	if code, _ := r.errorCode(); code != "no_legal_moves" || r.json["status"] != "checkmate" {
		t.Errorf("mated position: %s", r.body)
	}
	// movetimeMs is clamped: a huge value still answers (depth bounds it here).
	a.do("POST", "/v1/ai/move", "", map[string]any{"movetimeMs": 1 << 50, "depth": 2}).expect(t, 200)

	keyed := newTestAPI(t, func(d *Deps) { d.AIKeys, _ = contractKeys() })
	keyed.do("POST", "/v1/ai/move", "", map[string]any{"depth": 1}).expect(t, 401)
}

func TestCreateJoinView(t *testing.T) {
	a := newTestAPI(t)
	created := a.do("POST", "/v1/games", "", map[string]any{
		"opponent": map[string]any{"type": "human"},
		"options":  map[string]any{"timeControl": "5+3", "colorAssignment": "hostWhite"},
		"player":   map[string]any{"id": "alice", "name": "앨리스"},
	}).expect(t, http.StatusCreated)
	id := created.json["gameId"].(string)
	host := created.json["token"].(string)
	if created.json["playerId"] != "alice" || created.game()["phase"] != "waiting" || !strings.HasPrefix(host, "st_") {
		t.Fatalf("create: %s", created.body)
	}
	if loc := created.header.Get("Location"); loc != "/v1/games/"+id {
		t.Errorf("Location = %q", loc)
	}
	joined := a.do("POST", "/v1/games/"+id+"/join", "", nil).expect(t, http.StatusOK)
	guest := joined.json["token"].(string)
	if joined.game()["phase"] != "playing" || joined.game()["you"] != "black" {
		t.Fatalf("join: %s", joined.body)
	}
	r := a.do("POST", "/v1/games/"+id+"/join", "", nil).expect(t, http.StatusConflict)
	if code, _ := r.errorCode(); code != "game_full" {
		t.Errorf("third join code = %q", code)
	}

	// Views: the seat to move sees legal moves, the other seat and spectators do not.
	white := a.do("GET", "/v1/games/"+id, host, nil).expect(t, 200).game()
	if moves, _ := white["legalMoves"].([]any); len(moves) != 20 || white["you"] != "white" {
		t.Errorf("white view: you %v, %d legal moves", white["you"], len(moves))
	}
	black := a.do("GET", "/v1/games/"+id, guest, nil).expect(t, 200)
	if lm, has := black.game()["legalMoves"]; !has || lm != nil {
		t.Errorf("black (not to move) got legalMoves %v; want null", lm)
	}
	spectator := a.do("GET", "/v1/games/"+id, "", nil).expect(t, 200)
	if lm, has := spectator.game()["legalMoves"]; !has || lm != nil || spectator.game()["you"] != nil {
		t.Errorf("spectator view: %s", spectator.body)
	}
	for _, body := range [][]byte{created.body, joined.body, black.body, spectator.body} {
		for _, secret := range []string{"tokenHash", `"rng"`, host, guest} {
			if strings.Contains(string(body[strings.Index(string(body), `"game"`):]), secret) {
				t.Errorf("a view leaks %q", secret)
			}
		}
	}

	// Auth errors.
	other, _ := a.createHumanGame(nil)
	a.do("GET", "/v1/games/"+id, other.token, nil).expect(t, http.StatusForbidden)
	// A made-up token of the issued form is no seat here: 403; a token
	// not of that form is malformed: 401 (SPEC §15).
	madeUp := "st_" + strings.Repeat("A", 43)
	a.do("GET", "/v1/games/"+id, madeUp, nil).expect(t, http.StatusForbidden)
	a.do("GET", "/v1/games/"+id+"/pgn", madeUp, nil).expect(t, http.StatusForbidden)
	for _, malformed := range []string{"st_madeup", madeUp + " extra", "pt_" + strings.Repeat("A", 42)} {
		r := a.do("GET", "/v1/games/"+id, malformed, nil).expect(t, http.StatusUnauthorized)
		if code, _ := r.errorCode(); code != "invalid_token" {
			t.Errorf("malformed token %q: code %q; want invalid_token", malformed, code)
		}
	}
	req := a.do("GET", "/v1/games/nosuchgameatall", "", nil).expect(t, http.StatusNotFound)
	if code, _ := req.errorCode(); code != "game_not_found" {
		t.Errorf("unknown game code = %q", code)
	}
	a.do("GET", "/v1/games/bad!id", "", nil).expect(t, http.StatusNotFound)
	a.do("GET", "/v1/games/"+id+"?afterVersion=x", "", nil).expect(t, http.StatusBadRequest)
}

func TestCreateValidation(t *testing.T) {
	a := newTestAPI(t)
	tests := []struct {
		name  string
		body  any
		code  string
		field string
	}{
		{"bad time control", map[string]any{"options": map[string]any{"timeControl": "91+0"}}, "invalid_field", "options.timeControl"},
		{"unknown option", map[string]any{"options": map[string]any{"speed": 1}}, "unknown_field", "options.speed"},
		{"unknown opponent type", map[string]any{"opponent": map[string]any{"type": "dog"}}, "invalid_field", "opponent.type"},
		{"ai without level", map[string]any{"opponent": map[string]any{"type": "ai"}}, "missing_field", "opponent.level"},
		{"ai bad level", map[string]any{"opponent": map[string]any{"type": "ai", "level": "god"}}, "invalid_field", "opponent.level"},
		{"unknown nested field", map[string]any{"player": map[string]any{"nick": "x"}}, "unknown_field", "player.nick"},
		{"long name", map[string]any{"player": map[string]any{"name": strings.Repeat("가", 41)}}, "invalid_field", "player.name"},
		{"rematch of nothing", map[string]any{"rematchOf": "nosuchgame123"}, "invalid_field", "rematchOf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do("POST", "/v1/games", "", tt.body).expect(t, http.StatusBadRequest)
			if code, field := r.errorCode(); code != tt.code || field != tt.field {
				t.Errorf("error %q field %q; want %q %q (%s)", code, field, tt.code, tt.field, r.body)
			}
		})
	}
}

func TestActions(t *testing.T) {
	a := newTestAPI(t)
	white, black := a.createHumanGame(map[string]any{"timeControl": "10+5"})
	path := "/v1/games/" + white.gameID + "/actions"

	r := a.do("POST", path, "", map[string]any{"type": "move", "payload": map[string]any{"uci": "e2e4"}}).expect(t, http.StatusUnauthorized)
	if code, _ := r.errorCode(); code != "unauthorized" {
		t.Errorf("no token code = %q", code)
	}
	req := a.do("POST", path, "", nil)
	if req.status != http.StatusUnauthorized {
		t.Errorf("no token, no body: %d", req.status)
	}

	cases := []struct {
		name   string
		seat   seat
		body   any
		status int
		code   string
		field  string
		msg    string
	}{
		{"not your turn", black, map[string]any{"type": "move", "payload": map[string]any{"uci": "e7e5"}}, 422, "not_your_turn", "", "지금은 상대 차례예요"},
		{"illegal move", white, map[string]any{"type": "move", "payload": map[string]any{"from": "e2", "to": "e5"}}, 422, "illegal_move", "", "그 기물은 그렇게 움직일 수 없어요"},
		{"unknown payload field", white, map[string]any{"type": "move", "payload": map[string]any{"uci": "e2e4", "x": 1}}, 400, "unknown_field", "payload.x", ""},
		{"bad square", white, map[string]any{"type": "move", "payload": map[string]any{"from": "e9", "to": "e4"}}, 400, "invalid_field", "payload.from", ""},
		{"unknown type", white, map[string]any{"type": "teleport"}, 400, "invalid_field", "type", ""},
		{"missing type", white, map[string]any{"payload": map[string]any{}}, 400, "missing_field", "type", ""},
		{"unknown top-level field", white, map[string]any{"type": "resign", "why": "bored"}, 400, "unknown_field", "why", ""},
		{"timeout is system only", white, map[string]any{"type": "timeout"}, 400, "invalid_field", "type", ""},
		{"wrong expectedVersion type", white, map[string]any{"type": "resign", "expectedVersion": "2"}, 400, "invalid_field", "expectedVersion", ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r := a.do("POST", path, tt.seat.token, tt.body).expect(t, tt.status)
			code, field := r.errorCode()
			if code != tt.code || field != tt.field {
				t.Errorf("error %q field %q; want %q %q (%s)", code, field, tt.code, tt.field, r.body)
			}
			if msg := r.json["error"].(map[string]any)["message"]; tt.msg != "" && msg != tt.msg {
				t.Errorf("message = %q; want %q", msg, tt.msg)
			}
		})
	}

	// A move by squares, then by SAN; events carry SAN.
	r = a.do("POST", path, white.token, map[string]any{"type": "move", "payload": map[string]any{"from": "e2", "to": "e4"}}).expect(t, 200)
	if events := r.json["events"].([]any); len(events) == 0 || events[0].(map[string]any)["san"] != "e4" {
		t.Errorf("events = %s", r.body)
	}
	a.do("POST", path, black.token, map[string]any{"type": "move", "payload": map[string]any{"san": "e5"}}).expect(t, 200)

	// expectedVersion: stale → 409 with the current game.
	version := int64(a.do("GET", "/v1/games/"+white.gameID, "", nil).game()["version"].(float64))
	r = a.do("POST", path, white.token, map[string]any{"type": "move", "payload": map[string]any{"uci": "g1f3"}, "expectedVersion": version - 1}).expect(t, http.StatusConflict)
	if code, _ := r.errorCode(); code != "version_conflict" || r.game()["version"] != float64(version) {
		t.Errorf("409 body: %s", r.body)
	}
	a.do("POST", path, white.token, map[string]any{"type": "move", "payload": map[string]any{"uci": "g1f3"}, "expectedVersion": version}).expect(t, 200)

	// requestId: a retry returns the stored outcome and applies nothing twice.
	body := map[string]any{"type": "move", "payload": map[string]any{"uci": "b8c6"}, "requestId": "req-1"}
	first := a.do("POST", path, black.token, body).expect(t, 200)
	second := a.do("POST", path, black.token, body).expect(t, 200)
	if string(mustJSON(t, first.json["events"])) != string(mustJSON(t, second.json["events"])) {
		t.Errorf("retry events differ: %s vs %s", first.body, second.body)
	}
	if n := len(second.game()["moves"].([]any)); n != 4 {
		t.Errorf("after a retried move: %d moves; want 4", n)
	}

	// PGN.
	pgn := a.do("GET", "/v1/games/"+white.gameID+"/pgn", "", nil).expect(t, 200)
	if ct := pgn.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-chess-pgn") {
		t.Errorf("pgn content type %s", ct)
	}
	if g, err := chess.ParsePGN(string(pgn.body)); err != nil || len(g.Moves) != 4 || !strings.Contains(string(pgn.body), "2. Nf3 {[%clk ") {
		t.Errorf("pgn: %v\n%s", err, pgn.body)
	}

	// Presence.
	a.do("POST", "/v1/games/"+white.gameID+"/presence", white.token, map[string]any{}).expect(t, 400)
	p := a.do("POST", "/v1/games/"+white.gameID+"/presence", white.token, map[string]any{"connected": false}).expect(t, 200)
	if players := p.game()["players"].(map[string]any); players["white"].(map[string]any)["connected"] != false {
		t.Errorf("presence not recorded: %s", p.body)
	}
	a.do("POST", "/v1/games/"+white.gameID+"/presence", "", map[string]any{"connected": true}).expect(t, 401)

	// Resign ends the game; a finished game accepts nothing and lists no moves.
	r = a.do("POST", path, white.token, map[string]any{"type": "resign"}).expect(t, 200)
	if res := r.game()["result"].(map[string]any); res["winner"] != "black" || res["reason"] != "resign" {
		t.Errorf("result after resign: %v", res)
	}
	if lm := a.do("GET", "/v1/games/"+white.gameID, black.token, nil).game()["legalMoves"]; lm != nil {
		t.Error("finished game lists legal moves")
	}
	a.do("POST", path, black.token, map[string]any{"type": "move", "payload": map[string]any{"uci": "g8f6"}}).expect(t, 422)
}

func TestConcurrentDuplicateRequests(t *testing.T) {
	a := newTestAPI(t)
	white, _ := a.createHumanGame(nil)
	path := "/v1/games/" + white.gameID + "/actions"
	body := map[string]any{"type": "move", "payload": map[string]any{"uci": "d2d4"}, "requestId": "same"}
	var wg sync.WaitGroup
	results := make([]response, 10)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = a.do("POST", path, white.token, body)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.status != 200 {
			t.Errorf("duplicate %d: status %d %s", i, r.status, r.body)
		}
	}
	if n := len(a.do("GET", "/v1/games/"+white.gameID, "", nil).game()["moves"].([]any)); n != 1 {
		t.Errorf("%d moves after 10 duplicates; want 1", n)
	}
}

func TestLongPoll(t *testing.T) {
	a := newTestAPI(t)
	white, _ := a.createHumanGame(nil)
	view := a.do("GET", "/v1/games/"+white.gameID, "", nil).game()
	version := int64(view["version"].(float64))

	// Already newer: immediate.
	r := a.do("GET", "/v1/games/"+white.gameID+"?afterVersion=0", "", nil).expect(t, 200)
	if r.game()["version"] != float64(version) {
		t.Errorf("afterVersion=0 returned version %v", r.game()["version"])
	}

	// Waits for the move.
	done := make(chan response)
	go func() {
		done <- a.do("GET", "/v1/games/"+white.gameID+"/poll?afterVersion="+itoa(version), "", nil)
	}()
	time.Sleep(50 * time.Millisecond)
	select {
	case r := <-done:
		t.Fatalf("long poll answered before any change: %s", r.body)
	default:
	}
	a.move(white, "e2e4").expect(t, 200)
	select {
	case r := <-done:
		if r.game()["version"].(float64) <= float64(version) {
			t.Errorf("long poll answered with version %v", r.game()["version"])
		}
	case <-time.After(2 * time.Second):
		t.Fatal("long poll did not wake on the move")
	}
}

// TestLongPollOldAddress: GET /v1/games/{id}?afterVersion=N, the long
// poll's first address, answers a game that is newer at once and sends a
// poll that has to wait to .../poll with a 307 that HTTP clients follow:
// a client of the old address sees the long poll's answer.
func TestLongPollOldAddress(t *testing.T) {
	a := newTestAPI(t)
	white, _ := a.createHumanGame(nil)
	version := int64(a.do("GET", "/v1/games/"+white.gameID, "", nil).game()["version"].(float64))

	r := a.do("GET", "/v1/games/"+white.gameID+"?afterVersion="+itoa(version), white.token, nil).expect(t, http.StatusTemporaryRedirect)
	base, _ := url.Parse("https://api.example/v1/games/" + white.gameID + "?afterVersion=" + itoa(version))
	loc, err := url.Parse(r.header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	if got := base.ResolveReference(loc).String(); got != "https://api.example/v1/games/"+white.gameID+"/poll?afterVersion="+itoa(version) ||
		r.json["location"] != r.header.Get("Location") {
		t.Errorf("Location %q (body %s) resolves to %s; want the game's /poll with the same afterVersion", loc, r.body, got)
	}
	a.do("GET", "/v1/games/"+white.gameID+"/poll", "", nil).expect(t, http.StatusBadRequest)
	a.do("GET", "/v1/games/nosuchgame?afterVersion=0", "", nil).expect(t, http.StatusNotFound)

	// Through a real client, which follows the redirect and sends the
	// token again (same origin): the poll waits for the move.
	srv := httptest.NewServer(a.handler)
	defer srv.Close()
	done := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/games/"+white.gameID+"?afterVersion="+itoa(version), nil)
		req.Header.Set("Authorization", "Bearer "+white.token)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Error(err)
			resp = nil
		}
		done <- resp
	}()
	time.Sleep(50 * time.Millisecond)
	a.move(white, "e2e4").expect(t, 200)
	select {
	case resp := <-done:
		if resp == nil {
			return
		}
		defer resp.Body.Close()
		var got struct {
			Game struct {
				Version int64  `json:"version"`
				You     string `json:"you"`
			} `json:"game"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 || got.Game.Version <= version ||
			got.Game.You != "white" || resp.Request.URL.Path != "/v1/games/"+white.gameID+"/poll" {
			t.Errorf("followed long poll: %d at %s, %+v, %v; want 200 from /poll with the move, as white", resp.StatusCode, resp.Request.URL, got, err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the followed long poll did not answer")
	}
}

func TestAISeat(t *testing.T) {
	a := newTestAPI(t)
	created := a.do("POST", "/v1/games", "", map[string]any{
		"opponent": map[string]any{"type": "ai", "level": "easy"},
		"options":  map[string]any{"colorAssignment": "hostWhite"},
	}).expect(t, http.StatusCreated)
	if created.game()["phase"] != "playing" {
		t.Fatalf("AI game not playing: %s", created.body)
	}
	host := seat{gameID: created.json["gameId"].(string), token: created.json["token"].(string)}
	a.move(host, "e2e4").expect(t, 200)
	tasks := a.ai.take()
	if len(tasks) != 1 {
		t.Fatalf("AI triggered %d times; want 1", len(tasks))
	}
	if err := a.svc.PlayAITurn(t.Context(), tasks[0]); err != nil {
		t.Fatal(err)
	}
	g := a.do("GET", "/v1/games/"+host.gameID, host.token, nil).game()
	if moves := g["moves"].([]any); len(moves) != 2 || g["turn"] != "white" {
		t.Errorf("after the AI turn: %d moves, turn %v", len(moves), g["turn"])
	}
	// A stale trigger does nothing.
	if err := a.svc.PlayAITurn(t.Context(), tasks[0]); err != nil {
		t.Fatal(err)
	}
	if n := len(a.do("GET", "/v1/games/"+host.gameID, "", nil).game()["moves"].([]any)); n != 2 {
		t.Errorf("stale trigger played: %d moves", n)
	}
}
