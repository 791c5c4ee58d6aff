package everyroute

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ogen-go/ogen/ogenerrors"

	"chessapi/tools/genclient/client"
)

// The driver of TestGeneratedClientDrivesEveryRoute (../../generate_test.go),
// which copies this file into a temporary module beside a client it has
// just generated from openapi.yaml and runs it there; it is not compiled
// in tools/genclient itself, where no generated client is kept.

// fromEnv reads what TestGeneratedClientDrivesEveryRoute hands this test:
// the local server's binary (GENCLIENT_SERVER) and the contract the client
// was generated from (GENCLIENT_OPENAPI).
func fromEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Fatalf("%s is not set: this test is run by tools/genclient's TestGeneratedClientDrivesEveryRoute", name)
	}
	return v
}

// tokens hands the generated client the credential of the current call:
// one bearer token (a seat's or a player's, whichever the call carries),
// or none. The client asks for every scheme an operation accepts; the
// others are skipped.
type tokens struct{}

type tokenKey struct{}

func as(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenKey{}, token)
}

func bearer(ctx context.Context) (string, error) {
	if tok, _ := ctx.Value(tokenKey{}).(string); tok != "" {
		return tok, nil
	}
	return "", ogenerrors.ErrSkipClientSecurity
}

func (tokens) SeatBearer(ctx context.Context, _ client.OperationName) (client.SeatBearer, error) {
	tok, err := bearer(ctx)
	if err != nil || !strings.HasPrefix(tok, "st_") {
		return client.SeatBearer{}, ogenerrors.ErrSkipClientSecurity
	}
	return client.SeatBearer{Token: tok}, nil
}

func (tokens) PlayerBearer(ctx context.Context, _ client.OperationName) (client.PlayerBearer, error) {
	tok, err := bearer(ctx)
	if err != nil || !strings.HasPrefix(tok, "pt_") {
		return client.PlayerBearer{}, ogenerrors.ErrSkipClientSecurity
	}
	return client.PlayerBearer{Token: tok}, nil
}

func (tokens) ApiKeyHeader(context.Context, client.OperationName) (client.ApiKeyHeader, error) {
	return client.ApiKeyHeader{APIKey: aiKey}, nil
}

// aiKey is the key the local server is started with, so the AI route
// requires one as on AWS by default.
var aiKey = "ak_genclienttest7ab_" + strings.Repeat("abcd2345", 6) + "wxyz"

