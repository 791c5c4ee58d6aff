package service

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"chessapi/shared/credential"
	"chessapi/shared/game"
	"chessapi/shared/retry"
)

// Players (SPEC §12): an identity an app keeps across games and devices.
// A player token authenticates as the player wherever a seat token of the
// player's seats works; games created or joined with it bind the seat to
// the player. Anonymous seats keep working as before.

// Profile is a player as the player routes show it.
type Profile struct {
	PlayerID   string
	Name       string
	Rating     int
	RatedGames int
	CreatedAt  time.Time
}

// RankKey is the rank of the player's rating ("kyu10", "dan1").
func (p Profile) RankKey() string { return game.RankKey(p.Rating) }

func profileOf(p PlayerRecord) Profile {
	return Profile{PlayerID: p.ID, Name: p.Name, Rating: p.Rating, RatedGames: p.RatedGames, CreatedAt: p.CreatedAt}
}

// NewPlayer is a player token just issued (shown only here), its session
// and its player; RecoveryCode is set (shown only here too) when the
// player was just created.
type NewPlayer struct {
	Token        string
	SessionID    string
	RecoveryCode string
	Player       Profile
}

// NewPlayerInput is a request to register a player.
type NewPlayerInput struct {
	// Name is the player's name; nil gives a default one ("Player 7KQ2").
	Name *string
}

// GamePage is one page of a player's games.
type GamePage struct {
	// PlayerID is whose games these are (so the edge can tell "you").
	PlayerID string
	Items    []MyGame
	// Next is the cursor of the next page; "" on the last one.
	Next string
}

// Link codes (credential.LinkCode): 8 characters from an alphabet without
// look-alikes (no 0/O, 1/I/L), single use, 10 minutes (SPEC §15). 31^8 ≈
// 8.5·10^11 codes, and a client gets LinkFailuresAllowed wrong tries per
// LinkWindow, so guessing one of the few live codes is out of reach.
const (
	LinkCodeTTL         = 10 * time.Minute
	LinkWindow          = 10 * time.Minute
	LinkFailuresAllowed = 10
)

// LinkCode is a code for a player's other device.
type LinkCode struct {
	Code      string
	ExpiresAt time.Time
}

// players returns the players port or ErrNoPlayers.
func (s *Service) players() (Players, error) {
	if s.cfg.Players == nil {
		return nil, ErrNoPlayers
	}
	return s.cfg.Players, nil
}

// defaultName is the name of a player created without one: "Player "
// and four characters of the unambiguous alphabet.
func (s *Service) defaultName() (string, error) {
	code, err := credential.LinkCode.Mint(s.cfg.Random)
	if err != nil {
		return "", err
	}
	return "Player " + code[:4], nil
}

// CreatePlayer registers a player and issues its first session (token)
// and its recovery code.
func (s *Service) CreatePlayer(ctx context.Context, in NewPlayerInput) (NewPlayer, error) {
	ps, err := s.players()
	if err != nil {
		return NewPlayer{}, err
	}
	var name string
	if in.Name != nil {
		if name, err = CheckName("name", *in.Name); err != nil {
			return NewPlayer{}, err
		}
	} else if name, err = s.defaultName(); err != nil {
		return NewPlayer{}, err
	}
	for attempt := 0; ; attempt++ {
		id, err := s.newRegisteredID()
		if err != nil {
			return NewPlayer{}, err
		}
		sess, token, err := s.newSession(id, "")
		if err != nil {
			return NewPlayer{}, err
		}
		code, codeHash, err := s.newRecoveryCode()
		if err != nil {
			return NewPlayer{}, err
		}
		rec := PlayerRecord{ID: id, Name: name, Rating: game.InitialRating, CreatedAt: sess.CreatedAt, Version: 1, RecoveryHash: codeHash}
		err = ps.CreatePlayer(ctx, rec, sess)
		if errors.Is(err, ErrAlreadyExists) && attempt == 0 {
			continue // a 128-bit id or 256-bit token collision: draw again
		}
		if err != nil {
			return NewPlayer{}, err
		}
		return NewPlayer{Token: token, SessionID: sess.ID, RecoveryCode: code, Player: profileOf(rec)}, nil
	}
}

// requirePlayer resolves the caller as a player: anything but a valid
// player token is ErrPlayerRequired.
func (s *Service) requirePlayer(ctx context.Context, c Caller) (PlayerRecord, error) {
	ps, err := s.players()
	if err != nil {
		return PlayerRecord{}, err
	}
	if !c.isPlayerToken() {
		return PlayerRecord{}, ErrPlayerRequired
	}
	c, err = s.resolve(ctx, c)
	if err != nil {
		return PlayerRecord{}, err
	}
	if c.player != nil {
		return *c.player, nil
	}
	return ps.Player(ctx, c.playerID)
}

// Me returns the caller's profile.
func (s *Service) Me(ctx context.Context, c Caller) (Profile, error) {
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return Profile{}, err
	}
	return profileOf(p), nil
}

// Rename changes the caller's name (seats already taken keep the name
// they were taken with).
func (s *Service) Rename(ctx context.Context, c Caller, name string) (Profile, error) {
	name, err := CheckName("name", name)
	if err != nil {
		return Profile{}, err
	}
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return Profile{}, err
	}
	next, err := s.updatePlayer(ctx, p.ID, func(p *PlayerRecord) error {
		p.Name = name
		return nil
	})
	if err != nil {
		return Profile{}, err
	}
	return profileOf(next), nil
}

