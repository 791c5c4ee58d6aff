package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"chessapi/shared/chess"
	"chessapi/shared/credential"
	"chessapi/shared/game"
	"chessapi/shared/obs"
)

// The use cases of games. Each is a txn for update (or insert): who may
// ask, which reducer step, and what it answers with.

// PlayerInput names who takes a seat; both fields are optional.
type PlayerInput struct {
	ID   string
	Name string
}

// CreateInput is a request to create a game.
type CreateInput struct {
	Options game.Options
	// AILevel is the level of an AI opponent, or "" for a human opponent.
	AILevel string
	// Player names an anonymous host; ignored with a player token.
	Player PlayerInput
	// RematchOf is the id of a finished game this one is a rematch of; the
	// caller must be one of its two players (a seat or player token of it).
	RematchOf string
	// Private makes the game joinable only with the invite code the host
	// gets (SPEC §12); an open game is listed in its room's lobby.
	Private bool
	// Caller is who asks: a player token binds the host seat to the player.
	Caller Caller
}

// JoinInput is a request to take a waiting game's free seat.
type JoinInput struct {
	// Player names an anonymous joiner; ignored with a player token.
	Player PlayerInput
	// InviteCode is a private game's code.
	InviteCode string
	// Caller is who asks: a player token binds the seat; for a rematch,
	// the other player's seat token of the old game admits them.
	Caller Caller
}

// Seated is the answer to create and join: the new seat's player id and
// secret token (shown only here), and the game as that seat sees it.
type Seated struct {
	GameID   string
	PlayerID string
	Token    string
	Game     *game.View
	// InviteCode is a private game's code, for its host to share (never in
	// a view).
	InviteCode string
}

// ActionInput is one player action, decoded by the edge.
type ActionInput struct {
	Action game.Action
	// ExpectedVersion, when set, makes the action apply only to that version
	// (else a *ConflictError with the current game).
	ExpectedVersion *int64
	// RequestID, when set, makes the action idempotent for this seat;
	// RequestHash fingerprints the request so a reused id is told apart
	// from a retry.
	RequestID   string
	RequestHash string
}

// Outcome is the answer to an action: the game as the actor sees it and the
// events the action (and any timeout applied before it) produced, with
// their JSON encoding made once at commit.
type Outcome struct {
	Game       *game.View
	Events     []game.Event
	EventsJSON json.RawMessage
}

// Limits of request values.
const (
	MaxRequestIDLen = 128
	maxNameRunes    = 40
	maxPlayerIDLen  = 64
)

