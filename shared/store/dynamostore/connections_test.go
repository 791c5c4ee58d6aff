package dynamostore_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/store/dynamostore"
)

// TestConnectionsAgainstEmulators: the stream's connections and
// subscriptions in the data table, on moto and dynalite.
func TestConnectionsAgainstEmulators(t *testing.T) {
	for _, kind := range emulators {
		t.Run(string(kind), func(t *testing.T) {
			endpoint := emulatortest.Start(t, kind)
			table := emulatortest.NewDataTable(t, endpoint)
			d, err := dynamostore.NewData(dynamodb.NewFromConfig(emulator.Config(endpoint)), table)
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			exp := time.Now().Add(time.Hour)
			if err := d.PutConnection(ctx, dynamostore.Connection{ID: "c1", TokenHash: "h1", PlayerToken: true, Lang: "en", ExpiresAt: exp}); err != nil {
				t.Fatal(err)
			}
			got, err := d.Connection(ctx, "c1")
			if err != nil || got.TokenHash != "h1" || !got.PlayerToken || got.Lang != "en" {
				t.Fatalf("Connection(c1) = %+v, %v; want the player token's hash, of its kind", got, err)
			}
			if err := d.PutConnection(ctx, dynamostore.Connection{ID: "c2", TokenHash: "h2", Lang: "ko", ExpiresAt: exp}); err != nil {
				t.Fatal(err)
			}
			if got, err := d.Connection(ctx, "c2"); err != nil || got.PlayerToken {
				t.Fatalf("Connection(c2) = %+v, %v; want a seat token's hash", got, err)
			}
			if _, err := d.Connection(ctx, "nope"); !errors.Is(err, dynamostore.ErrNoConnection) {
				t.Errorf("Connection(nope) = %v; want ErrNoConnection", err)
			}
			for i, g := range []string{"g1", "g2", "g3"} {
				seat := []string{"white", "", "black"}[i]
				if err := d.Subscribe(ctx, dynamostore.Subscription{GameID: g, ConnID: "c1", Seat: seat, TokenHash: "h1", PlayerToken: true, Lang: "en", ExpiresAt: exp}, 3); err != nil {
					t.Fatalf("Subscribe(%s) = %v", g, err)
				}
			}
			if err := d.Subscribe(ctx, dynamostore.Subscription{GameID: "g4", ConnID: "c1", ExpiresAt: exp}, 3); !errors.Is(err, dynamostore.ErrTooManySubscriptions) {
				t.Errorf("a 4th game with max 3 = %v; want ErrTooManySubscriptions", err)
			}
			if err := d.Subscribe(ctx, dynamostore.Subscription{GameID: "g2", ConnID: "c1", Seat: "", ExpiresAt: exp}, 3); err != nil {
				t.Errorf("subscribing again to a followed game = %v; want nil", err)
			}
			d.Subscribe(ctx, dynamostore.Subscription{GameID: "g1", ConnID: "c2", Seat: "black", ExpiresAt: exp}, 3)
			subs, err := d.Subscribers(ctx, "g1")
			if err != nil || len(subs) != 2 || subs[0].ConnID != "c1" || subs[0].Seat != "white" || subs[0].TokenHash != "h1" || !subs[0].PlayerToken || subs[1].ConnID != "c2" || subs[1].PlayerToken {
				t.Fatalf("Subscribers(g1) = %+v, %v", subs, err)
			}
			if s, ok, err := d.Unsubscribe(ctx, "c1", "g3"); err != nil || !ok || s.Seat != "black" {
				t.Errorf("Unsubscribe(c1, g3) = %+v, %v, %v", s, ok, err)
			}
			if _, ok, _ := d.Unsubscribe(ctx, "c1", "g3"); ok {
				t.Errorf("a second Unsubscribe found the subscription again")
			}
			left, err := d.DeleteConnection(ctx, "c1")
			var games []string
			for _, s := range left {
				games = append(games, s.GameID)
			}
			slices.Sort(games)
			if err != nil || !slices.Equal(games, []string{"g1", "g2"}) {
				t.Errorf("DeleteConnection(c1) = %q, %v; want g1 and g2", games, err)
			}
			if subs, _ := d.Subscribers(ctx, "g1"); len(subs) != 1 || subs[0].ConnID != "c2" {
				t.Errorf("after deleting c1, g1's subscribers = %+v; want only c2", subs)
			}
			if _, err := d.Connection(ctx, "c1"); !errors.Is(err, dynamostore.ErrNoConnection) {
				t.Errorf("c1 after DeleteConnection = %v", err)
			}
		})
	}
}

// TestTokenConnectionsAgainstEmulators: the connections made with a token
// are found under it and dropped together (a session's end), those of
// other tokens and spectators untouched; a connection that closes takes
// its entry along.
func TestTokenConnectionsAgainstEmulators(t *testing.T) {
	for _, kind := range emulators {
		t.Run(string(kind), func(t *testing.T) {
			endpoint := emulatortest.Start(t, kind)
			d, err := dynamostore.NewData(dynamodb.NewFromConfig(emulator.Config(endpoint)), emulatortest.NewDataTable(t, endpoint))
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			exp := time.Now().Add(time.Hour)
			for _, c := range []dynamostore.Connection{
				{ID: "a1", TokenHash: "ended", ExpiresAt: exp}, {ID: "a2", TokenHash: "ended", ExpiresAt: exp},
				{ID: "b1", TokenHash: "other", ExpiresAt: exp}, {ID: "s1", ExpiresAt: exp},
			} {
				if err := d.PutConnection(ctx, c); err != nil {
					t.Fatal(err)
				}
				if err := d.Subscribe(ctx, dynamostore.Subscription{GameID: "g", ConnID: c.ID, Seat: "white", TokenHash: c.TokenHash, ExpiresAt: exp}, 10); err != nil {
					t.Fatal(err)
				}
			}
			if conns, err := d.TokenConnections(ctx, "ended"); err != nil || !slices.Equal(conns, []string{"a1", "a2"}) {
				t.Fatalf("TokenConnections(ended) = %v, %v", conns, err)
			}
			if n, err := d.DropTokenConnections(ctx, "ended"); err != nil || n != 2 {
				t.Fatalf("DropTokenConnections = %d, %v; want 2", n, err)
			}
			for _, id := range []string{"a1", "a2"} {
				if _, err := d.Connection(ctx, id); !errors.Is(err, dynamostore.ErrNoConnection) {
					t.Errorf("Connection(%s) after the drop = %v; want ErrNoConnection", id, err)
				}
			}
			subs, err := d.Subscribers(ctx, "g")
			if err != nil || len(subs) != 2 || slices.ContainsFunc(subs, func(s dynamostore.Subscription) bool { return s.TokenHash == "ended" }) {
				t.Errorf("subscribers after the drop = %+v, %v; want the other token's and the spectator's", subs, err)
			}
			if conns, err := d.TokenConnections(ctx, "ended"); err != nil || len(conns) != 0 {
				t.Errorf("TokenConnections after the drop = %v, %v; want none", conns, err)
			}
			if _, err := d.DeleteConnection(ctx, "b1"); err != nil {
				t.Fatal(err)
			}
			if conns, err := d.TokenConnections(ctx, "other"); err != nil || len(conns) != 0 {
				t.Errorf("TokenConnections after the connection closed = %v, %v; want none", conns, err)
			}
		})
	}
}
