package asdeployed

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"chessapi/infra/emulator"
)

// withPushApplications makes the three SNS platform applications on moto,
// as an operator makes them before a deploy, and gives them to the
// functions as the stack's parameters would (docs/notifications.md).
func (s *stack) withPushApplications(t *testing.T) *sns.Client {
	t.Helper()
	client := sns.NewFromConfig(emulator.Config(s.moto))
	s.push = map[string]string{}
	for _, a := range []struct{ platform, env string }{
		{"APNS", "APNS_PLATFORM_APPLICATION_ARN"}, {"APNS_SANDBOX", "APNS_SANDBOX_PLATFORM_APPLICATION_ARN"}, {"GCM", "FCM_PLATFORM_APPLICATION_ARN"},
	} {
		out, err := client.CreatePlatformApplication(context.Background(), &sns.CreatePlatformApplicationInput{
			Name: aws.String(stackName + "-" + a.platform), Platform: aws.String(a.platform),
			Attributes: map[string]string{"PlatformCredential": "emulated"},
		})
		if err != nil {
			t.Fatalf("CreatePlatformApplication %s: %v", a.platform, err)
		}
		s.push[a.env] = aws.ToString(out.PlatformApplicationArn)
	}
	return client
}

// TestAsDeployedNotifications: two players' phones as deployed — the move
// function registers their devices (SNS endpoints), the fan-out decides
// and publishes from the games table's change stream, and the stream
// function's connections say who has the game open. A move whose opponent
// has the game's stream open costs no SNS call; one whose opponent is away
// is one Publish; an endpoint SNS disabled is removed with its device. It
// logs the AWS requests of each (docs/notifications.md, the README).
func TestAsDeployedNotifications(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	base := evs["move/create-human.json"]
	s := newStack(t)
	snsClient := s.withPushApplications(t)
	move := start(t, moveSpec, s.env(moveSpec))
	consumers := startConsumers(t, s)
	stream := start(t, streamSpec, s.env(streamSpec))
	ctx := context.Background()

	ana := callMove(t, move, base, "POST", "/v1/players", "", map[string]any{"name": "Ana"}, 201)
	ben := callMove(t, move, base, "POST", "/v1/players", "", map[string]any{"name": "벤"}, 201)
	at, bt := ana["token"].(string), ben["token"].(string)
	fcmToken := "fcm:" + fmt.Sprintf("%0120d", 7)
	anaDevice := callMove(t, move, base, "POST", "/v1/players/me/devices", at, map[string]any{"platform": "fcm", "token": fcmToken, "locale": "en"}, 201)
	callMove(t, move, base, "POST", "/v1/players/me/devices", bt, map[string]any{"platform": "apns", "token": fmt.Sprintf("%064x", 0xbe), "locale": "ko"}, 201)
	if calls := s.calls.Take(); calls["sns:CreatePlatformEndpoint"] != 2 {
		t.Errorf("registering two devices made %v; want two CreatePlatformEndpoint", calls)
	}
	s.pump(t, consumers)

	g := callMove(t, move, base, "POST", "/v1/games", at, map[string]any{"options": map[string]any{"colorAssignment": "hostWhite"}}, 201)
	gameID := g["gameId"].(string)
	callMove(t, move, base, "POST", "/v1/games/"+gameID+"/join", bt, map[string]any{}, 200)
	s.calls.Take()
	s.pump(t, consumers)
	if calls := s.calls.Take(); calls["sns:Publish"] != 2 {
		t.Errorf("the join's fan-out made %v; want a Publish to each player (gameStarted)", calls)
	}

	// Ben opens the game on the stream.
	const benConn = "BenConnAAAAAAAA="
	asBen := func(r *events.APIGatewayWebsocketProxyRequest) {
		r.RequestContext.ConnectionID = benConn
		r.Headers = map[string]string{"Authorization": "Bearer " + bt, "Accept-Language": "ko"}
		if r.RequestContext.RouteKey == "subscribe" {
			r.Body = fmt.Sprintf(`{"action":"subscribe","gameId":%q}`, gameID)
		}
	}
	if resp := wsEvent(t, stream, evs["stream/connect-white.json"], asBen); resp.StatusCode != 200 {
		t.Fatalf("Ben's $connect: %d %s", resp.StatusCode, resp.Body)
	}
	wsEvent(t, stream, evs["stream/subscribe-white.json"], asBen)
	s.pump(t, consumers)
	s.calls.Take()
	s.conns.requests()

	play := func(token, uci string) map[string]int {
		t.Helper()
		callMove(t, move, base, "POST", "/v1/games/"+gameID+"/actions", token, map[string]any{"type": "move", "payload": map[string]any{"uci": uci}}, 200)
		s.calls.Take()
		s.pump(t, consumers)
		return s.calls.Take()
	}
	connected := play(at, "e2e4")
	if connected["sns:Publish"] != 0 {
		t.Errorf("e4 with Ben's stream open: the fan-out made %v; want no SNS call", connected)
	}
	t.Logf("fan-out of a move, opponent connected: %v", connected)
	away := play(bt, "e7e5")
	if away["sns:Publish"] != 1 {
		t.Errorf("e5 with Ana away: the fan-out made %v; want one Publish (her yourTurn)", away)
	}
	t.Logf("fan-out of a move, opponent away: %v", away)

	// SNS disables Ana's endpoint (the app was removed): the next publish
	// fails as disabled and her device is removed.
	endpoint := ""
	out, err := snsClient.ListEndpointsByPlatformApplication(ctx, &sns.ListEndpointsByPlatformApplicationInput{PlatformApplicationArn: aws.String(s.push["FCM_PLATFORM_APPLICATION_ARN"])})
	if err != nil || len(out.Endpoints) != 1 {
		t.Fatalf("Ana's endpoints: %v %v", out, err)
	}
	endpoint = aws.ToString(out.Endpoints[0].EndpointArn)
	if _, err := snsClient.SetEndpointAttributes(ctx, &sns.SetEndpointAttributesInput{EndpointArn: aws.String(endpoint), Attributes: map[string]string{"Enabled": "false"}}); err != nil {
		t.Fatal(err)
	}
	callMove(t, move, base, "POST", "/v1/games/"+gameID+"/actions", bt, map[string]any{"type": "resign"}, 200)
	s.pump(t, consumers)
	if calls := s.calls.Take(); calls["sns:DeleteEndpoint"] != 1 {
		t.Errorf("the end's fan-out with Ana's endpoint disabled made %v; want her endpoint deleted", calls)
	}
	devices := callMove(t, move, base, "GET", "/v1/players/me/devices", at, nil, 200)
	if list := devices["devices"].([]any); len(list) != 0 {
		t.Errorf("Ana's devices after SNS disabled her endpoint: %v; want none (%v removed)", list, anaDevice["deviceId"])
	}
	inbox := callMove(t, move, base, "GET", "/v1/players/me/notifications", at, nil, 200)
	var kinds []string
	for _, n := range inbox["notifications"].([]any) {
		kinds = append(kinds, n.(map[string]any)["kind"].(string))
	}
	if fmt.Sprint(kinds) != "[gameEnded yourTurn gameStarted]" {
		t.Errorf("Ana's inbox %v; want gameEnded, yourTurn, gameStarted (newest first)", kinds)
	}
}
