package service

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"chessapi/shared/chess"
	"chessapi/shared/credential"
	"chessapi/shared/game"
)

// Accounts (SPEC §16.2): every player token is a session, which its owner
// lists, labels and revokes; a recovery code gives a lost phone's player a
// new session; a player can delete their account; players block each
// other; anyone reads a player's public profile.

// Errors of the account routes.
var (
	// ErrInvalidToken: a player token of the issued form that
	// authenticates nobody (never issued, its session revoked, its player
	// deleted).
	ErrInvalidToken = errors.New("token authenticates nobody")
	// ErrPlayerNotFound: no player has this id (or they deleted their
	// account).
	ErrPlayerNotFound = errors.New("player not found")
	// ErrSessionNotFound: the caller's player has no session of this id.
	ErrSessionNotFound = errors.New("session not found")
	// ErrRecoveryCodeInvalid: the player has no such recovery code.
	ErrRecoveryCodeInvalid = errors.New("recovery code invalid")
	// ErrBlocked: one of the two players blocks the other.
	ErrBlocked = errors.New("blocked")
	// ErrTooManyBlocks: the player blocks as many players as anyone may.
	ErrTooManyBlocks = errors.New("too many blocks")
)

// Tuning of accounts.
const (
	// SessionTouchEvery is how precisely a session's lastUsedAt follows
	// its use: a request writes it only when the stored one is older, so
	// an active session costs one write per interval, not one per
	// request.
	SessionTouchEvery = 10 * time.Minute
	// DeletedTokenTTL is how long a deleted player's tokens are kept as
	// tombstones: a DELETE /v1/players/me retried with one within it is
	// answered as the deletion was (204, and the deletion's work is
	// finished if it was cut short); any other request is 401 either way.
	DeletedTokenTTL = 24 * time.Hour
	// RecoveryWindow and RecoveryFailuresAllowed limit guessing a
	// player's recovery code: past 10 wrong codes for one player in 10
	// minutes, every try for that player waits for the window's end.
	RecoveryWindow          = 10 * time.Minute
	RecoveryFailuresAllowed = 10
	// MaxLabelRunes is the longest session label.
	MaxLabelRunes = 40
	// DefaultMaxBlocks bounds the players one player may block
	// (Config.MaxBlocks).
	DefaultMaxBlocks = 500
	// RatingHistoryShown is how many rating applications a public
	// profile shows (the record keeps ratingHistoryKept).
	RatingHistoryShown = 50
	ratingHistoryKept  = 64
)

// SessionInfo is a session as its owner sees it.
type SessionInfo struct {
	ID         string
	Label      string
	CreatedAt  time.Time
	LastUsedAt time.Time
	// Current: the session of the token that asked.
	Current bool
}

// PublicProfile is a player as anyone sees them (GET /v1/players/{id}).
type PublicProfile struct {
	Profile
	// RatingHistory is the rating after each of the player's last rated
	// games, oldest first.
	RatingHistory []RatingEntry
}

// BlockInfo is a blocked player as the blocker's list shows them.
type BlockInfo struct {
	PlayerID  string
	Name      string
	CreatedAt time.Time
}

// SessionsEnded is told of sessions that ended (revoked, or their player
// deleted): what hangs off a session goes with it (the local stream
// closes the session's connections; the data table forgets their
// connection records; devices, issue 24, are removed). It is called after
// the sessions' tokens stopped working; an error is logged (the token
// already authenticates nobody, so a leftover cannot act).
type SessionsEnded func(ctx context.Context, ended []Session) error

// sessionHooks are the functions told of ended sessions.
type sessionHooks struct {
	mu    sync.Mutex
	hooks []SessionsEnded
}

// OnSessionsEnded adds f to the functions told of ended sessions.
func (s *Service) OnSessionsEnded(f SessionsEnded) {
	s.sessionHooks.mu.Lock()
	defer s.sessionHooks.mu.Unlock()
	s.sessionHooks.hooks = append(s.sessionHooks.hooks, f)
}

