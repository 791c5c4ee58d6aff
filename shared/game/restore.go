package game

import (
	"errors"
	"fmt"
	"strings"

	"chessapi/shared/chess"
)

// Restore completes a state read back from storage (the stored form is
// package storedgame's). s holds what a stored form keeps: every field but
// FEN, Claimable and the Result's Ranking and MoveCount, and of each move
// its UCI and time, and its SAN when the record has it (Restore trusts a
// stored SAN and computes a missing one). StartFEN may be empty: the
// variant's start position (with Chess960Index) is meant.
//
// Restore gives fields a record predates their defaults, replays the moves
// from the start position, checking each for legality, fills in
// everything derived (FEN, each move's colour, capture and FEN after it,
// the live position and its repetition history, Claimable, the Result's
// ranking and move count) and checks that the whole is a consistent game,
// so that no later step can fail on it. It completes s in place: call it on
// a state nobody else holds yet (a decoder's own). Anything that is not a
// consistent game is a *RestoreError.
func Restore(s *State) error {
	s.Options.fillDefaults()
	if s.Invite.Mode == "" {
		s.Invite.Mode = InviteOpen
	}
	if err := s.Options.validate(); err != nil {
		return &RestoreError{Reason: "options", Err: err}
	}
	if s.StartFEN == "" {
		fen, err := variantStartFEN(s.Options.Variant, s.Chess960Index)
		if err != nil {
			return &RestoreError{Reason: "start position", Err: err}
		}
		s.StartFEN = fen
	}
	pos, err := chess.ParseFENVariant(s.StartFEN, s.Options.Variant.chess())
	if err != nil {
		return &RestoreError{Reason: "start position", Err: err}
	}
	if pos.Turn() != chess.White {
		return &RestoreError{Reason: "start position has black to move"}
	}
	if s.Moves == nil {
		s.Moves = make([]MoveRecord, 0, 1) // as New makes it: never null in a view
	}
	if err := s.replay(pos); err != nil {
		return err
	}
	if err := s.checkConsistent(pos); err != nil {
		return &RestoreError{Reason: "inconsistent state", Err: err}
	}
	if s.Result != nil {
		rated := s.Result.RatingChange
		s.Result = s.makeResult(s.Result.Winner, s.Result.Reason, s.Result.EndedAt)
		s.Result.RatingChange = rated
	}
	s.updateClaimable()
	return nil
}

// CustomStart reports whether the game starts from a position other than
// its variant's start (a migrated game set up from its own FEN): only then
// does a stored form need to keep StartFEN.
func (s *State) CustomStart() bool {
	derived, err := variantStartFEN(s.Options.Variant, s.Chess960Index)
	return err != nil || derived != s.StartFEN
}

// replay plays the moves from pos (the start position), leaving pos at the
// current position, and sets each move's derived fields, the live position,
// the hashes and FEN.
func (s *State) replay(pos *chess.Position) error {
	n := len(s.Moves)
	s.hashes = make([]uint64, 1, n+2)
	s.hashes[0] = pos.Hash()
	fens := newFENTexts(n)
	for i := range s.Moves {
		rec := &s.Moves[i]
		m, err := pos.DecodeStoredUCI(rec.UCI)
		if err != nil {
			return &RestoreError{Reason: fmt.Sprintf("move %d %q", i+1, rec.UCI), Err: err}
		}
		if m.IsCastling() || (len(rec.UCI) == 5 && m.Kind() != chess.KindPromotion) {
			rec.UCI = pos.UCI(m) // the canonical form of an accepted spelling
		}
		rec.Color = pos.Turn()
		rec.Captured = chess.NoPieceType
		switch {
		case m.IsEnPassant():
			rec.Captured = chess.Pawn
		case !m.IsCastling():
			rec.Captured = pos.PieceAt(m.To()).Type()
		}
		if rec.SAN == "" {
			rec.SAN = pos.SAN(m)
		}
		pos.Play(m)
		fens.add(pos, &rec.FENAfter)
		s.hashes = append(s.hashes, pos.Hash())
	}
	fens.flush()
	s.pos = *pos
	s.FEN = s.StartFEN
	if n > 0 {
		s.FEN = s.Moves[n-1].FENAfter
	}
	return nil
}

// fenTexts makes the FENs of a replay, one per move, as substrings of one
// strings.Builder: a builder only ever appends (growing moves on to a new
// array and leaves the old one as it is), so every substring stays valid,
// and the whole game costs one allocation instead of one per move. The
// FENs are written into a scratch buffer and copied into the builder a
// chunk at a time, so each costs one append, not an append and a copy.
type fenTexts struct {
	all     strings.Builder
	scratch []byte
	ends    [fenChunk]int32
	dst     [fenChunk]*string
	count   int
}

// fenChunk is how many FENs go into the builder at once.
const fenChunk = 32

// maxFENLen is room for one FEN: a game's FENs are 40 to 75 bytes, most
// under 70 (the builder grows in the rare case it must).
const maxFENLen = 72

