// Package credential is the one definition of the secrets this API issues:
// for each kind, its prefix, length and alphabet, what a well-formed one
// looks like, how one is minted from a random source, how it is stored
// (Hash), and how it is masked in logs (Redact). The service mints with
// it, the HTTP edge parses bearer tokens with it, shared/apikey builds its
// keys on it, and the logger redacts every kind with it.
//
//	token, err := credential.SeatToken.Mint(rand.Reader) // "st_" + 43 base64url
//	stored := credential.Hash(token)                     // what the store keeps
//	credential.SeatToken.WellFormed(token)               // true
//	credential.Redact("Bearer " + token)                 // "Bearer st_[REDACTED]"
//
// The kinds (the table is in kinds.go):
//
//	kind          text                               random bits   in free text
//	seat token    st_ + 43 base64url                 256           masked by prefix
//	player token  pt_ + 43 base64url                 256           masked by prefix
//	API key       ak_ + 16 base32 + _ + 52 base32    80 id + 256   masked by prefix
//	link code     8 of 23456789ABCDEFGHJKMNPQRSTUVWXYZ  ≈ 39         masked by name only
//	invite code   10 of the same alphabet             ≈ 49         masked by name only
//	recovery code 24 of the same, XXXX-XXXX-… (29)    ≈ 118        masked by name only
//	session id    se_ + 22 base64url                  128          not a secret
//
// Link, invite and recovery codes are credentials too (a link code gives a
// new token for its player for 10 minutes; an invite code lets its holder
// into a private game; a recovery code gives a new session of its player
// until it is re-issued), but they have no prefix: capitals and digits
// cannot be told apart from words and ids in free text, so the logger masks
// them by the attribute names they travel under (linkCode, inviteCode,
// recoveryCode), and the API never logs the bodies that carry them. A
// character of these codes is a random byte modulo 31, so the first 8
// characters come up with probability 9/256 and the others 8/256: 4.95
// bits a character (Shannon), 4.83 for the likeliest guess, so the least
// a recovery code takes to guess is 2^115.9 tries.
//
// A session id names one player token to its owner (the session routes);
// it grants nothing and is never masked.
//
// Every kind is stored only as its Hash (hex SHA-256 of the whole text): a
// secret of this much randomness cannot be searched for, so a slow
// password hash would buy nothing and cost every request. Kinds are
// append-only: a stored hash of an issued credential must keep matching.
package credential

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
)

// Kind is one kind of credential.
type Kind uint8

// String is the kind's name ("seat token").
func (k Kind) String() string {
	if f := k.format(); f != nil {
		return f.name
	}
	return fmt.Sprintf("credential.Kind(%d)", uint8(k))
}

// Prefix is what every credential of the kind starts with ("st_"); "" for
// the codes people type.
func (k Kind) Prefix() string {
	if f := k.format(); f != nil {
		return f.prefix
	}
	return ""
}

// Secret reports whether credentials of the kind are secrets (every kind
// but the session id): loggers mask them.
func (k Kind) Secret() bool {
	f := k.format()
	return f != nil && !f.public
}

// Len is the length of a credential of the kind, prefix included.
func (k Kind) Len() int {
	f := k.format()
	if f == nil {
		return 0
	}
	n := len(f.prefix) + len(f.parts) - 1 // the separators between parts
	for _, p := range f.parts {
		n += p.len()
	}
	if f.group > 0 {
		n += (f.parts[0].len() - 1) / f.group // the separators between groups
	}
	return n
}

// PartLen is the length of the kind's i-th random part (an API key's id is
// part 0, its secret part 1); 0 if there is no such part.
func (k Kind) PartLen(i int) int {
	f := k.format()
	if f == nil || i < 0 || i >= len(f.parts) {
		return 0
	}
	return f.parts[i].len()
}

// Mint draws a new credential of the kind from random (crypto/rand.Reader
// in production), reading exactly the random bytes its parts need, in
// order.
func (k Kind) Mint(random io.Reader) (string, error) {
	f := k.format()
	if f == nil {
		return "", fmt.Errorf("credential: mint %v: unknown kind", k)
	}
	total := 0
	for _, p := range f.parts {
		total += p.bytes
	}
	buf := make([]byte, total)
	if _, err := io.ReadFull(random, buf); err != nil {
		return "", fmt.Errorf("credential: mint %v: random source: %w", k, err)
	}
	var b strings.Builder
	b.Grow(k.Len())
	b.WriteString(f.prefix)
	for i, p := range f.parts {
		if i > 0 {
			b.WriteByte(partSeparator)
		}
		b.WriteString(f.grouped(p.enc.encode(buf[:p.bytes])))
		buf = buf[p.bytes:]
	}
	return b.String(), nil
}