// checkPlayer validates and completes an anonymous PlayerInput. An id
// shaped like a registered player's is not taken (a fresh anonymous one
// is made): nobody can pose as a registered player by naming their id.
func (s *Service) checkPlayer(in PlayerInput) (PlayerInput, error) {
	if strings.HasPrefix(in.ID, RegisteredIDPrefix) {
		in.ID = ""
	}
	if in.ID == "" {
		id, err := s.newPlayerID()
		if err != nil {
			return in, err
		}
		in.ID = id
	} else if len(in.ID) > maxPlayerIDLen || !printable(in.ID) || strings.HasPrefix(in.ID, "ai-") {
		return in, game.FieldLength("player.id", maxPlayerIDLen)
	}
	name, err := checkDisplayName("player.name", in.Name, maxNameRunes, true)
	if err != nil {
		return in, err
	}
	in.Name = name
	return in, nil
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// CheckRequestID validates a request id (the edge checks it before
// fingerprinting the request).
func CheckRequestID(id string) error {
	if len(id) > MaxRequestIDLen || !printable(id) {
		return game.FieldFormat("requestId", "requestId", nil)
	}
	return nil
}

// seatHolder is who takes a seat: a registered player (from a player
// token) or an anonymous one (from the request body), with the new seat's
// token.
func (s *Service) seatHolder(ctx context.Context, c Caller, in PlayerInput) (game.Player, string, error) {
	token, hash, err := s.newToken()
	if err != nil {
		return game.Player{}, "", err
	}
	if c.playerID != "" {
		ps, err := s.players()
		if err != nil {
			return game.Player{}, "", err
		}
		var p PlayerRecord
		if c.player != nil {
			p = *c.player
		} else if p, err = ps.Player(ctx, c.playerID); err != nil {
			return game.Player{}, "", err
		}
		return game.Player{ID: p.ID, Name: p.Name, TokenHash: hash, Bound: true, Rating: p.Rating}, token, nil
	}
	anon, err := s.checkPlayer(in)
	if err != nil {
		return game.Player{}, "", err
	}
	return game.Player{ID: anon.ID, Name: anon.Name, TokenHash: hash}, token, nil
}

// newInviteCode mints a private game's invite code (credential.InviteCode:
// 10 characters of the link codes' alphabet, 31^10 ≈ 8·10^14, and a wrong
// code only gets 403).
func (s *Service) newInviteCode() (string, error) {
	return credential.InviteCode.Mint(s.cfg.Random)
}

// Create makes a new game with the caller in the host seat.
func (s *Service) Create(ctx context.Context, in CreateInput) (Seated, error) {
	if in.AILevel != "" && !slices.Contains(game.AILevels, in.AILevel) {
		return Seated{}, game.FieldOneOf("opponent.level", game.AILevels...)
	}
	caller, err := s.resolve(ctx, in.Caller)
	if err != nil {
		return Seated{}, err
	}
	if in.RematchOf != "" {
		// A rematch is the finished game again with the colours swapped:
		// its options and opponent are that game's.
		if in.Options, in.AILevel, err = s.rematchOf(ctx, in.RematchOf, caller); err != nil {
			return Seated{}, err
		}
		in.Private = false
	}
	if in.Options.Room.Rated() && caller.playerID == "" {
		return Seated{}, ErrPlayerRequired
	}
	host, token, err := s.seatHolder(ctx, caller, in.Player)
	if err != nil {
		return Seated{}, err
	}
	seed, err := s.newSeed()
	if err != nil {
		return Seated{}, err
	}
	var invite game.Invite
	var inviteCode string
	if in.Private && in.AILevel == "" {
		if inviteCode, err = s.newInviteCode(); err != nil {
			return Seated{}, err
		}
		invite = game.Invite{Mode: game.InvitePrivate, CodeHash: HashToken(inviteCode)}
	}
	var previous *game.PreviousGame
	var fixedID string
	if in.RematchOf != "" {
		// The rematch link is claimed on the old game first, with the new
		// game's id: of two concurrent rematches exactly one wins (the
		// other gets rematch_exists), and no orphan game is created. Its
		// free seat is kept for the old game's other player.
		if fixedID, err = s.newGameID(); err != nil {
			return Seated{}, err
		}
		var reserved game.Invite
		if previous, reserved, err = s.claimRematch(ctx, in.RematchOf, caller, fixedID); err != nil {
			return Seated{}, err
		}
		if in.AILevel == "" {
			invite = reserved
		}
	}
	st, err := s.insert(ctx, fixedID, func(id string) (*game.State, []game.Event, error) {
		return game.New(game.NewGame{
			GameID:    id,
			Options:   in.Options,
			Host:      host,
			AI:        in.AILevel,
			Seed:      seed,
			RematchOf: previous,
			Invite:    invite,
		}, s.now())
	})
	if err != nil {
		return Seated{}, err
	}
	color, _ := st.SeatOf(host.ID)
	view, err := game.ViewOf(st, &color, s.now())
	if err != nil {
		return Seated{}, err
	}
	return Seated{GameID: st.GameID, PlayerID: host.ID, Token: token, Game: view, InviteCode: inviteCode}, nil
}

// RematchExistsError refuses a second rematch of a game (409
// rematch_exists): GameID is the rematch the first request made.
type RematchExistsError struct{ GameID string }

func (e *RematchExistsError) Error() string { return "the game already has its rematch " + e.GameID }

// Unwrap is the game's refusal (game.CodeRematchLinked).
func (e *RematchExistsError) Unwrap() error { return &game.RuleError{Code: game.CodeRematchLinked} }

// rematchOf checks that the caller may ask for a rematch of the finished
// game prevID (one of its two players, not blocked by the other, the
// game not rematched yet) and returns the rematch's options and AI level:
// the old game's, with colours to alternate (the host gets the colour
// they did not have).
func (s *Service) rematchOf(ctx context.Context, prevID string, c Caller) (game.Options, string, error) {
	cur, err := s.load(ctx, prevID)
	if errors.Is(err, ErrNotFound) {
		return game.Options{}, "", &game.InputError{Field: "rematchOf", Problem: game.ProblemNotFound}
	}
	if err != nil {
		return game.Options{}, "", err
	}
	st := cur.state
	seat, err := s.authorize(st, c, seatOnly)
	if err != nil {
		return game.Options{}, "", err
	}
	if err := s.rematchAllowed(ctx, st, *seat); err != nil {
		return game.Options{}, "", err
	}
	opts := st.Options
	opts.ColorAssignment = game.ColorsAlternate
	return opts, st.Seats[seat.Other()].AI, nil
}

// rematchAllowed refuses a rematch of st asked by the player of seat: the
// game must be finished and not rematched yet, and the two players must
// not block each other.
func (s *Service) rematchAllowed(ctx context.Context, st *game.State, seat chess.Color) error {
	if st.Phase != game.PhaseFinished {
		return &game.RuleError{Code: game.CodeGameNotFinished}
	}
	if st.Rematch.Next != "" {
		return &RematchExistsError{GameID: st.Rematch.Next}
	}
	me, other := st.Seats[seat], st.Seats[seat.Other()]
	if me.Bound && other.Bound {
		blocked, err := s.blocked(ctx, me.PlayerID, other.PlayerID)
		if err != nil {
			return err
		}
		if blocked {
			return ErrBlocked
		}
	}
	return nil
}

// claimRematch links nextID as the rematch of the finished game prevID for
// one of its players (the caller: a seat or player token of that game),
// and returns the caller's colour there and the invite that keeps the new
// game's free seat for the other player.
func (s *Service) claimRematch(ctx context.Context, prevID string, c Caller, nextID string) (*game.PreviousGame, game.Invite, error) {
	var previous *game.PreviousGame
	var reserved game.Invite
	_, err := s.update(ctx, txn{
		gameID: prevID,
		caller: c,
		access: seatOnly,
		step: func(st *game.State, seat *chess.Color) (game.Step, error) {
			if err := s.rematchAllowed(ctx, st, *seat); err != nil {
				return nil, err
			}
			previous = &game.PreviousGame{GameID: prevID, HostColor: *seat}
			other := st.Seats[seat.Other()]
			reserved = game.Invite{Mode: game.InviteReserved, TokenHash: other.TokenHash}
			if other.Bound {
				reserved.PlayerID = other.PlayerID
			}
			return game.LinkRematch{Next: nextID}, nil
		},
	})
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, game.Invite{}, &game.InputError{Field: "rematchOf", Problem: game.ProblemNotFound}
	case err != nil:
		return nil, game.Invite{}, err
	}
	return previous, reserved, nil
}

