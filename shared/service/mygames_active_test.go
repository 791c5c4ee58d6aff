package service_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"chessapi/shared/service"
)

// batchCounter is a store whose batch reads are counted.
type batchCounter struct {
	service.Store
	mu      sync.Mutex
	batches []int
}

func (b *batchCounter) GetGames(ctx context.Context, ids []string) (map[string]service.GameRecord, error) {
	b.mu.Lock()
	b.batches = append(b.batches, len(ids))
	b.mu.Unlock()
	return b.Store.(service.GameBatchReader).GetGames(ctx, ids)
}

func (b *batchCounter) take() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.batches
	b.batches = nil
	return out
}

// TestMyGamesActiveReadsEveryGameInBatches: a page of a player's active
// games reads all of them (the order is their last writes, which the index
// does not hold), past one index query round and one batch (230 games: 3
// rounds of 100 entries, batches of at most 100), whatever the page size;
// paged through, the list is newest updatedAt first, every game once.
func TestMyGamesActiveReadsEveryGameInBatches(t *testing.T) {
	const games = 230
	counter := &batchCounter{}
	f := newPlayerFixture(t, func(t testing.TB) (service.Store, service.Players, service.GameLister) {
		s, p, l := backends(t)["embedded"](t)
		counter.Store = s
		return counter, p, l
	})
	ctx := t.Context()
	me, them := f.player(t, "Me"), f.player(t, "Them")
	hostWhite := options(t, `{"colorAssignment":"hostWhite"}`)
	var ids []string // oldest write first
	for range games {
		g, err := f.svc.Create(ctx, service.CreateInput{Options: hostWhite, Caller: me})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, g.GameID)
		f.clock.Advance(time.Second)
	}
	// The oldest is joined: its last write is now the newest.
	if _, err := f.svc.Join(ctx, ids[0], service.JoinInput{Caller: them}); err != nil {
		t.Fatal(err)
	}
	ids = append(ids[1:], ids[0])
	want := slices.Clone(ids)
	slices.Reverse(want)
	counter.take()

	var got []string
	var last time.Time
	cursor := ""
	for pages := 0; ; pages++ {
		page, err := f.svc.MyGames(ctx, me, false, 40, cursor)
		if err != nil {
			t.Fatal(err)
		}
		read := 0
		for _, n := range counter.take() {
			if n > 100 {
				t.Errorf("a batch of %d games; want at most 100", n)
			}
			read += n
		}
		if read != games {
			t.Errorf("page %d read %d games; want all %d active ones", pages, read, games)
		}
		for _, it := range page.Items {
			if !last.IsZero() && it.UpdatedAt.After(last) {
				t.Errorf("game %s updatedAt %v after %v", it.State.GameID, it.UpdatedAt, last)
			}
			last = it.UpdatedAt
			got = append(got, it.State.GameID)
		}
		if page.Next == "" {
			break
		}
		if pages > games/40+1 {
			t.Fatal("too many pages")
		}
		cursor = page.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged %d games; want the %d newest write first, each once (first %q, want %q)", len(got), len(want), got[:3], want[:3])
	}
}
