package game

import (
	"encoding/json"
	"slices"

	"chessapi/shared/chess"
)

// StateVersion is the schema version of State (seeds/000 §5.4). Version 1
// states (no variant option, no chess960Index) are migrated by the stored
// form's reader (shared/game/storedgame).
const StateVersion = 2

// RequestLogSize is how many applied request ids each seat remembers for
// idempotent retries (SPEC §5 asks for at least 32).
const RequestLogSize = 32

// Phase is the lifecycle stage of a game; it only moves forward.
type Phase string

const (
	PhaseWaiting Phase = "waiting" // one seat taken, waiting for an opponent
	// PhaseReady: both seats taken in a game of the yeoul rules, which
	// starts StartDelayMs after both seats are ready (seeds/003).
	PhaseReady    Phase = "ready"
	PhasePlaying  Phase = "playing"  // both seats taken (or a human and an AI)
	PhaseFinished Phase = "finished" // Result is set
)

// Reason is why a game ended (seeds/000 §8.6).
type Reason string

const (
	ReasonCheckmate             Reason = "checkmate"
	ReasonResign                Reason = "resign"
	ReasonTimeLoss              Reason = "timeLoss"
	ReasonStalemate             Reason = "stalemate"
	ReasonInsufficientMaterial  Reason = "insufficientMaterial"
	ReasonThreefold             Reason = "threefold"
	ReasonFivefold              Reason = "fivefold"
	ReasonFiftyMove             Reason = "fiftyMove"
	ReasonSeventyFiveMove       Reason = "seventyFiveMove"
	ReasonDrawAgreed            Reason = "drawAgreed"
	ReasonTimeoutVsInsufficient Reason = "timeoutVsInsufficient"
	ReasonAborted               Reason = "aborted"
	// ReasonExpired: nobody joined a waiting game in time (SPEC §12).
	ReasonExpired Reason = "expired"
)

// Claim is a draw the side to move may claim in drawMode fide.
type Claim string

const (
	ClaimThreefold Claim = "threefold"
	ClaimFiftyMove Claim = "fiftyMove"
)

// State is one game: the ChessState of seeds/000 §8.1 plus what the service
// needs (identity, version, seats, presence, the request-id log, rematch
// links). All times are Unix milliseconds. A State is a plain value: Reduce
// and the other transitions return a new State and never modify their input.
//
// FEN, Claimable, the Result's Ranking and MoveCount, and each move's
// colour, SAN, FENAfter and Captured are derived from StartFEN and the
// moves' UCI; the stored form leaves them out (all but the SAN, which it
// keeps so that a read does not compute it again) and Restore rebuilds them
// by replaying the game.
type State struct {
	StateVersion  int            `json:"stateVersion"`
	GameID        string         `json:"gameId"`
	Version       int64          `json:"version"`
	CreatedAt     int64          `json:"createdAt"`
	Options       Options        `json:"options"`
	Seats         PerColor[Seat] `json:"seats"`
	StartFEN      string         `json:"startFen"`
	Chess960Index *int           `json:"chess960Index"`
	FEN           string         `json:"fen"`
	Moves         []MoveRecord   `json:"moves"`
	Phase         Phase          `json:"phase"`
	Clock         Clock          `json:"clock"`
	Undo          UndoState      `json:"undo"`
	Draw          DrawState      `json:"draw"`
	Claimable     *Claim         `json:"claimable"`
	// Ready records which seats are ready (the ready step of the yeoul
	// rules; an AI seat is ready at once).
	Ready  PerColor[bool] `json:"ready"`
	Result *Result        `json:"result"`
	RNG    RNG            `json:"rng"`
	// Requests is each seat's log of recently applied request ids, oldest
	// first, at most RequestLogSize entries.
	Requests PerColor[[]AppliedRequest] `json:"requests"`
	Rematch  Rematch                    `json:"rematch"`
	// Invite says who may join while the game waits.
	Invite Invite `json:"invite"`
	// Changes is the change log: the most recent committed versions with
	// their events, oldest first (at most ChangeLogSize entries and
	// ChangeLogBytes of events), so a client can catch up on exactly what
	// it missed (SPEC §11).
	Changes []Change `json:"changes"`

	// pos is the live current position and hashes the Zobrist hash of
	// every position of the game, the start first (len(Moves)+1 entries).
	// Both are rebuilt by Restore and New and carried forward by every
	// transition, so a request replays the game once, not once per use.
	// They are not stored.
	pos    chess.Position
	hashes []uint64
}

