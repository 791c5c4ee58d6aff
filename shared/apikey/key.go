// Package apikey is the third-party API keys of POST /v1/ai/move (SPEC
// §13): their text form, how they are stored (only a hash), the port of
// the store that keeps them, and the Checker that authenticates a
// presented key and holds it to its per-second rate and daily quota
// through a shared counter, so the limits hold across every instance
// that shares the store.
//
// A key reads
//
//	ak_<id>_<secret>
//
// where id is 16 and secret 52 characters of lowercase base32 (a-z, 2-7):
// 80 random bits that name the key (shown by listings, safe to log) and
// 256 random bits that prove it. The key is shown once, when it is made;
// the store keeps its SHA-256, which is enough for a secret of 256 random
// bits (nobody can search that space, so a slow password hash would buy
// nothing and cost every request).
package apikey

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"

	"chessapi/shared/credential"
)

// A key's form is credential.APIKey's (the one table of credential kinds);
// these are its lengths, for tools and tests that take a key apart.
var (
	// IDLen and SecretLen are the lengths of a key's parts in characters.
	IDLen     = credential.APIKey.PartLen(0)
	SecretLen = credential.APIKey.PartLen(1)
	// KeyLen is the length of a whole key.
	KeyLen = credential.APIKey.Len()
)

// Key is a parsed key.
type Key struct {
	// ID names the key; it is not secret.
	ID     string
	secret string
}

// String is the key's text, secret included: show it to its holder
// once, never log it.
func (k Key) String() string { return credential.APIKey.Prefix() + k.ID + "_" + k.secret }

// Hash is what the store keeps of the key: the hex SHA-256 of its whole
// text (so the hash is bound to the id as well as the secret).
func (k Key) Hash() string { return HashText(k.String()) }

// HashText is the stored hash of a key's text (credential.Hash).
func HashText(text string) string { return credential.Hash(text) }

// Matches reports, in constant time, whether k is the key whose hash is
// storedHash.
func (k Key) Matches(storedHash string) bool {
	return subtle.ConstantTimeCompare([]byte(k.Hash()), []byte(storedHash)) == 1
}

// Generate makes a new key from random (crypto/rand.Reader in
// production).
func Generate(random io.Reader) (Key, error) {
	text, err := credential.APIKey.Mint(random)
	if err != nil {
		return Key{}, fmt.Errorf("apikey: %w", err)
	}
	return Parse(text)
}

// ErrMalformedText is returned by Parse for any text that is not a key of
// the issued form; the error never quotes the text (it may be a secret).
var ErrMalformedText = errors.New("apikey: not a key of the form ak_<16 base32>_<52 base32>")

// Parse reads a key's text. Only the exact issued form is accepted:
// lowercase, no blanks, the canonical encoding of the random bytes (so
// one key has one text, and a hash of any other text matches nothing).
func Parse(text string) (Key, error) {
	parts, ok := credential.APIKey.Split(text)
	if !ok {
		return Key{}, ErrMalformedText
	}
	return Key{ID: parts[0], secret: parts[1]}, nil
}

// ValidID reports whether id is a key id of the issued form (tools check
// an id before they look it up).
func ValidID(id string) bool { return credential.APIKey.PartWellFormed(0, id) }
