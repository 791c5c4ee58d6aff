package service_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/internal/fakeclock"
	"chessapi/shared/chess"
	"chessapi/shared/credential"
	"chessapi/shared/game"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
	"chessapi/shared/store/dynamostore"
)

// The players, rooms, lobby and ratings of SPEC §12, through the service
// on real stores.

// playerFixture is a service with players and the game index.
type playerFixture struct {
	svc     *service.Service
	clock   *fakeclock.Clock
	rec     *recorder
	store   service.Store
	players service.Players
}

// backends are the stores the player features run on: the embedded
// store, and DynamoDB on moto and on dynalite (skipped with -short).
func backends(t testing.TB) map[string]func(t testing.TB) (service.Store, service.Players, service.GameLister) {
	out := map[string]func(t testing.TB) (service.Store, service.Players, service.GameLister){
		"embedded": func(t testing.TB) (service.Store, service.Players, service.GameLister) {
			s, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s, s, s
		},
	}
	if testing.Short() {
		return out
	}
	for _, kind := range []emulator.Kind{emulator.Moto, emulator.Dynalite} {
		out[string(kind)] = func(t testing.TB) (service.Store, service.Players, service.GameLister) {
			endpoint := emulatortest.Start(t, kind)
			client := dynamodb.NewFromConfig(emulator.Config(endpoint))
			games, err := dynamostore.New(client, emulatortest.NewGamesTable(t, endpoint))
			if err != nil {
				t.Fatal(err)
			}
			data, err := dynamostore.NewData(client, emulatortest.NewDataTable(t, endpoint))
			if err != nil {
				t.Fatal(err)
			}
			return games, data, games
		}
	}
	return out
}

