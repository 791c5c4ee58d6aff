package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// A player's games for a list screen (SPEC §16.2): the index gives the
// page (which games, in the order of their ListedAt: when they started or,
// finished, ended); everything that changes with a move (whose turn, the
// position, the last move, the clocks, the deadline, the time of the last
// write) comes from the games themselves, read in one batch, so a move
// rewrites no index row (issue 22). docs/storage.md has the cost of both.

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

// MyGames lists the caller's games, newest first: active ones by when they
// started (created, or their second seat taken), finished ones by when
// they ended (GameIndex.ListedAt).
func (s *Service) MyGames(ctx context.Context, c Caller, finished bool, limit int, cursor string) (GamePage, error) {
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return GamePage{}, err
	}
	if s.cfg.Lister == nil {
		return GamePage{}, ErrNoPlayers
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
	now := s.now()
	page := GamePage{PlayerID: p.ID, Next: next, Items: make([]MyGame, 0, len(entries))}
	for _, e := range entries {
		rec, ok := recs[e.GameID]
		if !ok {
			continue // expired (TTL) since the index was read
		}
		st, err := s.decode(rec)
		if err != nil {
			return GamePage{}, err
		}
		color, ok := boundSeat(st, p.ID)
		if !ok {
			continue // no longer the player's (the index trails by a moment)
		}
		view, err := game.ViewOf(st, &color, now)
		if err != nil {
			return GamePage{}, err
		}
		page.Items = append(page.Items, MyGame{State: st, MyColor: color, View: view, UpdatedAt: rec.Index.UpdatedAt})
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
