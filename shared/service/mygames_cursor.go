package service

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// activePosition is a game's place in a player's active list: its last
// write (epoch milliseconds) and id; the list is newest first, ties by
// greater id first.
type activePosition struct {
	at int64
	id string
}

// compare orders p before q (-1) when p is newer, or as new with a greater
// id.
func (p activePosition) compare(q activePosition) int {
	if c := cmp.Compare(q.at, p.at); c != 0 {
		return c
	}
	return strings.Compare(q.id, p.id)
}

// before reports whether p comes before q in the list (q is after the
// cursor p).
func (p activePosition) before(q activePosition) bool { return p.compare(q) < 0 }

// activeCursorKind starts an active list's cursor, so a cursor of the
// finished list (or of the index's own format, which the active list had
// before it was ordered by the games' last writes) is refused.
const activeCursorKind = 'u'

// maxCursorGameID bounds a cursor's game id (a game id is far shorter).
const maxCursorGameID = 256

// encodeActiveCursor is the opaque cursor that resumes the active list
// after p: base64url of the kind, 13 digits of milliseconds, the id.
func encodeActiveCursor(p activePosition) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%c%013d%s", activeCursorKind, p.at, p.id))
}

// errActiveCursor is wrapped by the errors for cursors
// encodeActiveCursor cannot have given.
var errActiveCursor = errors.New("not a cursor of the active list")

// decodeActiveCursor reads a cursor of encodeActiveCursor; "" is the top
// (ok false).
func decodeActiveCursor(cursor string) (p activePosition, ok bool, err error) {
	if cursor == "" {
		return activePosition{}, false, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return activePosition{}, false, fmt.Errorf("%w: not base64url", errActiveCursor)
	}
	const digits = 13
	if len(raw) < 1+digits+1 || raw[0] != activeCursorKind {
		return activePosition{}, false, fmt.Errorf("%w: wrong kind or too short", errActiveCursor)
	}
	for _, b := range raw[1 : 1+digits] {
		if b < '0' || b > '9' {
			return activePosition{}, false, fmt.Errorf("%w: malformed time", errActiveCursor)
		}
	}
	at, _ := strconv.ParseInt(string(raw[1:1+digits]), 10, 64) // 13 digits always fit
	id := string(raw[1+digits:])
	if len(id) > maxCursorGameID || !utf8.ValidString(id) {
		return activePosition{}, false, fmt.Errorf("%w: malformed game id", errActiveCursor)
	}
	return activePosition{at: at, id: id}, true, nil
}