func (s *Service) sessionsEnded(ctx context.Context, ended []Session) {
	if len(ended) == 0 {
		return
	}
	s.sessionHooks.mu.Lock()
	hooks := slices.Clone(s.sessionHooks.hooks)
	s.sessionHooks.mu.Unlock()
	for _, f := range hooks {
		if err := f(ctx, ended); err != nil {
			s.log.WarnContext(ctx, "what hangs off an ended session was not all removed", "sessions", len(ended), "err", err)
		}
	}
}

// newSession mints a session (and its token) for a player.
func (s *Service) newSession(playerID, label string) (Session, string, error) {
	token, hash, err := s.newCredential(credential.PlayerToken)
	if err != nil {
		return Session{}, "", err
	}
	id, err := credential.SessionID.Mint(s.cfg.Random)
	if err != nil {
		return Session{}, "", err
	}
	now := s.now().UTC().Truncate(time.Millisecond)
	return Session{ID: id, PlayerID: playerID, TokenHash: hash, Label: label, CreatedAt: now, LastUsedAt: now}, token, nil
}

// legacySessionID is the session id of a token issued before sessions:
// drawn from the token's hash, so that every process adopting the token
// at once agrees on it (and it says nothing of the token: a hash of a
// hash).
func legacySessionID(tokenHash string) string {
	sum := sha256.Sum256([]byte("chessapi session id\x00" + tokenHash))
	return credential.SessionID.Prefix() + base64.RawURLEncoding.EncodeToString(sum[:16])
}

// adopt gives a token issued before sessions its session (lazily, at its
// first use since): created now, unlabelled.
func (s *Service) adopt(ctx context.Context, sess Session) (Session, error) {
	now := s.now().UTC().Truncate(time.Millisecond)
	sess.ID, sess.CreatedAt, sess.LastUsedAt = legacySessionID(sess.TokenHash), now, now
	adopted, err := s.cfg.Players.AdoptToken(ctx, sess)
	if errors.Is(err, ErrNotFound) {
		return Session{}, ErrInvalidToken // revoked or deleted meanwhile
	}
	if err != nil {
		return Session{}, fmt.Errorf("adopt a token of %s: %w", sess.PlayerID, err)
	}
	return adopted, nil
}

// touch records a session's use, at most every SessionTouchEvery. A failure
// is logged: the request goes on (lastUsedAt is for the owner's list).
func (s *Service) touch(ctx context.Context, sess Session) {
	now := s.now().UTC().Truncate(time.Millisecond)
	if now.Sub(sess.LastUsedAt) < SessionTouchEvery {
		return
	}
	if err := s.cfg.Players.TouchSession(ctx, sess, now); err != nil && !errors.Is(err, ErrNotFound) {
		s.log.WarnContext(ctx, "session use not recorded", "session", sess.ID, "err", err)
	}
}

// requireSession resolves the caller as a player with its session.
func (s *Service) requireSession(ctx context.Context, c Caller) (Caller, error) {
	if _, err := s.players(); err != nil {
		return c, err
	}
	if !c.isPlayerToken() {
		return c, ErrPlayerRequired
	}
	return s.resolve(ctx, c)
}

// Sessions lists the caller's sessions, oldest first, the caller's own
// marked Current.
func (s *Service) Sessions(ctx context.Context, c Caller) ([]SessionInfo, error) {
	c, err := s.requireSession(ctx, c)
	if err != nil {
		return nil, err
	}
	list, err := s.cfg.Players.Sessions(ctx, c.playerID)
	if err != nil {
		return nil, err
	}
	out := make([]SessionInfo, 0, len(list))
	for _, sess := range list {
		out = append(out, infoOf(sess, sess.ID == c.session.ID))
	}
	return out, nil
}

// RevokeSession ends one of the caller's sessions (the caller's own too):
// its token answers 401 from the next request, and what hangs off it goes
// (SessionsEnded). Revoking a session that is gone already is
// ErrSessionNotFound.
func (s *Service) RevokeSession(ctx context.Context, c Caller, sessionID string) error {
	c, err := s.requireSession(ctx, c)
	if err != nil {
		return err
	}
	if !credential.SessionID.WellFormed(sessionID) {
		return ErrSessionNotFound
	}
	sess, err := s.cfg.Players.DeleteSession(ctx, c.playerID, sessionID)
	if errors.Is(err, ErrNotFound) {
		return ErrSessionNotFound
	}
	if err != nil {
		return err
	}
	s.sessionsEnded(ctx, []Session{sess})
	return nil
}