func newPlayerFixture(t testing.TB, open func(t testing.TB) (service.Store, service.Players, service.GameLister)) *playerFixture {
	t.Helper()
	if open == nil {
		open = backends(t)["embedded"]
	}
	store, players, lister := open(t)
	clock := fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	rec := &recorder{}
	svc, err := service.New(service.Config{
		Store: store, Players: players, Lister: lister, Scheduler: rec, AITrigger: rec, Engine: firstMover{},
		Now: clock.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return &playerFixture{svc: svc, clock: clock, rec: rec, store: store, players: players}
}

func (f *playerFixture) player(t *testing.T, name string) service.Caller {
	t.Helper()
	np, err := f.svc.CreatePlayer(t.Context(), service.NewPlayerInput{Name: ptr(name)})
	if err != nil {
		t.Fatal(err)
	}
	return service.Caller{Token: np.Token}
}

func (f *playerFixture) me(t *testing.T, c service.Caller) service.Profile {
	t.Helper()
	p, err := f.svc.Me(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// setRating gives a player a rating (and rated games) directly in the store.
func (f *playerFixture) setRating(t *testing.T, c service.Caller, rating, games int) {
	t.Helper()
	p := f.me(t, c)
	rec, err := f.players.Player(t.Context(), p.PlayerID)
	if err != nil {
		t.Fatal(err)
	}
	next := rec
	next.Rating, next.RatedGames, next.Version = rating, games, rec.Version+1
	if err := f.players.UpdatePlayer(t.Context(), next, rec.Version); err != nil {
		t.Fatal(err)
	}
}

// ratedGame creates a game in room between two players, white the host,
// with 30 s a move (the rooms play the yeoul rules: SPEC §16.5), and
// returns it started: both seats ready and the 3 s to the start passed.
func (f *playerFixture) ratedGame(t *testing.T, room string, white, black service.Caller) string {
	t.Helper()
	o := game.DefaultOptionsFor(game.Room(room))
	o.ColorAssignment = game.ColorsHostWhite
	o.TimeControl = game.TimeControl{Kind: game.TimePerMove, PerMoveSec: 30}
	host, err := f.svc.Create(t.Context(), service.CreateInput{Options: o, Caller: white})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Join(t.Context(), host.GameID, service.JoinInput{Caller: black}); err != nil {
		t.Fatal(err)
	}
	for _, seat := range []service.Caller{white, black} {
		if _, err := f.svc.Act(t.Context(), host.GameID, seat, service.ActionInput{Action: game.Action{Type: game.ActionReady}}); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(game.StartDelayMs * time.Millisecond)
	return host.GameID
}

// foolsMate plays 1. f3 e5 2. g4 Qh4# (black wins) and returns the stored
// records before and after the mate, as the change stream carries them.
func (f *playerFixture) foolsMate(t *testing.T, gameID string, white, black service.Caller) (prev, next service.GameRecord) {
	t.Helper()
	for i, uci := range []string{"f2f3", "e7e5", "g2g4", "d8h4"} {
		if uci == "d8h4" {
			prev = f.record(t, gameID)
		}
		by := []service.Caller{white, black}[i%2]
		if _, err := f.svc.Act(t.Context(), gameID, by, service.ActionInput{Action: moveUCI(uci)}); err != nil {
			t.Fatalf("%s: %v", uci, err)
		}
	}
	return prev, f.record(t, gameID)
}

func (f *playerFixture) record(t *testing.T, gameID string) service.GameRecord {
	t.Helper()
	rec, err := f.store.Get(t.Context(), gameID)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func ptr[T any](v T) *T { return &v }

func ruleCode(err error) game.Code {
	var re *game.RuleError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

func TestPlayerTokenActsForItsSeat(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	alice, bob, carol := f.player(t, "Alice"), f.player(t, "Bob"), f.player(t, "Carol")
	aliceID := f.me(t, alice).PlayerID
	host, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{"colorAssignment":"hostWhite"}`), Caller: alice,
		Player: service.PlayerInput{ID: "impostor", Name: "ignored"}})
	if err != nil {
		t.Fatal(err)
	}
	if host.PlayerID != aliceID || host.Token == "" || host.Game.Players[chess.White].Name != "Alice" {
		t.Fatalf("create with a player token: player %s, name %q; want the seat bound to Alice and a seat token", host.PlayerID, host.Game.Players[chess.White].Name)
	}
	// A stranger naming Alice's id in the body gets an id of its own.
	spoof, err := f.svc.Join(ctx, host.GameID, service.JoinInput{Player: service.PlayerInput{ID: aliceID, Name: "Fake"}})
	if err != nil {
		t.Fatal(err)
	}
	if spoof.PlayerID == aliceID {
		t.Fatalf("an anonymous join claiming %s got that id", aliceID)
	}
	// Alice's player token acts for white; the spoofer's seat token for black.
	if _, err := f.svc.Act(ctx, host.GameID, alice, service.ActionInput{Action: moveUCI("e2e4")}); err != nil {
		t.Fatalf("move with the player token: %v", err)
	}
	if _, err := f.svc.Act(ctx, host.GameID, alice, service.ActionInput{Action: moveUCI("e7e5")}); ruleCode(err) != game.CodeNotYourTurn {
		t.Errorf("the player token moving black: %v; want not_your_turn (it is white's seat)", err)
	}
	for _, other := range []service.Caller{bob, carol} {
		if _, err := f.svc.Act(ctx, host.GameID, other, service.ActionInput{Action: moveUCI("e7e5")}); !errors.Is(err, service.ErrForbidden) {
			t.Errorf("another player's token on this game: %v; want forbidden", err)
		}
	}
	unknown := service.Caller{Token: "pt_" + "A234567890123456789012345678901234567890123"}
	if _, err := f.svc.Get(ctx, host.GameID, unknown, nil, 0); !errors.Is(err, service.ErrInvalidToken) {
		t.Errorf("a well-formed player token of nobody: %v; want invalid token", err)
	}
	v, err := f.svc.Get(ctx, host.GameID, alice, nil, 0)
	if err != nil || v.You == nil || *v.You != chess.White {
		t.Errorf("view with the player token: %v, you %v; want white's view", err, v.You)
	}
}

func TestLinkCodes(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	alice := f.player(t, "Alice")
	id := f.me(t, alice).PlayerID
	lc, err := f.svc.NewLinkCode(ctx, alice)
	if err != nil || !credential.LinkCode.WellFormed(lc.Code) {
		t.Fatalf("link code %+v, %v", lc, err)
	}
	// Typed as people type it: lower case, with a dash.
	typed := fmt.Sprintf("%s-%s", lc.Code[:4], lc.Code[4:])
	np, err := f.svc.Link(ctx, typed, "198.51.100.1")
	if err != nil || np.Player.PlayerID != id || np.Token == alice.Token {
		t.Fatalf("link: %+v, %v; want a new token for %s", np, err, id)
	}
	if f.me(t, service.Caller{Token: np.Token}).PlayerID != id || f.me(t, alice).PlayerID != id {
		t.Error("the new and the old token do not both act as the player")
	}
	if _, err := f.svc.Link(ctx, lc.Code, "198.51.100.1"); !errors.Is(err, service.ErrLinkCodeInvalid) {
		t.Errorf("second use of a code: %v; want link_code_invalid", err)
	}
	lc2, _ := f.svc.NewLinkCode(ctx, alice)
	f.clock.Advance(service.LinkCodeTTL + time.Second)
	if _, err := f.svc.Link(ctx, lc2.Code, "198.51.100.2"); !errors.Is(err, service.ErrLinkCodeInvalid) {
		t.Errorf("an expired code: %v; want link_code_invalid", err)
	}

	// Guessing: ten wrong codes from one address, then even a right one
	// waits for the window's end.
	good, _ := f.svc.NewLinkCode(ctx, alice)
	for i := range service.LinkFailuresAllowed {
		if _, err := f.svc.Link(ctx, fmt.Sprintf("ZZZZZZ%02d", i+20)[:8], "203.0.113.9"); !errors.Is(err, service.ErrLinkCodeInvalid) {
			t.Fatalf("wrong try %d: %v", i, err)
		}
	}
	var limited *service.RateLimitError
	if _, err := f.svc.Link(ctx, good.Code, "203.0.113.9"); !errors.As(err, &limited) || limited.RetryAfter() <= 0 || limited.RetryAfter() > service.LinkWindow {
		t.Fatalf("the 11th try: %v; want rate limited with a Retry-After inside the window", err)
	}
	if _, err := f.svc.Link(ctx, good.Code, "203.0.113.10"); err != nil {
		t.Errorf("the same code from another address: %v; the limit is per client", err)
	}
}

func TestRoomsAndInvites(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	low, high := f.player(t, "Low"), f.player(t, "High")
	f.setRating(t, low, 1299, 3)
	f.setRating(t, high, 1300, 3)
	beginner := game.DefaultOptionsFor(game.RoomBeginner)
	if _, err := f.svc.Create(ctx, service.CreateInput{Options: beginner, Caller: high}); ruleCode(err) != game.CodeRatingOutOfRange {
		t.Errorf("1300 creates in beginner: %v; want rating_out_of_range", err)
	}
	g, err := f.svc.Create(ctx, service.CreateInput{Options: beginner, Caller: low})
	if err != nil {
		t.Fatalf("1299 creates in beginner: %v", err)
	}
	if _, err := f.svc.Join(ctx, g.GameID, service.JoinInput{Caller: high}); ruleCode(err) != game.CodeRatingOutOfRange {
		t.Errorf("1300 joins beginner: %v; want rating_out_of_range", err)
	}
	if _, err := f.svc.Join(ctx, g.GameID, service.JoinInput{}); !errors.Is(err, service.ErrPlayerRequired) {
		t.Errorf("anonymous join of a rated room: %v; want player_required", err)
	}
	if _, err := f.svc.Create(ctx, service.CreateInput{Options: beginner}); !errors.Is(err, service.ErrPlayerRequired) {
		t.Errorf("anonymous create in a rated room: %v; want player_required", err)
	}
	if _, err := f.svc.Create(ctx, service.CreateInput{Options: beginner, Caller: low, AILevel: "easy"}); err == nil {
		t.Error("an AI game in a rated room was created")
	}

	// A private game: only with its code, and never in the lobby.
	priv, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), Private: true})
	if err != nil || priv.InviteCode == "" {
		t.Fatalf("private create: %+v, %v", priv, err)
	}
	if _, err := f.svc.Join(ctx, priv.GameID, service.JoinInput{InviteCode: "WRONGCODE2"}); ruleCode(err) != game.CodeInviteRequired {
		t.Errorf("join with a wrong code: %v; want invite_required", err)
	}
	lobby, err := f.svc.Lobby(ctx, game.RoomFree, 100, "", service.LobbyFilter{})
	if err != nil || slices.ContainsFunc(lobby.Items, func(s service.GameSummary) bool { return s.GameID == priv.GameID }) {
		t.Errorf("lobby %v, %v; want no private game in it", lobby.Items, err)
	}
	if _, err := f.svc.Join(ctx, priv.GameID, service.JoinInput{InviteCode: priv.InviteCode}); err != nil {
		t.Errorf("join with the code: %v", err)
	}

	// An open game waits in the lobby until it expires with nobody calling.
	o := options(t, `{}`)
	o.WaitingExpirySec = 60
	open, err := f.svc.Create(ctx, service.CreateInput{Options: o})
	if err != nil {
		t.Fatal(err)
	}
	if lobby, _ := f.svc.Lobby(ctx, game.RoomFree, 100, "", service.LobbyFilter{}); !slices.ContainsFunc(lobby.Items, func(s service.GameSummary) bool { return s.GameID == open.GameID }) {
		t.Error("the open waiting game is not in its room's lobby")
	}
	task := f.rec.lastTimeout(t)
	if task.GameID != open.GameID || !task.Deadline.Equal(time.UnixMilli(open.Game.CreatedAt).Add(60*time.Second)) {
		t.Fatalf("timer of the waiting game = %+v; want its expiry", task)
	}
	f.clock.Advance(61 * time.Second)
	if err := f.svc.HandleTimeout(ctx, task); err != nil {
		t.Fatal(err)
	}
	v, _ := f.svc.Get(ctx, open.GameID, service.Caller{}, nil, 0)
	if v.Phase != game.PhaseFinished || v.Result.Reason != game.ReasonExpired {
		t.Errorf("after the expiry: %s %v; want finished, expired", v.Phase, v.Result)
	}
	if lobby, _ := f.svc.Lobby(ctx, game.RoomFree, 100, "", service.LobbyFilter{}); slices.ContainsFunc(lobby.Items, func(s service.GameSummary) bool { return s.GameID == open.GameID }) {
		t.Error("the expired game is still in the lobby")
	}
}

func TestRematchIsTheTwoPlayers(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	host, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{"colorAssignment":"hostWhite"}`)})
	if err != nil {
		t.Fatal(err)
	}
	guest, err := f.svc.Join(ctx, host.GameID, service.JoinInput{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Act(ctx, host.GameID, service.Caller{Token: host.Token}, service.ActionInput{Action: game.Action{Type: game.ActionResign}}); err != nil {
		t.Fatal(err)
	}
	stranger := f.player(t, "Stranger")
	if _, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), RematchOf: host.GameID, Caller: stranger}); err == nil {
		t.Error("a stranger created the rematch")
	}
	if _, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), RematchOf: host.GameID}); !errors.Is(err, service.ErrUnauthorized) {
		t.Errorf("an anonymous rematch: %v; want unauthorized", err)
	}
	re, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), RematchOf: host.GameID, Caller: service.Caller{Token: guest.Token}})
	if err != nil {
		t.Fatalf("the guest's rematch: %v", err)
	}
	if _, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), RematchOf: host.GameID, Caller: service.Caller{Token: host.Token}}); ruleCode(err) != game.CodeRematchLinked {
		t.Errorf("a second rematch: %v; want rematch_exists", err)
	}
	if _, err := f.svc.Join(ctx, re.GameID, service.JoinInput{Caller: stranger}); ruleCode(err) != game.CodeInviteRequired {
		t.Errorf("a stranger takes the rematch seat: %v; want invite_required", err)
	}
	if _, err := f.svc.Join(ctx, re.GameID, service.JoinInput{Caller: service.Caller{Token: host.Token}}); err != nil {
		t.Errorf("the old host joins with the old seat token: %v", err)
	}
}

