package game

import (
	"encoding/json"
	"fmt"
	"time"

	"chessapi/shared/chess"
)

// Step is one change asked of a game: a seat's action, a player taking the
// free seat, a seat connecting or disconnecting, the clock, a rematch link.
// Reduce is the one entry point that applies any of them.
type Step interface{ isStep() }

// Act is a seat's action (seeds/000 §8.2), also the AI seat's move. A
// seat marked disconnected is connected again by its own action.
type Act struct {
	By     chess.Color
	Action Action
}

// Join seats Player in the free seat of a waiting game and starts it.
type Join struct {
	Player Player
	// InviteCodeHash is the hash of the invite code the joiner gave (a
	// private game needs the right one).
	InviteCodeHash string
	// ProofTokenHash is the hash of the token the joiner authenticated
	// with, when it is a seat token of another game (a reserved rematch
	// seat admits the old opponent's seat token).
	ProofTokenHash string
}

// Presence reports a seat's presence (SPEC §16.1; the disconnect grace of
// seeds/000 §8.5): from the stream (Stream: a connection of the seat
// opened, or its last one closed) or from the seat itself over HTTP (a
// sign of life, or POST presence).
type Presence struct {
	Seat      chess.Color
	Connected bool
	Stream    bool
}

// Timeout asks for nothing but the timeout that is due, if any: the
// scheduler's delivery, and a read that enforces the clock lazily.
type Timeout struct{}

// LinkRematch records Next as the rematch of a finished game.
type LinkRematch struct{ Next string }

// AIForfeit ends the game on the AI seat's turn as a time loss for the AI
// (a draw when the human cannot mate, as any flag fall): the service asks
// for it when the AI never answered, after its restarts ran out, so a game
// never waits on a broken AI for ever.
type AIForfeit struct{}

func (Act) isStep()         {}
func (Join) isStep()        {}
func (Presence) isStep()    {}
func (Timeout) isStep()     {}
func (LinkRematch) isStep() {}
func (AIForfeit) isStep()   {}

// Reduce applies step to s at now and returns the next state and what
// happened. It first applies the timeout that is due at now (clock first,
// seeds/000 §8.2), so a move arriving after the mover's flag is refused and
// the game shows its result. It is pure: s is never modified, time comes
// only from now, and nothing random is drawn.
//
// Every successful change is one new version (s.Version+1) whose events are
// recorded in the change log; a step that changes nothing (a presence that
// is already so, a Timeout when none is due) returns s itself and no events.
//
// A refused step returns its error (*RuleError or *InputError). If a timeout
// was due, the returned state is not nil then: it holds that timeout alone,
// already committed as a new version, and the caller should store it.
func Reduce(s *State, step Step, now time.Time) (*State, []Event, error) {
	var ratings *PerColor[PlayerRating]
	if r, ok := step.(Rated); ok {
		step, ratings = r.Step, &r.Players
	}
	cur, events := s.applyDueTimeout(now)
	var (
		next   *State
		stepEv []Event
		err    error
	)
	switch st := step.(type) {
	case Act:
		// An action is a sign of life: a seat marked disconnected is
		// connected again first (SPEC §11), in the same version.
		back, backEv := cur.setPresence(Presence{Seat: st.By, Connected: true}, now)
		next, stepEv, err = back.act(st.By, st.Action, now)
		stepEv = append(backEv, stepEv...)
	case Join:
		next, stepEv, err = cur.join(st, now)
	case Presence:
		next, stepEv = cur.setPresence(st, now)
	case Timeout:
		next = cur
	case LinkRematch:
		next, stepEv, err = cur.linkRematch(st.Next)
	case AIForfeit:
		next, stepEv, err = cur.aiForfeit(now)
	case systemStep: // accounts.go
		next, stepEv, err = st.apply(cur, now)
	default:
		return nil, nil, fmt.Errorf("game: reduce: unknown step %T", step)
	}
	if err != nil {
		if cur == s {
			return nil, nil, err
		}
		if ratings != nil && s.Phase != PhaseFinished {
			cur.rate(*ratings, events)
		}
		committed, cerr := s.commit(cur, nil, events, now)
		if cerr != nil {
			return nil, nil, cerr
		}
		return committed, events, err
	}
	events = append(events, stepEv...)
	if next == s {
		return s, nil, nil
	}
	if ratings != nil && s.Phase != PhaseFinished {
		next.rate(*ratings, events)
	}
	var applied *Act
	if a, ok := step.(Act); ok && a.Action.RequestID != "" {
		applied = &a
	}
	committed, err := s.commit(next, applied, events, now)
	if err != nil {
		return nil, nil, err
	}
	return committed, events, nil
}

// commit makes next the version after prev: the version goes up by one,
// the events are encoded once for the change log (and the request log,
// when the change answers a request id) and the logs are trimmed.
func (prev *State) commit(next *State, req *Act, events []Event, now time.Time) (*State, error) {
	if events == nil {
		events = []Event{}
	}
	js, err := json.Marshal(events)
	if err != nil {
		return nil, fmt.Errorf("game: encode events: %w", err)
	}
	next.Version = prev.Version + 1
	delta, err := versionDelta(prev, next, now)
	if err != nil {
		return nil, err
	}
	if len(next.Moves) < len(prev.Moves) {
		// A take-back: the deltas of the moves it removed keep them.
		if err := keepUndoneMoves(next.Changes, prev, len(next.Moves)); err != nil {
			return nil, err
		}
	}
	next.appendChange(Change{Version: next.Version, At: now.UnixMilli(), Events: js, Delta: delta})
	if req != nil {
		by := req.By & 1
		log := append(next.Requests[by], AppliedRequest{
			ID: req.Action.RequestID, Version: next.Version, Hash: req.Action.RequestHash, Events: js,
		})
		if len(log) > RequestLogSize {
			log = log[len(log)-RequestLogSize:]
		}
		next.Requests[by] = log
	}
	return next, nil
}

// appendChange adds c to the change log and drops the oldest entries past
// ChangeLogSize or ChangeLogBytes (the newest entry is always kept).
func (s *State) appendChange(c Change) {
	log := append(s.Changes, c)
	total := 0
	keep := len(log)
	for i := len(log) - 1; i >= 0; i-- {
		total += len(log[i].Events) + len(log[i].Delta)
		if len(log)-i > ChangeLogSize || (total > ChangeLogBytes && i < len(log)-1) {
			break
		}
		keep = i
	}
	s.Changes = log[keep:]
	// Only the newest entries keep their delta (the older ones' events
	// stay): a client further behind is sent the whole view.
	for i := range max(0, len(s.Changes)-ChangeLogDeltas) {
		s.Changes[i].Delta = nil
	}
}

// applyDueTimeout returns the state with the timeout due at now applied (a
// new, uncommitted state), or s itself when none is due.
func (s *State) applyDueTimeout(now time.Time) (*State, []Event) {
	next, events, ok := s.timeout(now)
	if !ok {
		return s, nil
	}
	return next, events
}