// CheckLabel validates a session label: NFC, trimmed, at most
// MaxLabelRunes characters of the kind a name may hold ("" clears it).
func CheckLabel(field, label string) (string, error) {
	return checkLabel(field, label)
}

func checkLabel(field, label string) (string, error) {
	if !utf8.ValidString(label) {
		return "", game.FieldLength(field, MaxLabelRunes)
	}
	label = strings.TrimSpace(label)
	if utf8.RuneCountInString(label) > MaxLabelRunes {
		return "", game.FieldLength(field, MaxLabelRunes)
	}
	for _, r := range label {
		if !nameRune(r) {
			return "", game.FieldLength(field, MaxLabelRunes)
		}
	}
	return label, nil
}

// LabelCurrentSession sets the label of the caller's session.
func (s *Service) LabelCurrentSession(ctx context.Context, c Caller, label string) (SessionInfo, error) {
	label, err := checkLabel("label", label)
	if err != nil {
		return SessionInfo{}, err
	}
	c, err = s.requireSession(ctx, c)
	if err != nil {
		return SessionInfo{}, err
	}
	if err := s.cfg.Players.LabelSession(ctx, c.session, label); errors.Is(err, ErrNotFound) {
		return SessionInfo{}, ErrInvalidToken // revoked meanwhile
	} else if err != nil {
		return SessionInfo{}, err
	}
	sess := c.session
	sess.Label = label
	return infoOf(sess, true), nil
}

// infoOf is a session as its owner sees it: never used means last used
// when it was made.
func infoOf(sess Session, current bool) SessionInfo {
	used := sess.LastUsedAt
	if used.Before(sess.CreatedAt) {
		used = sess.CreatedAt
	}
	return SessionInfo{ID: sess.ID, Label: sess.Label, CreatedAt: sess.CreatedAt, LastUsedAt: used, Current: current}
}

// newRecoveryCode mints a recovery code and its stored hash. The hash is
// the credential table's (SHA-256), not a slow password hash: the code is
// 24 random characters (at least 2^115.9 tries to guess, see
// shared/credential), so a stolen hash cannot be searched whatever its
// speed, and the online guesses are limited per player (RecoveryWindow).
func (s *Service) newRecoveryCode() (code, hash string, err error) {
	return s.newCredential(credential.RecoveryCode)
}

// NewRecoveryCode issues a new recovery code for the caller's player; the
// previous one stops working.
func (s *Service) NewRecoveryCode(ctx context.Context, c Caller) (string, error) {
	c, err := s.requireSession(ctx, c)
	if err != nil {
		return "", err
	}
	code, hash, err := s.newRecoveryCode()
	if err != nil {
		return "", err
	}
	if _, err := s.updatePlayer(ctx, c.playerID, func(p *PlayerRecord) error {
		p.RecoveryHash = hash
		return nil
	}); err != nil {
		if errors.Is(err, ErrNotFound) {
			return "", ErrInvalidToken
		}
		return "", err
	}
	return code, nil
}

// Recover gives a new session to the player whose recovery code this is
// (earlier sessions keep working; the code stays valid until re-issued).
// Wrong codes are counted per player: past RecoveryFailuresAllowed in
// RecoveryWindow every try for that player is refused until the window
// ends, the right code too.
func (s *Service) Recover(ctx context.Context, playerID, code string) (NewPlayer, error) {
	ps, err := s.players()
	if err != nil {
		return NewPlayer{}, err
	}
	now := s.now()
	if !validPlayerID(playerID) {
		return NewPlayer{}, ErrRecoveryCodeInvalid
	}
	key := "recoverfail#" + playerID
	if n, end, err := ps.Count(ctx, key, RecoveryWindow, now); err != nil {
		return NewPlayer{}, err
	} else if n >= RecoveryFailuresAllowed {
		return NewPlayer{}, &RateLimitError{Wait: end.Sub(now)}
	}
	p, err := ps.Player(ctx, playerID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return NewPlayer{}, err
	}
	norm, ok := credential.RecoveryCode.Normalize(code)
	if err != nil || !ok || p.RecoveryHash == "" ||
		subtle.ConstantTimeCompare([]byte(HashToken(norm)), []byte(p.RecoveryHash)) != 1 {
		if _, _, err := ps.Hit(ctx, key, RecoveryWindow, now); err != nil {
			return NewPlayer{}, err
		}
		return NewPlayer{}, ErrRecoveryCodeInvalid
	}
	return s.addSession(ctx, p)
}

