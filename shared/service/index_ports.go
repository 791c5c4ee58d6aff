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
	// UpdatedAt is the time of the write.
	UpdatedAt time.Time
	// ListedAt orders the game in its players' index rows (PlayerGames,
	// newest first): while the game is active, the time it was created or,
	// once it started (its second seat taken: a join, an accepted invite,
	// a reserved rematch taken) or its players changed, the time of that
	// write, so a move, a presence change or a timer's write leaves the
	// stores' index rows as they were (issue 22); once finished, the time
	// of each write (UpdatedAt), so the finished list is newest UpdatedAt
	// first. The active list is ordered by UpdatedAt from the games
	// themselves (MyGames), not by this.
	ListedAt time.Time
	// Summary is the service's encoding of the game's summary (opaque to
	// stores, a few hundred bytes), returned by the queries so a page is
	// built without reading each game.
	Summary []byte
}

// IndexEntry is one game in a query of the game index.
type IndexEntry struct {
	GameID    string
	CreatedAt time.Time
	// SortedAt is the time the list orders the entry by: the index's
	// ListedAt in PlayerGames, its CreatedAt in Lobby.
	SortedAt time.Time
	Summary  []byte
}

// ErrBadCursor is returned for a cursor that no query of this kind gave.
var ErrBadCursor = errors.New("invalid cursor")

// GameLister answers the queries of the game index. Results may trail the
// latest writes by a moment (DynamoDB global secondary indexes are
// eventually consistent), never by more.
type GameLister interface {
	// PlayerGames lists playerID's games (either seat) that are finished
	// or active as asked, newest ListedAt first (ties: greater GameID
	// first), at most limit (1-100), after cursor ("" from the top). next
	// is "" on the last page. Paging is complete and without repeats for
	// the games whose ListedAt does not change while it runs (moves leave
	// it alone), however many games are created meanwhile (they sort
	// before the cursor).
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
	// RatingHistory is the chain of the most recent rating applications,
	// in the order they were applied (the service keeps the last 64):
	// each entry's Before is the previous entry's After.
	RatingHistory []RatingEntry
	// RecoveryHash is the hash of the player's recovery code ("" for a
	// player created before recovery codes, until one is issued).
	RecoveryHash string
}

// Errors of the players port (besides ErrNotFound, ErrAlreadyExists,
// ErrVersionConflict and *DeletedError).
var (
	// ErrSlotTaken: a pairing slot is held by another value.
	ErrSlotTaken = errors.New("slot taken")
)

// Players keeps players, their sessions (one per token), blocks, link
// codes, counters and pairing slots (the data table on AWS).
type Players interface {
	// CreatePlayer stores a new player (Version 1) with its first
	// session. ErrAlreadyExists if the id, the session id or the token
	// hash is taken.
	CreatePlayer(ctx context.Context, p PlayerRecord, first Session) error
	// Player reads a player (strongly consistent); ErrNotFound.
	Player(ctx context.Context, id string) (PlayerRecord, error)
	// PlayerByToken reads the player a token hash belongs to and the
	// token's session: ErrNotFound for a hash nobody holds (never issued,
	// or its session revoked), a *DeletedError for a token of a deleted
	// player while its tombstone is kept (EndSessions). A token issued before
	// sessions existed comes with a Session whose ID is "" (AdoptToken
	// gives it one).
	PlayerByToken(ctx context.Context, tokenHash string) (PlayerRecord, Session, error)
	// UpdatePlayer replaces the player if the stored Version is still
	// expectedVersion (p.Version is normally expectedVersion+1);
	// ErrVersionConflict otherwise, also when there is no such player.
	UpdatePlayer(ctx context.Context, p PlayerRecord, expectedVersion int64) error

	// AddSession adds another session (a new token) for s.PlayerID;
	// earlier ones keep working. ErrAlreadyExists if the token hash or the
	// session id is taken; ErrNotFound if there is no such player.
	AddSession(ctx context.Context, s Session) error
	// AdoptToken makes s the session of a token issued before sessions
	// existed (s.TokenHash, held by s.PlayerID without a session). It is
	// idempotent: adopting the same session again succeeds; a token that
	// has a session already keeps it (the stored one wins: s is then
	// returned as stored). ErrNotFound if the token is gone.
	AdoptToken(ctx context.Context, s Session) (Session, error)
	// Sessions lists a player's sessions, oldest CreatedAt first (ties:
	// smaller ID first).
	Sessions(ctx context.Context, playerID string) ([]Session, error)
	// TouchSession moves the LastUsedAt of session s (its ID, PlayerID
	// and TokenHash, as PlayerByToken gave it) to at, if at is later;
	// ErrNotFound if there is no such session.
	TouchSession(ctx context.Context, s Session, at time.Time) error
	// LabelSession sets the label of session s (as for TouchSession);
	// ErrNotFound if there is no such session.
	LabelSession(ctx context.Context, s Session, label string) error
	// DeleteSession revokes a session: its token stops resolving at once
	// (PlayerByToken: ErrNotFound). It returns the session as it was;
	// ErrNotFound if there is no such session.
	DeleteSession(ctx context.Context, playerID, sessionID string) (Session, error)
	// EndSessions is the first step of a player's deletion: every session
	// of the player ends, and each token becomes a tombstone until until
	// (PlayerByToken: a *DeletedError, so a retried deletion with the same
	// token is recognised) kept at least until until, then removed (the
	// data table's TTL; the embedded store's sweeper). It returns the
	// sessions that ended (none when it already ran). The player record
	// itself is left to DeletePlayer.
	EndSessions(ctx context.Context, playerID string, until time.Time) ([]Session, error)
	// DeletePlayer is the last step of a player's deletion: the player
	// record, its blocks (both ways) and its link codes go (where the
	// store cannot find a player's link codes, they stay until their TTL
	// and no longer work: the player is gone). Deleting a player that is
	// not there succeeds (a retried deletion).
	DeletePlayer(ctx context.Context, playerID string) error

	// Block records that playerID blocks blockedID (at); blocking again
	// keeps the first time. ErrNotFound if either player does not exist.
	Block(ctx context.Context, playerID, blockedID string, at time.Time) error
	// Unblock removes a block (no error when there is none).
	Unblock(ctx context.Context, playerID, blockedID string) error
	// Blocks lists the players playerID blocks, oldest first (ties:
	// smaller id first).
	Blocks(ctx context.Context, playerID string) ([]Block, error)
	// Blocked reports whether either of a and b blocks the other.
	Blocked(ctx context.Context, a, b string) (bool, error)

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
