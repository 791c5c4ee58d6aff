package game

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"chessapi/shared/chess"
)

// StateVersion is the schema version of State (seeds/000 §5.4). Version 1
// states (no variant option, no chess960Index) are migrated by Decode.
const StateVersion = 2

// RequestLogSize is how many applied request ids each seat remembers for
// idempotent retries (SPEC §5 asks for at least 32).
const RequestLogSize = 32

// Phase is the lifecycle stage of a game; it only moves forward.
type Phase string

const (
	PhaseWaiting  Phase = "waiting"  // one seat taken, waiting for an opponent
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
)

// Claim is a draw the side to move may claim in drawMode fide.
type Claim string

const (
	ClaimThreefold Claim = "threefold"
	ClaimFiftyMove Claim = "fiftyMove"
)

// State is one game: the ChessState of seeds/000 §8.1 plus what the service
// needs (identity, version, seats, presence, the request-id log, rematch
// links). All times are Unix milliseconds. A State is a plain value: Apply
// and the other transitions return a new State and never modify their input.
//
// FEN, Repetition, Claimable and each move's SAN, FENAfter and Captured are
// derived from StartFEN and the moves' UCI; Encode leaves them out and
// Decode rebuilds them by replaying the game.
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
	// Repetition counts each position key (the first four FEN fields, the
	// en-passant square only when a capture is legal) seen so far.
	Repetition map[string]int `json:"repetition"`
	Phase      Phase          `json:"phase"`
	Clock      Clock          `json:"clock"`
	Undo       UndoState      `json:"undo"`
	Draw       DrawState      `json:"draw"`
	Claimable  *Claim         `json:"claimable"`
	Result     *Result        `json:"result"`
	RNG        RNG            `json:"rng"`
	// Requests is each seat's log of recently applied request ids, oldest
	// first, at most RequestLogSize entries.
	Requests PerColor[[]AppliedRequest] `json:"requests"`
	Rematch  Rematch                    `json:"rematch"`
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
	AI        string `json:"ai,omitempty"`
	Connected bool   `json:"connected"`
	// DisconnectedAt is when the seat was marked disconnected (0 when
	// connected).
	DisconnectedAt int64 `json:"disconnectedAt,omitempty"`
}

func (s Seat) taken() bool { return s.PlayerID != "" }

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
	SummaryKo string       `json:"summaryKo"`
	EndedAt   int64        `json:"endedAt"`
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
	// Events is the JSON array of the events the action produced, kept as
	// JSON so a retry can answer with it as is (and decoding stays cheap).
	Events json.RawMessage `json:"events"`
}

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

// Position returns the current position. It is rebuilt from the last move,
// so details a FEN cannot hold (why an en-passant capture is refused) are
// kept.
func (s *State) Position() (*chess.Position, error) {
	v := s.Options.Variant.chess()
	n := len(s.Moves)
	if n == 0 {
		return chess.ParseFENVariant(s.StartFEN, v)
	}
	before := s.StartFEN
	if n > 1 {
		before = s.Moves[n-2].FENAfter
	}
	p, err := chess.ParseFENVariant(before, v)
	if err != nil {
		return nil, fmt.Errorf("game: position before ply %d: %w", n, err)
	}
	m, err := p.ParseUCI(s.Moves[n-1].UCI)
	if err != nil {
		return nil, fmt.Errorf("game: replay ply %d: %w", n, err)
	}
	p.Play(m)
	return p, nil
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
	c.Repetition = maps.Clone(s.Repetition)
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
		c.Requests[i] = slices.Clone(s.Requests[i])
		for j := range c.Requests[i] {
			c.Requests[i][j].Events = bytes.Clone(s.Requests[i][j].Events)
		}
	}
	return &c
}

func colorPtr(c chess.Color) *chess.Color { return &c }