// updatePlayer is the one way a player record changes, the players' twin
// of the one game transaction (update): read the record, let change edit
// a copy, write it conditionally on the version read, and on a lost race
// run again from a fresh read, at most retry.PlayerWrite's rounds (then
// ErrBusy). Every change of a player goes through it, so concurrent ones
// (two games ending at once, a rename meanwhile) apply one at a time, each
// to the record as the one before left it.
//
// change sees the record as stored now and may run more than once (once
// per round): it must decide from its argument alone. It returns
// errUnchanged when there is nothing to write (the record is returned as
// read) or another error to leave the player as it was. The id and the
// version are the loop's: change cannot alter them.
func (s *Service) updatePlayer(ctx context.Context, id string, change func(*PlayerRecord) error) (PlayerRecord, error) {
	ps, err := s.players()
	if err != nil {
		return PlayerRecord{}, err
	}
	// Changes of one player in this process queue here rather than race
	// for the conditional write (twenty rated games ending at once would
	// otherwise lose round after round); the retries are left for the
	// writers of other processes.
	unlock := s.playerLocks.lock(id)
	defer unlock()
	var out PlayerRecord
	err = s.retries.player.Do(ctx, func(int) error {
		cur, err := ps.Player(ctx, id)
		if err != nil {
			return retry.Permanent(err)
		}
		next := cur
		// change edits its own copy
		next.Applied, next.RatingHistory = slices.Clone(cur.Applied), slices.Clone(cur.RatingHistory)
		switch err := change(&next); {
		case errors.Is(err, errUnchanged):
			out = cur
			return nil
		case err != nil:
			return retry.Permanent(err)
		}
		next.ID, next.Version = cur.ID, cur.Version+1
		err = ps.UpdatePlayer(ctx, next, cur.Version)
		if errors.Is(err, ErrVersionConflict) {
			return err // another change came first: again, from a fresh read
		}
		if err != nil {
			return retry.Permanent(err)
		}
		out = next
		return nil
	})
	if errors.Is(err, ErrVersionConflict) {
		return PlayerRecord{}, ErrBusy
	}
	return out, err
}

// errUnchanged is what an updatePlayer change returns when the record
// already is as it should be.
var errUnchanged = errors.New("service: player unchanged")

// keyedLocks is one mutex per key, made when a key is first locked and
// dropped when its last holder or waiter leaves.
type keyedLocks struct {
	mu    sync.Mutex
	locks map[string]*keyedLock
}

type keyedLock struct {
	mu    sync.Mutex
	users int // holders and waiters
}

// lock locks key and returns its unlock.
func (k *keyedLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*keyedLock{}
	}
	l := k.locks[key]
	if l == nil {
		l = &keyedLock{}
		k.locks[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}

// Page sizes of the lists (SPEC §15).
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

// NewLinkCode issues a single-use code with which another device gets a
// token for the caller's player.
func (s *Service) NewLinkCode(ctx context.Context, c Caller) (LinkCode, error) {
	p, err := s.requirePlayer(ctx, c)
	if err != nil {
		return LinkCode{}, err
	}
	for attempt := 0; ; attempt++ {
		code, hash, err := s.newCredential(credential.LinkCode)
		if err != nil {
			return LinkCode{}, err
		}
		expires := s.now().Add(LinkCodeTTL).UTC().Truncate(time.Second)
		err = s.cfg.Players.PutLinkCode(ctx, hash, p.ID, expires)
		if errors.Is(err, ErrAlreadyExists) && attempt < 3 {
			continue
		}
		if err != nil {
			return LinkCode{}, err
		}
		return LinkCode{Code: code, ExpiresAt: expires}, nil
	}
}

// Link uses a link code: a new session (token) for the code's player
// (earlier ones keep working). client identifies the caller for the limit on wrong
// tries (its address): past LinkFailuresAllowed in LinkWindow every try
// is refused until the window ends.
func (s *Service) Link(ctx context.Context, code, client string) (NewPlayer, error) {
	ps, err := s.players()
	if err != nil {
		return NewPlayer{}, err
	}
	key := "linkfail#" + client
	now := s.now()
	if n, end, err := ps.Count(ctx, key, LinkWindow, now); err != nil {
		return NewPlayer{}, err
	} else if n >= LinkFailuresAllowed {
		return NewPlayer{}, &RateLimitError{Wait: end.Sub(now)}
	}
	playerID := ""
	if norm, ok := credential.LinkCode.Normalize(code); ok {
		playerID, err = ps.ClaimLinkCode(ctx, HashToken(norm), now)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return NewPlayer{}, err
		}
	}
	if playerID == "" {
		if _, _, err := ps.Hit(ctx, key, LinkWindow, now); err != nil {
			return NewPlayer{}, err
		}
		return NewPlayer{}, ErrLinkCodeInvalid
	}
	p, err := ps.Player(ctx, playerID)
	if errors.Is(err, ErrNotFound) {
		return NewPlayer{}, ErrLinkCodeInvalid // the player was deleted meanwhile
	}
	if err != nil {
		return NewPlayer{}, err
	}
	np, err := s.addSession(ctx, p)
	if errors.Is(err, ErrPlayerNotFound) {
		return NewPlayer{}, ErrLinkCodeInvalid
	}
	return np, err
}
