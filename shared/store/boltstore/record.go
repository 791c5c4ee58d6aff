package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"chessapi/shared/service"
)

// A record is stored under its game id as:
//
//	byte     format (formatV1)
//	varint   version
//	varint   stateVersion
//	byte     flags: hasDeadline | hasExpiry
//	varint   deadline, epoch milliseconds rounded up   (if hasDeadline)
//	varint   expiresAt, epoch seconds rounded up       (if hasExpiry)
//	...      state: the rest of the value
//
// The header comes first so the deadline scan can skip the state. The
// rounding is the DynamoDB store's, so both stores return the same records.
const formatV1 = 1

const (
	hasDeadline = 1 << iota
	hasExpiry
	knownFlags = hasDeadline | hasExpiry
)

// maxHeader bounds the encoded header: format, three varints, flags.
const maxHeader = 1 + 3*binary.MaxVarintLen64 + 1

func encodeRecord(rec service.GameRecord) []byte {
	buf := make([]byte, 0, maxHeader+len(rec.State))
	buf = append(buf, formatV1)
	buf = binary.AppendVarint(buf, rec.Version)
	buf = binary.AppendVarint(buf, int64(rec.StateVersion))
	var flags byte
	if !rec.Deadline.IsZero() {
		flags |= hasDeadline
	}
	if !rec.ExpiresAt.IsZero() {
		flags |= hasExpiry
	}
	buf = append(buf, flags)
	if flags&hasDeadline != 0 {
		buf = binary.AppendVarint(buf, service.DeadlineMillis(rec.Deadline))
	}
	if flags&hasExpiry != 0 {
		buf = binary.AppendVarint(buf, service.ExpirySeconds(rec.ExpiresAt))
	}
	return append(buf, rec.State...)
}

// header is the decoded front of a record.
type header struct {
	version      int64
	stateVersion int
	deadline     time.Time // zero: none
	expiresAt    time.Time // zero: live
	stateOffset  int       // where the state starts in the value
}

// errCorrupt is wrapped by every decoding error.
var errCorrupt = errors.New("corrupt record")

func decodeHeader(value []byte) (header, error) {
	var h header
	if len(value) == 0 {
		return h, fmt.Errorf("%w: empty value", errCorrupt)
	}
	if value[0] != formatV1 {
		return h, fmt.Errorf("%w: unknown format %d", errCorrupt, value[0])
	}
	pos := 1
	next := func(field string) (int64, error) {
		v, n := binary.Varint(value[pos:])
		if n <= 0 {
			return 0, fmt.Errorf("%w: %s truncated or overflowing", errCorrupt, field)
		}
		pos += n
		return v, nil
	}
	var err error
	if h.version, err = next("version"); err != nil {
		return h, err
	}
	if h.version < 1 {
		return h, fmt.Errorf("%w: version %d is not positive", errCorrupt, h.version)
	}
	sv, err := next("stateVersion")
	if err != nil {
		return h, err
	}
	if sv < 0 || sv > math.MaxInt32 {
		return h, fmt.Errorf("%w: stateVersion %d out of range", errCorrupt, sv)
	}
	h.stateVersion = int(sv)
	if pos >= len(value) {
		return h, fmt.Errorf("%w: flags missing", errCorrupt)
	}
	flags := value[pos]
	pos++
	if flags&^knownFlags != 0 {
		return h, fmt.Errorf("%w: unknown flags %#x", errCorrupt, flags)
	}
	if flags&hasDeadline != 0 {
		ms, err := next("deadline")
		if err != nil {
			return h, err
		}
		h.deadline = time.UnixMilli(ms).UTC()
	}
	if flags&hasExpiry != 0 {
		s, err := next("expiresAt")
		if err != nil {
			return h, err
		}
		h.expiresAt = time.Unix(s, 0).UTC()
	}
	h.stateOffset = pos
	return h, nil
}

// decodeRecord decodes a whole record; the state is copied out of value
// (bbolt's memory is only valid inside the transaction).
func decodeRecord(id string, value []byte) (service.GameRecord, error) {
	h, err := decodeHeader(value)
	if err != nil {
		return service.GameRecord{}, err
	}
	rec := service.GameRecord{
		GameID:       id,
		Version:      h.version,
		StateVersion: h.stateVersion,
		Deadline:     h.deadline,
		ExpiresAt:    h.expiresAt,
	}
	if state := value[h.stateOffset:]; len(state) > 0 {
		rec.State = append([]byte(nil), state...)
	}
	return rec, nil
}
