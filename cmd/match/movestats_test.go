package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseInfoNodesDepth(t *testing.T) {
	tests := []struct {
		line    string
		nodes   uint64
		nodesOK bool
		depth   int
		depthOK bool
	}{
		{"info depth 12 seldepth 20 multipv 1 score cp 31 nodes 654321 nps 1300000 time 500 pv e2e4", 654321, true, 12, true},
		{"info depth 7 currmove e2e4 currmovenumber 1", 0, false, 7, true},
		{"info nodes 99", 99, true, 0, false},
		{"info depth x nodes -5", 0, false, 0, false},
		{"info depth", 0, false, 0, false},
		{"info string nodes", 0, false, 0, false},
	}
	for _, tt := range tests {
		nodes, nodesOK, depth, depthOK := parseInfoNodesDepth(tt.line)
		if nodes != tt.nodes || nodesOK != tt.nodesOK || depth != tt.depth || depthOK != tt.depthOK {
			t.Errorf("parseInfoNodesDepth(%q) = %d %v %d %v; want %d %v %d %v", tt.line,
				nodes, nodesOK, depth, depthOK, tt.nodes, tt.nodesOK, tt.depth, tt.depthOK)
		}
	}
}

func FuzzParseInfoNodesDepth(f *testing.F) {
	f.Add("info depth 12 score cp 31 nodes 654321 pv e2e4")
	f.Add("info nodes 18446744073709551616 depth -1")
	f.Fuzz(func(t *testing.T, line string) {
		nodes, nodesOK, depth, depthOK := parseInfoNodesDepth(line)
		if !nodesOK && nodes != 0 || !depthOK && depth != 0 || depth < 0 {
			t.Errorf("parseInfoNodesDepth(%q) = %d %v %d %v", line, nodes, nodesOK, depth, depthOK)
		}
	})
}

// TestMoveStatsBySide: a game's White and Black moves go to the engine that
// played that colour, split into phases of the engine's own moves.
func TestMoveStatsBySide(t *testing.T) {
	g := gameRecord{}
	for range 25 { // White: 25 moves of 100 ms, 50 000 nodes, depth 10
		g.stats[0] = append(g.stats[0], moveStat{elapsed: 100 * time.Millisecond, nodes: 50000, depth: 10, clockLeft: 5 * time.Second})
	}
	for range 3 { // Black: 3 moves searched by nodes, no clock, no depth
		g.stats[1] = append(g.stats[1], moveStat{elapsed: 10 * time.Millisecond, nodes: 1000, clockLeft: -1})
	}
	var ms moveStats
	ms.add(&g, false) // the first engine played Black
	got := ms.report([2]string{"first", "second"})
	want := "first moves 1-20: 3 moves, 10 ms a move, 100 k nodes/s\n" +
		"second moves 1-20: 20 moves, 100 ms a move, 500 k nodes/s, depth 10.0, 5.00 s left after the move\n" +
		"second moves 21-40: 5 moves, 100 ms a move, 500 k nodes/s, depth 10.0, 5.00 s left after the move\n"
	if got != want {
		t.Errorf("report =\n%s\nwant\n%s", got, want)
	}
}

// TestPlayGameRecordsMoveStats: a game of the fake engine records its last
// scored depth, its last node count and the clock left for every move.
func TestPlayGameRecordsMoveStats(t *testing.T) {
	w := startFake(t, "w", "first")
	b := startFake(t, "b", "first")
	g, err := playGame(w, b, opening{fen: "r6k/8/8/8/8/8/8/R6K w - - 0 1"}, [2]timeControl{{base: 10 * time.Second}, {base: 10 * time.Second}}, adjudication{timeMargin: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n := len(g.stats[0]) + len(g.stats[1])
	if n != len(g.moves) || n == 0 {
		t.Fatalf("%d moves recorded for %d played", n, len(g.moves))
	}
	for side, moves := range g.stats {
		for i, st := range moves {
			// depth 3 is the last line with a score; nodes 2000 the last count.
			if st.depth != 3 || st.nodes != 2000 || st.clockLeft <= 0 || st.clockLeft > 10*time.Second {
				t.Fatalf("side %d move %d: %+v", side, i, st)
			}
		}
	}
	var ms moveStats
	ms.add(&g, true)
	if r := ms.report([2]string{"w", "b"}); !strings.Contains(r, "w moves 1-20:") || !strings.Contains(r, "depth 3.0") {
		t.Errorf("report lacks White's first phase:\n%s", r)
	}
}