// startLocal starts the service's local server (cmd/local) on a free port
// with a fresh store, and returns its base URL.
func startLocal(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bin := fromEnv(t, "GENCLIENT_SERVER")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var logs bytes.Buffer
	srv := exec.Command(bin, "-addr", addr, "-data", filepath.Join(dir, "chess.db"), "-log-level", "warn", "-ai-api-key", aiKey)
	srv.Stdout, srv.Stderr = &logs, &logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
		if t.Failed() {
			t.Logf("server output:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		if resp, err := http.Get(base + "/v1/health"); err == nil {
			resp.Body.Close()
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("the local server did not answer within 20 s:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// must takes what a call answered as the success type S, failing the test
// with what came instead: must[S](t, "what")(c.Op(...)).
func must[S any](t *testing.T, what string) func(res any, err error) S {
	return func(res any, err error) S {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		s, ok := res.(S)
		if !ok {
			t.Fatalf("%s answered %T %+v; want %T", what, res, res, *new(S))
		}
		return s
	}
}

func move(uci string) client.ActionRequest {
	return client.NewMoveActionActionRequest(client.MoveAction{
		Type:    client.MoveActionTypeMove,
		Payload: client.NewMovePayload1MovePayload(client.MovePayload1{Uci: client.UCI(uci)}),
	})
}

// TestEveryRoute plays through every operation of openapi.yaml with the
// generated client against the local server: two players, a rated quick
// pairing, moves in each of the move forms, offers and answers, presence,
// the change log, the PGN, a second device, the analysis routes, and a
// rule violation decoded as its typed error.
func TestEveryRoute(t *testing.T) {
	base := startLocal(t)
	c, err := client.NewClient(base, tokens{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	called := map[client.OperationName]bool{}
	call := func(op client.OperationName) { called[op] = true }

	call(client.HealthOperation)
	health := must[*client.HealthOKHeaders](t, "health")(c.Health(ctx))
	if health.Response.Status != "ok" {
		t.Errorf("health status %q", health.Response.Status)
	}

	call(client.PositionsOperation)
	pos := must[*client.PositionAnswerHeaders](t, "positions")(c.Positions(ctx, client.NewOptPositionInput(client.PositionInput{Moves: []client.UCI{"e2e4"}})))
	if len(pos.Response.LegalMoves) != 20 || pos.Response.Turn != client.ColorBlack {
		t.Errorf("positions after e4: %d legal moves, %s to move; want 20, black", len(pos.Response.LegalMoves), pos.Response.Turn)
	}

	call(client.AiMoveOperation)
	ai := must[*client.AIMoveAnswerHeaders](t, "aiMove")(c.AiMove(ctx, client.NewOptAIMoveRequest(client.AIMoveRequest{
		MovetimeMs: client.NewOptInt(50), MultiPv: client.NewOptInt(3)})))
	if len(ai.Response.Lines) != 3 || ai.Response.BestMove == "" {
		t.Errorf("aiMove: best %q with %d lines; want a move and 3 lines", ai.Response.BestMove, len(ai.Response.Lines))
	}

	// Two players on two app installs.
	call(client.CreatePlayerOperation)
	host := must[*client.NewPlayerHeaders](t, "createPlayer")(c.CreatePlayer(ctx, client.NewOptCreatePlayerReq(client.CreatePlayerReq{Name: client.NewOptString("지우")}))).Response
	guest := must[*client.NewPlayerHeaders](t, "createPlayer")(c.CreatePlayer(ctx, client.NewOptCreatePlayerReq(client.CreatePlayerReq{Name: client.NewOptString("Ben")}))).Response
	hostCtx, guestCtx := as(ctx, string(host.Token)), as(ctx, string(guest.Token))

	call(client.GetMeOperation)
	me := must[*client.ProfileHeaders](t, "getMe")(c.GetMe(hostCtx))
	if me.Response.PlayerId != host.PlayerId || me.Response.Rating != 1000 {
		t.Errorf("getMe = %+v; want %s at 1000", me.Response, host.PlayerId)
	}
	call(client.RenameMeOperation)
	renamed := must[*client.ProfileHeaders](t, "renameMe")(c.RenameMe(hostCtx, &client.RenameMeReq{Name: "지우2"}))
	if renamed.Response.Name != "지우2" {
		t.Errorf("renameMe: name %q", renamed.Response.Name)
	}

	// A friendly game: created by the host, joined by the guest.
	call(client.CreateGameOperation)
	created := must[*client.CreatedHeaders](t, "createGame")(c.CreateGame(hostCtx, client.NewOptCreateRequest(client.CreateRequest{
		Opponent: client.NewOptCreateRequestOpponent(client.CreateRequestOpponent{Type: client.CreateRequestOpponentTypeHuman}),
		Options:  client.NewOptOptions(client.Options{ColorAssignment: client.NewOptOptionsColorAssignment(client.OptionsColorAssignmentHostWhite)}),
	}))).Response
	id := created.GameId
	if created.Game.Phase != client.GameViewPhaseWaiting {
		t.Errorf("created game phase %s; want waiting", created.Game.Phase)
	}

	call(client.LobbyOperation)
	lobby := must[*client.LobbyHeaders](t, "lobby")(c.Lobby(guestCtx, client.LobbyParams{Room: client.RoomFree}))
	if !slices.ContainsFunc(lobby.Response.Items, func(it client.LobbyItem) bool { return it.GameId == id }) {
		t.Errorf("lobby of the free room: %+v; want game %s", lobby.Response.Items, id)
	}

	call(client.JoinGameOperation)
	joined := must[*client.SeatedHeaders](t, "joinGame")(c.JoinGame(guestCtx, client.OptJoinGameReq{}, client.JoinGameParams{ID: id})).Response
	white, black := as(ctx, string(created.Token)), as(ctx, string(joined.Token))

	call(client.ActOperation)
	act := func(who context.Context, a client.ActionRequest) client.ActionAnswer {
		t.Helper()
		return must[*client.ActionAnswerHeaders](t, "act")(c.Act(who, a, client.ActParams{ID: id})).Response
	}
	act(white, move("e2e4"))
	act(black, client.NewMoveActionActionRequest(client.MoveAction{Type: client.MoveActionTypeMove,
		Payload: client.NewMovePayload0MovePayload(client.MovePayload0{From: "e7", To: "e5"})}))
	act(white, client.NewMoveActionActionRequest(client.MoveAction{Type: client.MoveActionTypeMove,
		Payload: client.NewMovePayload2MovePayload(client.MovePayload2{San: "Nf3"})}))
	act(black, client.NewActionRequestOfferDrawActionRequest(client.PlainAction{Type: client.PlainActionTypeOfferDraw}))
	declined := act(white, client.NewActionRequestRespondDrawActionRequest(client.RespondAction{Type: client.RespondActionTypeRespondDraw, Payload: client.RespondActionPayload{Accept: false}}))
	if declined.Game.Phase != client.GameViewPhasePlaying {
		t.Errorf("after a declined draw: phase %s", declined.Game.Phase)
	}

	// An illegal move is a typed 422.
	res, err := c.Act(black, move("e5e4"), client.ActParams{ID: id})
	if v, ok := res.(*client.RuleViolationHeaders); err != nil || !ok || v.Response.Error.Code == "" {
		t.Errorf("an illegal move answered %T %+v, %v; want the 422 rule violation", res, res, err)
	}

	call(client.PresenceOperation)
	must[*client.GameAnswerHeaders](t, "presence")(c.Presence(black, &client.PresenceReq{Connected: true}, client.PresenceParams{ID: id}))

	call(client.GetGameOperation)
	view := must[*client.GameAnswerHeaders](t, "getGame")(c.GetGame(white, client.GetGameParams{ID: id})).Response.Game
	if len(view.Moves) != 3 || view.Turn != client.ColorBlack {
		t.Errorf("getGame: %d moves, %s to move; want 3, black", len(view.Moves), view.Turn)
	}

	// The long poll, after a version the game is past: at once.
	call(client.PollGameOperation)
	polled := must[*client.GameAnswerHeaders](t, "pollGame")(c.PollGame(white, client.PollGameParams{ID: id, AfterVersion: view.Version - 1})).Response.Game
	if polled.Version != view.Version {
		t.Errorf("pollGame after version %d: version %d; want %d at once", view.Version-1, polled.Version, view.Version)
	}

	call(client.GetGameEventsOperation)
	log := must[*client.ChangeLogHeaders](t, "getGameEvents")(c.GetGameEvents(white, client.GetGameEventsParams{ID: id, AfterVersion: 1}))
	if log.Response.Type != client.ChangeLog0ChangeLog || len(log.Response.ChangeLog0.Changes) == 0 {
		t.Errorf("getGameEvents after version 1: %+v; want the changes since", log.Response)
	}

	act(black, client.NewActionRequestResignActionRequest(client.PlainAction{Type: client.PlainActionTypeResign}))

	call(client.GetPGNOperation)
	pgn := must[*client.GetPGNOKHeaders](t, "getPGN")(c.GetPGN(white, client.GetPGNParams{ID: id}))
	body, _ := readAll(pgn.Response.Data)
	if !strings.Contains(body, "1. e4 {[%clk 0:10:00]} 1... e5") || !strings.Contains(body, "2. Nf3") || !strings.Contains(body, " 1-0\n") {
		t.Errorf("getPGN:\n%s\nwant the moves and 1-0", body)
	}

	call(client.MyGamesOperation)
	mine := must[*client.MyGamesHeaders](t, "myGames")(c.MyGames(hostCtx, client.MyGamesParams{Status: client.NewOptMyGamesStatus(client.MyGamesStatusFinished)}))
	if !slices.ContainsFunc(mine.Response.Items, func(g client.MyGame) bool { return g.GameId == id }) {
		t.Errorf("myGames: %+v; want game %s", mine.Response.Items, id)
	}

	// A second device of the host.
	call(client.NewLinkCodeOperation)
	code := must[*client.NewLinkCodeCreatedHeaders](t, "newLinkCode")(c.NewLinkCode(hostCtx, &client.Empty{})).Response.Code
	call(client.LinkDeviceOperation)
	linked := must[*client.LinkDeviceOKHeaders](t, "linkDevice")(c.LinkDevice(ctx, &client.LinkDeviceReq{Code: code}))
	if linked.Response.PlayerId != host.PlayerId {
		t.Errorf("linkDevice: player %s; want %s", linked.Response.PlayerId, host.PlayerId)
	}

	// Accounts (SPEC §16.2): the sessions, a label, the second device
	// revoked, a recovery code and its use, a block, a public profile.
	call(client.MySessionsOperation)
	sessions := must[*client.SessionsHeaders](t, "mySessions")(c.MySessions(hostCtx)).Response.Sessions
	if len(sessions) != 2 {
		t.Errorf("mySessions: %+v; want the first device and the linked one", sessions)
	}
	call(client.LabelCurrentSessionOperation)
	labelled := must[*client.SessionHeaders](t, "labelCurrentSession")(c.LabelCurrentSession(hostCtx, &client.LabelCurrentSessionReq{Label: "phone"})).Response
	if !labelled.Current || labelled.Label != "phone" {
		t.Errorf("labelCurrentSession: %+v", labelled)
	}
	call(client.RevokeSessionOperation)
	must[*client.RevokeSessionNoContent](t, "revokeSession")(c.RevokeSession(hostCtx, &client.Empty{}, client.RevokeSessionParams{ID: string(linked.Response.SessionId)}))
	call(client.NewRecoveryCodeOperation)
	recovery := must[*client.NewRecoveryCodeCreatedHeaders](t, "newRecoveryCode")(c.NewRecoveryCode(hostCtx, &client.Empty{})).Response.RecoveryCode
	call(client.RecoverPlayerOperation)
	recovered := must[*client.NewPlayerHeaders](t, "recoverPlayer")(c.RecoverPlayer(ctx, &client.RecoverPlayerReq{PlayerId: host.PlayerId, RecoveryCode: string(recovery)})).Response
	if recovered.PlayerId != host.PlayerId || recovered.Token == host.Token {
		t.Errorf("recoverPlayer: %+v; want a new session of %s", recovered, host.PlayerId)
	}
	call(client.BlockPlayerOperation)
	must[*client.BlockPlayerNoContent](t, "blockPlayer")(c.BlockPlayer(guestCtx, &client.Empty{}, client.BlockPlayerParams{ID: host.PlayerId}))
	call(client.MyBlocksOperation)
	if blocks := must[*client.BlocksHeaders](t, "myBlocks")(c.MyBlocks(guestCtx)).Response.Blocks; len(blocks) != 1 || blocks[0].PlayerId != host.PlayerId {
		t.Errorf("myBlocks: %+v; want the host", blocks)
	}
	call(client.UnblockPlayerOperation)
	must[*client.UnblockPlayerNoContent](t, "unblockPlayer")(c.UnblockPlayer(guestCtx, &client.Empty{}, client.UnblockPlayerParams{ID: host.PlayerId}))
	call(client.PublicProfileOperation)
	if prof := must[*client.PublicProfileHeaders](t, "publicProfile")(c.PublicProfile(ctx, client.PublicProfileParams{ID: guest.PlayerId})).Response; prof.Name != "Ben" {
		t.Errorf("publicProfile: %+v", prof)
	}

	// Quick pairing in the rated beginners' room: the first waits, the
	// second is matched into that game.
	call(client.QuickPairOperation)
	first := must[*client.QuickPairOKHeaders](t, "quickPair")(c.QuickPair(hostCtx, &client.QuickPairReq{Room: client.RoomBeginner})).Response
	second := must[*client.QuickPairOKHeaders](t, "quickPair")(c.QuickPair(guestCtx, &client.QuickPairReq{Room: client.RoomBeginner})).Response
	if first.Matched || !second.Matched || second.GameId != first.GameId {
		t.Errorf("quick pairing: first %v in %s, second %v in %s; want the second matched into the first's game", first.Matched, first.GameId, second.Matched, second.GameId)
	}

	// Devices and the inbox (SPEC §16.3): the host's phone registered,
	// listed and removed; the notifications of its games so far (the
	// pairing's gameStarted among them) read up to the newest.
	call(client.RegisterDeviceOperation)
	fcmToken := "fcm:" + strings.Repeat("A1b2-", 24)
	device := must[*client.RegisterDeviceCreated](t, "registerDevice")(c.RegisterDevice(hostCtx, &client.RegisterDeviceReq{
		Platform: client.RegisterDeviceReqPlatformFcm, Token: fcmToken,
		Locale: client.OptRegisterDeviceReqLocale{Value: client.RegisterDeviceReqLocaleEn, Set: true}})).Response
	call(client.ListDevicesOperation)
	if devices := must[*client.ListDevicesOKHeaders](t, "listDevices")(c.ListDevices(hostCtx)).Response.Devices; len(devices) != 1 || devices[0].DeviceId != device.DeviceId {
		t.Errorf("listDevices: %+v; want the one registered", devices)
	}
	call(client.DeleteDeviceOperation)
	must[*client.DeleteDeviceNoContent](t, "deleteDevice")(c.DeleteDevice(hostCtx, client.DeleteDeviceParams{ID: device.DeviceId}))
	call(client.ListNotificationsOperation)
	inbox := must[*client.ListNotificationsOKHeaders](t, "listNotifications")(c.ListNotifications(hostCtx, client.ListNotificationsParams{})).Response.Notifications
	if len(inbox) == 0 {
		t.Fatal("listNotifications: the host's inbox is empty after its games")
	}
	call(client.MarkNotificationsReadOperation)
	must[*client.MarkNotificationsReadNoContent](t, "markNotificationsRead")(c.MarkNotificationsRead(hostCtx, &client.MarkNotificationsReadReq{UpTo: inbox[0].NotificationId}))
	for _, n := range must[*client.ListNotificationsOKHeaders](t, "listNotifications")(c.ListNotifications(hostCtx, client.ListNotificationsParams{})).Response.Notifications {
		if !n.Read {
			t.Errorf("notification %s unread after markNotificationsRead up to the newest", n.NotificationId)
		}
	}

	// Last, an account's deletion: its token answers 401 afterwards.
	call(client.DeleteMeOperation)
	must[*client.DeleteMeNoContent](t, "deleteMe")(c.DeleteMe(guestCtx, &client.Empty{}))
	if res, err := c.GetMe(guestCtx); err != nil {
		t.Errorf("getMe after deleteMe: %v", err)
	} else if _, ok := res.(*client.PlayerRequiredHeaders); !ok {
		t.Errorf("getMe after deleteMe answered %T; want the 401", res)
	}

	var missing []string
	for _, op := range specOperations(t) {
		if !called[op] {
			missing = append(missing, string(op))
		}
	}
	if len(missing) > 0 {
		t.Errorf("operations of openapi.yaml not exercised: %v", missing)
	}
}

// specOperations lists the operations of openapi.yaml by their operationId,
// named as the generator names them (the first letter upper-cased).
func specOperations(t *testing.T) []client.OperationName {
	t.Helper()
	spec, err := os.ReadFile(fromEnv(t, "GENCLIENT_OPENAPI"))
	if err != nil {
		t.Fatal(err)
	}
	var ops []client.OperationName
	for _, m := range regexp.MustCompile(`(?m)^\s+operationId:\s*(\w+)\s*$`).FindAllStringSubmatch(string(spec), -1) {
		ops = append(ops, client.OperationName(strings.ToUpper(m[1][:1])+m[1][1:]))
	}
	if len(ops) == 0 {
		t.Fatal("no operationId in openapi.yaml")
	}
	return ops
}

func readAll(r io.Reader) (string, error) {
	b, err := io.ReadAll(r)
	return string(b), err
}
