package service_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/service"
)

// TestMyGamesOrderIgnoresMoves: a player's list orders active games by when
// they started (created, or their second seat taken) and finished ones by
// when they ended; a move changes nothing a store indexes (only the time
// of the write, which no index row holds), so a page taken before moves is
// followed by the next without a game skipped or repeated, and each item's
// updatedAt is its game's last write. On every store.
func TestMyGamesOrderIgnoresMoves(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newPlayerFixture(t, open)
			ctx := t.Context()
			me, them := f.player(t, "Me"), f.player(t, "Them")
			hostWhite := options(t, `{"colorAssignment":"hostWhite"}`)
			create := func() string {
				t.Helper()
				g, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite, Caller: me})
				if err != nil {
					t.Fatal(err)
				}
				f.clock.Advance(time.Second)
				return g.GameID
			}
			join := func(id string) time.Time {
				t.Helper()
				at := f.clock.Now()
				if _, err := f.svc.Join(ctx, id, service.JoinInput{Caller: them}); err != nil {
					t.Fatal(err)
				}
				f.clock.Advance(time.Second)
				return at
			}
			a, b, c := create(), create(), create()
			joinedB := join(b)
			joinedA := join(a) // a started last: first in the list, though created first
			list := func(finished bool, limit int, cursor string) service.GamePage {
				t.Helper()
				page, err := f.svc.MyGames(ctx, me, finished, limit, cursor)
				if err != nil {
					t.Fatal(err)
				}
				return page
			}
			ids := func(items []service.MyGame) []string {
				var out []string
				for _, it := range items {
					out = append(out, it.State.GameID)
				}
				return out
			}
			all := func(finished bool) []string {
				t.Helper()
				var out []string
				for cursor := ""; ; {
					page := list(finished, 2, cursor)
					out = append(out, ids(page.Items)...)
					if page.Next == "" {
						return out
					}
					cursor = page.Next
				}
			}
			want := []string{a, b, c} // a joined at 5 s, b at 4 s, c created at 2 s
			if got := all(false); !slices.Equal(got, want) {
				t.Fatalf("active games = %q; want %q", got, want)
			}
			for id, at := range map[string]time.Time{a: joinedA, b: joinedB} {
				if listed := f.record(t, id).Index.ListedAt; !listed.Equal(at) {
					t.Errorf("game %s ListedAt %v; want %v, when its second seat was bound", id, listed, at)
				}
			}

			first := list(false, 1, "")
			if got := ids(first.Items); !slices.Equal(got, []string{a}) || first.Next == "" {
				t.Fatalf("first page = %q, next %q; want [%s] and more", got, first.Next, a)
			}
			before := f.record(t, a).Index
			for i, uci := range []string{"e2e4", "e7e5", "g1f3"} {
				f.clock.Advance(time.Second)
				by := []service.Caller{me, them}[i%2]
				if _, err := f.svc.Act(ctx, a, by, service.ActionInput{Action: moveUCI(uci)}); err != nil {
					t.Fatalf("%s: %v", uci, err)
				}
			}
			f.clock.Advance(time.Second)
			if _, err := f.svc.Act(ctx, b, me, service.ActionInput{Action: moveUCI("d2d4")}); err != nil {
				t.Fatal(err)
			}
			after := f.record(t, a).Index
			if after.Players != before.Players || after.Finished != before.Finished || after.LobbyRoom != before.LobbyRoom ||
				!after.CreatedAt.Equal(before.CreatedAt) || !after.ListedAt.Equal(before.ListedAt) || !bytes.Equal(after.Summary, before.Summary) {
				t.Errorf("moves changed the indexed part of the game:\nbefore %+v\nafter  %+v", before, after)
			}
			if !after.UpdatedAt.After(before.UpdatedAt) {
				t.Errorf("UpdatedAt %v after the moves; want later than %v", after.UpdatedAt, before.UpdatedAt)
			}
			rest := ids(list(false, 10, first.Next).Items)
			if got := append(ids(first.Items), rest...); !slices.Equal(got, want) {
				t.Errorf("pages across the moves = %q; want %q, each once", got, want)
			}
			for _, it := range list(false, 10, "").Items {
				if written := f.record(t, it.State.GameID).Index.UpdatedAt; !it.UpdatedAt.Equal(written) {
					t.Errorf("game %s listed with updatedAt %v; want its last write %v", it.State.GameID, it.UpdatedAt, written)
				}
			}

			// c ends first, then a: newest end first.
			var endedA time.Time
			for _, id := range []string{c, a} {
				f.clock.Advance(time.Second)
				endedA = f.clock.Now()
				if _, err := f.svc.Act(ctx, id, me, service.ActionInput{Action: game.Action{Type: game.ActionResign}}); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := all(true), []string{a, c}; !slices.Equal(got, want) {
				t.Errorf("finished games = %q; want %q", got, want)
			}
			if got, want := all(false), []string{b}; !slices.Equal(got, want) {
				t.Errorf("active games after two ended = %q; want %q", got, want)
			}
			if listed := f.record(t, a).Index.ListedAt; !listed.Equal(endedA) {
				t.Errorf("finished game's ListedAt %v; want its end %v", listed, endedA)
			}

			// A game joined by an anonymous seat starts too (its players
			// stay the same): it is listed at the join.
			d := create()
			at := f.clock.Now()
			if _, err := f.svc.Join(ctx, d, service.JoinInput{}); err != nil {
				t.Fatal(err)
			}
			if listed := f.record(t, d).Index.ListedAt; !listed.Equal(at) {
				t.Errorf("game joined anonymously: ListedAt %v; want the join %v", listed, at)
			}
			if got, want := all(false), []string{d, b}; !slices.Equal(got, want) {
				t.Errorf("active games after an anonymous join = %q; want %q", got, want)
			}
		})
	}
}
