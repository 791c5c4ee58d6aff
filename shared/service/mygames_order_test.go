package service_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"chessapi/shared/game"
	"chessapi/shared/service"
)

// TestMyGamesNewestWriteFirst: a player's lists are newest updatedAt (the
// game's last write) first (SPEC §15), active and finished alike. A move
// in the oldest active game lists it first, though it rewrites no index
// row (the active list is ordered by the games themselves); a page read
// after moves elsewhere goes on with every game that was not written
// between the two reads, each once; a finished game's rematch link (a
// write after its end) lists it first among the finished. Each item's
// updatedAt is its game's last write, and they never increase down the
// list or across pages. On every store.
func TestMyGamesNewestWriteFirst(t *testing.T) {
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
			join := func(id string) {
				t.Helper()
				if _, err := f.svc.Join(ctx, id, service.JoinInput{Caller: them}); err != nil {
					t.Fatal(err)
				}
				f.clock.Advance(time.Second)
			}
			act := func(id string, by service.Caller, a game.Action) {
				t.Helper()
				if _, err := f.svc.Act(ctx, id, by, service.ActionInput{Action: a}); err != nil {
					t.Fatalf("game %s %+v: %v", id, a, err)
				}
				f.clock.Advance(time.Second)
			}
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
			// all pages through a list by twos, checking that updatedAt
			// never increases and is each game's last write.
			all := func(finished bool) []string {
				t.Helper()
				var out []string
				var last time.Time
				for cursor := ""; ; {
					page := list(finished, 2, cursor)
					for _, it := range page.Items {
						if !last.IsZero() && it.UpdatedAt.After(last) {
							t.Errorf("game %s updatedAt %v after one of %v: the list is not newest first", it.State.GameID, it.UpdatedAt, last)
						}
						last = it.UpdatedAt
						if written := f.record(t, it.State.GameID).Index.UpdatedAt; !it.UpdatedAt.Equal(written) {
							t.Errorf("game %s listed with updatedAt %v; want its last write %v", it.State.GameID, it.UpdatedAt, written)
						}
					}
					out = append(out, ids(page.Items)...)
					if page.Next == "" {
						return out
					}
					cursor = page.Next
				}
			}
			a, b, c := create(), create(), create()
			join(a)
			join(b)
			join(c)
			if got, want := all(false), []string{c, b, a}; !slices.Equal(got, want) {
				t.Fatalf("active games = %q; want %q (last written first)", got, want)
			}

			first := list(false, 1, "")
			if got := ids(first.Items); !slices.Equal(got, []string{c}) || first.Next == "" {
				t.Fatalf("first page = %q, next %q; want [%s] and more", got, first.Next, c)
			}
			before := f.record(t, a).Index
			act(a, me, moveUCI("e2e4"))
			act(a, them, moveUCI("e7e5"))
			after := f.record(t, a).Index
			if after.Players != before.Players || after.Finished != before.Finished || after.LobbyRoom != before.LobbyRoom ||
				!after.CreatedAt.Equal(before.CreatedAt) || !after.ListedAt.Equal(before.ListedAt) || !bytes.Equal(after.Summary, before.Summary) {
				t.Errorf("moves changed the indexed part of the game:\nbefore %+v\nafter  %+v", before, after)
			}
			// b was not written between the two page reads: it follows c,
			// once. a was, and is now first, ahead of the cursor: a fresh
			// read from the top finds it.
			if got, want := ids(list(false, 10, first.Next).Items), []string{b}; !slices.Equal(got, want) {
				t.Errorf("page after the cursor, a moved meanwhile = %q; want %q", got, want)
			}
			if got, want := all(false), []string{a, c, b}; !slices.Equal(got, want) {
				t.Errorf("active games after a move in the oldest = %q; want %q", got, want)
			}

			// c ends, then a: newest write first; then c's rematch link is
			// written, and c is first.
			act(c, me, game.Action{Type: game.ActionResign})
			act(a, me, game.Action{Type: game.ActionResign})
			if got, want := all(true), []string{a, c}; !slices.Equal(got, want) {
				t.Errorf("finished games = %q; want %q", got, want)
			}
			for _, id := range []string{a, c} {
				if ix := f.record(t, id).Index; !ix.ListedAt.Equal(ix.UpdatedAt) {
					t.Errorf("finished game %s: ListedAt %v; want its last write %v", id, ix.ListedAt, ix.UpdatedAt)
				}
			}
			if _, err := f.svc.Create(ctx, service.CreateInput{RematchOf: c, Caller: me}); err != nil {
				t.Fatal(err)
			}
			f.clock.Advance(time.Second)
			if got, want := all(true), []string{c, a}; !slices.Equal(got, want) {
				t.Errorf("finished games after c's rematch = %q; want %q", got, want)
			}
			if got := all(false); len(got) != 2 || got[1] != b {
				t.Errorf("active games after two ended and a rematch = %q; want [rematch %s]", got, b)
			}

			// A cursor of the finished list, or of the index's format (the
			// active list's before it was ordered by the games), is
			// refused on the active list by name, and the other way round.
			fin := list(true, 1, "")
			for finished, cursor := range map[bool]string{false: fin.Next, true: first.Next} {
				_, err := f.svc.MyGames(ctx, me, finished, 1, cursor)
				var ie *game.InputError
				if !errors.As(err, &ie) || ie.Field != "cursor" {
					t.Errorf("MyGames(finished %v, another list's cursor) = %v; want an input error naming cursor", finished, err)
				}
			}
		})
	}
}