// TestRatingsExactlyOnce: a rated game's end moves both ratings once, on
// every store, whoever ends it (a mate, a flag fall with nobody calling),
// however often its effects are delivered again, and two games of one
// player ending at the same moment both count.
func TestRatingsExactlyOnce(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newPlayerFixture(t, open)
			ctx := t.Context()
			a, b, c := f.player(t, "A"), f.player(t, "B"), f.player(t, "C")

			g := f.ratedGame(t, "intermediate", a, b)
			prev, next := f.foolsMate(t, g, a, b)
			pa, pb := f.me(t, a), f.me(t, b)
			if pa.Rating != 980 || pb.Rating != 1020 || pa.RatedGames != 1 || pb.RatedGames != 1 {
				t.Fatalf("after a lost rated game: A %d (%d games), B %d (%d); want 980 and 1020, one game each", pa.Rating, pa.RatedGames, pb.Rating, pb.RatedGames)
			}
			v, _ := f.svc.Get(ctx, g, service.Caller{}, nil, 0)
			if rc := v.Result.RatingChange; rc == nil || rc.White != (game.RatingMove{Before: 1000, After: 980}) || rc.Black != (game.RatingMove{Before: 1000, After: 1020}) {
				t.Errorf("result's rating change = %+v", v.Result.RatingChange)
			}
			// The change stream delivers the finishing version again.
			prevState, err := f.svc.Decode(prev)
			if err != nil {
				t.Fatal(err)
			}
			nextState, err := f.svc.Decode(next)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := f.svc.Committed(ctx, prevState, nextState); err != nil {
					t.Fatal(err)
				}
			}
			if f.me(t, a).Rating != 980 || f.me(t, b).RatedGames != 1 {
				t.Errorf("redelivered effects moved the ratings again: %+v %+v", f.me(t, a), f.me(t, b))
			}

			// A flag falls in a rated game with nobody calling.
			g2 := f.ratedGame(t, "intermediate", b, c)
			if _, err := f.svc.Act(ctx, g2, b, service.ActionInput{Action: moveUCI("e2e4")}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.svc.Act(ctx, g2, c, service.ActionInput{Action: moveUCI("e7e5")}); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(2 * time.Minute) // white's 30 s and its three extensions ran out
			if err := f.svc.HandleTimeout(ctx, f.rec.lastTimeout(t)); err != nil {
				t.Fatal(err)
			}
			if pb, pc := f.me(t, b), f.me(t, c); pb.RatedGames != 2 || pc.RatedGames != 1 || pc.Rating <= 1000 || pb.Rating >= 1020 {
				t.Errorf("after B's flag fell: B %d (%d games), C %d (%d); want both rated, C up, B down", pb.Rating, pb.RatedGames, pc.Rating, pc.RatedGames)
			}

			// Two of A's games end at the same moment.
			d, e := f.player(t, "D"), f.player(t, "E")
			g3, g4 := f.ratedGame(t, "intermediate", d, a), f.ratedGame(t, "intermediate", e, a)
			before := f.me(t, a)
			for _, gg := range []struct {
				id    string
				white service.Caller
			}{{g3, d}, {g4, e}} {
				for i, uci := range []string{"f2f3", "e7e5", "g2g4"} {
					by := []service.Caller{gg.white, a}[i%2]
					if _, err := f.svc.Act(ctx, gg.id, by, service.ActionInput{Action: moveUCI(uci)}); err != nil {
						t.Fatal(err)
					}
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for _, id := range []string{g3, g4} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := f.svc.Act(ctx, id, a, service.ActionInput{Action: moveUCI("d8h4")})
					errs <- err
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			after := f.me(t, a)
			if after.RatedGames != before.RatedGames+2 || after.Rating <= before.Rating+20 {
				t.Errorf("two wins at once: %d → %d, games %d → %d; want both counted", before.Rating, after.Rating, before.RatedGames, after.RatedGames)
			}
		})
	}
}

