package service

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/retry"
)

// The lobby (SPEC §12): each room lists its open waiting games, oldest
// first, and quick pairing joins the oldest compatible one or waits in a
// new one.

// LobbyPage is one page of a room's lobby.
type LobbyPage struct {
	Items []GameSummary
	Next  string
}

// LobbyFilter narrows a room's lobby to some of its games.
type LobbyFilter struct {
	// Correspondence, when set, keeps only the correspondence games
	// (timeControl days:N) when true, only the others when false.
	Correspondence *bool
}

func (f LobbyFilter) keeps(o game.Options) bool {
	return f.Correspondence == nil || *f.Correspondence == o.TimeControl.Correspondence()
}

// lobbyRounds bounds how many store pages one lobby page reads to fill
// itself when its filter leaves games out: past it the page is shorter
// than the limit, and its cursor goes on from where the reading stopped.
const lobbyRounds = 8

// Lobby lists the open waiting games of a room that filter keeps.
func (s *Service) Lobby(ctx context.Context, room game.Room, limit int, cursor string, filter LobbyFilter) (LobbyPage, error) {
	if s.cfg.Lister == nil {
		return LobbyPage{}, ErrNoPlayers
	}
	page := LobbyPage{Items: make([]GameSummary, 0, limit)}
	now := s.now().UnixMilli()
	// Each round asks for no more games than the page still has room for,
	// so that every game read is either on the page or left out, and the
	// store's cursor after the last round is the page's.
	for round := 0; round < lobbyRounds && len(page.Items) < limit; round++ {
		entries, next, err := s.cfg.Lister.Lobby(ctx, string(room), limit-len(page.Items), cursor)
		if errors.Is(err, ErrBadCursor) {
			return LobbyPage{}, game.FieldFormat("cursor", "cursor", nil)
		}
		if err != nil {
			return LobbyPage{}, err
		}
		for _, e := range entries {
			sum, err := decodeSummary(e)
			if err != nil {
				return LobbyPage{}, err
			}
			if sum.CreatedAt+int64(sum.Options.WaitingExpirySec)*1000 <= now {
				continue // expired, its timer about to end it
			}
			if filter.keeps(sum.Options) {
				page.Items = append(page.Items, sum)
			}
		}
		page.Next, cursor = next, next
		if next == "" {
			break
		}
	}
	return page, nil
}

// QuickInput asks to be paired in a room.
type QuickInput struct {
	Room game.Room
	// Options, when set, are the options the player wants: only games with
	// the same rules, variant, time control, draw mode, undo and offers
	// are joined, and a game created has them. Nil: any game in the room, and
	// the defaults for a new one.
	Options *game.Options
	Caller  Caller
}

// QuickResult is the answer to quick pairing: Matched when the caller
// joined a waiting game (it starts now), else the caller's own waiting
// game. Token is empty when the caller already held that seat (their
// player token acts for it).
type QuickResult struct {
	Matched bool
	Seated
}

// Quick pairing tuning.
const (
	// quickScan is how many of a room's oldest waiting games are tried.
	quickScan = 50
	// quickSlotTTL bounds how long a claimed pairing slot may point at a
	// game that was never created (its creator died after claiming).
	quickSlotTTL = 10 * time.Second
	// quickCreateWait is how long a requester waits for a slot's game to
	// appear before taking the slot over.
	quickCreateWait = 2 * time.Second
)

// compatible reports whether a waiting game's options suit what a quick
// pairing asked for.
func compatible(want *game.Options, have game.Options) bool {
	if want == nil {
		return true
	}
	return want.Variant == have.Variant && want.TimeControl == have.TimeControl && want.DrawMode == have.DrawMode &&
		want.Undo == have.Undo && want.DrawOffer == have.DrawOffer && want.Rules == have.Rules
}

