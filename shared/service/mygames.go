package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// A player's games for a list screen (SPEC §15, §16.2), newest updatedAt
// (the game's last write) first. Everything that changes with a move
// (whose turn, the position, the last move, the clocks, the deadline, the
// time of the last write) comes from the games themselves, read in
// batches, so a move rewrites no index row (issue 22):
//
//   - finished games are paged by their index rows, whose sort time is the
//     game's last write (a finished game's ListedAt is its UpdatedAt), and
//     the page's games read in one batch;
//   - active games are ordered by the games' own UpdatedAt, which no index
//     row holds: a page reads every active index entry of the player (ids
//     only), then their games in chunks of 100, keeping of each chunk just
//     the games the page may show. Its reads grow with the player's active
//     games, which nothing bounds; its memory with their ids and the page.
//
// docs/storage.md has the cost of both.

// GameBatchReader reads several games in one request (DynamoDB
// BatchGetItem, one read transaction of the embedded store). A store
// without it is read one game at a time.
type GameBatchReader interface {
	// GetGames returns the stored records of the ids that exist (missing
	// ones are left out). They may trail the latest writes by a moment,
	// as the game index does (GameLister).
	GetGames(ctx context.Context, ids []string) (map[string]GameRecord, error)
}

// MyGame is one of a player's games as their list shows it.
type MyGame struct {
	// State is the game as stored now, and MyColor the player's seat in
	// it; View is the player's view of it (position, last move, clock,
	// deadline).
	State   *game.State
	MyColor chess.Color
	View    *game.View
	// UpdatedAt is the game's last write (its record's Index.UpdatedAt).
	UpdatedAt time.Time
}

// IsMyTurn reports whether the game is being played and waits for the
// player's move.
func (g MyGame) IsMyTurn() bool {
	return g.State.Phase == game.PhasePlaying && g.State.Turn() == g.MyColor
}

// Rated reports whether the game is a rated one (a rated room).
func (g MyGame) Rated() bool { return g.State.Options.Room.Rated() }

// MyGames lists the caller's games, newest UpdatedAt first (ties: greater
// game id first), at most limit (1-100), after cursor ("" from the top).
func (s *Service) MyGames(ctx context.Context, c Caller, finished bool, limit int, cursor string) (GamePage, error) {
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return GamePage{}, err
	}
	if s.cfg.Lister == nil {
		return GamePage{}, ErrNoPlayers
	}
	if !finished {
		return s.myActiveGames(ctx, p.ID, limit, cursor)
	}
	entries, next, err := s.cfg.Lister.PlayerGames(ctx, p.ID, finished, limit, cursor)
	if errors.Is(err, ErrBadCursor) {
		return GamePage{}, game.FieldFormat("cursor", "cursor", nil)
	}
	if err != nil {
		return GamePage{}, err
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.GameID
	}
	recs, err := s.getGames(ctx, ids)
	if err != nil {
		return GamePage{}, err
	}
	page := GamePage{PlayerID: p.ID, Next: next, Items: make([]MyGame, 0, len(entries))}
	for _, id := range ids {
		if rec, ok := recs[id]; ok { // else expired (TTL) since the index was read
			if err := s.appendMyGame(&page, rec); err != nil {
				return GamePage{}, err
			}
		}
	}
	return page, nil
}

// appendMyGame adds rec to page as the page's player sees it, unless the
// game is no longer theirs (the index trails a write by a moment).
func (s *Service) appendMyGame(page *GamePage, rec GameRecord) error {
	st, err := s.decode(rec)
	if err != nil {
		return err
	}
	color, ok := boundSeat(st, page.PlayerID)
	if !ok {
		return nil
	}
	view, err := game.ViewOf(st, &color, s.now())
	if err != nil {
		return err
	}
	page.Items = append(page.Items, MyGame{State: st, MyColor: color, View: view, UpdatedAt: rec.Index.UpdatedAt})
	return nil
}

