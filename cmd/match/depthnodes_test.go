package main

import (
	"strings"
	"testing"
)

// TestDepthNodes: each engine searches each position once, in order, and
// its last reported nodes are kept (the fake engine reports 2000).
func TestDepthNodes(t *testing.T) {
	engines := [2]engineSpec{fakeSpec(t, "a", "first"), fakeSpec(t, "b", "first")}
	ops := []opening{{fen: "r6k/8/8/8/8/8/8/R6K w - - 0 1"}, {fen: "r6k/8/8/8/8/8/8/R6K w - - 0 1", moves: []string{"a1a2"}}}
	nodes, err := depthNodes(engines, ops, 5)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		if len(nodes[i]) != 2 || nodes[i][0] != 2000 || nodes[i][1] != 2000 {
			t.Errorf("engine %d: nodes %v; want [2000 2000]", i, nodes[i])
		}
	}
	r := depthReport([2]string{"a", "b"}, 5, [2][]uint64{{100, 300}, {200, 600}})
	if !strings.Contains(r, "depth 5 over 2 positions: a 400 nodes, b 800 nodes (2.00× the first)") {
		t.Errorf("report:\n%s", r)
	}
	if _, err := depthNodes([2]engineSpec{fakeSpec(t, "s", "silent"), engines[1]}, nil, 5); err != nil {
		t.Errorf("no positions: %v", err)
	}
}
