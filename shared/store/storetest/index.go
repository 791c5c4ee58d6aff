package storetest

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
)

// RunIndex runs the conformance suite of the game index: a store's
// GameLister must follow every Create and Update of its Store, in the
// orders and pages the port documents. newStore is called once per
// subtest and returns the two faces of one store (they may be the same
// value), holding none of the ids the suite generates.
//
// Besides the contract written on service.GameLister, the suite pins down:
//   - Get returns the record's Index as written, times truncated to the
//     millisecond in UTC, an empty Summary as nil; the zero index stays
//     zero (nothing listed).
//   - An index with a player or a room but without both times is refused
//     and nothing is written.
//   - A game with the same player on both seats is listed once.
//   - A write that keeps a game's ListedAt, status and players (a move)
//     keeps its place in its players' lists: paging never skips or repeats
//     it, however often it is written meanwhile.
//   - next is "" exactly on the last page: a full last page has no next.
//   - A cursor from the other list, or any string no list gave, is
//     service.ErrBadCursor; a limit outside 1..100 or an empty player or
//     room is an error.
//
// The lists may trail writes (DynamoDB's GSIs are eventually consistent):
// every check of a list after a write waits up to indexWait for it.
func RunIndex(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	t.Run("IndexRoundTrip", func(t *testing.T) { testIndexRoundTrip(t, newStore) })
	t.Run("IndexRefusesIncomplete", func(t *testing.T) { testIndexRefusesIncomplete(t, newStore) })
	t.Run("IndexFollowsUpdates", func(t *testing.T) { testIndexFollowsUpdates(t, newStore) })
	t.Run("PlayerGamesOrderAndTies", func(t *testing.T) { testPlayerGamesOrder(t, newStore) })
	t.Run("PlayerGamesPagingUnderCreates", func(t *testing.T) { testPagingUnderCreates(t, newStore) })
	t.Run("PlayerGamesPagingUnderMoves", func(t *testing.T) { testPagingUnderMoves(t, newStore) })
	t.Run("LobbyOrderAndPaging", func(t *testing.T) { testLobbyOrder(t, newStore) })
	t.Run("BadCursorAndArguments", func(t *testing.T) { testBadCursor(t, newStore) })
}

// indexWait bounds how long a list may trail a write. DynamoDB's GSIs
// usually follow within a second; the emulators are immediate.
const indexWait = 15 * time.Second

// indexEpoch is a fixed instant with sub-millisecond digits, so every
// stored time shows the truncation.
var indexEpoch = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// newPlayerID makes player ids unique like game ids: stores that share a
// backend across subtests keep them apart.
func newPlayerID(name string) string { return "p-" + name + "-" + newID() }

// indexed is a record with an index: white and black players (either ""),
// listed in room (or not), created at created and listed (and last
// written) at listed.
func indexed(id string, white, black, room string, finished bool, created, listed time.Time) service.GameRecord {
	return service.GameRecord{
		GameID: id, Version: 1, StateVersion: 1, State: []byte("state of " + id),
		Index: service.GameIndex{
			Players:   [2]string{white, black},
			Finished:  finished,
			LobbyRoom: room,
			CreatedAt: created,
			UpdatedAt: listed,
			ListedAt:  listed,
			Summary:   []byte(`{"gameId":"` + id + `"}`),
		},
	}
}

// storedIndex is what Get and the lists give back for a written index.
func storedIndex(ix service.GameIndex) service.GameIndex {
	if ix.Players == [2]string{} && !ix.Finished && ix.LobbyRoom == "" && ix.CreatedAt.IsZero() && ix.UpdatedAt.IsZero() && ix.ListedAt.IsZero() && len(ix.Summary) == 0 {
		return service.GameIndex{}
	}
	ix.CreatedAt = ix.CreatedAt.Truncate(time.Millisecond).UTC()
	ix.UpdatedAt = ix.UpdatedAt.Truncate(time.Millisecond).UTC()
	ix.ListedAt = ix.ListedAt.Truncate(time.Millisecond).UTC()
	if len(ix.Summary) == 0 {
		ix.Summary = nil
	}
	return ix
}