// QuickPair joins the oldest compatible waiting game of another player in
// the room, or makes the caller wait in a new one. Two callers asking at
// once are paired with each other: a new quick game is made only by the
// holder of the room's pairing slot (a conditional write), and whoever
// finds the slot taken joins its game instead.
func (s *Service) QuickPair(ctx context.Context, in QuickInput) (QuickResult, error) {
	caller, err := s.resolve(ctx, in.Caller)
	if err != nil {
		return QuickResult{}, err
	}
	me, err := s.requirePlayer(ctx, caller)
	if err != nil {
		return QuickResult{}, err
	}
	if !in.Room.Admits(me.Rating) {
		return QuickResult{}, &game.RuleError{Code: game.CodeRatingOutOfRange}
	}
	opts := game.DefaultOptionsFor(in.Room)
	if in.Options != nil {
		opts = *in.Options
	}
	opts.Room = in.Room
	slot := "quick#" + string(in.Room) + "#" + string(opts.Variant) + "#" + opts.TimeControl.String() + "#" +
		string(opts.DrawMode) + "#" + boolKey(opts.DrawOffer) + "#" + undoKey(opts.Undo) + "#" + string(opts.Rules)
	var res QuickResult
	err = retry.QuickPair.Do(ctx, func(int) error {
		var err error
		res, err = s.quickRound(ctx, in, caller, me, opts, slot)
		if errors.Is(err, errPairAgain) {
			return err
		}
		return retry.Permanent(err)
	})
	var gaveUp *retry.Error
	switch {
	case errors.As(err, &gaveUp) && gaveUp.Stopped != nil:
		return QuickResult{}, gaveUp.Stopped
	case errors.Is(err, errPairAgain):
		return QuickResult{}, ErrBusy
	}
	return res, err
}

// errPairAgain is a pairing round's answer when another requester took
// the seat it went for: another round, after a pause.
var errPairAgain = errors.New("service: pairing round lost")

// quickRound is one round of a quick pairing; errPairAgain asks for
// another.
func (s *Service) quickRound(ctx context.Context, in QuickInput, caller Caller, me PlayerRecord, opts game.Options, slot string) (QuickResult, error) {
	// 1. The room's oldest compatible game of someone else.
	page, err := s.Lobby(ctx, in.Room, quickScan, "", LobbyFilter{})
	if err != nil {
		return QuickResult{}, err
	}
	var mine *GameSummary
	candidates := 0
	// Requesters arriving together would all race for the very
	// oldest game, one winning per round; each starts at a random
	// one of the oldest instead (then goes round them in age order),
	// so they spread over the waiting games.
	n := len(page.Items)
	offset := 0
	if n > 0 {
		offset = rand.IntN(n)
	}
	for k := range n {
		i := (offset + k) % n
		sum := page.Items[i]
		host := hostOf(sum)
		if host == nil {
			continue
		}
		if host.Bound && host.PlayerID == me.ID {
			mine = &page.Items[i]
			continue
		}
		if !compatible(in.Options, sum.Options) {
			continue
		}
		if blocked, err := s.blocked(ctx, me.ID, boundID(host)); err != nil {
			return QuickResult{}, err
		} else if blocked {
			continue // a blocked pair is never paired
		}
		candidates++
		if seated, err := s.Join(ctx, sum.GameID, JoinInput{Caller: caller}); err == nil {
			return QuickResult{Matched: true, Seated: seated}, nil
		} else if !lostSeat(err) {
			return QuickResult{}, err
		}
	}
	if mine != nil {
		// Waiting already (an earlier quick pairing): stay there
		// rather than wait in two games.
		return s.ownGame(ctx, *mine, caller)
	}
	if candidates > 0 {
		// Every game tried went to someone else meanwhile: the lobby
		// has changed, look again before making a game of our own.
		return QuickResult{}, errPairAgain
	}
	// 2. The pairing slot: claim it and wait in a new game, or join
	// the game of whoever holds it.
	newID, err := s.newGameID()
	if err != nil {
		return QuickResult{}, err
	}
	holder, err := s.cfg.Players.ClaimSlot(ctx, slot, newID, quickSlotTTL, s.now())
	switch {
	case err == nil:
		seated, err := s.createQuick(ctx, newID, opts, caller)
		if err != nil {
			_ = s.cfg.Players.ReleaseSlot(ctx, slot, newID)
			return QuickResult{}, err
		}
		return QuickResult{Seated: seated}, nil
	case !errors.Is(err, ErrSlotTaken):
		return QuickResult{}, err
	}
	seated, joined, err := s.joinSlotGame(ctx, slot, holder, caller, me.ID)
	if errors.Is(err, ErrBlocked) {
		// The slot's game is of a player blocked with the caller: the
		// caller waits in a game of its own, beside the slot.
		seated, err := s.createQuick(ctx, newID, opts, caller)
		if err != nil {
			return QuickResult{}, err
		}
		return QuickResult{Seated: seated}, nil
	}
	if err != nil {
		return QuickResult{}, err
	}
	if joined {
		return QuickResult{Matched: !seated.isOwn, Seated: seated.Seated}, nil
	}
	// The slot's game is gone or full: the slot was freed; again.
	return QuickResult{}, errPairAgain
}

