package dynamostore

import (
	"fmt"

	"chessapi/shared/store/internal/statezstd"
)

// DynamoDB bills a write by the started kilobyte of the item (and a read by
// the started 4 KB): a state past statezstd.Above is stored compressed,
// marked by the attribute stateEncoding = "zstd"; each kilobyte it saves is
// one write unit less on every move.

// encodingZstd is the stateEncoding of a compressed state.
const encodingZstd = "zstd"

// compressState returns the bytes to store for state and their encoding
// ("" for as is: small, or not smaller compressed).
func compressState(state []byte) ([]byte, string) {
	if packed, ok := statezstd.Compress(state); ok {
		return packed, encodingZstd
	}
	return state, ""
}

// decompressState reverses compressState.
func decompressState(stored []byte, encoding string) ([]byte, error) {
	switch encoding {
	case "":
		return stored, nil
	case encodingZstd:
		return statezstd.Decompress(stored)
	}
	return nil, fmt.Errorf("unknown encoding %q", encoding)
}