// Join seats the caller in the free seat of a waiting game.
func (s *Service) Join(ctx context.Context, gameID string, in JoinInput) (Seated, error) {
	caller, err := s.resolve(ctx, in.Caller)
	if err != nil {
		return Seated{}, err
	}
	joiner, token, err := s.seatHolder(ctx, caller, in.Player)
	if err != nil {
		return Seated{}, err
	}
	var codeHash, proof string
	if in.InviteCode != "" {
		codeHash = HashToken(in.InviteCode)
	}
	if !caller.anonymous() && caller.playerID == "" {
		proof = caller.hash() // a seat token of the game this is a rematch of
	}
	out, err := s.update(ctx, txn{
		gameID: gameID,
		access: system,
		step: func(st *game.State, _ *chess.Color) (game.Step, error) {
			if st.Phase == game.PhaseWaiting && st.Options.Room.Rated() && !joiner.Bound {
				return nil, ErrPlayerRequired
			}
			if err := s.joinAllowed(ctx, st, joiner); err != nil {
				return nil, err
			}
			return game.Join{Player: joiner, InviteCodeHash: codeHash, ProofTokenHash: proof}, nil
		},
	})
	if err != nil {
		return Seated{}, err
	}
	color, _ := out.state.SeatOf(joiner.ID)
	view, err := game.ViewOf(out.state, &color, s.now())
	if err != nil {
		return Seated{}, err
	}
	return Seated{GameID: gameID, PlayerID: joiner.ID, Token: token, Game: view}, nil
}

