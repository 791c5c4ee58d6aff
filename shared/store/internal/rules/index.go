// Package rules holds what the embedded store (boltstore) and the DynamoDB
// store (dynamostore) must do identically for the game index and the
// players port: input validation, the sort keys that order the index, the
// cursor format, the time resolutions and the counter windows. Keeping it
// in one place is what lets storetest hold both stores to the same answers.
package rules

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"chessapi/shared/service"
)

// MaxKeyBytes bounds every id, room, hash and key that ends up in a key.
// DynamoDB allows 2,048 bytes for a partition key and 1,024 for a sort key
// (of the table or of an index); one bound for all keeps the rule simple
// and leaves room for the prefixes the stores add.
const MaxKeyBytes = 1024

// timeDigits is the width of the zero-padded epoch milliseconds that start
// a sort key: 13 digits reach the year 2286.
const timeDigits = 13

// maxMillis is the first epoch millisecond that no longer fits.
const maxMillis = 1e13

// sortKeyPrefix is the length of "<13 digits>#".
const sortKeyPrefix = timeDigits + 1

// MaxIndexedGameID is the longest game id a record can have and still be
// indexed: the sort key (13 digits, '#', the id) must stay within a
// DynamoDB sort key.
const MaxIndexedGameID = MaxKeyBytes - sortKeyPrefix

// Status suffixes of a player's index entry: the index of a player's games
// is partitioned by player and status, so each me/games query reads one
// partition.
const (
	StatusActive   = 'a'
	StatusFinished = 'f'
)

// Status is the status byte of an index (or of a query).
func Status(finished bool) byte {
	if finished {
		return StatusFinished
	}
	return StatusActive
}

// IsZero reports whether ix is the zero index: nothing to store, nothing
// indexed. Records written by code that knows nothing of the index have it.
func IsZero(ix service.GameIndex) bool {
	return ix.Players == [2]string{} && !ix.Finished && ix.LobbyRoom == "" &&
		ix.CreatedAt.IsZero() && ix.UpdatedAt.IsZero() && ix.ListedAt.IsZero() && len(ix.Summary) == 0
}

// Indexed reports whether ix puts the game in a query: a player's games or
// a lobby.
func Indexed(ix service.GameIndex) bool {
	return ix.Players[0] != "" || ix.Players[1] != "" || ix.LobbyRoom != ""
}

// ValidateIndex checks the index of record gameID. The zero index is valid
// (nothing is stored); any other needs its three times, within the range
// the sort keys can order, and keys within DynamoDB's limits.
func ValidateIndex(gameID string, ix service.GameIndex) error {
	if IsZero(ix) {
		return nil
	}
	for _, f := range []struct {
		name string
		t    time.Time
	}{{"Index.CreatedAt", ix.CreatedAt}, {"Index.UpdatedAt", ix.UpdatedAt}, {"Index.ListedAt", ix.ListedAt}} {
		if f.t.IsZero() {
			return fmt.Errorf("%s is zero: an index needs its three times", f.name)
		}
		if ms := f.t.UnixMilli(); ms < 0 || ms >= maxMillis {
			return fmt.Errorf("%s %v is outside 1970..2286, which the index cannot order", f.name, f.t)
		}
	}
	for _, f := range []struct{ name, value string }{
		{"Index.Players[0] (white)", ix.Players[0]},
		{"Index.Players[1] (black)", ix.Players[1]},
		{"Index.LobbyRoom", ix.LobbyRoom},
	} {
		if len(f.value) > MaxKeyBytes {
			return fmt.Errorf("%s of %d bytes is over %d", f.name, len(f.value), MaxKeyBytes)
		}
		if !utf8.ValidString(f.value) {
			return fmt.Errorf("%s is not valid UTF-8", f.name)
		}
	}
	if Indexed(ix) && len(gameID) > MaxIndexedGameID {
		return fmt.Errorf("game id of %d bytes is over %d, the longest an indexed game can have", len(gameID), MaxIndexedGameID)
	}
	return nil
}

