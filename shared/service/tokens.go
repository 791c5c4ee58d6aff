package service

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"

	"chessapi/shared/chess"
	"chessapi/shared/game"
)

// Seat tokens are 256-bit random secrets, shown once (create/join) and
// stored only as a SHA-256 hash: a token has far too much entropy for a
// dictionary attack, so a fast hash is enough. Comparison is constant-time.
const (
	tokenPrefix = "st_"
	tokenBytes  = 32
	gameIDBytes = 16 // 128 bits: unguessable game ids (22 base64url chars)
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
	b, err := s.randomBytes(tokenBytes)
	if err != nil {
		return "", "", err
	}
	token = tokenPrefix + b64.EncodeToString(b)
	return token, HashToken(token), nil
}

func (s *Service) newSeed() (uint64, error) {
	b, err := s.randomBytes(8)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// HashToken is how a seat token is stored: hex SHA-256 (a 256-bit random
// secret needs no slow hash). Exported for tools and tests that seed games.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

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

// seatOf returns the colour of the seat whose token this is. Both seats are
// always compared, so timing does not reveal which one matched.
func seatOf(st *game.State, c Caller) (chess.Color, bool) {
	h := []byte(c.TokenHash)
	if c.Token != "" {
		h = []byte(HashToken(c.Token))
	}
	var match [2]int
	for _, c := range []chess.Color{chess.White, chess.Black} {
		stored := st.Seats[c].TokenHash
		if stored == "" {
			continue
		}
		match[c] = subtle.ConstantTimeCompare(h, []byte(stored))
	}
	switch {
	case match[chess.White] == 1:
		return chess.White, true
	case match[chess.Black] == 1:
		return chess.Black, true
	}
	return chess.White, false
}

// Caller is who is asking: a seat (by its token) or a spectator (no
// token). The edge checks the token's form; the service checks it against
// the game.
type Caller struct {
	Token string // "" for a spectator
	// TokenHash stands for Token where only the hash was kept (a stream
	// connection's token, stored with the connection); Token wins when
	// both are set.
	TokenHash string
}

// anonymous reports whether the caller holds no token.
func (c Caller) anonymous() bool { return c.Token == "" && c.TokenHash == "" }

// authorize resolves the caller against a game: a spectator (nil colour),
// a seat, or ErrForbidden for a token that is not a seat of this game.
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
	if !ok {
		return nil, ErrForbidden
	}
	return &color, nil
}
