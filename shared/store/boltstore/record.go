package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/klauspost/compress/s2"

	"chessapi/shared/service"
	"chessapi/shared/store/internal/rules"
)

// A record is stored under its game id as:
//
//	byte     format (formatV1)
//	varint   version
//	varint   stateVersion
//	byte     flags: hasDeadline | hasExpiry | hasIndex | hasArmed | hasListed | hasS2
//	varint   deadline, epoch milliseconds rounded up   (if hasDeadline)
//	varint   expiresAt, epoch seconds rounded up       (if hasExpiry)
//	varint   armedAt, epoch milliseconds rounded up    (if hasArmed)
//	...      the game index                            (if hasIndex):
//	  byte     finished (0 or 1)
//	  varint   createdAt, epoch milliseconds
//	  varint   updatedAt, epoch milliseconds
//	  varint   listedAt, epoch milliseconds                (if hasListed)
//	  4 × (uvarint length, bytes): white player, black player, lobby room, summary
//	...      state: the rest of the value, S2-compressed with hasS2
//
// The header comes first so the deadline scan can skip the state. The
// rounding is the DynamoDB store's, so both stores return the same records.
// The index is kept with the record so an update can delete the index keys
// the previous version put (index.go); a record without an index (the zero
// GameIndex) has no hasIndex flag, so files written before the index
// existed read as before, and a binary that predates the flag refuses a
// record with it as corrupt rather than misreading it; the same holds for
// hasArmed (the timer's armed instant, which comes after the expiry so
// that older records read as before) and hasListed (the index's ListedAt: a record
// written before it read its index keys from updatedAt, so that is its
// ListedAt, and its keys stay where they are), and hasS2.
//
// States are compressed with S2 (github.com/klauspost/compress/s2) when
// that saves an eighth. bbolt rewrites the whole leaf a record is in, up to
// four records, on every write of it, so what a move writes (and fsyncs)
// grows with the records' size; a game's text compresses to about 30 %,
// at 12–16 µs to compress a 16–22 KB record and 7 µs to read it back
// (docs/storage.md has the figures). Zstandard, which the DynamoDB store
// uses because it pays by the byte, makes an output about 40 % smaller at
// two to three times the CPU.
const formatV1 = 1

const (
	hasDeadline = 1 << iota
	hasExpiry
	hasIndex
	hasArmed
	hasListed
	hasS2
	knownFlags = hasDeadline | hasExpiry | hasIndex | hasArmed | hasListed | hasS2
)

// minCompressed is the smallest state worth trying to compress.
const minCompressed = 512

// maxStateSize bounds a compressed state's decoded length, so that a
// corrupt value cannot make a read allocate without limit (a stored state
// is under MaxRecordSize).
const maxStateSize = MaxRecordSize

// maxHeader bounds the encoded header without the index: format, five
// varints, flags.
const maxHeader = 1 + 5*binary.MaxVarintLen64 + 1

// maxIndexHeader bounds the encoded index without its strings: the
// finished byte, three varints, four lengths.
const maxIndexHeader = 1 + 3*binary.MaxVarintLen64 + 4*binary.MaxVarintLen64

// encodeRecord encodes a record whose index passed rules.ValidateIndex,
// compressing the state if allowed (always but in the benchmarks'
// comparison); stateAt is where the state starts in the value.
func encodeRecord(rec service.GameRecord, allowCompression bool) (value []byte, stateAt int) {
	ix := rec.Index
	indexed := !rules.IsZero(ix)
	size := maxHeader + len(rec.State)
	compress := allowCompression && len(rec.State) >= minCompressed
	if compress {
		size = maxHeader + s2.MaxEncodedLen(len(rec.State))
	}
	if indexed {
		size += maxIndexHeader + len(ix.Players[0]) + len(ix.Players[1]) + len(ix.LobbyRoom) + len(ix.Summary)
	}
	buf := make([]byte, 0, size)
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
	if indexed {
		flags |= hasIndex | hasListed
	}
	if !rec.ArmedAt.IsZero() {
		flags |= hasArmed
	}
	flagsAt := len(buf)
	buf = append(buf, flags)
	if flags&hasDeadline != 0 {
		buf = binary.AppendVarint(buf, service.DeadlineMillis(rec.Deadline))
	}
	if flags&hasExpiry != 0 {
		buf = binary.AppendVarint(buf, service.ExpirySeconds(rec.ExpiresAt))
	}
	if flags&hasArmed != 0 {
		buf = binary.AppendVarint(buf, service.DeadlineMillis(rec.ArmedAt))
	}
	if indexed {
		var finished byte
		if ix.Finished {
			finished = 1
		}
		buf = append(buf, finished)
		buf = binary.AppendVarint(buf, ix.CreatedAt.UnixMilli())
		buf = binary.AppendVarint(buf, ix.UpdatedAt.UnixMilli())
		buf = binary.AppendVarint(buf, ix.ListedAt.UnixMilli())
		for _, field := range [][]byte{[]byte(ix.Players[0]), []byte(ix.Players[1]), []byte(ix.LobbyRoom), ix.Summary} {
			buf = binary.AppendUvarint(buf, uint64(len(field)))
			buf = append(buf, field...)
		}
	}
	stateAt = len(buf)
	if compress {
		if c := s2.Encode(buf[len(buf):cap(buf)], rec.State); len(c) <= len(rec.State)-len(rec.State)/8 {
			buf[flagsAt] |= hasS2
			return buf[:len(buf)+len(c)], stateAt
		}
	}
	return append(buf, rec.State...), stateAt
}

