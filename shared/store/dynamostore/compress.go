package dynamostore

import (
	"fmt"
	"runtime"

	"github.com/klauspost/compress/zstd"
)

// DynamoDB bills a write by the started kilobyte of the item (and a read by
// the started 4 KB), and a game's state is text that compresses to about a
// third: a state past compressAbove is stored Zstandard-compressed, marked
// by the attribute stateEncoding = "zstd". Compression at the fastest level
// costs tens of microseconds for a long game; each kilobyte it saves is one
// write unit less on every move.
const compressAbove = 1 << 10

// encodingZstd is the stateEncoding of a compressed state.
const encodingZstd = "zstd"

var (
	// One encoder and one decoder serve every goroutine (EncodeAll and
	// DecodeAll are safe for concurrent use).
	zstdEncoder, _ = zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithEncoderCRC(false)) // DynamoDB checks its own data
	zstdDecoder, _ = zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		// An item is at most 400 KB; a state never inflates past this.
		zstd.WithDecoderMaxMemory(8<<20))
)

// compressState returns the bytes to store for state and their encoding
// ("" for as is: small, or not smaller compressed).
func compressState(state []byte) ([]byte, string) {
	if len(state) <= compressAbove {
		return state, ""
	}
	packed := zstdEncoder.EncodeAll(state, make([]byte, 0, len(state)/3+64))
	if len(packed) >= len(state) {
		return state, ""
	}
	return packed, encodingZstd
}

// decompressState reverses compressState.
func decompressState(stored []byte, encoding string) ([]byte, error) {
	switch encoding {
	case "":
		return stored, nil
	case encodingZstd:
		state, err := zstdDecoder.DecodeAll(stored, nil)
		if err != nil {
			return nil, fmt.Errorf("zstd: %w", err)
		}
		return state, nil
	}
	return nil, fmt.Errorf("unknown encoding %q", encoding)
}
