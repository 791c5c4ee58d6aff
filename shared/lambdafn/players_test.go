package lambdafn

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"chessapi/deploy"
	"chessapi/internal/apispec"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The player, lobby and invite events (events/move/player-*.json,
// lobby*.json, create-private.json, join-with-invite.json) through the move
// function: the sample player holds deploy.SamplePlayerToken; the sample
// link code and invite code are the ones in the files.
const (
	samplePlayerID   = deploy.SamplePlayerID
	sampleLinkCode   = "K7M2QX9P"
	sampleInviteCode = "H4KX7MZQ2P"
)

// seedSamplePlayer registers the events' sample player.
func seedSamplePlayer(t *testing.T, f *fixture) {
	t.Helper()
	p := service.PlayerRecord{ID: samplePlayerID, Name: "지우", Rating: game.InitialRating, CreatedAt: eventsStart, Version: 1}
	first := service.Session{ID: "se_SampleSessionOfEvents1", PlayerID: samplePlayerID, TokenHash: service.HashToken(deploy.SamplePlayerToken), CreatedAt: eventsStart, LastUsedAt: eventsStart}
	if err := f.store.CreatePlayer(context.Background(), p, first); err != nil {
		t.Fatal(err)
	}
}

type profileResponse struct {
	PlayerID   string `json:"playerId"`
	Token      string `json:"token"`
	Name       string `json:"name"`
	Rating     int    `json:"rating"`
	Rank       string `json:"rank"`
	RankKey    string `json:"rankKey"`
	RatedGames int    `json:"ratedGames"`
	Player     *struct {
		PlayerID string `json:"playerId"`
		Name     string `json:"name"`
	} `json:"player"`
	Code        string            `json:"code"`
	Items       []json.RawMessage `json:"items"`
	NextCursor  *string           `json:"nextCursor"`
	Matched     *bool             `json:"matched"`
	GameID      string            `json:"gameId"`
	InviteCode  string            `json:"inviteCode"`
	ErrorFields *errorFields      `json:"error"`
}

func sendPlayerEvent(t *testing.T, f *fixture, name string) (int, profileResponse) {
	t.Helper()
	evs := loadEvents(t)
	req := httpRequest(t, sent(evs, name))
	resp, err := f.move.HandleHTTP(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	checkContract(t, req, resp)
	var r profileResponse
	body, err := apispec.APIGatewayBody(resp)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("%s: body %q: %v", name, body, err)
	}
	return resp.StatusCode, r
}

func TestPlayerEvents(t *testing.T) {
	f := newFixture(t, "")
	seedSamplePlayer(t, f)

	if status, r := sendPlayerEvent(t, f, "move/player-create.json"); status != http.StatusCreated || r.Player == nil || r.Player.Name != "지우" || len(r.Token) != 46 {
		t.Errorf("player-create: %d %+v; want 201 with the player and a player token", status, r)
	}
	if status, r := sendPlayerEvent(t, f, "move/player-me.json"); status != 200 || r.PlayerID != samplePlayerID || r.Rating != 1000 || r.Rank != "10급" || r.RankKey != "kyu10" {
		t.Errorf("player-me: %d %+v; want the sample player at 1000, 10급", status, r)
	}
	if status, r := sendPlayerEvent(t, f, "move/player-rename.json"); status != 200 || r.Name != "Jiwoo" {
		t.Errorf("player-rename: %d %+v; want the name Jiwoo", status, r)
	}
	if status, r := sendPlayerEvent(t, f, "move/player-link-code.json"); status != http.StatusCreated || len(r.Code) != 8 {
		t.Errorf("player-link-code: %d %+v; want 201 with an 8-character code", status, r)
	}
	// The file's code, issued for the sample player.
	if err := f.store.PutLinkCode(context.Background(), service.HashToken(sampleLinkCode), samplePlayerID, eventsStart.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if status, r := sendPlayerEvent(t, f, "move/player-link.json"); status != 200 || r.PlayerID != samplePlayerID || r.Token == deploy.SamplePlayerToken {
		t.Errorf("player-link: %d %+v; want a new token of the sample player", status, r)
	}
	if status, r := sendPlayerEvent(t, f, "move/player-link.json"); status != http.StatusNotFound || r.ErrorFields == nil || r.ErrorFields.Code != "link_code_invalid" {
		t.Errorf("player-link again: %d %+v; want 404 link_code_invalid (single use)", status, r)
	}

	// A private game in the intermediate room, with the player token.
	status, created := sendPlayerEvent(t, f, "move/create-private.json")
	if status != http.StatusCreated || len(created.InviteCode) != 10 {
		t.Fatalf("create-private: %d %+v; want 201 with an invite code", status, created)
	}
	if status, r := sendPlayerEvent(t, f, "move/player-games.json"); status != 200 || len(r.Items) != 0 || r.NextCursor != nil {
		t.Errorf("player-games (finished): %d %+v; want an empty last page", status, r)
	}
	if status, r := sendPlayerEvent(t, f, "move/lobby.json"); status != 200 || len(r.Items) != 0 {
		t.Errorf("lobby (intermediate): %d %+v; want none listed (the only game there is private)", status, r)
	}
	if status, r := sendPlayerEvent(t, f, "move/lobby-quick.json"); status != 200 || r.Matched == nil || *r.Matched || r.GameID == "" {
		t.Errorf("lobby-quick: %d %+v; want a new waiting game", status, r)
	}

	// join-with-invite.json: the sample game, waiting, private with the
	// file's code.
	opts := game.DefaultOptions()
	st, _, err := game.New(game.NewGame{GameID: deploy.SampleGameID, Options: opts,
		Host:   game.Player{ID: "sample-white", Name: "White", TokenHash: service.HashToken(deploy.SampleWhiteToken)},
		Invite: game.Invite{Mode: game.InvitePrivate, CodeHash: service.HashToken(sampleInviteCode)}, Seed: 1}, f.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	storeState(t, f.store, st)
	if status, r := sendPlayerEvent(t, f, "move/join-with-invite.json"); status != 200 || r.ErrorFields != nil {
		t.Errorf("join-with-invite: %d %+v; want 200", status, r)
	}
}

// TestAccountEvents replays the account events (SPEC §16.2) through the
// move function: sessions, the recovery code, blocks, the public profile
// and, last, the deletion.
func TestAccountEvents(t *testing.T) {
	f := newFixture(t, "")
	seedSamplePlayer(t, f)
	ctx := context.Background()
	second := service.Session{ID: deploy.SampleSecondSessionID, PlayerID: samplePlayerID, TokenHash: service.HashToken("pt_second"), CreatedAt: eventsStart.Add(time.Minute)}
	if err := f.store.AddSession(ctx, second); err != nil {
		t.Fatal(err)
	}
	opponent := service.PlayerRecord{ID: deploy.SampleOpponentID, Name: "Ben", Rating: game.InitialRating, CreatedAt: eventsStart, Version: 1}
	if err := f.store.CreatePlayer(ctx, opponent, service.Session{ID: "se_OpponentSessionOfEvnt", PlayerID: opponent.ID, TokenHash: service.HashToken("pt_opponent")}); err != nil {
		t.Fatal(err)
	}
	raw := func(name string) (int, map[string]any) {
		t.Helper()
		req := httpRequest(t, sent(loadEvents(t), name))
		resp, err := f.move.HandleHTTP(ctx, req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkContract(t, req, resp)
		var body map[string]any
		if resp.Body != "" {
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil {
				t.Fatalf("%s: %q: %v", name, resp.Body, err)
			}
		}
		return resp.StatusCode, body
	}
	if status, b := raw("move/player-sessions.json"); status != 200 || len(b["sessions"].([]any)) != 2 {
		t.Errorf("player-sessions: %d %v; want the two sessions", status, b)
	}
	if status, b := raw("move/player-session-label.json"); status != 200 || b["label"] != "iPhone" || b["current"] != true {
		t.Errorf("player-session-label: %d %v", status, b)
	}
	if status, b := raw("move/player-session-revoke.json"); status != http.StatusNoContent {
		t.Errorf("player-session-revoke: %d %v; want 204", status, b)
	}
	if status, b := raw("move/player-session-revoke.json"); status != http.StatusNotFound || b["error"].(map[string]any)["code"] != "session_not_found" {
		t.Errorf("player-session-revoke again: %d %v; want 404 session_not_found", status, b)
	}
	if status, b := raw("move/player-recovery-code.json"); status != http.StatusCreated || b["recoveryCode"] == "" {
		t.Errorf("player-recovery-code: %d %v", status, b)
	}
	// The file's code is wrong now (a new one was issued): 404; then the
	// file's code is made the player's.
	if status, b := raw("move/player-recover.json"); status != http.StatusNotFound {
		t.Errorf("player-recover with another code: %d %v; want 404", status, b)
	}
	p, err := f.store.Player(ctx, samplePlayerID)
	if err != nil {
		t.Fatal(err)
	}
	next := p
	next.Version, next.RecoveryHash = p.Version+1, service.HashToken(deploy.SampleRecoveryCode)
	if err := f.store.UpdatePlayer(ctx, next, p.Version); err != nil {
		t.Fatal(err)
	}
	if status, b := raw("move/player-recover.json"); status != http.StatusCreated || b["playerId"] != samplePlayerID || b["sessionId"] == "" {
		t.Errorf("player-recover: %d %v; want a new session of the sample player", status, b)
	}
	if status, b := raw("move/player-block.json"); status != http.StatusNoContent {
		t.Errorf("player-block: %d %v", status, b)
	}
	if status, b := raw("move/player-blocks.json"); status != 200 || len(b["blocks"].([]any)) != 1 {
		t.Errorf("player-blocks: %d %v; want Ben", status, b)
	}
	if status, b := raw("move/player-unblock.json"); status != http.StatusNoContent {
		t.Errorf("player-unblock: %d %v", status, b)
	}
	if status, b := raw("move/player-profile.json"); status != 200 || b["playerId"] != samplePlayerID || b["ratingHistory"] == nil {
		t.Errorf("player-profile: %d %v", status, b)
	}
	if status, b := raw("move/player-delete.json"); status != http.StatusNoContent {
		t.Errorf("player-delete: %d %v; want 204", status, b)
	}
	if status, b := raw("move/player-delete.json"); status != http.StatusNoContent {
		t.Errorf("player-delete retried: %d %v; want 204 again", status, b)
	}
	if status, b := raw("move/player-me.json"); status != http.StatusUnauthorized || b["error"].(map[string]any)["code"] != "invalid_token" {
		t.Errorf("player-me after the deletion: %d %v; want 401 invalid_token", status, b)
	}
	if status, b := raw("move/player-profile.json"); status != http.StatusNotFound || b["error"].(map[string]any)["code"] != "player_not_found" {
		t.Errorf("player-profile after the deletion: %d %v; want 404 player_not_found", status, b)
	}
}
