package storedgame

import (
	"bytes"
	"fmt"
	"strings"

	"chessapi/shared/game"
)

// Format bytes: the first byte of every record.
const (
	formatJSONHeader byte = 1 // compatibility: JSON header, newline, moves, logs
	formatDeflate    byte = 2 // compatibility: formatJSONHeader, DEFLATE-compressed
	// formatText is the form Encode writes: the text header, the moves,
	// the logs. (For a few minutes of history, at commit bb98be9, this
	// byte meant a Zstandard-compressed formatJSONHeader record: see
	// legacy.go.)
	formatText byte = 3
)

// maxStateBytes bounds the inflated size of a compressed record, so
// corrupt or hostile bytes cannot make Decode allocate without limit.
const maxStateBytes = 8 << 20

// Encode returns the stored form of s. It is not compressed: stores that
// pay by the byte compress what they store (shared/store/dynamostore).
func Encode(s *game.State) []byte {
	size := 1024
	for _, c := range s.Changes {
		size += len(c.Events) + len(c.Delta) + 40
	}
	for _, r := range s.Requests {
		for _, e := range r {
			size += len(e.ID) + len(e.Hash) + len(e.Events) + 32
		}
	}
	for _, m := range s.Moves {
		size += len(m.UCI) + len(m.SAN) + 8 // separators and a time delta
	}
	for _, seat := range s.Seats {
		size += len(seat.PlayerID) + len(seat.Name) + len(seat.TokenHash)
	}
	b := make([]byte, 0, size)
	b = append(b, formatText)
	b = header.appendHeader(b, s)
	b = appendMoves(b, s.Moves, s.CreatedAt)
	return appendLogs(b, &s.Requests, s.Changes)
}

// Decode reads a record (Encode's form, or one the compatibility reader
// knows: legacy.go) and rebuilds the game by replaying its moves
// (game.Restore), which also checks them. The events of the state's
// request and change logs are slices of data, read in place: Decode takes
// data over, and the caller must not modify it afterwards. Bytes that are
// not a game give a *DecodeError.
//
// A state migrated from a version 1 record has no GameID and Version 0
// (version 1 kept them outside the state): the caller sets both from its
// record.
func Decode(data []byte) (*game.State, error) {
	if len(data) == 0 {
		return nil, &DecodeError{Reason: "empty"}
	}
	switch data[0] {
	case formatText:
		if isZstdFrame(data[1:]) {
			return decodeZstdJSONHeader(data[1:])
		}
		return decodeText(data[1:])
	case formatJSONHeader:
		return decodeJSONHeader(data[1:])
	case formatDeflate:
		return decodeDeflateJSONHeader(data[1:])
	case '{', ' ', '\t', '\r', '\n':
		return decodeStateJSON(data)
	}
	return nil, &DecodeError{Reason: fmt.Sprintf("unknown format byte %#x", data[0])}
}

// decodeText reads formatText: the header, the moves section, the logs.
func decodeText(data []byte) (*game.State, error) {
	s := &game.State{}
	// Every string of the record (header values, moves, request ids)
	// comes from one arena, sized for them.
	headerEnd := headerLength(data)
	rest := data[headerEnd:]
	strs := newStrs(headerEnd + movesTextLength(rest) + min(len(rest), requestTextLength))
	if _, err := header.parseHeader(strs.of(data[:headerEnd]), s); err != nil {
		return nil, err
	}
	if s.StateVersion != game.StateVersion {
		return nil, &DecodeError{Reason: fmt.Sprintf("stored form has state version %d", s.StateVersion)}
	}
	var err error
	if s.Moves, rest, err = parseMoves(rest, s.CreatedAt, strs); err != nil {
		return nil, err
	}
	if err := parseLogs(rest, &s.Requests, &s.Changes, strs, false); err != nil {
		return nil, err
	}
	return restore(s)
}

// restore completes a decoded state with game.Restore.
func restore(s *game.State) (*game.State, error) {
	if err := game.Restore(s); err != nil {
		return nil, &DecodeError{Reason: "replay", Err: err}
	}
	return s, nil
}

// headerLength is the length of the text header at the front of b with
// the empty line that ends it, or len(b) when it is not terminated
// (parseHeader says so).
func headerLength(b []byte) int {
	if len(b) > 0 && b[0] == '\n' {
		return 1
	}
	if i := bytes.Index(b, []byte("\n\n")); i >= 0 {
		return i + 2
	}
	return len(b)
}

// DecodeError reports stored bytes that are not a game: Reason says what
// (the header field by its key, the moves section, a log entry), Err why;
// a record that reads but is not a consistent game has a
// *game.RestoreError as its Err.
type DecodeError struct {
	Reason string
	Err    error
}

func (e *DecodeError) Error() string {
	msg := "storedgame: " + e.Reason
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *DecodeError) Unwrap() error { return e.Err }

// strs makes the strings of one record from its bytes: each is a
// substring of what one builder holds, so a record's strings cost one
// allocation, not one each. A builder only ever appends (growing moves on
// to a new array and leaves the old one as it is), so every string it
// handed out stays valid, and none shares memory with the record.
type strs struct{ b strings.Builder }

func newStrs(size int) *strs {
	s := &strs{}
	s.b.Grow(size)
	return s
}

// of returns p as a string.
func (s *strs) of(p []byte) string {
	if len(p) == 0 {
		return ""
	}
	start := s.b.Len()
	s.b.Write(p)
	return s.b.String()[start:]
}