// header is the decoded front of a record.
type header struct {
	version      int64
	stateVersion int
	deadline     time.Time // zero: none
	expiresAt    time.Time // zero: live
	armedAt      time.Time // zero: no timer armed
	// index is the record's game index; its Summary aliases the value
	// (copy it before the transaction ends).
	index       service.GameIndex
	s2          bool // the state is S2-compressed
	stateOffset int  // where the state starts in the value
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
	if flags&hasArmed != 0 {
		ms, err := next("armedAt")
		if err != nil {
			return h, err
		}
		h.armedAt = time.UnixMilli(ms).UTC()
	}
	h.s2 = flags&hasS2 != 0
	if flags&hasListed != 0 && flags&hasIndex == 0 {
		return h, fmt.Errorf("%w: listedAt flag without an index", errCorrupt)
	}
	if flags&hasIndex != 0 {
		if pos >= len(value) {
			return h, fmt.Errorf("%w: index finished flag missing", errCorrupt)
		}
		switch value[pos] {
		case 0:
		case 1:
			h.index.Finished = true
		default:
			return h, fmt.Errorf("%w: index finished flag %d", errCorrupt, value[pos])
		}
		pos++
		times := []struct {
			name string
			t    *time.Time
		}{{"index createdAt", &h.index.CreatedAt}, {"index updatedAt", &h.index.UpdatedAt}}
		if flags&hasListed != 0 {
			times = append(times, struct {
				name string
				t    *time.Time
			}{"index listedAt", &h.index.ListedAt})
		}
		for _, f := range times {
			ms, err := next(f.name)
			if err != nil {
				return h, err
			}
			if ms < 0 || ms >= 1e13 {
				return h, fmt.Errorf("%w: %s %d out of range", errCorrupt, f.name, ms)
			}
			*f.t = rules.Millis(ms)
		}
		var fields [4][]byte
		for i, name := range []string{"index white player", "index black player", "index lobby room", "index summary"} {
			n, size := binary.Uvarint(value[pos:])
			if size <= 0 || n > uint64(len(value)-pos-size) {
				return h, fmt.Errorf("%w: %s truncated", errCorrupt, name)
			}
			pos += size
			fields[i] = value[pos : pos+int(n)]
			pos += int(n)
		}
		if flags&hasListed == 0 {
			h.index.ListedAt = h.index.UpdatedAt // what its index keys were made of
		}
		h.index.Players = [2]string{string(fields[0]), string(fields[1])}
		h.index.LobbyRoom = string(fields[2])
		if len(fields[3]) > 0 {
			h.index.Summary = fields[3]
		}
	}
	h.stateOffset = pos
	return h, nil
}

// decodeRecord decodes a whole record; the state is copied (or
// decompressed) out of value (bbolt's memory is only valid inside the
// transaction).
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
		ArmedAt:      h.armedAt,
		ExpiresAt:    h.expiresAt,
		Index:        h.index,
	}
	rec.Index.Summary = bytes.Clone(h.index.Summary)
	state := value[h.stateOffset:]
	if h.s2 {
		n, err := s2.DecodedLen(state)
		if err != nil || n > maxStateSize {
			return service.GameRecord{}, fmt.Errorf("%w: compressed state decodes to %d bytes (%v)", errCorrupt, n, err)
		}
		if rec.State, err = s2.Decode(make([]byte, n), state); err != nil {
			return service.GameRecord{}, fmt.Errorf("%w: compressed state: %w", errCorrupt, err)
		}
		return rec, nil
	}
	if len(state) > 0 {
		rec.State = append([]byte(nil), state...)
	}
	return rec, nil
}