// NormalizeIndex is what a store gives back for a stored index: times
// truncated to the millisecond in UTC, an empty summary as nil, the zero
// index as the zero index.
func NormalizeIndex(ix service.GameIndex) service.GameIndex {
	if IsZero(ix) {
		return service.GameIndex{}
	}
	ix.CreatedAt = Millis(ix.CreatedAt.UnixMilli())
	ix.UpdatedAt = Millis(ix.UpdatedAt.UnixMilli())
	ix.ListedAt = Millis(ix.ListedAt.UnixMilli())
	if len(ix.Summary) == 0 {
		ix.Summary = nil
	}
	return ix
}

// Millis is the UTC instant of epoch milliseconds ms.
func Millis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// SortKey orders the index: the instant's epoch milliseconds, zero-padded
// to a fixed width, '#', the game id. Byte order of sort keys is the order
// of (time, game id), and no two games share one. t must have passed
// ValidateIndex.
func SortKey(t time.Time, gameID string) string {
	ms := strconv.FormatInt(t.UnixMilli(), 10)
	return strings.Repeat("0", timeDigits-len(ms)) + ms + "#" + gameID
}

// ParseSortKey splits a sort key into its time and game id.
func ParseSortKey(key string) (ms int64, gameID string, err error) {
	if len(key) <= sortKeyPrefix || key[timeDigits] != '#' {
		return 0, "", fmt.Errorf("sort key %q is not <13 digits>#<game id>", key)
	}
	for i := range timeDigits {
		if key[i] < '0' || key[i] > '9' {
			return 0, "", fmt.Errorf("sort key %q does not start with 13 digits", key)
		}
	}
	ms, _ = strconv.ParseInt(key[:timeDigits], 10, 64) // 13 digits always fit
	return ms, key[sortKeyPrefix:], nil
}

// Cursor kinds: a cursor names the query that gave it, so a lobby cursor
// is refused by PlayerGames and the other way round.
const (
	CursorPlayerGames = 'p'
	CursorLobby       = 'l'
)

// EncodeCursor is the opaque cursor that resumes a query of kind after
// sortKey.
func EncodeCursor(kind byte, sortKey string) string {
	return base64.RawURLEncoding.EncodeToString(append([]byte{kind}, sortKey...))
}

// DecodeCursor returns the sort key a cursor of kind resumes after; an
// error wrapping service.ErrBadCursor for anything EncodeCursor(kind, ·)
// cannot have given.
func DecodeCursor(kind byte, cursor string) (sortKey string, err error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return "", fmt.Errorf("%w: not base64url", service.ErrBadCursor)
	}
	if len(raw) == 0 || raw[0] != kind {
		return "", fmt.Errorf("%w: not a cursor of this list", service.ErrBadCursor)
	}
	sortKey = string(raw[1:])
	if _, id, err := ParseSortKey(sortKey); err != nil || len(id) > MaxIndexedGameID || !utf8.ValidString(id) {
		return "", fmt.Errorf("%w: malformed position", service.ErrBadCursor)
	}
	return sortKey, nil
}

// MaxLimit is the largest page a query of the index returns.
const MaxLimit = 100

// ValidateQuery checks the arguments every index query shares.
func ValidateQuery(field, value string, limit int) error {
	if value == "" {
		return fmt.Errorf("%s is empty", field)
	}
	if len(value) > MaxKeyBytes {
		return fmt.Errorf("%s of %d bytes is over %d", field, len(value), MaxKeyBytes)
	}
	if !utf8.ValidString(value) {
		return fmt.Errorf("%s is not valid UTF-8", field)
	}
	if limit < 1 || limit > MaxLimit {
		return fmt.Errorf("limit %d is outside 1..%d", limit, MaxLimit)
	}
	return nil
}

// errEmpty is wrapped by the errors for empty ids and keys.
var errEmpty = errors.New("is empty")

// ValidateKey checks an id, hash or key that becomes (part of) a store
// key: not empty, not too long, and valid UTF-8 (DynamoDB refuses anything
// else in a string).
func ValidateKey(field, value string) error {
	if value == "" {
		return fmt.Errorf("%s %w", field, errEmpty)
	}
	if len(value) > MaxKeyBytes {
		return fmt.Errorf("%s of %d bytes is over %d", field, len(value), MaxKeyBytes)
	}
	if !utf8.ValidString(value) {
		return fmt.Errorf("%s is not valid UTF-8", field)
	}
	return nil
}