// joinAllowed refuses a join of a waiting game whose host and joiner
// block each other (either way): ErrBlocked.
func (s *Service) joinAllowed(ctx context.Context, st *game.State, joiner game.Player) error {
	if st.Phase != game.PhaseWaiting || !joiner.Bound {
		return nil
	}
	for _, seat := range st.Seats {
		if !seat.Bound || seat.PlayerID == joiner.ID {
			continue
		}
		blocked, err := s.blocked(ctx, seat.PlayerID, joiner.ID)
		if err != nil {
			return err
		}
		if blocked {
			return ErrBlocked
		}
	}
	return nil
}

// Act applies a seat's action. A retried request id gets its stored
// events and the current game; nothing is applied twice.
func (s *Service) Act(ctx context.Context, gameID string, c Caller, in ActionInput) (Outcome, error) {
	if err := CheckRequestID(in.RequestID); err != nil {
		return Outcome{}, err
	}
	action := in.Action
	action.RequestID, action.RequestHash = in.RequestID, in.RequestHash
	out, err := s.update(ctx, txn{
		gameID:          gameID,
		caller:          c,
		access:          seatOnly,
		requestID:       in.RequestID,
		requestHash:     in.RequestHash,
		expectedVersion: in.ExpectedVersion,
		step: func(_ *game.State, seat *chess.Color) (game.Step, error) {
			return game.Act{By: *seat, Action: action}, nil
		},
	})
	if err != nil {
		return Outcome{}, err
	}
	view, err := game.ViewOf(out.state, out.seat, s.now())
	if err != nil {
		return Outcome{}, err
	}
	if out.replayed == nil && in.Action.Type == game.ActionMove && out.events != nil {
		s.cfg.Metrics.Count(obs.MetricMoves, 1)
	}
	if out.replayed != nil {
		events, err := decodeEvents(out.replayed.Events)
		if err != nil {
			return Outcome{}, err
		}
		return Outcome{Game: view, Events: events, EventsJSON: out.replayed.Events}, nil
	}
	return Outcome{Game: view, Events: out.events, EventsJSON: lastChangeEvents(out.state)}, nil
}

func decodeEvents(js json.RawMessage) ([]game.Event, error) {
	var events []game.Event
	if len(js) == 0 {
		return []game.Event{}, nil
	}
	if err := json.Unmarshal(js, &events); err != nil {
		return nil, fmt.Errorf("stored events: %w", err)
	}
	return events, nil
}

// lastChangeEvents is the JSON of the events of the change that made st.
func lastChangeEvents(st *game.State) json.RawMessage {
	if c, ok := st.LastChange(); ok {
		return c.Events
	}
	return json.RawMessage("[]")
}

// SetPresence is POST .../presence: a seat's app says it left (its
// disconnect grace starts, seeds/000 §8.5) or is back (a running grace
// ends). It never shows the seat as connected: only a stream connection
// does (SPEC §16.1). It returns the game as that seat sees it.
func (s *Service) SetPresence(ctx context.Context, gameID string, c Caller, connected bool) (*game.View, error) {
	out, err := s.update(ctx, txn{
		gameID:   gameID,
		caller:   c,
		access:   seatOnly,
		lookOnly: true, // a transport's report, not a use of the session
		step: func(_ *game.State, seat *chess.Color) (game.Step, error) {
			return game.Presence{Seat: *seat, Connected: connected}, nil
		},
	})
	if err != nil {
		return nil, err
	}
	return game.ViewOf(out.state, out.seat, s.now())
}

// Connect reads a game for a stream subscription: authorized like
// Observe, with a due timeout applied, and, for a seat, the
// seat connected from now (a stream connection of it is open; a version
// when that changes its presence).
func (s *Service) Connect(ctx context.Context, gameID string, c Caller) (Observation, error) {
	out, err := s.update(ctx, txn{gameID: gameID, caller: c, access: watching, lookOnly: true,
		step: func(_ *game.State, seat *chess.Color) (game.Step, error) {
			if seat == nil {
				return nil, nil
			}
			return game.Presence{Seat: *seat, Connected: true, Stream: true}, nil
		}})
	if err != nil {
		return Observation{}, err
	}
	return Observation{State: out.state, Seat: out.seat}, nil
}

