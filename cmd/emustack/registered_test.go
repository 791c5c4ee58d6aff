package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// openingPlies are 20 legal plies of an Italian game.
var openingPlies = strings.Fields("e2e4 e7e5 g1f3 b8c6 f1c4 f8c5 c2c3 g8f6 d2d3 d7d6 e1g1 e8g8 b1d2 a7a6 a2a4 c8e6 f1e1 h7h6 c4e6 f7e6")

// TestEmustackRegisteredGameIndexWrites measures what a game between two
// registered players costs in the games table's indexes (byWhite,
// byBlack: a player's games, active ones sorted by when each started,
// finished ones by their last write; lobby)
// next to the same game between anonymous seats, whose item is in no
// player's index: the index write units of its start (create, join), of
// each move and of its end (a resign), from the stream's images
// (indexWriteUnits), and the game item's own. A move changes nothing an
// index holds, so it must cost the indexes nothing. docs/operations.md §2.3
// and §3.2 price them:
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
	// phases are the counts of one game's start, moves and end.
	type phases struct{ start, moves, end Counts }
	play := func(whiteAuth, blackAuth string) phases {
		t.Helper()
		var p phases
		c.counts()
		created := c.call("POST", "/v1/games", whiteAuth, map[string]any{"options": map[string]any{"timeControl": "5+3", "colorAssignment": "hostWhite"}}, 201)
		joined := c.call("POST", "/v1/games/"+created.GameID+"/join", blackAuth, nil, 200)
		p.start = c.counts()
		seats := []string{created.Token, joined.Token}
		for i, uci := range openingPlies {
			c.move(created.GameID, seats[i%2], uci)
		}
		p.moves = c.counts()
		c.call("POST", "/v1/games/"+created.GameID+"/actions", seats[len(openingPlies)%2], map[string]any{"type": "resign"}, 200)
		p.end = c.counts()
		return p
	}
	white, black := player("White"), player("Black")
	registered := play(white, black)
	anonymous := play("", "")

	n := int64(len(openingPlies))
	index := func(c Counts) int64 { return c.Platform["dynamodb:GamesIndexWriteUnits"] }
	item := func(c Counts) int64 { return c.Platform["dynamodb:GamesPutWriteUnits"] }
	for _, m := range []struct {
		name string
		p    phases
	}{{"registered", registered}, {"anonymous", anonymous}} {
		t.Logf("%s: start (create, join): index %d units, game item %d; %d moves: index %d units (%.2f a move), game item %d (%.2f a move), records %d; end (resign): index %d units, game item %d",
			m.name, index(m.p.start), item(m.p.start), n, index(m.p.moves), float64(index(m.p.moves))/float64(n),
			item(m.p.moves), float64(item(m.p.moves))/float64(n), m.p.moves.Platform["dynamodb-streams:Records"], index(m.p.end), item(m.p.end))
		for phase, c := range map[string]Counts{"start": m.p.start, "moves": m.p.moves, "end": m.p.end} {
			if d := c.Platform["iam:DataTableDenied"]; d != 0 {
				t.Errorf("%s %s: %d data table requests the template's grants refuse", m.name, phase, d)
			}
		}
		if m.p.moves.Platform["dynamodb-streams:Records"] != n {
			t.Errorf("%s: %d stream records for %d moves", m.name, m.p.moves.Platform["dynamodb-streams:Records"], n)
		}
		if ix := index(m.p.moves); ix != 0 {
			t.Errorf("%s: %d moves wrote %d index units; a move changes nothing an index holds", m.name, n, ix)
		}
	}
	// The anonymous game is in the lobby while it waits (put at the create,
	// deleted at the join) and in no other index.
	if ix := index(anonymous.start) + index(anonymous.end); ix != 2 {
		t.Errorf("an anonymous game's start and end wrote %d index units; want 2 (its lobby entry put and deleted)", ix)
	}
	// The registered one also enters both players' lists at its start and
	// moves to their finished lists at its end (a delete and a put each).
	if ix := index(registered.start); ix <= index(anonymous.start) {
		t.Errorf("a registered game's start wrote %d index units; want more than the anonymous game's %d", ix, index(anonymous.start))
	}
	if ix := index(registered.end); ix != 4 {
		t.Errorf("a registered game's end wrote %d index units; want 4 (both entries deleted and put in the finished partition)", ix)
	}
}

