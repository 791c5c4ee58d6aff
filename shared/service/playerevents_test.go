package service_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"chessapi/internal/fakeclock"
	"chessapi/shared/game"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// eventLog collects the player events of every commit a player's feed
// announces (as the local account-wide stream does).
type eventLog struct {
	w      service.PlayerWatch
	player string
}

// take returns the kinds of the events announced so far, for this player.
func (l *eventLog) take() []service.PlayerEvent {
	var out []service.PlayerEvent
	for {
		select {
		case c := <-l.w.Changes:
			for _, e := range service.PlayerEvents(c.Prev, c.State) {
				if e.PlayerID == l.player {
					out = append(out, e)
				}
			}
		default:
			return out
		}
	}
}

func kindsOf(events []service.PlayerEvent) []service.PlayerEventKind {
	var out []service.PlayerEventKind
	for _, e := range events {
		out = append(out, e.Kind)
	}
	return out
}

// TestPlayerEvents: each kind, from the versions that make it, to the
// player it is for, and none of another player's games.
func TestPlayerEvents(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	clock := fakeclock.New(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
	svc, err := service.New(service.Config{Store: store, Players: store, Lister: store, Now: clock.Now, Effects: service.EffectsByStream})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	newPlayer := func(name string) (service.Caller, *eventLog) {
		p, err := svc.CreatePlayer(ctx, service.NewPlayerInput{Name: &name})
		if err != nil {
			t.Fatal(err)
		}
		w := svc.WatchPlayer(p.Player.PlayerID, 256)
		t.Cleanup(w.Stop)
		return service.Caller{Token: p.Token}, &eventLog{w: w, player: p.Player.PlayerID}
	}
	a, aLog := newPlayer("A")
	b, bLog := newPlayer("B")
	_, cLog := newPlayer("C")
	opts := game.DefaultOptions()
	opts.ColorAssignment = game.ColorsHostWhite
	act := func(id string, c service.Caller, a game.Action) {
		t.Helper()
		clock.Advance(time.Second)
		if _, err := svc.Act(ctx, id, c, service.ActionInput{Action: a}); err != nil {
			t.Fatal(err)
		}
	}
	move := func(uci string) game.Action {
		return game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}
	}

	// An open game joined: both start.
	g1, err := svc.Create(ctx, service.CreateInput{Options: opts, Caller: a})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Join(ctx, g1.GameID, service.JoinInput{Caller: b}); err != nil {
		t.Fatal(err)
	}
	if got, got2 := kindsOf(aLog.take()), kindsOf(bLog.take()); !slices.Equal(got, []service.PlayerEventKind{"gameStarted"}) || !slices.Equal(got2, []service.PlayerEventKind{"gameStarted"}) {
		t.Errorf("open game joined: A %v, B %v; want gameStarted each", got, got2)
	}
	// Moves: the side now to move is told, with the move and its deadline.
	act(g1.GameID, a, move("e2e4"))
	events := bLog.take()
	if len(events) != 1 || events[0].Kind != "yourTurn" || events[0].Move.SAN != "e4" || events[0].Move.UCI != "e2e4" || events[0].Deadline == nil || events[0].GameID != g1.GameID {
		t.Errorf("after A's e4, B: %+v; want yourTurn with e4 and a deadline", events)
	}
	if got := aLog.take(); len(got) != 0 {
		t.Errorf("after A's own move, A: %v; want nothing", kindsOf(got))
	}
	act(g1.GameID, b, move("e7e5"))
	if got := kindsOf(aLog.take()); !slices.Equal(got, []service.PlayerEventKind{"yourTurn"}) {
		t.Errorf("after B's e5, A: %v; want yourTurn", got)
	}
	// The grace of a player on their turn: when their last stream closes.
	connected, err := svc.Connect(ctx, g1.GameID, a)
	if err != nil || connected.Seat == nil {
		t.Fatalf("connect: %+v, %v; want A's seat", connected, err)
	}
	if err := svc.Disconnect(ctx, g1.GameID, *connected.Seat); err != nil {
		t.Fatal(err)
	}
	events = aLog.take()
	if len(events) != 1 || events[0].Kind != "disconnectGraceStarted" || events[0].Deadline == nil {
		t.Errorf("A's stream closed on A's turn, A: %+v; want disconnectGraceStarted with the grace's end", events)
	}
	// The game ends: both are told the result.
	act(g1.GameID, b, game.Action{Type: game.ActionResign})
	for name, l := range map[string]*eventLog{"A": aLog, "B": bLog} {
		events := l.take()
		if len(events) != 1 || events[0].Kind != "gameEnded" || events[0].Result == nil || events[0].Result.Reason != game.ReasonResign || events[0].RatingChange != nil {
			t.Errorf("%s after the resignation: %+v; want gameEnded (resign), no rating change in a casual game", name, events)
		}
	}
	// A rematch: the other player is offered it.
	if _, err := svc.Create(ctx, service.CreateInput{Options: opts, Caller: a, RematchOf: g1.GameID}); err != nil {
		t.Fatal(err)
	}
	events = bLog.take()
	if len(events) != 1 || events[0].Kind != "rematchOffered" || events[0].RematchOf != g1.GameID {
		t.Errorf("A asked for a rematch, B: %+v; want rematchOffered of %s", events, g1.GameID)
	}
	aLog.take()
	// A private game: its host is told its invitee came.
	g2, err := svc.Create(ctx, service.CreateInput{Options: opts, Caller: a, Private: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Join(ctx, g2.GameID, service.JoinInput{Caller: b, InviteCode: g2.InviteCode}); err != nil {
		t.Fatal(err)
	}
	if got, got2 := kindsOf(aLog.take()), kindsOf(bLog.take()); !slices.Equal(got, []service.PlayerEventKind{"inviteAccepted"}) || !slices.Equal(got2, []service.PlayerEventKind{"gameStarted"}) {
		t.Errorf("private game joined: host %v, invitee %v; want inviteAccepted, gameStarted", got, got2)
	}
	// Nothing of other players' games.
	if got := cLog.take(); len(got) != 0 {
		t.Errorf("C, in none of these games: %v", kindsOf(got))
	}
	// A version that concerns nobody registered has none.
	anon, err := svc.Create(ctx, service.CreateInput{Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := svc.Observe(ctx, anon.GameID, service.Caller{})
	if err != nil {
		t.Fatal(err)
	}
	if got := service.PlayerEvents(nil, obs.State); len(got) != 0 {
		t.Errorf("an anonymous game: %v", kindsOf(got))
	}
}

// TestPlayerWatchLost: a player's feed that fills up says so (Lost), as it
// cannot tell which commits it dropped; one that keeps up does not.
func TestPlayerWatchLost(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := service.New(service.Config{Store: store, Players: store, Lister: store, Effects: service.EffectsByStream})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := svc.CreatePlayer(ctx, service.NewPlayerInput{Name: ptr("A")})
	if err != nil {
		t.Fatal(err)
	}
	w := svc.WatchPlayer(p.Player.PlayerID, 1)
	defer w.Stop()
	opts := game.DefaultOptions()
	g, err := svc.Create(ctx, service.CreateInput{Options: opts, Caller: service.Caller{Token: p.Token}})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Lost:
		t.Fatal("lost after one commit with room for one")
	default:
	}
	if _, err := svc.Join(ctx, g.GameID, service.JoinInput{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Lost:
	default:
		t.Error("a second commit into a full feed was dropped without Lost")
	}
}

// TestWatchKeepsTheNewest: a game's feed that fills up drops its oldest
// announcements, never the newest, so a watcher reading on sees the last
// version (and the gap before it, which it catches up on from the log).
func TestWatchKeepsTheNewest(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	svc, err := service.New(service.Config{Store: store, Players: store, Lister: store, Effects: service.EffectsByStream})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g, err := svc.Create(ctx, service.CreateInput{Options: game.DefaultOptions()})
	if err != nil {
		t.Fatal(err)
	}
	changes, stop := svc.Watch(g.GameID, 2)
	defer stop()
	joined, err := svc.Join(ctx, g.GameID, service.JoinInput{})
	if err != nil {
		t.Fatal(err)
	}
	last := joined.Game.Version
	for i := range 5 {
		view, err := svc.SetPresence(ctx, g.GameID, service.Caller{Token: joined.Token}, i%2 == 1)
		if err != nil {
			t.Fatal(err)
		}
		last = view.Version
	}
	var got []int64
	for len(changes) > 0 {
		got = append(got, (<-changes).State.Version)
	}
	if len(got) != 2 || got[1] != last || got[0] != last-1 {
		t.Errorf("a full feed of 2 holds versions %v; want the newest two, %d and %d", got, last-1, last)
	}
}
