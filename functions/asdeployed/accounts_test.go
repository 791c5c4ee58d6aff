package asdeployed

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// TestAsDeployedSessionEnd: a session revoked through the move function
// takes the stream's connections made with its token, as deployed: the
// stream function records a connection of a player token under the token
// (tokenconn#), the move function's revocation deletes that connection's
// records, closes its socket (DELETE @connections) and marks the seat it
// was the only stream of disconnected; its next message finds no
// connection (410), and a connection of another session is untouched.
// Then the player deletes the account and the last session's connection
// goes the same way.
func TestAsDeployedSessionEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	base := evs["move/create-human.json"]
	s := newStack(t)
	move := start(t, moveSpec, s.env(moveSpec))
	stream := start(t, streamSpec, s.env(streamSpec))
	ctx := context.Background()

	p := callMove(t, move, base, "POST", "/v1/players", "", map[string]any{"name": "Alice"}, 201)
	phone := p["token"].(string)
	code := callMove(t, move, base, "POST", "/v1/players/me/link-codes", phone, map[string]any{}, 201)["code"].(string)
	tablet := callMove(t, move, base, "POST", "/v1/players/link", "", map[string]any{"code": code}, 200)
	tabletToken, tabletSession := tablet["token"].(string), tablet["sessionId"].(string)

	connect := func(conn, token string) {
		t.Helper()
		resp := wsEvent(t, stream, evs["stream/connect-white.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
			r.RequestContext.ConnectionID = conn
			r.Headers = map[string]string{"Authorization": "Bearer " + token}
			r.MultiValueHeaders = nil
		})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("$connect %s: %d %s", conn, resp.StatusCode, resp.Body)
		}
	}
	connect("conn-tablet", tabletToken)
	connect("conn-phone", phone)
	// The player's game, followed from the tablet alone: its white seat
	// is connected by that stream.
	gameID := callMove(t, move, base, "POST", "/v1/games", phone, map[string]any{"options": map[string]any{"colorAssignment": "hostWhite"}}, 201)["gameId"].(string)
	callMove(t, move, base, "POST", "/v1/games/"+gameID+"/join", "", map[string]any{"player": map[string]any{"name": "Bob"}}, 200)
	if resp := wsEvent(t, stream, evs["stream/subscribe-white.json"], func(r *events.APIGatewayWebsocketProxyRequest) {
		r.RequestContext.ConnectionID = "conn-tablet"
		r.Body = `{"action":"subscribe","gameId":"` + gameID + `"}`
	}); resp.StatusCode != http.StatusOK {
		t.Fatalf("subscribe from the tablet: %d %s", resp.StatusCode, resp.Body)
	}
	if m := s.conns.take("conn-tablet"); len(m) != 1 || m[0].Type != "subscribed" {
		t.Fatalf("the tablet's subscribe: %+v; want subscribed", m)
	}
	whitePresence := func() map[string]any {
		t.Helper()
		players := callMove(t, move, base, "GET", "/v1/games/"+gameID, "", nil, 200)["game"].(map[string]any)["players"].(map[string]any)
		return players["white"].(map[string]any)["presence"].(map[string]any)
	}
	if p := whitePresence(); p["connected"] != true {
		t.Fatalf("white followed from the tablet: %v; want connected", p)
	}
	if conns, err := s.data.TokenConnections(ctx, service.HashToken(tabletToken)); err != nil || len(conns) != 1 || conns[0] != "conn-tablet" {
		t.Fatalf("the tablet token's connections: %v, %v; want conn-tablet", conns, err)
	}

	noContent := func(path string) {
		t.Helper()
		if resp, _ := invokeHTTP(t, move, "DELETE "+path, playerRequest(t, base, "DELETE", path, phone, nil)); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("DELETE %s: %d %s; want 204", path, resp.StatusCode, resp.Body)
		}
	}
	noContent("/v1/players/me/sessions/" + tabletSession)
	if _, err := s.data.Connection(ctx, "conn-tablet"); !errors.Is(err, dynamostore.ErrNoConnection) {
		t.Errorf("the revoked session's connection after the revocation: %v; want its records gone", err)
	}
	if closed := s.conns.takeClosed(); len(closed) != 1 || closed[0] != "conn-tablet" {
		t.Errorf("sockets closed through @connections: %v; want conn-tablet's", closed)
	}
	if p := whitePresence(); p["connected"] != false || p["since"] == nil {
		t.Errorf("white after its only stream's session was revoked: %v; want disconnected, its grace running", p)
	}
	// API Gateway's $disconnect after the close finds nothing left.
	if resp := wsEvent(t, stream, evs["stream/disconnect-white.json"], func(r *events.APIGatewayWebsocketProxyRequest) { r.RequestContext.ConnectionID = "conn-tablet" }); resp.StatusCode != http.StatusOK {
		t.Errorf("$disconnect of the closed connection: %d %s; want 200", resp.StatusCode, resp.Body)
	}
	ping := evs["stream/ping.json"]
	if resp := wsEvent(t, stream, ping, func(r *events.APIGatewayWebsocketProxyRequest) { r.RequestContext.ConnectionID = "conn-tablet" }); resp.StatusCode != http.StatusGone {
		t.Errorf("a message on the revoked session's connection: %d; want 410 (no connection)", resp.StatusCode)
	}
	if _, err := s.data.Connection(ctx, "conn-phone"); err != nil {
		t.Errorf("the other session's connection: %v; want it kept", err)
	}
	if resp := wsEvent(t, stream, ping, func(r *events.APIGatewayWebsocketProxyRequest) { r.RequestContext.ConnectionID = "conn-phone" }); resp.StatusCode != http.StatusOK {
		t.Errorf("a message on the other session's connection: %d; want 200", resp.StatusCode)
	}

	noContent("/v1/players/me")
	if _, err := s.data.Connection(ctx, "conn-phone"); !errors.Is(err, dynamostore.ErrNoConnection) {
		t.Errorf("the deleted player's connection: %v; want its records gone", err)
	}
	if closed := s.conns.takeClosed(); len(closed) != 1 || closed[0] != "conn-phone" {
		t.Errorf("sockets closed through @connections after the deletion: %v; want conn-phone's", closed)
	}
	noContent("/v1/players/me") // a retry with the same token
	callMove(t, move, base, "GET", "/v1/players/me", phone, nil, http.StatusUnauthorized)
}
