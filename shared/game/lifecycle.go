package game

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"chessapi/shared/chess"
)

// AILevels are the AI seat levels of SPEC §8.
var AILevels = []string{"easy", "normal", "hard", "max"}

// Player is who takes a seat.
type Player struct {
	ID   string
	Name string
	// TokenHash is the service's hash of the seat token (empty for AI).
	TokenHash string
	// Bound: ID is a registered player's, authenticated by a player token
	// (SPEC §12); Rating is then that player's rating.
	Bound  bool
	Rating int
}

func (p Player) seat() Seat {
	// Not connected until a stream connection of the seat opens, and not
	// on the disconnect clock either (SPEC §16.1).
	s := Seat{PlayerID: p.ID, Name: p.Name, TokenHash: p.TokenHash, Bound: p.Bound}
	if p.Bound {
		s.Rating = p.Rating
	}
	return s
}

// NewGame describes a game to create.
type NewGame struct {
	GameID  string
	Options Options // from BuildOptions (or DefaultOptions)
	Host    Player
	// AI, when not empty, is the level of an AI opponent (one of AILevels):
	// the game starts at once. Empty: a human opponent joins later.
	AI string
	// Seed seeds the game's RNG (colours, Chess960 number). The service
	// draws it from a secure source; tests fix it.
	Seed uint64
	// RematchOf, when set, is the game this one is a rematch of; it decides
	// colours under colorAssignment "alternate".
	RematchOf *PreviousGame
	// Invite says who may join (zero: open to anyone).
	Invite Invite
}

// PreviousGame identifies the game a rematch follows.
type PreviousGame struct {
	GameID string
	// HostColor is the colour the new game's host had in that game.
	HostColor chess.Color
}

// New creates a game at time now. Setup follows seeds/000 §5.4: colours
// first (the RNG only for "random", or "alternate" without a previous game),
// then the Chess960 number from the RNG. With a human opponent the game
// waits in PhaseWaiting; with an AI it is playing at once.
func New(ng NewGame, now time.Time) (*State, []Event, error) {
	if ng.GameID == "" {
		return nil, nil, errors.New("game: new: empty game id")
	}
	if ng.Host.ID == "" {
		return nil, nil, errors.New("game: new: empty host player id")
	}
	if ng.AI != "" && !slices.Contains(AILevels, ng.AI) {
		return nil, nil, FieldOneOf("opponent.level", AILevels...)
	}
	if err := ng.Options.validate(); err != nil {
		return nil, nil, err
	}
	if room := ng.Options.Room; room.Rated() {
		// Rated rooms are for two registered humans inside the gate (the
		// service answers an anonymous host before this), and play the
		// game of seeds/003 (SPEC §16.5).
		if ng.Options.Rules != RulesYeoul {
			return nil, nil, FieldNotAllowed("options.rules", "ratedRoomRules")
		}
		if ng.AI != "" {
			return nil, nil, FieldNotAllowed("opponent", "ratedRoom")
		}
		if !ng.Host.Bound {
			return nil, nil, errors.New("game: new: rated room with an unbound host")
		}
		if !room.Admits(ng.Host.Rating) {
			return nil, nil, ruleError(CodeRatingOutOfRange)
		}
	}
	invite := ng.Invite
	if invite.Mode == "" {
		invite.Mode = InviteOpen
	}
	if invite.Mode != InviteOpen && invite.Mode != InvitePrivate && invite.Mode != InviteReserved ||
		invite.Mode == InvitePrivate && invite.CodeHash == "" ||
		invite.Mode == InviteReserved && invite.PlayerID == "" && invite.TokenHash == "" {
		return nil, nil, fmt.Errorf("game: new: invite %+v", invite)
	}
	if ng.AI != "" {
		invite = Invite{Mode: InviteOpen}
	}
	t := now.UnixMilli()
	s := &State{
		StateVersion: StateVersion,
		GameID:       ng.GameID,
		Version:      1,
		CreatedAt:    t,
		Options:      ng.Options,
		Phase:        PhaseWaiting,
		Moves:        []MoveRecord{},
		RNG:          RNG{State: ng.Seed},
		Draw:         DrawState{LastOfferPly: PerColor[int]{-1, -1}},
		Invite:       invite,
	}
	if ng.RematchOf != nil {
		s.Rematch.Of = ng.RematchOf.GameID
	}

	host := chooseHostColor(ng.Options.ColorAssignment, ng.RematchOf, &s.RNG)
	s.Seats[host] = ng.Host.seat()

	s.StartFEN = chess.StartFEN
	if ng.Options.Variant == VariantChess960 {
		n := int(s.RNG.intn(960))
		fen, err := chess.Chess960StartFEN(n)
		if err != nil {
			return nil, nil, err // unreachable: n is in range
		}
		s.StartFEN, s.Chess960Index = fen, &n
	}
	pos, err := chess.ParseFENVariant(s.StartFEN, ng.Options.Variant.chess())
	if err != nil {
		return nil, nil, err
	}
	s.pos = *pos
	s.FEN = pos.FEN()
	s.hashes = []uint64{pos.Hash()}
	s.Clock.RemainingMs = PerColor[int64]{s.Options.TimeControl.fullMs(), s.Options.TimeControl.fullMs()}

	events := []Event{{Type: EventGameCreated, Color: host.String(), At: t}}
	if ng.AI != "" {
		// An AI seat has no stored name: its display name is a human
		// text, given by the edge in each reader's language.
		s.Seats[host.Other()] = Seat{PlayerID: "ai-" + ng.AI, AI: ng.AI, Connected: true}
		events = append(events, s.seated(t)...)
	}
	js, err := json.Marshal(events)
	if err != nil {
		return nil, nil, fmt.Errorf("game: encode events: %w", err)
	}
	s.Changes = []Change{{Version: 1, At: t, Events: js}}
	return s, events, nil
}