// Disconnect records that the last stream connection of a seat to the
// game closed: the seat is not connected from now, and its disconnect
// grace starts. The seat is the one the transport authorized the
// connection's subscription as, not the caller now: a connection closed
// because its session ended (revoked, SPEC §16.2) has a token that no
// longer authenticates anyone, and its seat must still go off.
func (s *Service) Disconnect(ctx context.Context, gameID string, seat chess.Color) error {
	_, err := s.update(ctx, txn{gameID: gameID, access: system,
		step: func(*game.State, *chess.Color) (game.Step, error) {
			return game.Presence{Seat: seat, Connected: false, Stream: true}, nil
		}})
	return err
}

// current reads a game for the caller, enforcing a due timeout (written, so
// the game ends for everybody). A seat's request is a sign of life: a seat
// on its disconnect grace is back (the grace ends; it is not shown as
// connected for it, SPEC §16.1). A player token whose player has no seat
// reads as a spectator, as on the stream (SPEC §15): an app sends its
// player's token with every request, watching others' games included.
func (s *Service) current(ctx context.Context, gameID string, c Caller) (outcome, error) {
	return s.update(ctx, txn{gameID: gameID, caller: c, access: watching, lookOnly: true,
		step: func(_ *game.State, seat *chess.Color) (game.Step, error) {
			if seat != nil {
				return game.Presence{Seat: *seat, Connected: true}, nil
			}
			return nil, nil
		}})
}

// Get returns the game as the caller sees it, after applying any timeout
// already due. With afterVersion set it waits (up to maxWait) until the game
// is newer than afterVersion, then answers with the game as it is then.
func (s *Service) Get(ctx context.Context, gameID string, c Caller, afterVersion *int64, maxWait time.Duration) (*game.View, error) {
	var until time.Time
	if afterVersion != nil {
		until = s.now().Add(maxWait)
	}
	for {
		// Watch before reading, so a commit between the read and the wait
		// is not missed.
		var changed <-chan Change
		stop := func() {}
		if afterVersion != nil {
			changed, stop = s.feed.watch(gameID, 1)
		}
		out, err := s.current(ctx, gameID, c)
		if err != nil {
			stop()
			return nil, err
		}
		now := s.now()
		if afterVersion == nil || out.state.Version > *afterVersion || !now.Before(until) {
			stop()
			return game.ViewOf(out.state, out.seat, now)
		}
		wait := s.longPollWait(out.state, now, until)
		timer := time.NewTimer(wait)
		select {
		case <-changed:
		case <-timer.C:
		case <-s.draining:
			until = now // answer with the game as it is
		case <-ctx.Done():
			timer.Stop()
			stop()
			return nil, ctx.Err()
		}
		timer.Stop()
		stop()
	}
}

// longPollWait is how long a long poll sleeps before reading again: until
// its end, or until a human's deadline (to enforce it), or the poll
// interval when writes come from other processes. It never spins: an AI's
// overdue turn is no reason to wake (the AI never loses on time), and a
// deadline in the past has just been enforced by the read.
func (s *Service) longPollWait(st *game.State, now, until time.Time) time.Duration {
	wait := until.Sub(now)
	if d, ok := game.Deadline(st); ok && d.After(now) {
		if _, ai := st.AITurn(); !ai {
			wait = min(wait, d.Sub(now)+time.Millisecond)
		}
	}
	if s.cfg.PollInterval > 0 {
		wait = min(wait, s.cfg.PollInterval)
	}
	return max(wait, time.Millisecond)
}

// ChangeLog is the answer to a catch-up read: the changes after a version,
// oldest first, each with its delta for the caller, or Reset when that
// version is older than the kept log (or than the deltas it keeps); and the
// game as the caller sees it now.
type ChangeLog struct {
	Version int64
	Changes []game.Change
	// Deltas are the caller's deltas of Changes, one each (SPEC §16.1).
	Deltas []game.Delta
	Reset  bool
	Game   *game.View
}

// Changes returns what changed in the game after version after.
func (s *Service) Changes(ctx context.Context, gameID string, c Caller, after int64) (ChangeLog, error) {
	out, err := s.current(ctx, gameID, c)
	if err != nil {
		return ChangeLog{}, err
	}
	view, err := game.ViewOf(out.state, out.seat, s.now())
	if err != nil {
		return ChangeLog{}, err
	}
	log := ChangeLog{Version: out.state.Version, Game: view}
	changes, deltas, err := DeltasAfter(out.state, out.seat, after)
	switch {
	case errors.Is(err, game.ErrNoDelta):
		log.Reset = true
		return log, nil
	case err != nil:
		return ChangeLog{}, err
	}
	log.Changes, log.Deltas = changes, deltas
	return log, nil
}

