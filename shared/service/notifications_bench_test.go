package service_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/game"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// BenchmarkNotificationDecision is the cost of the notification decision
// per committed change (SPEC §16.3), without I/O: the player events of a
// version (PlayerEvents) and, for each, its notification and whether the
// player's seat has a stream open. The changes are those of a game
// between two registered players — the join, the Opera game's 33 plies
// to mate — with the
// opponent of the mover connected (the decision: inbox only) or not
// (devices too).
//
//	go test ./shared/service -run '^$' -bench NotificationDecision -count 3
func BenchmarkNotificationDecision(b *testing.B) {
	for _, tc := range []struct {
		name      string
		connected bool
	}{{"opponentConnected", true}, {"opponentAway", false}} {
		b.Run(tc.name, func(b *testing.B) {
			changes := registeredGameChanges(b, tc.connected)
			b.ReportAllocs()
			b.ResetTimer()
			var toDevices int
			for i := range b.N {
				c := changes[i%len(changes)]
				_, d := service.NotificationDecision(c.Prev, c.State)
				toDevices += d
			}
			b.ReportMetric(float64(toDevices)/float64(b.N), "toDevices/change")
		})
	}
}

// registeredGameChanges plays a game of two registered players and
// returns its committed changes after the join (prev and next states).
func registeredGameChanges(b *testing.B, connected bool) []service.Change {
	b.Helper()
	store, err := boltstore.Open(filepath.Join(b.TempDir(), "g.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	clock := fakeclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	svc, err := service.New(service.Config{Store: store, Players: store, Now: clock.Now, Effects: service.EffectsByStream})
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	white, _ := svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr("white")})
	black, _ := svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr("black")})
	wc, bc := service.Caller{Token: white.Token}, service.Caller{Token: black.Token}
	w := svc.WatchPlayer(white.Player.PlayerID, 1024)
	defer w.Stop()
	opts := game.DefaultOptions()
	opts.ColorAssignment = game.ColorsHostWhite
	g, err := svc.Create(ctx, service.CreateInput{Options: opts, Caller: wc})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Join(ctx, g.GameID, service.JoinInput{Caller: bc}); err != nil {
		b.Fatal(err)
	}
	if connected {
		for _, c := range []service.Caller{wc, bc} {
			if _, err := svc.Connect(ctx, g.GameID, c); err != nil {
				b.Fatal(err)
			}
		}
	}
	// The Opera game (Morphy, Paris 1858): 33 plies to mate.
	opera := strings.Fields("e2e4 e7e5 g1f3 d7d6 d2d4 c8g4 d4e5 g4f3 d1f3 d6e5 f1c4 g8f6 f3b3 d8e7 b1c3 c7c6 c1g5 b7b5 " +
		"c3b5 c6b5 c4b5 b8d7 e1c1 a8d8 d1d7 d8d7 h1d1 e7e6 b5d7 f6d7 b3b8 d7b8 d1d8")
	for i, uci := range opera {
		c := []service.Caller{wc, bc}[i%2]
		clock.Advance(time.Second)
		if _, err := svc.Act(ctx, g.GameID, c, service.ActionInput{Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}}); err != nil {
			b.Fatalf("ply %d %s: %v", i+1, uci, err)
		}
	}
	var out []service.Change
	for {
		select {
		case c := <-w.Changes:
			out = append(out, c)
		default:
			if len(out) < len(opera) || out[len(out)-1].State.Phase != game.PhaseFinished {
				b.Fatalf("%d changes; want the game's", len(out))
			}
			return out
		}
	}
}