func indexDiff(got, want service.GameIndex) string {
	var d []string
	if got.Players != want.Players {
		d = append(d, fmt.Sprintf("Players %q, want %q", got.Players, want.Players))
	}
	if got.Finished != want.Finished {
		d = append(d, fmt.Sprintf("Finished %v, want %v", got.Finished, want.Finished))
	}
	if got.LobbyRoom != want.LobbyRoom {
		d = append(d, fmt.Sprintf("LobbyRoom %q, want %q", got.LobbyRoom, want.LobbyRoom))
	}
	for _, f := range []struct {
		name      string
		got, want time.Time
	}{{"CreatedAt", got.CreatedAt, want.CreatedAt}, {"UpdatedAt", got.UpdatedAt, want.UpdatedAt}, {"ListedAt", got.ListedAt, want.ListedAt}} {
		if !f.got.Equal(f.want) || (!f.got.IsZero() && f.got.Location() != time.UTC) {
			d = append(d, fmt.Sprintf("%s %v, want %v (UTC)", f.name, f.got, f.want))
		}
	}
	if !bytes.Equal(got.Summary, want.Summary) || (got.Summary == nil) != (want.Summary == nil) {
		d = append(d, fmt.Sprintf("Summary %q, want %q", got.Summary, want.Summary))
	}
	return strings.Join(d, "; ")
}

// playerEntryOf is the entry PlayerGames must give for rec (sorted by its
// ListedAt), lobbyEntryOf the one Lobby must give (by its CreatedAt).
func playerEntryOf(rec service.GameRecord) service.IndexEntry {
	ix := storedIndex(rec.Index)
	return service.IndexEntry{GameID: rec.GameID, CreatedAt: ix.CreatedAt, SortedAt: ix.ListedAt, Summary: ix.Summary}
}

func lobbyEntryOf(rec service.GameRecord) service.IndexEntry {
	ix := storedIndex(rec.Index)
	return service.IndexEntry{GameID: rec.GameID, CreatedAt: ix.CreatedAt, SortedAt: ix.CreatedAt, Summary: ix.Summary}
}