// DeltasAfter returns st's logged changes after version after with their
// deltas for the viewer in seat (nil: a spectator); game.ErrNoDelta when
// the log does not reach back that far with its deltas.
func DeltasAfter(st *game.State, seat *chess.Color, after int64) ([]game.Change, []game.Delta, error) {
	changes, complete := st.ChangesAfter(after)
	if !complete {
		return nil, nil, game.ErrNoDelta
	}
	deltas := make([]game.Delta, len(changes))
	for i, c := range changes {
		d, err := st.DeltaFor(c, seat)
		if err != nil {
			return nil, nil, err
		}
		deltas[i] = d
	}
	return changes, deltas, nil
}

// PGN returns the game's PGN text.
func (s *Service) PGN(ctx context.Context, gameID string, c Caller) (string, error) {
	out, err := s.current(ctx, gameID, c)
	if err != nil {
		return "", err
	}
	return game.PGN(out.state)
}

// HandleTimeout is the target of scheduled deadlines (the timeout function,
// the local scheduler). Deliveries are at least once and may be early or
// stale, so it decides from the stored game alone: a due human turn → the
// timeout is applied; an AI turn past its watchdog → the AI is started
// again (an AI never loses on time), or, after AIRestarts attempts, the AI
// seat forfeits. Whatever happened, the game's timer is then re-armed for
// the game as it now is (the latest version, not the delivered one), so a
// game with a deadline always has a live timer. An error means the work
// could not be done and the delivery should be retried.
func (s *Service) HandleTimeout(ctx context.Context, task TimeoutTask) error {
	out, err := s.update(ctx, txn{
		gameID: task.GameID,
		access: system,
		step: func(st *game.State, _ *chess.Color) (game.Step, error) {
			if _, ai := st.AITurn(); ai && s.aiOverdue(st, task.Attempt) && task.Attempt >= s.cfg.AIRestarts {
				s.log.Error("AI seat did not answer; it forfeits", "game", st.GameID, "version", st.Version, "attempts", task.Attempt+1)
				return game.AIForfeit{}, nil
			}
			return nil, nil // only the timeout that is due
		},
	})
	if errors.Is(err, ErrNotFound) {
		s.log.Warn("timeout for unknown game", "game", task.GameID)
		return nil
	}
	if err != nil {
		return err
	}
	st := out.state
	if _, ai := st.AITurn(); ai && s.aiOverdue(st, task.Attempt) {
		// The next watchdog timer first, so that whatever happens to this
		// trigger the turn is looked at again; then the trigger, retried.
		// A trigger that still fails is a metric, not an error: the next
		// watchdog attempt starts the AI again (or, the attempts spent,
		// the AI seat forfeits).
		if err := s.rearm(ctx, st, task.Attempt+1); err != nil {
			return err
		}
		s.cfg.Metrics.Count(obs.MetricAIRetriggers, 1)
		s.log.WarnContext(ctx, "AI turn overdue, starting it again", "game", st.GameID, "version", st.Version, "attempt", task.Attempt+1)
		if err := s.retry(ctx, "AI trigger", func(ctx context.Context) error { return s.triggerAI(ctx, st) }); err != nil {
			s.cfg.Metrics.Count(obs.MetricAITriggerFailures, 1)
			s.log.ErrorContext(ctx, "AI turn could not be started again; the watchdog will try once more", "game", st.GameID, "err", err)
		}
		return nil
	}
	attempt := 0
	if _, ai := st.AITurn(); ai && st.Version == task.Version {
		attempt = task.Attempt // an early delivery keeps its count
	}
	// The timer for what comes next first (the turn's next reminder or its
	// deadline), then the reminders due by now: a delivery retried after a
	// failed reminder finds the timer armed and the reminder not sent yet
	// (sent once: its id is its turn and due time).
	if err := s.rearm(ctx, st, attempt); err != nil {
		return err
	}
	return s.retry(ctx, "reminders", func(ctx context.Context) error { return s.remind(ctx, st) })
}

