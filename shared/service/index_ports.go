package service

import (
	"context"
	"errors"
	"time"
)

// The ports of players, the game index and the small shared counters
// (SPEC §12): what the service needs from storage beyond the games
// themselves. The embedded store and DynamoDB implement them with the same
// semantics, held to it by shared/store/storetest.

// GameIndex is what a game record carries for the queries of the game
// index (a player's games, the lobby). The service computes it from the
// game at every write; a store keeps its indexes in step with the record
// atomically (DynamoDB: attributes of the item, indexed by GSIs; the
// embedded store: index keys written in the record's transaction).
type GameIndex struct {
	// Players are the registered players on the white and black seats
	// ("" for an empty, anonymous or AI seat).
	Players [2]string
	// Finished: the game is over (me/games status=finished); otherwise it
	// is active (waiting or playing).
	Finished bool
	// LobbyRoom is the room whose lobby lists the game while it waits for
	// an opponent with an open invite; "" when it is not listed.
	LobbyRoom string
	CreatedAt time.Time
	// UpdatedAt is the time of the write: me/games is newest first by it.
	UpdatedAt time.Time
	// Summary is the service's encoding of the game's summary (opaque to
	// stores, a few hundred bytes), returned by the queries so a page is
	// built without reading each game.
	Summary []byte
}

// IndexEntry is one game in a query of the game index.
type IndexEntry struct {
	GameID    string
	CreatedAt time.Time
	UpdatedAt time.Time
	Summary   []byte
}

// ErrBadCursor is returned for a cursor that no query of this kind gave.
var ErrBadCursor = errors.New("invalid cursor")

// GameLister answers the queries of the game index. Results may trail the
// latest writes by a moment (DynamoDB global secondary indexes are
// eventually consistent), never by more.
type GameLister interface {
	// PlayerGames lists playerID's games (either seat) that are finished
	// or active as asked, newest UpdatedAt first (ties: greater GameID
	// first), at most limit (1-100), after cursor ("" from the top). next
	// is "" on the last page. Paging is complete and without repeats for
	// the games that are not written while it runs, however many games
	// are created meanwhile (they sort before the cursor).
	PlayerGames(ctx context.Context, playerID string, finished bool, limit int, cursor string) (entries []IndexEntry, next string, err error)
	// Lobby lists the games listed in room, oldest CreatedAt first (ties:
	// smaller GameID first), at most limit (1-100), after cursor.
	Lobby(ctx context.Context, room string, limit int, cursor string) (entries []IndexEntry, next string, err error)
}

// PlayerRecord is one registered player.
type PlayerRecord struct {
	ID         string
	Name       string
	Rating     int
	RatedGames int
	CreatedAt  time.Time
	// Version is 1 at creation and +1 on every update (optimistic
	// concurrency, as for games).
	Version int64
	// Applied are the ids of the most recent rated games whose rating
	// change this record includes, oldest first (the service keeps at
	// most the last 64): a change is applied exactly once, however often
	// it is delivered.
	Applied []string
}

// Errors of the players port (besides ErrNotFound, ErrAlreadyExists and
// ErrVersionConflict).
var (
	// ErrSlotTaken: a pairing slot is held by another value.
	ErrSlotTaken = errors.New("slot taken")
)

// Players keeps players, their tokens, link codes, counters and pairing
// slots (the data table on AWS).
type Players interface {
	// CreatePlayer stores a new player (Version 1) with its first token's
	// hash. ErrAlreadyExists if the id or the token hash is taken.
	CreatePlayer(ctx context.Context, p PlayerRecord, tokenHash string) error
	// Player reads a player (strongly consistent); ErrNotFound.
	Player(ctx context.Context, id string) (PlayerRecord, error)
	// PlayerByToken reads the player a token hash belongs to; ErrNotFound.
	PlayerByToken(ctx context.Context, tokenHash string) (PlayerRecord, error)
	// UpdatePlayer replaces the player if the stored Version is still
	// expectedVersion (p.Version is normally expectedVersion+1);
	// ErrVersionConflict otherwise, also when there is no such player.
	UpdatePlayer(ctx context.Context, p PlayerRecord, expectedVersion int64) error
	// AddToken adds another token (hash) for a player; earlier tokens keep
	// working. ErrAlreadyExists if the hash is taken; ErrNotFound if there
	// is no such player.
	AddToken(ctx context.Context, playerID, tokenHash string) error

	// PutLinkCode stores a link code (its hash) for a player until
	// expiresAt. ErrAlreadyExists if the hash is taken by a code that has
	// not expired.
	PutLinkCode(ctx context.Context, codeHash, playerID string, expiresAt time.Time) error
	// ClaimLinkCode uses a link code: it returns the code's player and
	// deletes the code, if the code exists and has not expired at now;
	// ErrNotFound otherwise (unknown, used, expired). Of concurrent claims
	// of one code exactly one succeeds.
	ClaimLinkCode(ctx context.Context, codeHash string, now time.Time) (playerID string, err error)

	// Hit counts one event for key in the fixed window of the given length
	// that contains now (windows start at multiples of the length since
	// the Unix epoch) and returns the count in that window including this
	// event, and when the window ends. Counts are exact under concurrency
	// (an atomic add), across processes sharing the store.
	Hit(ctx context.Context, key string, window time.Duration, now time.Time) (count int64, windowEnd time.Time, err error)
	// Count returns the count Hit would have reached for key in the window
	// containing now, without counting anything (0 for a window with no
	// hits yet), and when the window ends.
	Count(ctx context.Context, key string, window time.Duration, now time.Time) (count int64, windowEnd time.Time, err error)

	// ClaimSlot makes value the holder of the slot key, if the slot is
	// free or its holder's claim is older than ttl at now; otherwise it
	// returns the current holder and ErrSlotTaken. Of concurrent claims of
	// a free slot exactly one succeeds.
	ClaimSlot(ctx context.Context, key, value string, ttl time.Duration, now time.Time) (holder string, err error)
	// ReleaseSlot frees the slot if value still holds it (no error if not).
	ReleaseSlot(ctx context.Context, key, value string) error
}