// addSession issues a new session (token) for an existing player.
func (s *Service) addSession(ctx context.Context, p PlayerRecord) (NewPlayer, error) {
	for attempt := 0; ; attempt++ {
		sess, token, err := s.newSession(p.ID, "")
		if err != nil {
			return NewPlayer{}, err
		}
		err = s.cfg.Players.AddSession(ctx, sess)
		if errors.Is(err, ErrAlreadyExists) && attempt == 0 {
			continue // a 256-bit token or 128-bit id collision: draw again
		}
		if errors.Is(err, ErrNotFound) {
			return NewPlayer{}, ErrPlayerNotFound // deleted meanwhile
		}
		if err != nil {
			return NewPlayer{}, err
		}
		return NewPlayer{Token: token, SessionID: sess.ID, Player: profileOf(p)}, nil
	}
}

// validPlayerID reports whether id could be a registered player's id;
// anything else is "not found" without a store read.
func validPlayerID(id string) bool {
	rest, ok := strings.CutPrefix(id, RegisteredIDPrefix)
	return ok && validGameID(rest)
}

// PublicProfileOf is a player's public profile; ErrPlayerNotFound for an
// unknown or deleted player.
func (s *Service) PublicProfileOf(ctx context.Context, playerID string) (PublicProfile, error) {
	ps, err := s.players()
	if err != nil {
		return PublicProfile{}, err
	}
	if !validPlayerID(playerID) {
		return PublicProfile{}, ErrPlayerNotFound
	}
	p, err := ps.Player(ctx, playerID)
	if errors.Is(err, ErrNotFound) {
		return PublicProfile{}, ErrPlayerNotFound
	}
	if err != nil {
		return PublicProfile{}, err
	}
	history := p.RatingHistory
	if len(history) > RatingHistoryShown {
		history = history[len(history)-RatingHistoryShown:]
	}
	return PublicProfile{Profile: profileOf(p), RatingHistory: slices.Clone(history)}, nil
}

// Block makes the caller block another player: they are never paired,
// cannot join each other's waiting games and cannot ask each other for a
// rematch. Blocking again is no error.
func (s *Service) Block(ctx context.Context, c Caller, blockedID string) error {
	c, err := s.requireSession(ctx, c)
	if err != nil {
		return err
	}
	if blockedID == c.playerID {
		return game.FieldNotAllowed("playerId", "blockSelf")
	}
	if !validPlayerID(blockedID) {
		return ErrPlayerNotFound
	}
	if _, err := s.cfg.Players.Player(ctx, blockedID); errors.Is(err, ErrNotFound) {
		return ErrPlayerNotFound
	} else if err != nil {
		return err
	}
	list, err := s.cfg.Players.Blocks(ctx, c.playerID)
	if err != nil {
		return err
	}
	if len(list) >= s.cfg.MaxBlocks && !slices.ContainsFunc(list, func(b Block) bool { return b.PlayerID == blockedID }) {
		return ErrTooManyBlocks
	}
	return s.cfg.Players.Block(ctx, c.playerID, blockedID, s.now().UTC().Truncate(time.Millisecond))
}

// Unblock lifts the caller's block of another player (no error when there
// is none).
func (s *Service) Unblock(ctx context.Context, c Caller, blockedID string) error {
	c, err := s.requireSession(ctx, c)
	if err != nil {
		return err
	}
	if !validPlayerID(blockedID) {
		return ErrPlayerNotFound
	}
	return s.cfg.Players.Unblock(ctx, c.playerID, blockedID)
}

