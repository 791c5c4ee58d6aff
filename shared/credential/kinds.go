package credential

import (
	"encoding/base32"
	"encoding/base64"
)

// The kinds, append-only: a kind's number, prefix, length and alphabet are
// part of every credential already issued.
const (
	// SeatToken authenticates a seat of one game (SPEC §6): shown once,
	// at create and join.
	SeatToken Kind = iota + 1
	// PlayerToken authenticates a player (SPEC §12) wherever the player's
	// seat tokens work.
	PlayerToken
	// APIKey authenticates a third party on POST /v1/ai/move (SPEC §13);
	// its id part names the key and is not secret.
	APIKey
	// LinkCode is a single-use, 10-minute code that gives another device a
	// token for the player (SPEC §15).
	LinkCode
	// InviteCode lets its holder join a private game (SPEC §15).
	InviteCode

	// RecoveryCode gives its holder a new session of its player (SPEC
	// §16.2: shown once at creation, re-issuable, the old one then stops
	// working). People write it down and type it on another phone, so it
	// is a code of the unambiguous alphabet, grouped by four with dashes,
	// read back through Normalize; like the link and invite codes it has
	// no prefix and is masked by the names it travels under.
	RecoveryCode
	// SessionID names one session of a player (one player token) in the
	// session routes. It is no secret (its owner lists it; it grants
	// nothing without the player's token), so it has a form to check but
	// is never masked.
	SessionID
)

// format is one kind's row of the table.
type format struct {
	name   string
	prefix string
	// parts are the random parts, joined by partSeparator (an API key's id
	// and secret).
	parts []part
	// inFreeText says the kind is recognised by its prefix inside any
	// text (an error message, a URL, a header value) and masked there.
	inFreeText bool
	// logNames are the attribute names its values travel under.
	logNames []string
	// public marks a kind that is no secret (a session id): it is never
	// masked.
	public bool
	// group, when set, writes the kind's one part in groups of that many
	// characters joined by groupSeparator ("ABCD-EFGH-…"): a code people
	// copy by hand.
	group int
}

// kinds is the table, indexed by Kind (0 is no kind).
var kinds = [...]format{
	SeatToken: {
		name: "seat token", prefix: "st_",
		parts:      []part{{enc: base64URL, bytes: 32}},
		inFreeText: true, logNames: []string{"seatToken"},
	},
	PlayerToken: {
		name: "player token", prefix: "pt_",
		parts:      []part{{enc: base64URL, bytes: 32}},
		inFreeText: true, logNames: []string{"playerToken"},
	},
	APIKey: {
		name: "API key", prefix: "ak_",
		parts:      []part{{enc: base32Lower, bytes: 10}, {enc: base32Lower, bytes: 32}},
		inFreeText: true, logNames: []string{"apiKey", "x-api-key"},
	},
	LinkCode: {
		name:     "link code",
		parts:    []part{{enc: unambiguous, bytes: 8}},
		logNames: []string{"linkCode"},
	},
	InviteCode: {
		name:     "invite code",
		parts:    []part{{enc: unambiguous, bytes: 10}},
		logNames: []string{"inviteCode"},
	},
	RecoveryCode: {
		name:     "recovery code",
		parts:    []part{{enc: unambiguous, bytes: 24}},
		logNames: []string{"recoveryCode"},
		group:    4,
	},
	SessionID: {
		name: "session id", prefix: "se_",
		parts:  []part{{enc: base64URL, bytes: 16}},
		public: true,
	},
}

// groupSeparator joins the groups of a grouped kind.
const groupSeparator = '-'

// partSeparator joins a kind's parts.
const partSeparator = '_'

// part is one random part of a credential: bytes random bytes in an
// encoding.
type part struct {
	enc   encoding
	bytes int
}

func (p part) len() int { return p.enc.encodedLen(p.bytes) }

// wellFormed reports whether s is this part as issued: the right length
// and alphabet, and for base32 the encoder's canonical text (the last
// character's unused bits zero, so one key has one text). Base64url parts
// are checked for their alphabet only, as they always were: their hash
// decides, and no other text hashes alike.
func (p part) wellFormed(s string) bool {
	if len(s) != p.len() {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !p.enc.valid(s[i]) {
			return false
		}
	}
	if p.enc == base32Lower {
		b, err := lowerBase32.DecodeString(s)
		return err == nil && len(b) == p.bytes && lowerBase32.EncodeToString(b) == s
	}
	return true
}

// encoding is how a part's random bytes are written.
type encoding uint8

const (
	// base64URL is RFC 4648 §5 without padding: URL-safe, 6 bits a
	// character (32 bytes → 43 characters).
	base64URL encoding = iota + 1
	// base32Lower is RFC 4648 base32 in lowercase without padding: 5 bits
	// a character, easy to read and type.
	base32Lower
	// unambiguous is one character per random byte from 31 capitals and
	// digits without look-alikes (no 0/O, 1/I/L), for codes people type.
	// 256 = 8·31 + 8: the slight bias toward the first 8 characters leaves
	// far more than enough entropy for a code that lives minutes and
	// allows 10 wrong tries.
	unambiguous
)

const (
	base32LowerAlphabet = "abcdefghijklmnopqrstuvwxyz234567"
	unambiguousAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
)

var lowerBase32 = base32.NewEncoding(base32LowerAlphabet).WithPadding(base32.NoPadding)

func (e encoding) encodedLen(n int) int {
	switch e {
	case base64URL:
		return (n*8 + 5) / 6
	case base32Lower:
		return (n*8 + 4) / 5
	}
	return n
}

func (e encoding) encode(b []byte) string {
	switch e {
	case base64URL:
		return base64.RawURLEncoding.EncodeToString(b)
	case base32Lower:
		return lowerBase32.EncodeToString(b)
	}
	out := make([]byte, len(b))
	for i, v := range b {
		out[i] = unambiguousAlphabet[int(v)%len(unambiguousAlphabet)]
	}
	return string(out)
}

func (e encoding) valid(c byte) bool {
	switch e {
	case base64URL:
		return isBase64URL(c)
	case base32Lower:
		return 'a' <= c && c <= 'z' || '2' <= c && c <= '7'
	}
	return '2' <= c && c <= '9' || 'A' <= c && c <= 'Z' && c != 'I' && c != 'L' && c != 'O'
}

func isBase64URL(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