func chooseHostColor(ca ColorAssignment, prev *PreviousGame, rng *RNG) chess.Color {
	switch {
	case ca == ColorsHostWhite:
		return chess.White
	case ca == ColorsHostBlack:
		return chess.Black
	case ca == ColorsAlternate && prev != nil:
		return prev.HostColor.Other()
	}
	return chess.Color(rng.next() >> 63)
}

// seated moves a game whose seats have just been taken on at t: under the
// standard rules it starts (PhasePlaying: White's first-move limit starts
// now); under the yeoul rules it enters the ready step (PhaseReady), an
// AI seat ready at once.
func (s *State) seated(t int64) []Event {
	if s.Options.Rules != RulesYeoul {
		return []Event{s.start(t)}
	}
	s.Phase = PhaseReady
	s.Clock.TurnStartedAt = t
	var events []Event
	for c, seat := range s.Seats {
		if seat.AI != "" {
			s.Ready[c] = true
			events = append(events, Event{Type: EventPlayerReady, Color: chess.Color(c).String(), At: t})
		}
	}
	return events
}

// start moves the game to PhasePlaying at t: White's first move limit
// starts then.
func (s *State) start(t int64) Event {
	s.Phase = PhasePlaying
	s.Clock.TurnStartedAt = t
	return Event{Type: EventGameStarted, At: t}
}

// ready records that the seat by is ready, at t. The second ready sets
// StartsAt, StartDelayMs later ("두 사람이 레디하면 3초 뒤 \"대국 시작\"",
// seeds/003); a game of the standard rules has no ready step. Ready
// again, or once the game is under way, changes nothing (a retry).
func (s *State) ready(by chess.Color, now time.Time) (*State, []Event, error) {
	switch {
	case s.Phase == PhaseWaiting || s.Phase == PhaseFinished:
		return nil, nil, ruleError(CodeGameNotPlaying)
	case s.Options.Rules != RulesYeoul:
		return nil, nil, ruleError(CodeNoReadyStep)
	case s.Phase == PhasePlaying || s.Ready[by]:
		return s, nil, nil
	}
	t := max(now.UnixMilli(), s.Clock.TurnStartedAt)
	next := s.clone()
	next.Ready[by] = true
	ev := Event{Type: EventPlayerReady, Color: by.String(), At: t}
	if next.Ready[by.Other()] {
		next.Clock.StartsAt = t + StartDelayMs
		ev.StartsAt = next.Clock.StartsAt
	}
	return next, []Event{ev}, nil
}