// Seat is one side's player. An empty PlayerID means the seat is free.
type Seat struct {
	PlayerID string `json:"playerId,omitempty"`
	Name     string `json:"name,omitempty"`
	// TokenHash is the service's hash of the seat token; it is opaque here
	// and never appears in a view.
	TokenHash string `json:"tokenHash,omitempty"`
	// AI is the level of an AI seat ("easy", "normal", "hard", "max"), or ""
	// for a human.
	AI string `json:"ai,omitempty"`
	// Presence (SPEC §16.1). Connected is true while at least one stream
	// connection of the seat is open (an AI seat is always connected), and
	// ConnectedAt is since when. DisconnectedAt is when the seat's last
	// stream connection closed (or its app said it left): the disconnect
	// grace runs from then until the seat is back. A seat that never
	// opened a stream has neither: not connected, and not on the clock.
	// (A human seat stored before ConnectedAt existed has Connected true
	// from its creation and no ConnectedAt: it counts as never streamed.)
	Connected      bool  `json:"connected"`
	ConnectedAt    int64 `json:"connectedAt,omitempty"`
	DisconnectedAt int64 `json:"disconnectedAt,omitempty"`
	// Bound marks a seat taken with a player token: PlayerID is then a
	// registered player's id, authenticated, and the seat counts for that
	// player's games and ratings (SPEC §12). An unbound seat's PlayerID is
	// an anonymous id.
	Bound bool `json:"bound,omitempty"`
	// Rating is a bound seat's rating when it sat down (for the lobby and
	// game lists; the rating itself lives with the player).
	Rating int `json:"rating,omitempty"`
}

func (s Seat) taken() bool { return s.PlayerID != "" }

// Streaming reports whether a stream connection of the seat is open (an AI
// seat always counts as connected).
func (s Seat) Streaming() bool { return s.Connected && (s.ConnectedAt != 0 || s.AI != "") }

// GraceRunning reports whether the seat is on the disconnect clock: a human
// whose stream closed (or who said it left) and who is not back yet.
func (s Seat) GraceRunning() bool { return s.AI == "" && !s.Connected && s.DisconnectedAt != 0 }

// Invite says who may take a waiting game's free seat (SPEC §12).
type Invite struct {
	// Mode is InviteOpen (anyone; listed in the lobby), InvitePrivate
	// (with the code the host got) or InviteReserved (only the other
	// player of the game this is a rematch of).
	Mode InviteMode `json:"mode,omitempty"`
	// CodeHash is the hash of a private game's invite code (the service's
	// hash; opaque here, never in a view).
	CodeHash string `json:"codeHash,omitempty"`
	// PlayerID and TokenHash identify who a reserved seat is for: the
	// registered player (when that seat was bound) or the holder of that
	// seat's token.
	PlayerID  string `json:"playerId,omitempty"`
	TokenHash string `json:"tokenHash,omitempty"`
}

// InviteMode is how a waiting game admits its opponent.
type InviteMode string

const (
	InviteOpen     InviteMode = "open"
	InvitePrivate  InviteMode = "private"
	InviteReserved InviteMode = "reserved"
)

// MoveRecord is one played move (seeds/000 §8.1).
type MoveRecord struct {
	UCI      string      `json:"uci"`
	SAN      string      `json:"san"`
	Color    chess.Color `json:"color"`
	At       int64       `json:"at"`
	FENAfter string      `json:"fenAfter"`
	// Captured is the type of the piece the move took (NoPieceType if none).
	Captured chess.PieceType `json:"-"`
}

// Clock is the game clock of seeds/000 §8.5.
type Clock struct {
	// RemainingMs is each side's main time as of TurnStartedAt (Fischer and
	// per-move; unused with no time control).
	RemainingMs PerColor[int64] `json:"remainingMs"`
	// TurnStartedAt is when the side to move started its turn.
	TurnStartedAt int64 `json:"turnStartedAt"`
	// Started records which sides have made their first move; before it a
	// side's turn is limited only by firstMoveSec.
	Started PerColor[bool] `json:"started"`
	// ExtensionsUsed counts the per-move extensions each side spent.
	ExtensionsUsed PerColor[int] `json:"extensionsUsed"`
	// StartsAt is when a game of the yeoul rules starts (its second ready
	// plus StartDelayMs; 0 until both seats are ready): the phase turns
	// from ready to playing then, and White's first-move limit begins.
	StartsAt int64 `json:"startsAt,omitempty"`
	// Resets are the take-backs of a Fischer game that still stand, by
	// ply: the clock then was not rewound (seeds/000 §8.2), so the moves'
	// times alone no longer tell the clock after each move (the PGN's
	// clock comments); with these they do (ClocksAfterMoves).
	Resets []ClockReset `json:"resets,omitempty"`
}