// TestEmustackMyGamesPagingAcrossMoves: on the emulated stack (DynamoDB's
// indexes, the HTTP API), GET /v1/players/me/games is newest updatedAt
// first (SPEC §15): a move in the oldest game lists it first, though the
// move wrote no index row (TestEmustackRegisteredGameIndexWrites). Paged
// while games are played between two pages, every game not written
// between two page reads comes exactly once; one that is written moves
// ahead of the cursor, so it is never repeated (the next read from the
// top has it first); updatedAt never increases down the pages.
func TestEmustackMyGamesPagingAcrossMoves(t *testing.T) {
	st := startTestStack(t)
	c := client{t: t, base: st.URL}
	white := c.callJSON("POST", "/v1/players", "", map[string]any{"name": "White"}, 201)["token"].(string)
	black := c.callJSON("POST", "/v1/players", "", map[string]any{"name": "Black"}, 201)["token"].(string)
	type seats struct {
		id, white, black string
		plies            int
	}
	var games []*seats
	for range 6 {
		created := c.call("POST", "/v1/games", white, map[string]any{"options": map[string]any{"timeControl": "5+3", "colorAssignment": "hostWhite"}}, 201)
		joined := c.call("POST", "/v1/games/"+created.GameID+"/join", black, nil, 200)
		games = append(games, &seats{id: created.GameID, white: created.Token, black: joined.Token})
		time.Sleep(2 * time.Millisecond) // distinct writes (updatedAt has milliseconds)
	}
	move := func(g *seats) {
		time.Sleep(2 * time.Millisecond)
		c.move(g.id, []string{g.white, g.black}[g.plies%2], openingPlies[g.plies])
		g.plies++
	}
	var last float64 // the updatedAt of the last item of the pages read so far
	page := func(limit int, cursor string) ([]string, string) {
		t.Helper()
		path := fmt.Sprintf("/v1/players/me/games?limit=%d", limit)
		if cursor != "" {
			path += "&cursor=" + cursor
		} else {
			last = 0
		}
		out := c.callJSON("GET", path, white, nil, 200)
		var ids []string
		for _, it := range out["items"].([]any) {
			m := it.(map[string]any)
			ids = append(ids, m["gameId"].(string))
			at, _ := m["updatedAt"].(float64)
			if last > 0 && at > last {
				t.Errorf("game %s updatedAt %v after an item of %v (cursor %q): not newest first", m["gameId"], at, last, cursor)
			}
			last = at
		}
		next, _ := out["nextCursor"].(string)
		return ids, next
	}
	byID := func(ids ...string) string { return strings.Join(ids, " ") }
	var want []string // newest join first
	for i := len(games) - 1; i >= 0; i-- {
		want = append(want, games[i].id)
	}
	if ids, _ := page(100, ""); byID(ids...) != byID(want...) {
		t.Fatalf("games before any move = %q; want %q (newest join first)", ids, want)
	}
	move(games[0])
	want = append([]string{games[0].id}, want[:len(want)-1]...)
	if ids, _ := page(100, ""); byID(ids...) != byID(want...) {
		t.Fatalf("games after a move in the oldest = %q; want %q (it first)", ids, want)
	}

	// Page by 2; between two pages, play one game already listed and the
	// next game not yet listed.
	seen := map[string]int{}
	moved := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		ids, next := page(2, cursor)
		for _, id := range ids {
			seen[id]++
		}
		if next == "" {
			break
		}
		if pages > len(games) {
			t.Fatal("more pages than games")
		}
		cursor = next
		listed := ids[0]
		var unlisted string
		for _, id := range want {
			if seen[id] == 0 && !moved[id] {
				unlisted = id
				break
			}
		}
		for _, g := range games {
			if g.id == listed || g.id == unlisted {
				move(g)
				moved[g.id] = true
			}
		}
	}
	for _, id := range want {
		switch {
		case seen[id] > 1:
			t.Errorf("game %s listed %d times; a game is never repeated", id, seen[id])
		case !moved[id] && seen[id] != 1:
			t.Errorf("game %s, not written while paging, listed %d times; want once", id, seen[id])
		}
	}
	if ids, _ := page(100, ""); len(ids) != len(games) {
		t.Errorf("a read from the top after the paging = %q; want all %d games", ids, len(games))
	}
	// A cursor of the index's format (what the active list gave before it
	// was ordered by the games' writes) is refused, naming the field.
	old := base64.RawURLEncoding.EncodeToString([]byte("p1764639000000#" + games[0].id))
	refused, _ := c.callJSON("GET", "/v1/players/me/games?cursor="+old, white, nil, 400)["error"].(map[string]any)
	if refused["code"] != "invalid_field" || refused["field"] != "cursor" {
		t.Errorf("an old cursor: %v; want 400 invalid_field naming cursor", refused)
	}
	t.Logf("paged %d games; %d written while paging, %d of those listed", len(games), len(moved), func() (n int) {
		for id := range moved {
			n += seen[id]
		}
		return n
	}())
}