// join seats p in the free seat of a waiting game and starts it: j.Player,
// admitted by the invite (a private game's code, a reserved seat's player
// or old token) and the room's gate. A game in play is CodeGameFull, one
// that has ended (however: aborted, expired, over) CodeGameNotWaiting;
// the host joining their own game is CodeAlreadySeated.
func (s *State) join(j Join, now time.Time) (*State, []Event, error) {
	p := j.Player
	if p.ID == "" {
		return nil, nil, errors.New("game: join: empty player id")
	}
	if _, seated := s.SeatOf(p.ID); seated {
		return nil, nil, ruleError(CodeAlreadySeated)
	}
	if s.Phase == PhaseFinished {
		return nil, nil, ruleError(CodeGameNotWaiting) // aborted, expired, cancelled or over
	}
	if s.Phase != PhaseWaiting {
		return nil, nil, ruleError(CodeGameFull)
	}
	switch inv := s.Invite; inv.Mode {
	case InvitePrivate:
		if j.InviteCodeHash == "" || subtle.ConstantTimeCompare([]byte(j.InviteCodeHash), []byte(inv.CodeHash)) != 1 {
			return nil, nil, ruleError(CodeInviteRequired)
		}
	case InviteReserved:
		byPlayer := inv.PlayerID != "" && p.Bound && p.ID == inv.PlayerID
		byToken := inv.TokenHash != "" && subtle.ConstantTimeCompare([]byte(j.ProofTokenHash), []byte(inv.TokenHash)) == 1
		if !byPlayer && !byToken {
			return nil, nil, ruleError(CodeInviteRequired)
		}
	}
	if room := s.Options.Room; room.Rated() {
		if !p.Bound {
			return nil, nil, errors.New("game: join: rated room with an unbound player")
		}
		if !room.Admits(p.Rating) {
			return nil, nil, ruleError(CodeRatingOutOfRange)
		}
	}
	free := chess.White
	if s.Seats[chess.White].taken() {
		free = chess.Black
	}
	t := max(now.UnixMilli(), s.CreatedAt)
	next := s.clone()
	next.Seats[free] = p.seat()
	events := append([]Event{{Type: EventPlayerJoined, Color: free.String(), At: t}}, next.seated(t)...)
	return next, events, nil
}

// linkRematch records nextGameID as the rematch of a finished game, once.
func (s *State) linkRematch(nextGameID string) (*State, []Event, error) {
	if s.Phase != PhaseFinished {
		return nil, nil, ruleError(CodeGameNotFinished)
	}
	if s.Rematch.Next != "" {
		return nil, nil, ruleError(CodeRematchLinked)
	}
	if nextGameID == "" {
		return nil, nil, errors.New("game: link rematch: empty game id")
	}
	next := s.clone()
	next.Rematch.Next = nextGameID
	return next, []Event{{Type: EventRematchLinked, GameID: nextGameID}}, nil
}