type slotSeat struct {
	Seated
	isOwn bool
}

// joinSlotGame joins the game holding the pairing slot. A game that is
// full or over frees the slot; one not created yet is waited for a moment
// (its creator just claimed the slot), then freed.
func (s *Service) joinSlotGame(ctx context.Context, slot, gameID string, caller Caller, me string) (slotSeat, bool, error) {
	deadline := time.Now().Add(quickCreateWait)
	for {
		cur, err := s.load(ctx, gameID)
		if errors.Is(err, ErrNotFound) {
			if time.Now().Before(deadline) {
				select {
				case <-time.After(50 * time.Millisecond):
					continue
				case <-ctx.Done():
					return slotSeat{}, false, ctx.Err()
				}
			}
			return slotSeat{}, false, s.cfg.Players.ReleaseSlot(ctx, slot, gameID)
		}
		if err != nil {
			return slotSeat{}, false, err
		}
		if c, ok := cur.state.SeatOf(me); ok && cur.state.Seats[c].Bound && cur.state.Phase == game.PhaseWaiting {
			view, err := game.ViewOf(cur.state, &c, s.now())
			if err != nil {
				return slotSeat{}, false, err
			}
			return slotSeat{Seated: Seated{GameID: gameID, PlayerID: me, Game: view}, isOwn: true}, true, nil
		}
		seated, err := s.Join(ctx, gameID, JoinInput{Caller: caller})
		if err == nil {
			return slotSeat{Seated: seated}, true, nil
		}
		if errors.Is(err, ErrBlocked) {
			return slotSeat{}, false, err // the slot stays its holder's
		}
		if !lostSeat(err) {
			return slotSeat{}, false, err
		}
		return slotSeat{}, false, s.cfg.Players.ReleaseSlot(ctx, slot, gameID)
	}
}

// lostSeat reports a join refused because the seat went to someone else
// (or the game is over): the pairing moves on.
func lostSeat(err error) bool {
	var re *game.RuleError
	if errors.As(err, &re) {
		switch re.Code {
		case game.CodeGameFull, game.CodeGameNotWaiting, game.CodeAlreadySeated, game.CodeRatingOutOfRange, game.CodeInviteRequired:
			return true
		}
	}
	// A block made after the lobby was read also moves the pairing on.
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrBlocked)
}

// createQuick makes the quick pairing's waiting game, with the id the
// pairing slot holds.
func (s *Service) createQuick(ctx context.Context, id string, opts game.Options, caller Caller) (Seated, error) {
	host, token, err := s.seatHolder(ctx, caller, PlayerInput{})
	if err != nil {
		return Seated{}, err
	}
	seed, err := s.newSeed()
	if err != nil {
		return Seated{}, err
	}
	st, err := s.insert(ctx, id, func(id string) (*game.State, []game.Event, error) {
		return game.New(game.NewGame{GameID: id, Options: opts, Host: host, Seed: seed}, s.now())
	})
	if err != nil {
		return Seated{}, err
	}
	color, _ := st.SeatOf(host.ID)
	view, err := game.ViewOf(st, &color, s.now())
	if err != nil {
		return Seated{}, err
	}
	return Seated{GameID: st.GameID, PlayerID: host.ID, Token: token, Game: view}, nil
}

// ownGame answers with the caller's own waiting game.
func (s *Service) ownGame(ctx context.Context, sum GameSummary, caller Caller) (QuickResult, error) {
	out, err := s.current(ctx, sum.GameID, caller)
	if err != nil {
		return QuickResult{}, err
	}
	view, err := game.ViewOf(out.state, out.seat, s.now())
	if err != nil {
		return QuickResult{}, err
	}
	return QuickResult{Seated: Seated{GameID: sum.GameID, PlayerID: caller.playerID, Game: view}}, nil
}

// boundID is a seat's registered player ("" for an anonymous seat).
func boundID(seat *SummarySeat) string {
	if seat.Bound {
		return seat.PlayerID
	}
	return ""
}

// hostOf is a waiting game's one seat.
func hostOf(sum GameSummary) *SummarySeat {
	for _, c := range []chess.Color{chess.White, chess.Black} {
		if sum.Seats[c] != nil {
			return sum.Seats[c]
		}
	}
	return nil
}

func boolKey(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func undoKey(u game.UndoAllowance) string {
	b, _ := u.MarshalJSON()
	return string(b)
}
