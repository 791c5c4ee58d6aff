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
// records, its next message finds no connection (410), and a connection of
// another session is untouched. Then the player deletes the account and
// the last session's connection goes the same way.
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
	noContent("/v1/players/me") // a retry with the same token
	callMove(t, move, base, "GET", "/v1/players/me", phone, nil, http.StatusUnauthorized)
}
