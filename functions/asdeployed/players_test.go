package asdeployed

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/deploy"
	"chessapi/infra/rie"
	"chessapi/shared/game"
)

// playerRequest is an HTTP API event for the move function: method, path,
// bearer token and JSON body, from the shape of create-human.json.
func playerRequest(t *testing.T, base deploy.Event, method, path, token string, body any) []byte {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(base.Raw, &req); err != nil {
		t.Fatal(err)
	}
	rawPath, query, _ := strings.Cut(path, "?")
	route := rawPath
	req.PathParameters = nil
	if strings.HasPrefix(rawPath, "/v1/games/") {
		parts := strings.Split(rawPath, "/")
		req.PathParameters = map[string]string{"id": parts[3]}
		parts[3] = "{id}"
		route = strings.Join(parts, "/")
	}
	req.RouteKey = method + " " + route
	req.RawPath, req.RawQueryString = rawPath, query
	req.QueryStringParameters = nil
	if query != "" {
		req.QueryStringParameters = map[string]string{}
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			req.QueryStringParameters[k] = v
		}
	}
	req.RequestContext.RouteKey = req.RouteKey
	req.RequestContext.HTTP.Method, req.RequestContext.HTTP.Path = method, rawPath
	req.Headers = map[string]string{"content-type": "application/json", "user-agent": "asdeployed"}
	if token != "" {
		req.Headers["authorization"] = "Bearer " + token
	}
	req.Body = ""
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		req.Body = string(b)
	}
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type answer map[string]any

func callMove(t *testing.T, f *rie.Function, base deploy.Event, method, path, token string, body any, want int) answer {
	t.Helper()
	resp, _ := invokeHTTP(t, f, method+" "+path, playerRequest(t, base, method, path, token, body))
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s; want %d", method, path, resp.StatusCode, resp.Body, want)
	}
	var a answer
	if err := json.Unmarshal([]byte(resp.Body), &a); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return a
}

// TestAsDeployedPlayers: two app installs create players, find each other
// by quick pairing in a rated room, play, and see their ratings move once
// (applied by the fan-out from the change stream), list their games, and one
// continues on a second device with a link code, all through the move and
// fan-out functions under the emulator on moto. It logs the DynamoDB
// requests of a pairing and of a rated game's end (docs/operations.md).
func TestAsDeployedPlayers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	base := evs["move/create-human.json"]
	s := newStack(t)
	move := start(t, moveSpec, s.env(moveSpec))
	fanout := start(t, fanoutSpec, s.env(fanoutSpec))

	alice := callMove(t, move, base, "POST", "/v1/players", "", map[string]any{"name": "Alice"}, 201)
	bob := callMove(t, move, base, "POST", "/v1/players", "", map[string]any{"name": "Bob"}, 201)
	at, bt := alice["token"].(string), bob["token"].(string)
	s.pump(t, fanout)
	s.calls.Take()

	// Quick pairing in the intermediate (rated) room: Alice waits, Bob is
	// paired with her.
	first := callMove(t, move, base, "POST", "/v1/lobby/quick", at, map[string]any{"room": "intermediate", "options": map[string]any{"timeControl": "perMove:120", "colorAssignment": "hostWhite"}}, 200)
	waitCalls := s.calls.Take()
	if first["matched"] != false {
		t.Fatalf("first quick pairing: %v; want waiting", first)
	}
	gameID := first["gameId"].(string)
	lobby := callMove(t, move, base, "GET", "/v1/lobby?room=intermediate", "", nil, 200)
	if items := lobby["items"].([]any); len(items) != 1 || items[0].(map[string]any)["gameId"] != gameID {
		t.Fatalf("lobby: %v; want Alice's waiting game", lobby)
	}
	s.calls.Take()
	second := callMove(t, move, base, "POST", "/v1/lobby/quick", bt, map[string]any{"room": "intermediate", "options": map[string]any{"timeControl": "perMove:120"}}, 200)
	pairCalls := s.calls.Take()
	if second["matched"] != true || second["gameId"] != gameID {
		t.Fatalf("second quick pairing: %v; want matched with Alice's game", second)
	}
	s.pump(t, fanout)
	// A rated room plays seeds/003's game (SPEC §16.5): both get ready,
	// and the game starts 3 s after the second.
	for _, token := range []string{at, bt} {
		callMove(t, move, base, "POST", "/v1/games/"+gameID+"/actions", token, map[string]any{"type": "ready"}, 200)
	}
	time.Sleep(game.StartDelayMs*time.Millisecond + 100*time.Millisecond)
	s.pump(t, fanout)

	// Fool's mate: Bob (black) wins.
	for i, uci := range []string{"f2f3", "e7e5", "g2g4", "d8h4"} {
		token := []string{at, bt}[i%2]
		if i == 3 {
			s.pump(t, fanout)
			s.calls.Take()
		}
		callMove(t, move, base, "POST", "/v1/games/"+gameID+"/actions", token, map[string]any{"type": "move", "payload": map[string]any{"uci": uci}}, 200)
	}
	endCalls := s.calls.Take()
	s.pump(t, fanout)
	ratingCalls := s.calls.Take()
	am := callMove(t, move, base, "GET", "/v1/players/me", at, nil, 200)
	bm := callMove(t, move, base, "GET", "/v1/players/me", bt, nil, 200)
	if am["rating"] != 980.0 || bm["rating"] != 1020.0 || am["ratedGames"] != 1.0 || bm["ratedGames"] != 1.0 {
		t.Fatalf("ratings after the rated game: Alice %v, Bob %v; want 980 and 1020, one game each", am, bm)
	}
	// The change stream delivers the record again: nothing moves twice.
	// (Re-reading the stream from the start redelivers every record.)
	s.changes.Rewind()
	s.pump(t, fanout)
	if am := callMove(t, move, base, "GET", "/v1/players/me", at, nil, 200); am["rating"] != 980.0 || am["ratedGames"] != 1.0 {
		t.Errorf("after the stream delivered every record again: Alice %v; want 980, one game", am)
	}

	games := callMove(t, move, base, "GET", "/v1/players/me/games?status=finished", bt, nil, 200)
	items := games["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["gameId"] != gameID || games["nextCursor"] != nil {
		t.Errorf("Bob's finished games: %v; want the one game", games)
	}

	// A second device: a link code, then Bob's new token reads his profile.
	code := callMove(t, move, base, "POST", "/v1/players/me/link-codes", bt, nil, 201)["code"].(string)
	linked := callMove(t, move, base, "POST", "/v1/players/link", "", map[string]any{"code": code}, 200)
	if me := callMove(t, move, base, "GET", "/v1/players/me", linked["token"].(string), nil, 200); me["playerId"] != bm["playerId"] {
		t.Errorf("the linked device's profile: %v; want Bob's", me)
	}
	callMove(t, move, base, "POST", "/v1/players/link", "", map[string]any{"code": code}, 404)

	t.Logf("quick pairing, waiting (no game to join): %s", sorted(waitCalls))
	t.Logf("quick pairing, matched: %s", sorted(pairCalls))
	t.Logf("the mating move of a rated game (move function): %s", sorted(endCalls))
	t.Logf("its ratings and timer (fan-out of the last record): %s", sorted(ratingCalls))
	if endCalls["dynamodb:GetItem"] < 2 || endCalls["dynamodb:PutItem"] != 1 {
		t.Errorf("the rated game's last move: %v; want the game's read, both players' reads and one game write", endCalls)
	}
}