// aiOverdue reports whether the AI's turn has gone past watchdog attempt n.
func (s *Service) aiOverdue(st *game.State, attempt int) bool {
	due := time.UnixMilli(st.Clock.TurnStartedAt).Add(time.Duration(attempt+1) * s.aiTurnBound(st))
	return !s.now().Before(due)
}

// rearm sets the game's timer for st (or removes it when st has no
// deadline).
func (s *Service) rearm(ctx context.Context, st *game.State, attempt int) error {
	if s.cfg.Scheduler == nil {
		return nil
	}
	task, ok := s.timerFor(st, attempt, s.now())
	if !ok {
		return s.cfg.Scheduler.CancelTimeout(ctx, st.GameID)
	}
	return s.cfg.Scheduler.ScheduleTimeout(ctx, task)
}

// errStaleAITask is a task whose turn is over: nothing to do.
var errStaleAITask = errors.New("AI task is stale")

// PlayAITurn makes the AI seat's move if the AI is still to move at
// task.Ply; a stale task is a no-op. The move is written through update,
// checked against the game as it then is: a human action that arrived
// meanwhile (resign, a take-back request) wins, and an offer or a reconnect
// in between does not void the AI's move.
func (s *Service) PlayAITurn(ctx context.Context, task AITask) error {
	if s.cfg.Engine == nil {
		return ErrNoEngine
	}
	cur, err := s.load(ctx, task.GameID)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	st := cur.state
	level, ok := st.AITurn()
	if !ok || st.Ply() != task.Ply {
		return nil
	}
	req := aiRequest(st, level)
	move, err := s.cfg.Engine.ChooseMove(ctx, req)
	if err != nil {
		return fmt.Errorf("AI move for game %s: %w", st.GameID, err)
	}
	uci := req.Position.UCI(move)
	_, err = s.update(ctx, txn{
		gameID: task.GameID,
		access: system,
		step: func(st *game.State, _ *chess.Color) (game.Step, error) {
			if _, ok := st.AITurn(); !ok || st.Ply() != task.Ply {
				return nil, errStaleAITask
			}
			return game.Act{By: st.Turn(), Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}}, nil
		},
	})
	if errors.Is(err, errStaleAITask) {
		return nil // the game moved on without us
	}
	if err != nil {
		return fmt.Errorf("AI move %s in game %s: %w", uci, task.GameID, err)
	}
	s.cfg.Metrics.Count(obs.MetricMoves, 1)
	return nil
}

// aiRequest is what the engine needs for the AI's move: the live position,
// the game's history and the AI's clock.
func aiRequest(st *game.State, level string) AIMoveRequest {
	req := AIMoveRequest{Position: st.Position(), History: st.History(), Level: level}
	me := st.Turn()
	if tc := st.Options.TimeControl; tc.Kind == game.TimeFischer && st.Clock.Started[me] {
		req.Remaining = time.Duration(st.Clock.RemainingMs[me]) * time.Millisecond
		req.Increment = time.Duration(tc.IncSec) * time.Second
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", st.GameID, st.Ply())
	req.Seed = h.Sum64()
	return req
}

// Observation is a game as a caller sees it now: the committed state (after
// any timeout that was due) and the caller's seat (nil: a spectator).
type Observation struct {
	State *game.State
	Seat  *chess.Color
}

// Observe reads the game for a caller of the stream: authorized like
// GET /v1/games/{id}, except that a player token of nobody seated in it
// watches as a spectator (SPEC §15), with a due timeout applied, and
// nothing else changed (it says nothing of the caller's presence).
func (s *Service) Observe(ctx context.Context, gameID string, c Caller) (Observation, error) {
	out, err := s.update(ctx, txn{gameID: gameID, caller: c, access: watching, lookOnly: true})
	if err != nil {
		return Observation{}, err
	}
	return Observation{State: out.state, Seat: out.seat}, nil
}

// ViewFor is the view of a committed state for a seat (nil: a spectator)
// at the service's now.
func (s *Service) ViewFor(st *game.State, seat *chess.Color) (*game.View, error) {
	return game.ViewOf(st, seat, s.now())
}

// Decode reads a stored record (the fan-out function's stream records).
func (s *Service) Decode(rec GameRecord) (*game.State, error) { return s.decode(rec) }
