package service

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"chessapi/shared/chess"
	"chessapi/shared/credential"
	"chessapi/shared/game"
)

// Seat and player tokens (and every other credential this API issues) are
// defined once, in shared/credential: 256-bit random secrets, shown once
// (create/join, player creation, linking) and stored only as
// credential.Hash. Comparison is constant-time.
const (
	gameIDBytes = 16 // 128 bits: unguessable game ids (22 base64url chars)
	// RegisteredIDPrefix starts a registered player's id; an anonymous
	// seat's id never does (a body's player.id with it is not taken), so
	// no seat can pose as a registered player.
	RegisteredIDPrefix = "pl_"
)

var b64 = base64.RawURLEncoding

func (s *Service) randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(s.cfg.Random, b); err != nil {
		return nil, fmt.Errorf("random source: %w", err)
	}
	return b, nil
}

func (s *Service) newGameID() (string, error) {
	b, err := s.randomBytes(gameIDBytes)
	if err != nil {
		return "", err
	}
	return b64.EncodeToString(b), nil
}

func (s *Service) newPlayerID() (string, error) {
	b, err := s.randomBytes(12)
	if err != nil {
		return "", err
	}
	return "p_" + b64.EncodeToString(b), nil
}

// newToken returns a fresh seat token and its stored hash.
func (s *Service) newToken() (token, hash string, err error) {
	return s.newCredential(credential.SeatToken)
}

// newCredential mints a credential of kind from the service's random
// source and returns it with its stored hash.
func (s *Service) newCredential(kind credential.Kind) (text, hash string, err error) {
	text, err = kind.Mint(s.cfg.Random)
	if err != nil {
		return "", "", err
	}
	return text, credential.Hash(text), nil
}

func (s *Service) newRegisteredID() (string, error) {
	b, err := s.randomBytes(16)
	if err != nil {
		return "", err
	}
	return RegisteredIDPrefix + b64.EncodeToString(b), nil
}

func (s *Service) newSeed() (uint64, error) {
	b, err := s.randomBytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// HashToken is how a token or code is stored (credential.Hash: hex
// SHA-256). Exported for tools and tests that seed games.
func HashToken(token string) string { return credential.Hash(token) }

// validGameID reports whether id could be one of ours; anything else is
// "not found" without a store read.
func validGameID(id string) bool {
	if len(id) < 8 || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// seatOf returns the colour of the caller's seat: the seat whose token
// this is, or, for a player token, the seat bound to that player. Both
// seats are always compared, so timing does not reveal which one matched.
func seatOf(st *game.State, c Caller) (chess.Color, bool) {
	var match [2]int
	if c.playerID != "" {
		for _, col := range []chess.Color{chess.White, chess.Black} {
			seat := st.Seats[col]
			if seat.Bound && seat.PlayerID == c.playerID {
				match[col] = 1
			}
		}
	} else {
		h := []byte(c.hash())
		for _, col := range []chess.Color{chess.White, chess.Black} {
			stored := st.Seats[col].TokenHash
			if stored == "" {
				continue
			}
			match[col] = subtle.ConstantTimeCompare(h, []byte(stored))
		}
	}
	switch {
	case match[chess.White] == 1:
		return chess.White, true
	case match[chess.Black] == 1:
		return chess.Black, true
	}
	return chess.White, false
}

// Caller is who is asking: a seat (by its token), a player (by a player
// token: wherever that player's seat token works, SPEC §12) or a
// spectator (no token). The edge checks the token's form; the service
// checks it against the game.
type Caller struct {
	Token string // "" for a spectator
	// TokenHash stands for Token where only the hash was kept (a stream
	// connection's token, stored with the connection); Token wins when
	// both are set. PlayerToken says whether that hash is a player token's.
	TokenHash   string
	PlayerToken bool

	// playerID is the player a player token belongs to, once resolved,
	// and player that player's record as read then (one read serves the
	// whole request); session is the token's session.
	playerID string
	player   *PlayerRecord
	session  Session
}

// anonymous reports whether the caller holds no token.
func (c Caller) anonymous() bool { return c.Token == "" && c.TokenHash == "" }

// hash is the hash of the caller's token.
func (c Caller) hash() string {
	if c.Token != "" {
		return HashToken(c.Token)
	}
	return c.TokenHash
}

// isPlayerToken reports whether the caller holds a player token.
func (c Caller) isPlayerToken() bool {
	if c.Token != "" {
		return strings.HasPrefix(c.Token, credential.PlayerToken.Prefix())
	}
	return c.TokenHash != "" && c.PlayerToken
}

// resolve finds the player and session of a player token: a token that
// authenticates nobody (never issued, its session revoked, its player
// deleted) is ErrInvalidToken, anywhere. Seat tokens and spectators pass
// as they are.
func (s *Service) resolve(ctx context.Context, c Caller) (Caller, error) {
	return s.resolveAs(ctx, c, true)
}

// resolveLooking is resolve for a request that only reads a game: the
// session's use is not recorded, nor a token issued before sessions given
// its session (its next other request does that).
func (s *Service) resolveLooking(ctx context.Context, c Caller) (Caller, error) {
	return s.resolveAs(ctx, c, false)
}

func (s *Service) resolveAs(ctx context.Context, c Caller, record bool) (Caller, error) {
	c, err := s.resolveSession(ctx, c, record)
	var deleted *DeletedError
	if errors.As(err, &deleted) {
		return c, ErrInvalidToken
	}
	return c, err
}

// resolveSession is resolve, except that a deleted player's token is
// answered with its *DeletedError (a retried deletion recognises it).
// With record, a token issued before sessions is given its session here
// (adopted), and a session's last use is recorded at most every
// SessionTouchEvery.
func (s *Service) resolveSession(ctx context.Context, c Caller, record bool) (Caller, error) {
	if c.playerID != "" || !c.isPlayerToken() {
		return c, nil
	}
	if s.cfg.Players == nil {
		return c, ErrInvalidToken
	}
	p, sess, err := s.cfg.Players.PlayerByToken(ctx, c.hash())
	if errors.Is(err, ErrNotFound) {
		return c, ErrInvalidToken
	}
	if err != nil {
		return c, err
	}
	if record && sess.ID == "" {
		if sess, err = s.adopt(ctx, sess); err != nil {
			return c, err
		}
	}
	if record {
		s.touch(ctx, sess)
	}
	c.playerID, c.player, c.session = p.ID, &p, sess
	return c, nil
}

// authorize resolves the caller against a game: a spectator (nil colour),
// a seat, or ErrForbidden for a token that is not a seat of this game
// (watching lets a player token with no seat in it watch as a spectator).
// seatOnly turns a missing token into ErrUnauthorized; system callers are
// trusted and get no seat.
func (s *Service) authorize(st *game.State, c Caller, a access) (*chess.Color, error) {
	switch {
	case a == system:
		return nil, nil
	case c.anonymous() && a == seatOnly:
		return nil, ErrUnauthorized
	case c.anonymous():
		return nil, nil
	}
	color, ok := seatOf(st, c)
	switch {
	case !ok && a == watching && c.playerID != "":
		return nil, nil // a player watching a game of others
	case !ok:
		return nil, ErrForbidden
	}
	return &color, nil
}