func entriesDiff(got, want []service.IndexEntry) string {
	ids := func(es []service.IndexEntry) []string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.GameID
		}
		return out
	}
	if !slices.Equal(ids(got), ids(want)) {
		return fmt.Sprintf("games %q, want %q", ids(got), ids(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.CreatedAt.Equal(w.CreatedAt) || !g.SortedAt.Equal(w.SortedAt) || !bytes.Equal(g.Summary, w.Summary) ||
			g.CreatedAt.Location() != time.UTC || g.SortedAt.Location() != time.UTC {
			return fmt.Sprintf("entry %d = {%v %v %q}, want {%v %v %q} (UTC)", i, g.CreatedAt, g.SortedAt, g.Summary, w.CreatedAt, w.SortedAt, w.Summary)
		}
	}
	return ""
}

// listAll pages through a list with the given page size and returns every
// entry and the number of pages, failing on an error, a page over the
// limit or an endless cursor chain.
func listAll(t *testing.T, limit int, list func(limit int, cursor string) ([]service.IndexEntry, string, error)) ([]service.IndexEntry, int, error) {
	t.Helper()
	var all []service.IndexEntry
	cursor := ""
	for pages := 1; ; pages++ {
		page, next, err := list(limit, cursor)
		if err != nil {
			return nil, pages, fmt.Errorf("page %d (cursor %q): %w", pages, cursor, err)
		}
		if len(page) > limit {
			return nil, pages, fmt.Errorf("page %d has %d entries, over the limit %d", pages, len(page), limit)
		}
		if next != "" && len(page) == 0 {
			return nil, pages, fmt.Errorf("page %d is empty but has a next cursor", pages)
		}
		all = append(all, page...)
		if next == "" {
			return all, pages, nil
		}
		if pages > 10_000 {
			return nil, pages, errors.New("more than 10,000 pages")
		}
		cursor = next
	}
}

// eventually retries check until it returns "" or indexWait passed, then
// fails with its last complaint.
func eventually(t *testing.T, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(indexWait)
	for {
		problem := check()
		if problem == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still %s after %v", what, problem, indexWait)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expectPlayerGames waits until the whole list of player's games with the
// status is want (paged by 100).
func expectPlayerGames(t *testing.T, l service.GameLister, player string, finished bool, want ...service.GameRecord) {
	t.Helper()
	wantEntries := make([]service.IndexEntry, len(want))
	for i, rec := range want {
		wantEntries[i] = playerEntryOf(rec)
	}
	eventually(t, fmt.Sprintf("PlayerGames(%s, finished=%v)", player, finished), func() string {
		got, _, err := listAll(t, 100, func(limit int, cursor string) ([]service.IndexEntry, string, error) {
			return l.PlayerGames(ctxFor(t), player, finished, limit, cursor)
		})
		if err != nil {
			return err.Error()
		}
		return entriesDiff(got, wantEntries)
	})
}

func expectLobby(t *testing.T, l service.GameLister, room string, want ...service.GameRecord) {
	t.Helper()
	wantEntries := make([]service.IndexEntry, len(want))
	for i, rec := range want {
		wantEntries[i] = lobbyEntryOf(rec)
	}
	eventually(t, fmt.Sprintf("Lobby(%s)", room), func() string {
		got, _, err := listAll(t, 100, func(limit int, cursor string) ([]service.IndexEntry, string, error) {
			return l.Lobby(ctxFor(t), room, limit, cursor)
		})
		if err != nil {
			return err.Error()
		}
		return entriesDiff(got, wantEntries)
	})
}

func mustUpdate(t *testing.T, s service.Store, rec service.GameRecord, expected int64) {
	t.Helper()
	if err := s.Update(ctxFor(t), rec, expected); err != nil {
		t.Fatalf("Update(%q, %d) = %v; want nil", rec.GameID, expected, err)
	}
}

func testIndexRoundTrip(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	s, l := newStore(t)
	white, black := newPlayerID("w"), newPlayerID("b")
	created := indexEpoch.Add(123456789 * time.Nanosecond).In(time.FixedZone("KST", 9*3600))
	tests := []struct {
		name string
		ix   service.GameIndex
	}{
		{"zero index", service.GameIndex{}},
		{"lobby only", service.GameIndex{LobbyRoom: "free", CreatedAt: created, UpdatedAt: created, ListedAt: created}},
		{"both seats finished", service.GameIndex{Players: [2]string{white, black}, Finished: true, CreatedAt: created, UpdatedAt: created.Add(time.Hour), ListedAt: created.Add(time.Minute), Summary: []byte{0, 1, 2, 255}}},
		{"black only, empty summary", service.GameIndex{Players: [2]string{"", black}, CreatedAt: created, UpdatedAt: created.Add(time.Second), ListedAt: created, Summary: []byte{}}},
		{"ids with separators", service.GameIndex{Players: [2]string{"a#b#f", "#a"}, LobbyRoom: "r#1", CreatedAt: created, UpdatedAt: created, ListedAt: created}},
		{"not listed anywhere", service.GameIndex{Finished: true, CreatedAt: time.UnixMilli(0), UpdatedAt: created, ListedAt: created, Summary: []byte("s")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := baseRecord(t)
			rec.Index = tt.ix
			mustCreate(t, s, rec)
			got, err := s.Get(ctxFor(t), rec.GameID)
			if err != nil {
				t.Fatalf("Get(%q) = %v", rec.GameID, err)
			}
			if d := indexDiff(got.Index, storedIndex(tt.ix)); d != "" {
				t.Fatalf("Get(%q).Index: %s", rec.GameID, d)
			}
			if d := diff(got, stored(rec)); d != "" {
				t.Fatalf("Get(%q) = %s", rec.GameID, d)
			}
		})
	}

	// An update to the zero index takes the game off every list.
	rec := indexed(newID(), white, "", "room-"+newID(), false, indexEpoch, indexEpoch)
	mustCreate(t, s, rec)
	expectPlayerGames(t, l, white, false, rec)
	expectLobby(t, l, rec.Index.LobbyRoom, rec)
	bare := rec
	bare.Version = 2
	bare.Index = service.GameIndex{}
	mustUpdate(t, s, bare, 1)
	got, err := s.Get(ctxFor(t), rec.GameID)
	if err != nil || indexDiff(got.Index, service.GameIndex{}) != "" {
		t.Fatalf("Get(%q) after clearing the index = %+v, %v; want the zero index", rec.GameID, got.Index, err)
	}
	expectPlayerGames(t, l, white, false)
	expectLobby(t, l, rec.Index.LobbyRoom)
}

func testIndexRefusesIncomplete(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	s, l := newStore(t)
	player := newPlayerID("x")
	for _, tt := range []struct {
		name string
		ix   service.GameIndex
	}{
		{"no times", service.GameIndex{Players: [2]string{player, ""}}},
		{"no updatedAt", service.GameIndex{LobbyRoom: "free", CreatedAt: indexEpoch, ListedAt: indexEpoch}},
		{"no listedAt", service.GameIndex{Players: [2]string{player, ""}, CreatedAt: indexEpoch, UpdatedAt: indexEpoch}},
		{"before 1970", service.GameIndex{Players: [2]string{player, ""}, CreatedAt: time.Unix(-1, 0), UpdatedAt: indexEpoch, ListedAt: indexEpoch}},
		{"invalid UTF-8 player", service.GameIndex{Players: [2]string{"\xff", ""}, CreatedAt: indexEpoch, UpdatedAt: indexEpoch, ListedAt: indexEpoch}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := baseRecord(t)
			rec.Index = tt.ix
			if err := s.Create(ctxFor(t), rec); err == nil {
				t.Fatalf("Create(%q) with index %+v = nil; want an error", rec.GameID, tt.ix)
			}
			if _, err := s.Get(ctxFor(t), rec.GameID); !errors.Is(err, service.ErrNotFound) {
				t.Fatalf("Get(%q) after a refused create = %v; want ErrNotFound", rec.GameID, err)
			}
			ok := baseRecord(t)
			mustCreate(t, s, ok)
			next := ok
			next.Version = 2
			next.Index = tt.ix
			if err := s.Update(ctxFor(t), next, 1); err == nil || errors.Is(err, service.ErrVersionConflict) {
				t.Fatalf("Update(%q) with index %+v = %v; want a validation error", ok.GameID, tt.ix, err)
			}
			mustGet(t, s, ok)
		})
	}
	expectPlayerGames(t, l, player, false)
}

// testIndexFollowsUpdates walks one game through its life: waiting in the
// lobby with its host, joined by a player (leaves the lobby, enters the
// joiner's list, listed at the join), moved (keeps its place), finished
// (moves to both players' finished lists, listed at its end).
func testIndexFollowsUpdates(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	s, l := newStore(t)
	host, joiner := newPlayerID("host"), newPlayerID("joiner")
	room := "room-" + newID()
	t0 := indexEpoch

	waiting := indexed(newID(), host, "", room, false, t0, t0)
	other := indexed(newID(), "", host, "", false, t0.Add(-time.Hour), t0.Add(-time.Hour)) // a private game of the host
	mustCreate(t, s, waiting)
	mustCreate(t, s, other)
	expectLobby(t, l, room, waiting)
	expectPlayerGames(t, l, host, false, waiting, other)
	expectPlayerGames(t, l, joiner, false)

	joined := waiting
	joined.Version = 2
	joined.Index.Players[1] = joiner
	joined.Index.LobbyRoom = ""
	joined.Index.UpdatedAt = t0.Add(time.Minute)
	joined.Index.ListedAt = t0.Add(time.Minute)
	joined.Index.Summary = []byte("joined")
	mustUpdate(t, s, joined, 1)
	expectLobby(t, l, room)
	expectPlayerGames(t, l, host, false, joined, other)
	expectPlayerGames(t, l, joiner, false, joined)

	// Moves: only UpdatedAt changes; both games keep their places (the
	// older game, moved last, stays below) and Get has the new time.
	moved := joined
	moved.Version = 3
	moved.Index.UpdatedAt = t0.Add(2 * time.Minute)
	mustUpdate(t, s, moved, 2)
	olderMove := other
	olderMove.Version = 2
	olderMove.Index.UpdatedAt = t0.Add(150 * time.Second)
	mustUpdate(t, s, olderMove, 1)
	expectPlayerGames(t, l, host, false, moved, olderMove)
	mustGet(t, s, olderMove)

	finished := moved
	finished.Version = 4
	finished.Index.Finished = true
	finished.Index.UpdatedAt = t0.Add(3 * time.Minute)
	finished.Index.ListedAt = t0.Add(3 * time.Minute)
	finished.Index.Summary = []byte("finished")
	finished.ExpiresAt = t0.Add(30 * 24 * time.Hour)
	mustUpdate(t, s, finished, 3)
	expectPlayerGames(t, l, host, false, olderMove)
	expectPlayerGames(t, l, host, true, finished)
	expectPlayerGames(t, l, joiner, false)
	expectPlayerGames(t, l, joiner, true, finished)

	// A refused update (stale version) changes no list.
	stale := finished
	stale.Version = 4
	stale.Index.Finished = false
	stale.Index.LobbyRoom = room
	if err := s.Update(ctxFor(t), stale, 3); !errors.Is(err, service.ErrVersionConflict) {
		t.Fatalf("stale Update = %v; want ErrVersionConflict", err)
	}
	// Give a wrongly written index time to show before checking it did not.
	time.Sleep(200 * time.Millisecond)
	expectLobby(t, l, room)
	expectPlayerGames(t, l, host, true, finished)
}

// testPlayerGamesOrder lists a player's games on either seat, with equal
// ListedAt among them, in pages of every size.
func testPlayerGamesOrder(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	s, l := newStore(t)
	me, them := newPlayerID("me"), newPlayerID("them")
	var mine []service.GameRecord
	base := newID()
	for i := range 23 {
		// Four games share each ListedAt (ties broken by game id, which
		// the ids' suffix orders against creation order), the seat
		// alternates, and one game has me on both seats.
		id := fmt.Sprintf("%s-%c", base, 'z'-i%26)
		white, black := me, them
		if i%2 == 1 {
			white, black = them, me
		}
		if i == 7 { // odd: black is me already
			white = me
		}
		updated := indexEpoch.Add(time.Duration(i/4) * time.Second)
		rec := indexed(id, white, black, "", false, indexEpoch.Add(-time.Duration(i)*time.Minute), updated)
		mustCreate(t, s, rec)
		mine = append(mine, rec)
	}
	// Games that must not show: another status, another player, listed only
	// in a lobby.
	mustCreate(t, s, indexed(newID(), me, "", "", true, indexEpoch, indexEpoch.Add(time.Hour)))
	mustCreate(t, s, indexed(newID(), them, "", "", false, indexEpoch, indexEpoch.Add(time.Hour)))
	mustCreate(t, s, indexed(newID(), "", "", "free", false, indexEpoch, indexEpoch.Add(time.Hour)))

	want := slices.Clone(mine)
	slices.SortFunc(want, func(a, b service.GameRecord) int {
		if c := b.Index.ListedAt.Compare(a.Index.ListedAt); c != 0 {
			return c
		}
		return strings.Compare(b.GameID, a.GameID)
	})
	expectPlayerGames(t, l, me, false, want...)
	wantEntries := make([]service.IndexEntry, len(want))
	for i, rec := range want {
		wantEntries[i] = playerEntryOf(rec)
	}
	for _, limit := range []int{1, 2, 3, 5, 22, 23, 24, 100} {
		got, pages, err := listAll(t, limit, func(limit int, cursor string) ([]service.IndexEntry, string, error) {
			return l.PlayerGames(ctxFor(t), me, false, limit, cursor)
		})
		if err != nil {
			t.Fatalf("PlayerGames(limit %d): %v", limit, err)
		}
		if d := entriesDiff(got, wantEntries); d != "" {
			t.Fatalf("PlayerGames paged by %d: %s", limit, d)
		}
		if wantPages := max(1, (len(want)+limit-1)/limit); pages != wantPages {
			t.Errorf("PlayerGames paged by %d took %d pages; want %d (next must be empty on a full last page)", limit, pages, wantPages)
		}
	}
}

// testPagingUnderCreates pages through a player's games while 20 writers
// create more games for the same player, between every two pages: every
// game that existed before paging began is listed exactly once, nothing is
// listed twice, and the pages follow each other in order. Half the writers
// create games that sort into the part of the list not yet paged (an
// older ListedAt, as from a writer whose clock is behind).
func testPagingUnderCreates(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	const (
		existing = 40
		writers  = 20
		perWrite = 4
		pageSize = 3
		// perPage is how many creates the pager waits for between pages,
		// so the creates are spread over the whole paging.
		perPage = writers * perWrite / (existing / pageSize)
	)
	s, l := newStore(t)
	me := newPlayerID("busy")
	var before []service.GameRecord
	now := time.Now()
	past := now.Add(-time.Hour)
	for i := range existing {
		rec := indexed(newID(), me, "", "", false, past, past.Add(time.Duration(i/3)*time.Second))
		if i%2 == 1 {
			rec.Index.Players = [2]string{"", me}
		}
		mustCreate(t, s, rec)
		before = append(before, rec)
	}
	slices.SortFunc(before, func(a, b service.GameRecord) int {
		if c := b.Index.ListedAt.Compare(a.Index.ListedAt); c != 0 {
			return c
		}
		return strings.Compare(b.GameID, a.GameID)
	})
	expectPlayerGames(t, l, me, false, before...)

	var mu sync.Mutex
	created := 0
	var writeErrs []error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range perWrite {
				updated := time.Now()
				if w%2 == 0 {
					updated = past.Add(time.Duration(w*perWrite+i) * 157 * time.Millisecond)
				}
				rec := indexed(newID(), me, "", "", false, updated, updated)
				if i%2 == 1 {
					rec.Index.Players = [2]string{"", me}
				}
				err := s.Create(ctxFor(t), rec)
				mu.Lock()
				created++
				if err != nil {
					writeErrs = append(writeErrs, err)
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	waitForCreates := func(n int) {
		deadline := time.Now().Add(opTimeout)
		for {
			mu.Lock()
			done := created >= min(n, writers*perWrite)
			mu.Unlock()
			if done || time.Now().After(deadline) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
	var got []service.IndexEntry
	cursor := ""
	for pages := 0; ; pages++ {
		page, next, err := l.PlayerGames(ctxFor(t), me, false, pageSize, cursor)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		got = append(got, page...)
		if next == "" {
			break
		}
		if pages > 1000 {
			t.Fatal("more than 1,000 pages")
		}
		cursor = next
		waitForCreates((pages + 1) * perPage)
	}
	wg.Wait()
	for _, err := range writeErrs {
		t.Errorf("concurrent Create: %v", err)
	}

	seen := map[string]int{}
	for i, e := range got {
		seen[e.GameID]++
		if seen[e.GameID] > 1 {
			t.Errorf("game %s listed twice", e.GameID)
		}
		if i > 0 {
			prev := got[i-1]
			if e.SortedAt.After(prev.SortedAt) || (e.SortedAt.Equal(prev.SortedAt) && e.GameID > prev.GameID) {
				t.Errorf("entry %d (%s at %v) sorts before entry %d (%s at %v)", i, e.GameID, e.SortedAt, i-1, prev.GameID, prev.SortedAt)
			}
		}
	}
	for _, rec := range before {
		if seen[rec.GameID] != 1 {
			t.Errorf("game %s, there before paging began, listed %d times; want once", rec.GameID, seen[rec.GameID])
		}
	}
	t.Logf("paged %d entries (%d there before), %d created during the paging", len(got), existing, writers*perWrite)
}

// testPagingUnderMoves pages through a player's active games while every
// one of them is written again (a move: a later UpdatedAt, the same
// ListedAt, status, players and summary) between every two pages, by
// concurrent writers: every game is listed exactly once, in the order of
// the first page, and Get has each game's last write. This is what the
// service's active list stands on: it gathers every active entry's id
// while the games are being played, and orders them by the games' own
// UpdatedAt (service.MyGames). Then the finished list, which the service
// gives in the index's order with ListedAt set to each write's time: a
// game written after its end (a rematch link) comes first, and every
// entry's SortedAt is its game's last write, never increasing.
func testPagingUnderMoves(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	const (
		games    = 30
		pageSize = 4
		writers  = 6
	)
	s, l := newStore(t)
	me, them := newPlayerID("mover"), newPlayerID("them")
	recs := make([]service.GameRecord, games)
	for i := range recs {
		// Pairs share a ListedAt; the seat alternates; one game has me on
		// both seats.
		white, black := me, them
		if i%2 == 1 {
			white, black = them, me
		}
		if i == 9 {
			white = me
		}
		recs[i] = indexed(newID(), white, black, "", false, indexEpoch, indexEpoch.Add(time.Duration(i/2)*time.Second))
		mustCreate(t, s, recs[i])
	}
	want := slices.Clone(recs)
	slices.SortFunc(want, func(a, b service.GameRecord) int {
		if c := b.Index.ListedAt.Compare(a.Index.ListedAt); c != 0 {
			return c
		}
		return strings.Compare(b.GameID, a.GameID)
	})
	expectPlayerGames(t, l, me, false, want...)

	// moveAll writes every game once more, writers at a time, each a
	// second later than the last write of any.
	moves := 0
	moveAll := func() {
		moves++
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for w := range writers {
			wg.Go(func() {
				for i := w; i < games; i += writers {
					next := recs[i]
					next.Version++
					next.Index.UpdatedAt = indexEpoch.Add(time.Hour + time.Duration(moves*games+i)*time.Second)
					next.State = fmt.Appendf(nil, "state of %s after move %d", next.GameID, moves)
					err := s.Update(ctxFor(t), next, recs[i].Version)
					mu.Lock()
					if err != nil {
						errs = append(errs, fmt.Errorf("Update(%q, %d): %w", next.GameID, recs[i].Version, err))
					} else {
						recs[i] = next
					}
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			t.Fatal(err)
		}
	}
	var got []service.IndexEntry
	cursor := ""
	for pages := 0; ; pages++ {
		page, next, err := l.PlayerGames(ctxFor(t), me, false, pageSize, cursor)
		if err != nil {
			t.Fatalf("page %d: %v", pages, err)
		}
		got = append(got, page...)
		if next == "" {
			break
		}
		if pages > 100 {
			t.Fatal("more than 100 pages")
		}
		cursor = next
		moveAll()
	}
	wantEntries := make([]service.IndexEntry, len(want))
	for i, rec := range want {
		wantEntries[i] = playerEntryOf(rec)
	}
	if d := entriesDiff(got, wantEntries); d != "" {
		t.Fatalf("paged by %d with every game moved between pages (%d times): %s", pageSize, moves, d)
	}
	for _, rec := range recs {
		mustGet(t, s, rec)
		got, err := s.Get(ctxFor(t), rec.GameID)
		if err != nil {
			t.Fatal(err)
		}
		if d := indexDiff(got.Index, storedIndex(rec.Index)); d != "" {
			t.Fatalf("Get(%q).Index after %d moves: %s", rec.GameID, moves, d)
		}
	}
	expectPlayerGames(t, l, me, false, want...)

	// The games end, the oldest first, each written with ListedAt its
	// write's time; then the first to end gets its rematch link.
	var ended []service.GameRecord
	for i := range recs {
		next := recs[i]
		next.Version++
		next.Index.Finished = true
		next.Index.UpdatedAt = indexEpoch.Add(2*time.Hour + time.Duration(i)*time.Second)
		next.Index.ListedAt = next.Index.UpdatedAt
		mustUpdate(t, s, next, recs[i].Version)
		recs[i] = next
		ended = append([]service.GameRecord{next}, ended...) // newest first
	}
	expectPlayerGames(t, l, me, true, ended...)
	expectPlayerGames(t, l, me, false)
	linked := recs[0]
	linked.Version++
	linked.Index.UpdatedAt = indexEpoch.Add(3 * time.Hour)
	linked.Index.ListedAt = linked.Index.UpdatedAt
	linked.State = []byte("state of " + linked.GameID + " with its rematch link")
	mustUpdate(t, s, linked, recs[0].Version)
	recs[0] = linked
	ended = append([]service.GameRecord{linked}, ended[:len(ended)-1]...)
	expectPlayerGames(t, l, me, true, ended...)
	finished, _, err := listAll(t, 7, func(limit int, cursor string) ([]service.IndexEntry, string, error) {
		return l.PlayerGames(ctxFor(t), me, true, limit, cursor)
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range finished {
		if i > 0 && e.SortedAt.After(finished[i-1].SortedAt) {
			t.Errorf("finished entry %d (%s) at %v after entry %d at %v", i, e.GameID, e.SortedAt, i-1, finished[i-1].SortedAt)
		}
		got, err := s.Get(ctxFor(t), e.GameID)
		if err != nil {
			t.Fatal(err)
		}
		if !e.SortedAt.Equal(got.Index.UpdatedAt) {
			t.Errorf("finished entry %s sorted at %v; want its last write %v", e.GameID, e.SortedAt, got.Index.UpdatedAt)
		}
	}
}

func testLobbyOrder(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	s, l := newStore(t)
	room, otherRoom := "room-"+newID(), "room-"+newID()
	host := newPlayerID("host")
	var listed []service.GameRecord
	base := newID()
	for i := range 17 {
		// Three games share each CreatedAt; ids run against creation order.
		id := fmt.Sprintf("%s-%02d", base, 50-i)
		created := indexEpoch.Add(time.Duration(i/3) * time.Millisecond)
		rec := indexed(id, host, "", room, false, created, indexEpoch.Add(time.Hour-time.Duration(i)*time.Second))
		mustCreate(t, s, rec)
		listed = append(listed, rec)
	}
	mustCreate(t, s, indexed(newID(), host, "", otherRoom, false, indexEpoch, indexEpoch))
	mustCreate(t, s, indexed(newID(), host, "", "", false, indexEpoch, indexEpoch)) // private: no lobby

	want := slices.Clone(listed)
	slices.SortFunc(want, func(a, b service.GameRecord) int {
		if c := a.Index.CreatedAt.Compare(b.Index.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.GameID, b.GameID)
	})
	expectLobby(t, l, room, want...)
	wantEntries := make([]service.IndexEntry, len(want))
	for i, rec := range want {
		wantEntries[i] = lobbyEntryOf(rec)
	}
	for _, limit := range []int{1, 4, 16, 17, 18} {
		got, pages, err := listAll(t, limit, func(limit int, cursor string) ([]service.IndexEntry, string, error) {
			return l.Lobby(ctxFor(t), room, limit, cursor)
		})
		if err != nil {
			t.Fatalf("Lobby(limit %d): %v", limit, err)
		}
		if d := entriesDiff(got, wantEntries); d != "" {
			t.Fatalf("Lobby paged by %d: %s", limit, d)
		}
		if wantPages := (len(want) + limit - 1) / limit; pages != wantPages {
			t.Errorf("Lobby paged by %d took %d pages; want %d", limit, pages, wantPages)
		}
	}
	// The oldest game is joined: it leaves the lobby, the second page
	// still follows the first.
	first, next, err := l.Lobby(ctxFor(t), room, 4, "")
	if err != nil || len(first) != 4 || next == "" {
		t.Fatalf("Lobby(limit 4) = %d entries, next %q, %v", len(first), next, err)
	}
	joined := want[0]
	joined.Version = 2
	joined.Index.LobbyRoom = ""
	mustUpdate(t, s, joined, 1)
	expectLobby(t, l, room, want[1:]...)
	rest, _, err := listAll(t, 4, func(limit int, cursor string) ([]service.IndexEntry, string, error) {
		if cursor == "" {
			cursor = next
		}
		return l.Lobby(ctxFor(t), room, limit, cursor)
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := entriesDiff(rest, wantEntries[4:]); d != "" {
		t.Fatalf("Lobby after the first page's cursor, once its first game left: %s", d)
	}
	expectLobby(t, l, "room-never-used-"+newID())
}

func testBadCursor(t *testing.T, newStore func(t *testing.T) (service.Store, service.GameLister)) {
	s, l := newStore(t)
	me := newPlayerID("c")
	room := "room-" + newID()
	for i := range 3 {
		mustCreate(t, s, indexed(newID(), me, "", room, false, indexEpoch.Add(time.Duration(i)*time.Second), indexEpoch.Add(time.Duration(i)*time.Second)))
	}
	var playerCursor, lobbyCursor string
	eventually(t, "a cursor of each list", func() string {
		_, pc, err := l.PlayerGames(ctxFor(t), me, false, 1, "")
		if err != nil || pc == "" {
			return fmt.Sprintf("PlayerGames gave cursor %q, %v", pc, err)
		}
		_, lc, err := l.Lobby(ctxFor(t), room, 1, "")
		if err != nil || lc == "" {
			return fmt.Sprintf("Lobby gave cursor %q, %v", lc, err)
		}
		playerCursor, lobbyCursor = pc, lc
		return ""
	})
	b64 := base64.RawURLEncoding.EncodeToString
	bad := []string{
		"not a cursor!", "%%%", "====", "cDAw+/==", b64([]byte("x")), b64([]byte("p")), b64([]byte("p123#g")),
		b64([]byte("p000000000000a#g")), b64([]byte("p0000000000000g")), b64([]byte("p0000000000000#")),
		b64([]byte("p0000000000000#\xff")),
	}
	for _, c := range append(bad, lobbyCursor) {
		if _, _, err := l.PlayerGames(ctxFor(t), me, false, 10, c); !errors.Is(err, service.ErrBadCursor) {
			t.Errorf("PlayerGames(cursor %q) = %v; want ErrBadCursor", c, err)
		}
	}
	for _, c := range append(bad, playerCursor) {
		if _, _, err := l.Lobby(ctxFor(t), room, 10, c); !errors.Is(err, service.ErrBadCursor) {
			t.Errorf("Lobby(cursor %q) = %v; want ErrBadCursor", c, err)
		}
	}
	for _, limit := range []int{0, -1, 101} {
		if _, _, err := l.PlayerGames(ctxFor(t), me, false, limit, ""); err == nil {
			t.Errorf("PlayerGames(limit %d) = nil error; want an error", limit)
		}
		if _, _, err := l.Lobby(ctxFor(t), room, limit, ""); err == nil {
			t.Errorf("Lobby(limit %d) = nil error; want an error", limit)
		}
	}
	if _, _, err := l.PlayerGames(ctxFor(t), "", false, 10, ""); err == nil {
		t.Error(`PlayerGames("") = nil error; want an error`)
	}
	if _, _, err := l.Lobby(ctxFor(t), "", 10, ""); err == nil {
		t.Error(`Lobby("") = nil error; want an error`)
	}
	if _, _, err := l.PlayerGames(ctxFor(t), me, false, 100, playerCursor); err != nil {
		t.Errorf("PlayerGames with its own cursor = %v; want nil", err)
	}
}
