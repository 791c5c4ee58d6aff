package main

import (
	"fmt"
	"strings"
	"time"
)

// Nodes to depth: the size of each engine's tree for the same nominal
// depth. Two searches that are equal at a few thousand nodes and part ways
// at a few hundred thousand differ in how their trees grow, which this
// measures directly (the effective branching factor between two depths).

// depthAnswerTimeout bounds one fixed-depth search.
const depthAnswerTimeout = 10 * time.Minute

// depthNodes searches every opening's position to depth with each engine,
// one engine and one position at a time after "ucinewgame", and returns the
// nodes each reported last for each position.
func depthNodes(engines [2]engineSpec, openings []opening, depth int) ([2][]uint64, error) {
	var out [2][]uint64
	for i, spec := range engines {
		nodes, err := engineDepthNodes(spec, openings, depth)
		if err != nil {
			return out, err
		}
		out[i] = nodes
	}
	return out, nil
}

// engineDepthNodes is depthNodes for one engine.
func engineDepthNodes(spec engineSpec, openings []opening, depth int) ([]uint64, error) {
	e, err := startEngine(spec)
	if err != nil {
		return nil, err
	}
	defer e.close()
	goCmd := fmt.Sprintf("go depth %d", depth)
	var nodes []uint64
	for _, op := range openings {
		if err := e.send("ucinewgame"); err != nil {
			return nodes, err
		}
		if err := e.ready(); err != nil {
			return nodes, err
		}
		res, err := e.think(positionCommand(op.fen, op.moves), goCmd, depthAnswerTimeout)
		if err != nil {
			return nodes, fmt.Errorf("opening %q: %w", op.fen, err)
		}
		nodes = append(nodes, res.nodes)
	}
	return nodes, nil
}

// depthReport renders the nodes per position and the totals.
func depthReport(names [2]string, depth int, nodes [2][]uint64) string {
	var b strings.Builder
	var total [2]uint64
	for p := range nodes[0] {
		fmt.Fprintf(&b, "position %3d: %s %d nodes, %s %d nodes\n", p+1, names[0], nodes[0][p], names[1], nodes[1][p])
		total[0] += nodes[0][p]
		total[1] += nodes[1][p]
	}
	fmt.Fprintf(&b, "depth %d over %d positions: %s %d nodes, %s %d nodes", depth, len(nodes[0]), names[0], total[0], names[1], total[1])
	if total[0] > 0 {
		fmt.Fprintf(&b, " (%.2f× the first)", float64(total[1])/float64(total[0]))
	}
	b.WriteByte('\n')
	return b.String()
}
