package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// openingPlies are 20 legal plies of an Italian game.
var openingPlies = strings.Fields("e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 c2c3 g8f6 d2d3 d7d6 e1g1 e8g8 b1d2 a7a6 a2a4 c8e6 f1e1 h7h6 c4e6 f7e6")

// TestEmustackRegisteredGameIndexWrites measures what a game between two
// registered players costs in the games table's indexes (byWhite,
// byBlack: a player's games, newest first) next to the same moves in an
// anonymous game, whose item is in no index: the index write units per
// move, from the stream's images (indexWriteUnits), and the game item's
// own. docs/operations.md §3 prices them:
//
//	go test -count=1 -v -run TestEmustackRegisteredGameIndexWrites ./cmd/emustack
func TestEmustackRegisteredGameIndexWrites(t *testing.T) {
	st := startTestStack(t)
	c := client{t: t, base: st.URL}
	player := func(name string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", st.URL+"/v1/players", strings.NewReader(`{"name":"`+name+`"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		var p struct {
			Token string `json:"token"`
		}
		if res.StatusCode != 201 || json.Unmarshal(data, &p) != nil || p.Token == "" {
			t.Fatalf("POST /v1/players: %d %s", res.StatusCode, data)
		}
		return p.Token
	}
	play := func(whiteAuth, blackAuth string) (id string) {
		t.Helper()
		created := c.call("POST", "/v1/games", whiteAuth, map[string]any{"options": map[string]any{"timeControl": "5+3", "colorAssignment": "hostWhite"}}, 201)
		joined := c.call("POST", "/v1/games/"+created.GameID+"/join", blackAuth, nil, 200)
		c.counts() // the moves alone from here
		seats := []string{created.Token, joined.Token}
		for i, uci := range openingPlies {
			c.move(created.GameID, seats[i%2], uci)
		}
		return created.GameID
	}
	white, black := player("White"), player("Black")
	c.counts()
	play(white, black)
	registered := c.counts()
	play("", "")
	anonymous := c.counts()

	n := int64(len(openingPlies))
	for _, m := range []struct {
		name string
		c    Counts
	}{{"registered", registered}, {"anonymous", anonymous}} {
		ix, item := m.c.Platform["dynamodb:GamesIndexWriteUnits"], m.c.Platform["dynamodb:GamesPutWriteUnits"]
		t.Logf("%s: %d moves: game item %d write units (%.2f a move), indexes %d (%.2f a move), records %d",
			m.name, n, item, float64(item)/float64(n), ix, float64(ix)/float64(n), m.c.Platform["dynamodb-streams:Records"])
		if d := m.c.Platform["iam:DataTableDenied"]; d != 0 {
			t.Errorf("%s: %d data table requests the template's grants refuse", m.name, d)
		}
		if m.c.Platform["dynamodb-streams:Records"] != n {
			t.Errorf("%s: %d stream records for %d moves", m.name, m.c.Platform["dynamodb-streams:Records"], n)
		}
	}
	if ix := anonymous.Platform["dynamodb:GamesIndexWriteUnits"]; ix != 0 {
		t.Errorf("an anonymous game's moves wrote %d index units; its item is in no index", ix)
	}
	if ix := registered.Platform["dynamodb:GamesIndexWriteUnits"]; ix < n {
		t.Errorf("a registered game's moves wrote %d index units in %d moves; its item is in two indexes", ix, n)
	}
}