// ClockReset is the clock as a take-back left it: the moves that remained
// (Ply), when the next turn began (At) and both sides' main time then.
type ClockReset struct {
	Ply         int             `json:"ply"`
	At          int64           `json:"at"`
	RemainingMs PerColor[int64] `json:"remainingMs"`
}

// UndoState tracks take-backs (seeds/000 §8.1).
type UndoState struct {
	UsedBy  PerColor[int] `json:"usedBy"`
	Pending *UndoRequest  `json:"pending"`
}

// UndoRequest is a take-back waiting for the opponent's answer.
type UndoRequest struct {
	By    chess.Color `json:"by"`
	Plies int         `json:"plies"`
}

// DrawState tracks draw offers (seeds/000 §8.1).
type DrawState struct {
	PendingBy *chess.Color `json:"pendingBy"`
	// LastOfferPly is, per side, the ply count when its last offer was
	// declined or withdrawn (-1: never); the side must make three moves of
	// its own after it before offering again.
	LastOfferPly PerColor[int] `json:"lastOfferPly"`
}

// Result is a finished game's outcome (seeds/000 §8.6; the PGN is built on
// demand by PGN and View).
type Result struct {
	// Ranking lists rank 1 for the winner and 2 for the loser, 1 for both
	// players in a draw, and nothing when the game was aborted.
	Ranking   []Rank       `json:"ranking"`
	Winner    *chess.Color `json:"winner"`
	Reason    Reason       `json:"reason"`
	MoveCount int          `json:"moveCount"` // full moves, ⌈plies/2⌉
	EndedAt   int64        `json:"endedAt"`
	// RatingChange is set on a rated game (SPEC §12).
	RatingChange *RatingChange `json:"ratingChange,omitempty"`
}

// Rank is one player's place in a result.
type Rank struct {
	PlayerID string `json:"playerId"`
	Rank     int    `json:"rank"`
}

// AppliedRequest is the stored outcome of an action sent with a request id.
type AppliedRequest struct {
	ID      string `json:"id"`
	Version int64  `json:"version"` // the state version the action produced
	// Hash fingerprints the request (its type and payload) so a request id
	// reused for a different request is told apart from a retry. Empty in
	// entries written before fingerprints existed.
	Hash string `json:"hash,omitempty"`
	// Events is the JSON array of the events the action produced, kept as
	// JSON so a retry can answer with it as is (and decoding stays cheap).
	Events json.RawMessage `json:"events"`
}

// Change is one committed version of a game and what happened in it.
type Change struct {
	Version int64 `json:"version"`
	At      int64 `json:"at"` // Unix ms
	// Events is the JSON array of the version's events, encoded once when
	// the version is made and served as is.
	Events json.RawMessage `json:"events"`
	// Delta is what the version changed in the view (viewdelta.go), made
	// once with the version; empty for a game's first version and for
	// versions stored before deltas existed.
	Delta json.RawMessage `json:"delta,omitempty"`
}

// The change log keeps at least the last ChangeLogSize versions (SPEC §11
// asks for 64) unless their events and deltas exceed ChangeLogBytes, which
// bounds the stored item of a long game whatever its events.
// Of those, the newest ChangeLogDeltas keep their delta (viewdelta.go).
const (
	ChangeLogSize   = 64
	ChangeLogBytes  = 64 << 10
	ChangeLogDeltas = 32
)

// Rematch links a game to the one it is a rematch of and to its rematch.
type Rematch struct {
	Of   string `json:"of,omitempty"`
	Next string `json:"next,omitempty"`
}

// Turn returns the side to move.
func (s *State) Turn() chess.Color {
	// Every game starts with White to move, so the ply count decides.
	return chess.Color(len(s.Moves) & 1)
}

// Ply returns the number of moves played.
func (s *State) Ply() int { return len(s.Moves) }

