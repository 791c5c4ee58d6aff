package dynamostore_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// TestRequestsPerCall pins how many DynamoDB requests each method of the
// game index and the players port costs (the figures of the capacity
// estimate), counted by a proxy in front of dynalite.
func TestRequestsPerCall(t *testing.T) {
	endpoint := emulatortest.Start(t, emulator.Dynalite)
	games := emulatortest.NewGamesTable(t, endpoint)
	data := emulatortest.NewDataTable(t, endpoint)
	counter := emulatortest.CountCalls(t, endpoint)
	client := dynamodb.NewFromConfig(emulator.Config(counter.URL))
	store, err := dynamostore.New(client, games)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamostore.NewData(client, data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	now := time.Now()
	created := now.Add(-time.Minute)
	rec := service.GameRecord{GameID: "counted", Version: 1, StateVersion: 1, State: []byte("s"), Index: service.GameIndex{
		Players: [2]string{"p1", ""}, LobbyRoom: "free", CreatedAt: created, UpdatedAt: created, ListedAt: created, Summary: []byte("{}"),
	}}
	player := service.PlayerRecord{ID: "p1", Name: "one", Rating: 1000}

	steps := []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"Create with an index", func() error { return store.Create(ctx, rec) }, map[string]int{"PutItem": 1}},
		{"Update with an index", func() error {
			next := rec
			next.Version = 2
			return store.Update(ctx, next, 1)
		}, map[string]int{"PutItem": 1}},
		{"PlayerGames", func() error { _, _, err := store.PlayerGames(ctx, "p1", false, 20, ""); return err }, map[string]int{"Query": 2}},
		{"GetGames (a page's games)", func() error { _, err := store.GetGames(ctx, []string{"counted", "missing"}); return err }, map[string]int{"BatchGetItem": 1}},
		{"Lobby", func() error { _, _, err := store.Lobby(ctx, "free", 20, ""); return err }, map[string]int{"Query": 1}},
		{"CreatePlayer", func() error { return d.CreatePlayer(ctx, player, session("p1", "s1", "h1")) }, map[string]int{"PutItem": 3}},
		{"CreatePlayer with a taken token hash (undone)", func() error {
			err := d.CreatePlayer(ctx, service.PlayerRecord{ID: "p2"}, session("p2", "s2", "h1"))
			return expect(err, service.ErrAlreadyExists)
		}, map[string]int{"PutItem": 3, "DeleteItem": 2}},
		{"CreatePlayer with a taken id", func() error {
			return expect(d.CreatePlayer(ctx, player, session("p1", "s9", "h9")), service.ErrAlreadyExists)
		}, map[string]int{"PutItem": 1}},
		{"Player", func() error { _, err := d.Player(ctx, "p1"); return err }, map[string]int{"GetItem": 1}},
		{"PlayerByToken", func() error { _, _, err := d.PlayerByToken(ctx, "h1"); return err }, map[string]int{"GetItem": 2}},
		{"TouchSession", func() error { return d.TouchSession(ctx, session("p1", "s1", "h1"), now) }, map[string]int{"UpdateItem": 1}},
		{"Sessions", func() error { _, err := d.Sessions(ctx, "p1"); return err }, map[string]int{"Query": 1, "BatchGetItem": 1}},
		{"Blocked", func() error { _, err := d.Blocked(ctx, "p1", "p2"); return err }, map[string]int{"BatchGetItem": 1}},
		{"UpdatePlayer", func() error {
			p := player
			p.Version = 2
			return d.UpdatePlayer(ctx, p, 1)
		}, map[string]int{"PutItem": 1}},
		{"AddSession", func() error { return d.AddSession(ctx, session("p1", "s3", "h2")) }, map[string]int{"GetItem": 1, "PutItem": 2}},
		{"DeleteSession", func() error { _, err := d.DeleteSession(ctx, "p1", "s3"); return err }, map[string]int{"GetItem": 1, "DeleteItem": 2}},
		{"PutLinkCode", func() error { return d.PutLinkCode(ctx, "c1", "p1", now.Add(10*time.Minute)) }, map[string]int{"PutItem": 1}},
		{"ClaimLinkCode", func() error { _, err := d.ClaimLinkCode(ctx, "c1", now); return err }, map[string]int{"DeleteItem": 1}},
		{"ClaimLinkCode of a used code", func() error {
			_, err := d.ClaimLinkCode(ctx, "c1", now)
			return expect(err, service.ErrNotFound)
		}, map[string]int{"DeleteItem": 1}},
		{"Hit", func() error { _, _, err := d.Hit(ctx, "k", time.Minute, now); return err }, map[string]int{"UpdateItem": 1}},
		{"Count", func() error { _, _, err := d.Count(ctx, "k", time.Minute, now); return err }, map[string]int{"GetItem": 1}},
		{"ClaimSlot of a free slot", func() error { _, err := d.ClaimSlot(ctx, "s", "a", time.Minute, now); return err }, map[string]int{"PutItem": 1}},
		{"ClaimSlot of a held slot", func() error {
			_, err := d.ClaimSlot(ctx, "s", "b", time.Minute, now)
			return expect(err, service.ErrSlotTaken)
		}, map[string]int{"PutItem": 1, "GetItem": 1}},
		{"ReleaseSlot", func() error { return d.ReleaseSlot(ctx, "s", "a") }, map[string]int{"DeleteItem": 1}},
	}
	counter.Take()
	for _, step := range steps {
		if err := step.call(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		got := map[string]int{}
		for op, n := range counter.Take() {
			got[op[len("dynamodb:"):]] = n
		}
		if !maps.Equal(got, step.want) {
			t.Errorf("%s: requests %v; want %v", step.name, got, step.want)
		} else {
			t.Logf("%s: %v", step.name, got)
		}
	}
}

// session is a session of player with id and token hash.
func session(player, id, hash string) service.Session {
	return service.Session{ID: id, PlayerID: player, TokenHash: hash, CreatedAt: time.Now()}
}

// expect turns the wanted sentinel into nil and anything else into an
// error.
func expect(err, want error) error {
	if errors.Is(err, want) {
		return nil
	}
	return errors.Join(errors.New("unexpected outcome"), err)
}