// grouped writes a part of the kind in its groups (the part itself for a
// kind without groups).
func (f *format) grouped(part string) string {
	if f.group <= 0 {
		return part
	}
	var b strings.Builder
	for i := 0; i < len(part); i += f.group {
		if i > 0 {
			b.WriteByte(groupSeparator)
		}
		b.WriteString(part[i:min(i+f.group, len(part))])
	}
	return b.String()
}

// ungrouped reads a grouped part back: the separators must stand exactly
// where grouped puts them.
func (f *format) ungrouped(text string) (string, bool) {
	if f.group <= 0 {
		return text, true
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		if (i+1)%(f.group+1) == 0 {
			if text[i] != groupSeparator {
				return "", false
			}
			continue
		}
		b.WriteByte(text[i])
	}
	return b.String(), true
}

// WellFormed reports whether s has the exact form of an issued credential
// of the kind. It reads only s's length and characters (never a store),
// so a malformed credential is refused before anything is looked up.
func (k Kind) WellFormed(s string) bool {
	_, ok := k.Split(s)
	return ok
}

// Split returns the random parts of a well-formed credential of the kind
// (without prefix and separators); ok is false for anything else.
func (k Kind) Split(s string) (parts []string, ok bool) {
	f := k.format()
	if f == nil || len(s) != k.Len() || !strings.HasPrefix(s, f.prefix) {
		return nil, false
	}
	rest, ok := f.ungrouped(s[len(f.prefix):])
	if !ok {
		return nil, false
	}
	parts = make([]string, len(f.parts))
	for i, p := range f.parts {
		if i > 0 {
			if rest[0] != partSeparator {
				return nil, false
			}
			rest = rest[1:]
		}
		n := p.len()
		if !p.wellFormed(rest[:n]) {
			return nil, false
		}
		parts[i], rest = rest[:n], rest[n:]
	}
	return parts, true
}

// PartWellFormed reports whether s is the kind's i-th random part as
// issued (an API key's id, checked before a lookup by id).
func (k Kind) PartWellFormed(i int, s string) bool {
	f := k.format()
	return f != nil && i >= 0 && i < len(f.parts) && f.parts[i].wellFormed(s)
}

// Normalize reads a code of the kind as people type it: any case, with
// spaces and dashes anywhere ("abcd-2345" for "ABCD2345"), and returns it
// as issued (a grouped kind's dashes where Mint puts them); ok is false if
// what remains is not well formed. Kinds with a prefix are machine-read
// and not normalized: their text must be exact.
func (k Kind) Normalize(typed string) (code string, ok bool) {
	f := k.format()
	if f == nil || f.prefix != "" {
		return "", false
	}
	var b strings.Builder
	for _, r := range typed {
		switch {
		case r == ' ' || r == '-':
		case 'a' <= r && r <= 'z':
			b.WriteByte(byte(r) - 'a' + 'A')
		case r < 128:
			b.WriteByte(byte(r))
		default:
			return "", false
		}
		if b.Len() > k.Len() {
			return "", false
		}
	}
	code = f.grouped(b.String())
	return code, k.WellFormed(code)
}

// KindOf returns the kind whose issued form s has.
func KindOf(s string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.WellFormed(s) {
			return k, true
		}
	}
	return 0, false
}

// Kinds lists every kind, in the order they were added.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds)-1)
	for k := range kinds {
		if k > 0 {
			out = append(out, Kind(k))
		}
	}
	return out
}

// Hash is how a credential is stored: the hex SHA-256 of its whole text.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// LogNames are the attribute names whose values are credentials of some
// kind ("seatToken", "apiKey", "linkCode", …): a logger masks their values
// whatever they look like.
func LogNames() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.format().logNames...)
	}
	return out
}

func (k Kind) format() *format {
	if k == 0 || int(k) >= len(kinds) {
		return nil
	}
	return &kinds[k]
}