// SeatOf returns the colour of the seat held by playerID.
func (s *State) SeatOf(playerID string) (chess.Color, bool) {
	for _, c := range []chess.Color{chess.White, chess.Black} {
		if playerID != "" && s.Seats[c].PlayerID == playerID {
			return c, true
		}
	}
	return chess.White, false
}

// AITurn reports whether the game is being played and an AI seat is to
// move, with that seat's level: the service then triggers the AI.
func (s *State) AITurn() (level string, ok bool) {
	seat := s.Seats[s.Turn()]
	if s.Phase != PhasePlaying || seat.AI == "" {
		return "", false
	}
	return seat.AI, true
}

// AppliedRequest returns the stored outcome of request id from the seat,
// if that request is still in the seat's log.
func (s *State) AppliedRequest(by chess.Color, id string) (AppliedRequest, bool) {
	for _, r := range s.Requests[by&1] {
		if r.ID == id && id != "" {
			return r, true
		}
	}
	return AppliedRequest{}, false
}

// Position returns a copy of the current position.
func (s *State) Position() *chess.Position {
	p := s.pos
	return &p
}

// History returns the hashes of the game's earlier positions, oldest first
// (the current position excluded), for an engine to see repetitions. The
// slice is shared: callers must not modify it.
func (s *State) History() []uint64 {
	return s.hashes[: len(s.hashes)-1 : len(s.hashes)-1]
}

// repetitions returns how often the current position has occurred,
// counting itself. Only positions since the last capture or pawn move
// (the half-move clock) can be equal to it.
func (s *State) repetitions() int {
	n := len(s.hashes)
	cur := s.hashes[n-1]
	count := 0
	for i := max(0, n-1-s.pos.HalfmoveClock()); i < n; i++ {
		if s.hashes[i] == cur {
			count++
		}
	}
	return count
}

// ChangesAfter returns the logged changes after version v, oldest first,
// and whether they are complete: false when v is older than the log keeps
// (the caller must then reset to the current state).
func (s *State) ChangesAfter(v int64) ([]Change, bool) {
	if v >= s.Version {
		return nil, true
	}
	if len(s.Changes) == 0 || s.Changes[0].Version > v+1 {
		return nil, false
	}
	i := int(v + 1 - s.Changes[0].Version)
	return s.Changes[i:len(s.Changes):len(s.Changes)], true
}

// LastChange returns the change that made this version: the change log's
// newest entry when it is the state's own version. It is false when the log
// does not hold it (a state migrated from a format without one).
func (s *State) LastChange() (Change, bool) {
	if n := len(s.Changes); n > 0 && s.Changes[n-1].Version == s.Version {
		return s.Changes[n-1], true
	}
	return Change{}, false
}

// clone returns a deep copy: no slice, map or pointer is shared with s.
func (s *State) clone() *State {
	c := *s
	if s.Chess960Index != nil {
		n := *s.Chess960Index
		c.Chess960Index = &n
	}
	// One spare slot: the next move appends without copying again.
	c.Moves = append(make([]MoveRecord, 0, len(s.Moves)+1), s.Moves...)
	c.hashes = append(make([]uint64, 0, len(s.hashes)+1), s.hashes...)
	// Entries are never modified in place, so sharing their bytes is safe;
	// the slice is copied because commit appends to it.
	c.Changes = append(make([]Change, 0, len(s.Changes)+1), s.Changes...)
	if s.Clock.Resets != nil {
		c.Clock.Resets = slices.Clone(s.Clock.Resets) // takeBack truncates and appends
	}
	if s.Undo.Pending != nil {
		p := *s.Undo.Pending
		c.Undo.Pending = &p
	}
	if s.Draw.PendingBy != nil {
		by := *s.Draw.PendingBy
		c.Draw.PendingBy = &by
	}
	if s.Claimable != nil {
		cl := *s.Claimable
		c.Claimable = &cl
	}
	if s.Result != nil {
		r := *s.Result
		r.Ranking = slices.Clone(s.Result.Ranking)
		if s.Result.Winner != nil {
			w := *s.Result.Winner
			r.Winner = &w
		}
		c.Result = &r
	}
	for i := range c.Requests {
		// Entries (and their event bytes) are never modified in place.
		c.Requests[i] = slices.Clone(s.Requests[i])
	}
	return &c
}

func colorPtr(c chess.Color) *chess.Color { return &c }
