package nnue

import (
	_ "embed"
	"fmt"
	"sync"
)

// defaultFile is the network an engine with Evaluation EvalNetwork plays
// with, made by cmd/datagen and cmd/train (docs/engine.md gives the
// commands that made it).
//
//go:embed default.nnue
var defaultFile []byte

var defaultNet = sync.OnceValue(func() *Network {
	n, err := Load(defaultFile)
	if err != nil {
		// The file is part of the build and TestDefaultNetworkLoads reads it:
		// failing here means the binary itself is broken.
		panic(fmt.Sprintf("nnue: the embedded network does not load: %v", err))
	}
	return n
})

// Default returns the embedded network, parsed on first use (about a
// millisecond; docs/engine.md) and shared by every caller: a Network is
// read-only once built.
func Default() *Network { return defaultNet() }

// DefaultSize returns the size of the embedded network file in bytes.
func DefaultSize() int { return len(defaultFile) }