func newFENTexts(moves int) *fenTexts {
	f := &fenTexts{scratch: make([]byte, 0, fenChunk*maxFENLen)}
	f.all.Grow(moves * maxFENLen)
	return f
}

// add appends the FEN of pos; *dst is set to it at the next flush.
func (f *fenTexts) add(pos *chess.Position, dst *string) {
	f.scratch = pos.AppendFEN(f.scratch)
	f.ends[f.count], f.dst[f.count] = int32(len(f.scratch)), dst
	if f.count++; f.count == fenChunk {
		f.flush()
	}
}

// flush copies the chunk's FENs into the builder and sets their strings.
func (f *fenTexts) flush() {
	start := f.all.Len()
	f.all.Write(f.scratch)
	all := f.all.String()
	prev := int32(0)
	for i := range f.count {
		*f.dst[i] = all[start+int(prev) : start+int(f.ends[i])]
		prev = f.ends[i]
	}
	f.scratch, f.count = f.scratch[:0], 0
}

// variantStartFEN returns the start position of a game of variant v.
func variantStartFEN(v Variant, index *int) (string, error) {
	if v != VariantChess960 {
		if index != nil {
			return "", errors.New("chess960Index set in a standard game")
		}
		return chess.StartFEN, nil
	}
	if index == nil {
		return "", errors.New("chess960 game without chess960Index")
	}
	return chess.Chess960StartFEN(*index)
}

func (s *State) checkConsistent(pos *chess.Position) error {
	switch m := s.Invite.Mode; {
	case m != InviteOpen && m != InvitePrivate && m != InviteReserved:
		return fmt.Errorf("unknown invite mode %q", m)
	case m == InvitePrivate && s.Invite.CodeHash == "":
		return errors.New("private invite without a code")
	}
	n := len(s.Moves)
	switch s.Phase {
	case PhaseWaiting:
		if n > 0 || s.Seats[chess.White].taken() == s.Seats[chess.Black].taken() {
			return errors.New("waiting game must have one seat and no moves")
		}
	case PhasePlaying:
		if !s.Seats[chess.White].taken() || !s.Seats[chess.Black].taken() {
			return errors.New("playing game with a free seat")
		}
		if pos.CountMoves() == 0 || s.insufficientMaterial() {
			return fmt.Errorf("playing game in a %s position", pos.Status())
		}
	case PhaseReady:
		if n > 0 || !s.Seats[chess.White].taken() || !s.Seats[chess.Black].taken() {
			return errors.New("game in its ready step must have both seats and no moves")
		}
	case PhaseFinished:
	default:
		return fmt.Errorf("unknown phase %q", s.Phase)
	}
	if (s.Phase == PhaseFinished) != (s.Result != nil) {
		return errors.New("result must be set exactly when finished")
	}
	if s.Result != nil {
		if !reasons[s.Result.Reason] {
			return fmt.Errorf("unknown result reason %q", s.Result.Reason)
		}
		if w := s.Result.Winner; w != nil && *w > chess.Black {
			return errors.New("invalid winner")
		}
	}
	for c := range s.Clock.RemainingMs {
		if s.Clock.RemainingMs[c] < 0 || s.Clock.ExtensionsUsed[c] < 0 || s.Clock.ExtensionsUsed[c] > PerMoveExtensions ||
			s.Undo.UsedBy[c] < 0 || s.Draw.LastOfferPly[c] < -1 {
			return errors.New("negative clock or counter")
		}
	}
	if p := s.Undo.Pending; p != nil && (p.Plies < 1 || p.Plies > 2 || p.Plies > n || p.By > chess.Black) {
		return errors.New("invalid pending undo")
	}
	if p := s.Draw.PendingBy; p != nil && *p > chess.Black {
		return errors.New("invalid pending draw offer")
	}
	if s.Phase != PhasePlaying && (s.Undo.Pending != nil || s.Draw.PendingBy != nil) {
		return errors.New("pending request outside play")
	}
	if s.Options.Rules != RulesYeoul && (s.Clock.StartsAt != 0 || s.Ready != PerColor[bool]{}) {
		return errors.New("ready step in a game of the standard rules")
	}
	if s.Clock.StartsAt < 0 || s.Clock.StartsAt > 0 && !(s.Ready[chess.White] && s.Ready[chess.Black]) {
		return errors.New("start time without both seats ready")
	}
	for i, r := range s.Clock.Resets {
		if s.Options.TimeControl.Kind != TimeFischer || r.Ply < 0 || r.Ply > n || i > 0 && r.Ply <= s.Clock.Resets[i-1].Ply ||
			r.RemainingMs[0] < 0 || r.RemainingMs[1] < 0 {
			return errors.New("clock resets do not match the moves")
		}
	}
	for c := range s.Requests {
		if len(s.Requests[c]) > RequestLogSize {
			return errors.New("request log too long")
		}
	}
	for i := 1; i < len(s.Changes); i++ {
		if s.Changes[i].Version != s.Changes[i-1].Version+1 {
			return errors.New("change log versions not consecutive")
		}
	}
	return nil
}
