// Package statezstd compresses the stored form of a game for the DynamoDB
// store: a game's state is text (storedgame) that Zstandard at its fastest
// level brings to about a third in tens of microseconds, and DynamoDB bills
// a write by the started kilobyte of the item. (The embedded store keeps
// states as they are: there the per-call cost was not repaid;
// docs/storage.md.)
package statezstd

import (
	"fmt"
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// Above is the size past which a state is compressed: under a kilobyte the
// saving is less than the frame and the work.
const Above = 1 << 10

// maxState bounds what a stored state may inflate to: a DynamoDB item is
// at most 400 KB, and the longest legal game's state is far below this.
const maxState = 8 << 20

var (
	// One encoder and one decoder serve every goroutine (EncodeAll and
	// DecodeAll are safe for concurrent use).
	encoder, _ = zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		// Both stores check their own data (DynamoDB's checksums, bbolt's
		// page layout); a frame checksum would only cost.
		zstd.WithEncoderCRC(false))
	decoder, _ = zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(maxState))
)

// Compress returns state compressed, and true, when it is past Above and
// compresses smaller; otherwise state itself and false.
func Compress(state []byte) ([]byte, bool) {
	if len(state) <= Above {
		return state, false
	}
	packed := encoder.EncodeAll(state, make([]byte, 0, len(state)/3+64))
	if len(packed) >= len(state) {
		return state, false
	}
	return packed, true
}

// Decompress reverses Compress for a state it compressed, into a new
// slice (stored is not kept).
func Decompress(stored []byte) ([]byte, error) {
	state, err := decoder.DecodeAll(stored, nil)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return state, nil
}