// Blocks lists the players the caller blocks, oldest first, with their
// names now.
func (s *Service) Blocks(ctx context.Context, c Caller) ([]BlockInfo, error) {
	c, err := s.requireSession(ctx, c)
	if err != nil {
		return nil, err
	}
	list, err := s.cfg.Players.Blocks(ctx, c.playerID)
	if err != nil {
		return nil, err
	}
	out := make([]BlockInfo, 0, len(list))
	for _, b := range list {
		info := BlockInfo{PlayerID: b.PlayerID, Name: game.DeletedPlayerName, CreatedAt: b.CreatedAt}
		switch p, err := s.cfg.Players.Player(ctx, b.PlayerID); {
		case err == nil:
			info.Name = p.Name
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
		out = append(out, info)
	}
	return out, nil
}

// blocked reports whether two registered players block each other (either
// way); anonymous seats ("" ids) are never blocked.
func (s *Service) blocked(ctx context.Context, a, b string) (bool, error) {
	if a == "" || b == "" || a == b || s.cfg.Players == nil {
		return false, nil
	}
	return s.cfg.Players.Blocked(ctx, a, b)
}

// DeleteMe deletes the caller's player (SPEC §16.2), in this order, each
// step safe to run again:
//
//  1. every session ends: the tokens become tombstones, so from here on
//     nothing can act as the player, and a retry of this request (the same
//     token) is recognised and runs the remaining steps again;
//  2. what hangs off the sessions goes (SessionsEnded);
//  3. every game of the player is told (game.PlayerDeleted): waiting games
//     are cancelled, games in play resigned (or aborted), and the player's
//     name is replaced in all of them — active and finished, so views,
//     lists, the lobby and PGNs no longer show it; a rematch waiting for
//     the player is cancelled too;
//  4. the player's devices and inbox go (SPEC §16.3);
//  5. the player record, its blocks (both ways) and its link codes go.
//
// A deleted player's rated games keep their numbers (ratingChange), and
// their opponents' rating histories keep the games' ids, without the name.
func (s *Service) DeleteMe(ctx context.Context, c Caller) error {
	ps, err := s.players()
	if err != nil {
		return err
	}
	if !c.isPlayerToken() {
		return ErrPlayerRequired
	}
	var playerID string
	resolved, err := s.resolveSession(ctx, c, true)
	var deleted *DeletedError
	switch {
	case errors.As(err, &deleted):
		playerID = deleted.PlayerID // a retry: finish what may be left
	case err != nil:
		return err
	default:
		playerID = resolved.playerID
	}
	ended, err := ps.EndSessions(ctx, playerID, s.now().Add(DeletedTokenTTL))
	if err != nil {
		return err
	}
	s.sessionsEnded(ctx, ended)
	if err := s.endGamesOf(ctx, playerID); err != nil {
		return err
	}
	// The devices and the inbox (SPEC §16.3), after the games' ends whose
	// notifications the inline effects just delivered.
	if err := s.DeletePlayerNotifications(ctx, playerID); err != nil {
		return err
	}
	return ps.DeletePlayer(ctx, playerID)
}

// endGamesOf tells every game of the player (active ones first, then the
// finished ones) of the deletion, and the rematches kept for the player.
func (s *Service) endGamesOf(ctx context.Context, playerID string) error {
	if s.cfg.Lister == nil {
		return nil
	}
	for _, finished := range []bool{false, true} {
		cursor := ""
		for {
			entries, next, err := s.cfg.Lister.PlayerGames(ctx, playerID, finished, MaxPageSize, cursor)
			if err != nil {
				return fmt.Errorf("games of %s: %w", playerID, err)
			}
			for _, e := range entries {
				st, err := s.playerDeleted(ctx, e.GameID, playerID)
				if err != nil {
					return err
				}
				if st != nil && st.Rematch.Next != "" {
					// A rematch whose free seat was kept for the player.
					if _, err := s.playerDeleted(ctx, st.Rematch.Next, playerID); err != nil {
						return err
					}
				}
			}
			if next == "" {
				break
			}
			cursor = next
		}
	}
	return nil
}

// playerDeleted runs game.PlayerDeleted on one game (nil state: the game
// is gone).
func (s *Service) playerDeleted(ctx context.Context, gameID, playerID string) (*game.State, error) {
	out, err := s.update(ctx, txn{
		gameID: gameID,
		access: system,
		step: func(*game.State, *chess.Color) (game.Step, error) {
			return game.PlayerDeleted{PlayerID: playerID}, nil
		},
	})
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("game %s of deleted player %s: %w", gameID, playerID, err)
	}
	return out.state, nil
}