// activeBatch is how many games a page of the active list reads at a time
// (BatchGetItem's most keys a request).
const activeBatch = 100

// myActiveGames is a page of player's active games, newest UpdatedAt
// first, after cursor (an activeCursor). It lists the player's active
// index entries (every page of them: ids only), reads their games
// activeBatch at a time and keeps, sorted, the limit+1 first after the
// cursor: the page, and whether there is more. A game the index still
// lists as active but that has ended, or that is no longer the player's,
// is left out (the game items are the truth; the index trails them).
func (s *Service) myActiveGames(ctx context.Context, playerID string, limit int, cursor string) (GamePage, error) {
	if limit < 1 || limit > MaxPageSize {
		return GamePage{}, game.FieldRange("limit", 1, MaxPageSize)
	}
	after, hasAfter, err := decodeActiveCursor(cursor)
	if err != nil {
		return GamePage{}, game.FieldFormat("cursor", "cursor", err)
	}
	var ids []string
	for next := ""; ; {
		entries, more, err := s.cfg.Lister.PlayerGames(ctx, playerID, false, MaxPageSize, next)
		if err != nil {
			return GamePage{}, err
		}
		for _, e := range entries {
			ids = append(ids, e.GameID)
		}
		if more == "" {
			break
		}
		next = more
	}
	// best holds the first limit+1 games after the cursor seen so far,
	// newest first.
	best := make([]GameRecord, 0, limit+1)
	for start := 0; start < len(ids); start += activeBatch {
		chunk := ids[start:min(start+activeBatch, len(ids))]
		recs, err := s.getGames(ctx, chunk)
		if err != nil {
			return GamePage{}, err
		}
		for _, id := range chunk {
			rec, ok := recs[id]
			if !ok || rec.Index.Finished || (rec.Index.Players[0] != playerID && rec.Index.Players[1] != playerID) {
				continue
			}
			at := activePosition{rec.Index.UpdatedAt.UnixMilli(), rec.GameID}
			if hasAfter && !after.before(at) {
				continue
			}
			i, found := slices.BinarySearchFunc(best, at, func(r GameRecord, at activePosition) int {
				return activePosition{r.Index.UpdatedAt.UnixMilli(), r.GameID}.compare(at)
			})
			if found || i > limit {
				continue // found: the index listed it twice
			}
			best = slices.Insert(best, i, rec)
			if len(best) > limit+1 {
				best = best[:limit+1]
			}
		}
	}
	page := GamePage{PlayerID: playerID, Items: make([]MyGame, 0, min(len(best), limit))}
	if len(best) > limit {
		last := best[limit-1]
		page.Next = encodeActiveCursor(activePosition{last.Index.UpdatedAt.UnixMilli(), last.GameID})
		best = best[:limit]
	}
	for _, rec := range best {
		if err := s.appendMyGame(&page, rec); err != nil {
			return GamePage{}, err
		}
	}
	return page, nil
}

// boundSeat is the colour of the seat bound to player.
func boundSeat(st *game.State, player string) (chess.Color, bool) {
	for _, c := range []chess.Color{chess.White, chess.Black} {
		if seat := st.Seats[c]; seat.Bound && seat.PlayerID == player {
			return c, true
		}
	}
	return chess.White, false
}

// getGames reads games by id: in one batch when the store can, else one
// by one.
func (s *Service) getGames(ctx context.Context, ids []string) (map[string]GameRecord, error) {
	if len(ids) == 0 {
		return map[string]GameRecord{}, nil
	}
	if b, ok := s.cfg.Store.(GameBatchReader); ok {
		recs, err := b.GetGames(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("read %d games: %w", len(ids), err)
		}
		return recs, nil
	}
	out := make(map[string]GameRecord, len(ids))
	for _, id := range ids {
		rec, err := s.cfg.Store.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[id] = rec
	}
	return out, nil
}