// validate checks that o holds only allowed values, and that the values
// the yeoul rules fix have them (options built in code rather than by
// BuildOptions, or read from storage). A game of a rated room under the
// standard rules passes: games stored before the rooms played seeds/003's
// game are such (New refuses to make one).
func (o Options) validate() error {
	tc := o.TimeControl
	switch {
	case o.Rules != RulesStandard && o.Rules != RulesYeoul:
		return FieldOneOf("options.rules", string(RulesStandard), string(RulesYeoul))
	case o.Variant != VariantStandard && o.Variant != VariantChess960:
		return FieldOneOf("options.variant", string(VariantStandard), string(VariantChess960))
	case tc.Kind == TimeFischer && (tc.BaseSec%60 != 0 || tc.BaseSec < 60 || tc.BaseSec > 90*60 || tc.IncSec < 0 || tc.IncSec > 60 || tc.PerMoveSec != 0 || tc.Days != 0),
		tc.Kind == TimePerMove && (tc.PerMoveSec != 30 && tc.PerMoveSec != 60 && tc.PerMoveSec != 120 || tc.BaseSec != 0 || tc.IncSec != 0 || tc.Days != 0),
		tc.Kind == TimeDays && (!slices.Contains(CorrespondenceDays, tc.Days) || tc != TimeControl{Kind: TimeDays, Days: tc.Days}),
		tc.Kind == TimeNone && tc != TimeControl{Kind: TimeNone},
		tc.Kind > TimeDays:
		return FieldFormat("options.timeControl", "timeControl", nil)
	case tc.Correspondence() && o.Room != RoomFree:
		return FieldNotAllowed("options.timeControl", "correspondenceRoom")
	case o.Rules == RulesYeoul && tc.Kind != TimePerMove:
		return FieldOneOf("options.timeControl", yeoulTimeControls...)
	case o.Rules == RulesYeoul && o.DrawOffer:
		return FieldNotAllowed("options.drawOffer", "yeoulNoDrawOffer")
	case o.Rules == RulesYeoul && o.Undo != UndoOff:
		return FieldNotAllowed("options.undo", "yeoulNoUndo")
	case o.Rules == RulesYeoul && o.DrawMode != DrawAuto:
		return FieldNotAllowed("options.drawMode", "yeoulAutoDraws")
	case o.Rules == RulesYeoul && o.DisconnectGraceSec != YeoulGraceSec:
		return FieldNotAllowed("options.disconnectGraceSec", "yeoulGrace")
	case o.DrawMode != DrawAuto && o.DrawMode != DrawFIDE:
		return FieldOneOf("options.drawMode", string(DrawAuto), string(DrawFIDE))
	case o.ColorAssignment != ColorsRandom && o.ColorAssignment != ColorsHostWhite &&
		o.ColorAssignment != ColorsHostBlack && o.ColorAssignment != ColorsAlternate:
		return FieldOneOf("options.colorAssignment", string(ColorsRandom), string(ColorsHostWhite), string(ColorsHostBlack), string(ColorsAlternate))
	case o.Undo != UndoOff && o.Undo != 1 && o.Undo != 3 && o.Undo != UndoUnlimited:
		return FieldOneOf("options.undo", "off", "1", "3", "unlimited")
	case o.FirstMoveSec != 15 && o.FirstMoveSec != 30 && o.FirstMoveSec != 60:
		return FieldOneOf("options.firstMoveSec", "15", "30", "60")
	case o.IdleLimitSec != 300 && o.IdleLimitSec != 600:
		return FieldOneOf("options.idleLimitSec", "300", "600")
	case o.Hints != HintsOff && o.Hints != HintsMoves:
		return FieldOneOf("options.hints", string(HintsOff), string(HintsMoves))
	case o.Rules == RulesStandard && o.DisconnectGraceSec != 30 && o.DisconnectGraceSec != 60 && o.DisconnectGraceSec != 120:
		return FieldOneOf("options.disconnectGraceSec", "30", "60", "120")
	case !slices.Contains(Rooms, o.Room):
		return FieldOneOf("options.room", roomNames()...)
	case o.WaitingExpirySec < MinWaitingExpirySec || o.WaitingExpirySec > MaxWaitingExpirySec:
		return FieldRange("options.waitingExpirySec", MinWaitingExpirySec, MaxWaitingExpirySec)
	}
	return nil
}

func roomNames() []string {
	names := make([]string, len(Rooms))
	for i, r := range Rooms {
		names[i] = string(r)
	}
	return names
}

// MarshalJSON writes every option in its canonical form.
func (o Options) MarshalJSON() ([]byte, error) {
	type plain Options // without methods, so no recursion
	return jsonMarshal(plain(o))
}

// jsonMarshal is json.Marshal without HTML escaping (FENs and SAN stay
// readable).
func jsonMarshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