func TestMyGamesPagination(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	me := f.player(t, "Me")
	var ids []string
	for range 25 {
		g, err := f.svc.Create(ctx, service.CreateInput{Options: options(t, `{}`), Caller: me})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, g.GameID)
		f.clock.Advance(time.Millisecond)
	}
	// Page through while more games are created.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 15 {
			if _, err := f.svc.Create(context.Background(), service.CreateInput{Options: options(t, `{}`), Caller: me}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := f.svc.MyGames(ctx, me, false, 7, cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			if seen[it.State.GameID] {
				t.Errorf("game %s listed twice", it.State.GameID)
			}
			seen[it.State.GameID] = true
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
		if pages > 20 {
			t.Fatal("pagination does not end")
		}
	}
	<-done
	for _, id := range ids {
		if !seen[id] {
			t.Errorf("game %s created before paging is missing", id)
		}
	}
	if _, err := f.svc.MyGames(ctx, me, false, 7, "not-a-cursor"); err == nil {
		t.Error("a made-up cursor was accepted")
	}
	if page, err := f.svc.MyGames(ctx, me, true, 10, ""); err != nil || len(page.Items) != 0 {
		t.Errorf("finished games = %v, %v; want none", page.Items, err)
	}
}

// TestQuickPairingConcurrent: twenty players asking at once in one room are
// paired two by two, nobody with themselves, nobody in two games.
func TestQuickPairingConcurrent(t *testing.T) {
	f := newPlayerFixture(t, nil)
	ctx := t.Context()
	const n = 20
	players := make([]service.Caller, n)
	for i := range players {
		players[i] = f.player(t, fmt.Sprintf("P%02d", i))
	}
	results := make([]service.QuickResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range players {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = f.svc.QuickPair(ctx, service.QuickInput{Room: game.RoomFree, Caller: players[i]})
		}()
	}
	wg.Wait()
	games := map[string][]string{}
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("player %d: %v", i, errs[i])
		}
		games[r.GameID] = append(games[r.GameID], r.PlayerID)
	}
	// Every game has two players (or one waiting, when the last asker
	// found nobody left: with an even count, nobody).
	var waiting int
	for id, ps := range games {
		if len(ps) == 2 && ps[0] == ps[1] {
			t.Errorf("game %s pairs %s with themselves", id, ps[0])
		}
		if len(ps) == 1 {
			waiting++
		}
		if len(ps) > 2 {
			t.Errorf("game %s has %d players", id, len(ps))
		}
	}
	if waiting != 0 || len(games) != n/2 {
		t.Errorf("%d games, %d with one player; want %d games of two", len(games), waiting, n/2)
	}
	// Asking again while waiting returns the same waiting game.
	lone := f.player(t, "Lone")
	first, err := f.svc.QuickPair(ctx, service.QuickInput{Room: game.RoomFree, Caller: lone})
	if err != nil || first.Matched {
		t.Fatalf("a lone quick pairing: %+v, %v; want waiting", first, err)
	}
	again, err := f.svc.QuickPair(ctx, service.QuickInput{Room: game.RoomFree, Caller: lone})
	if err != nil || again.GameID != first.GameID || again.Matched || again.Token != "" {
		t.Errorf("asking again: %+v, %v; want the same waiting game, no new seat", again, err)
	}
}

// failingUpdates is a players store whose rating updates fail (the
// process dies before its effects are done).
type failingUpdates struct{ service.Players }

func (failingUpdates) UpdatePlayer(context.Context, service.PlayerRecord, int64) error {
	return errors.New("the process died")
}

// TestRatingsRecoveredAfterCrash: a rated game's end is written, but the
// process dies before the players' ratings are updated; the next start
// (RecoverRatings over the games finished recently) applies them, once.
func TestRatingsRecoveredAfterCrash(t *testing.T) {
	bolt, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bolt.Close() })
	clock := fakeclock.New(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	crashing, err := service.New(service.Config{Store: bolt, Players: failingUpdates{bolt}, Lister: bolt, Now: clock.Now,
		EffectRetries: 1, EffectBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f := &playerFixture{svc: crashing, clock: clock, rec: &recorder{}, store: bolt, players: bolt}
	a, b := f.player(t, "A"), f.player(t, "B")
	g := f.ratedGame(t, "intermediate", a, b)
	f.foolsMate(t, g, a, b)
	crashing.Close(time.Millisecond) // the background retries die with it
	if p := f.me(t, a); p.RatedGames != 0 {
		t.Fatalf("before the restart: %+v; want the ratings not applied yet", p)
	}

	restarted, err := service.New(service.Config{Store: bolt, Players: bolt, Lister: bolt, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a second start changes nothing
		recs, err := bolt.FinishedSince(t.Context(), clock.Now().Add(-24*time.Hour))
		if err != nil || len(recs) != 1 || recs[0].GameID != g {
			t.Fatalf("finished games = %v, %v; want the rated game", recs, err)
		}
		if _, err := restarted.RecoverRatings(t.Context(), recs); err != nil {
			t.Fatal(err)
		}
	}
	f.svc = restarted
	if pa, pb := f.me(t, a), f.me(t, b); pa.Rating != 980 || pb.Rating != 1020 || pa.RatedGames != 1 || pb.RatedGames != 1 {
		t.Errorf("after the restart: A %+v, B %+v; want 980 and 1020, once", pa, pb)
	}
}
