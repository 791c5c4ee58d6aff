package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Per-move statistics: how each engine spends its clock over a game and
// what it gets for it (nodes a second, depth). Two engines can score very
// differently at a clock than at equal nodes, and these tell whether time
// management, speed or the depth reached is the difference.

// moveStat is one move of one engine.
type moveStat struct {
	elapsed   time.Duration
	nodes     uint64        // last reported "nodes" (0: none reported)
	depth     int           // last reported "depth" with a score (0: none)
	clockLeft time.Duration // after the move and its increment; −1 without a clock
}

// parseInfoNodesDepth reads "nodes N" and "depth N" from an info line; ok
// is false for a field that is absent or malformed.
func parseInfoNodesDepth(line string) (nodes uint64, nodesOK bool, depth int, depthOK bool) {
	f := strings.Fields(line)
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "nodes":
			if n, err := strconv.ParseUint(f[i+1], 10, 64); err == nil {
				nodes, nodesOK = n, true
			}
		case "depth":
			if d, err := strconv.Atoi(f[i+1]); err == nil && d >= 0 {
				depth, depthOK = d, true
			}
		}
	}
	return nodes, nodesOK, depth, depthOK
}

// phaseMoves is the width of a phase in an engine's own moves after the
// opening; the last phase takes every later move.
const (
	phaseMoves = 20
	phases     = 4
)

// phaseStats sums the moves of one engine in one phase.
type phaseStats struct {
	moves             int
	elapsed           time.Duration
	nodes             uint64
	timedElapsed      time.Duration // time of the moves that reported nodes (nodes a second counts only these)
	depthSum, depthN  int
	clockLeftSum      time.Duration
	clockLeftReported int
}

// moveStats gathers the moves of both engines of a match (index 0: the
// first engine).
type moveStats struct {
	byPhase [2][phases]phaseStats
}

// add records game g, whose first engine played White when firstIsWhite.
func (ms *moveStats) add(g *gameRecord, firstIsWhite bool) {
	for side := range 2 { // 0 White, 1 Black
		engine := side
		if !firstIsWhite {
			engine = 1 - side
		}
		for i, st := range g.stats[side] {
			p := &ms.byPhase[engine][min(i/phaseMoves, phases-1)]
			p.moves++
			p.elapsed += st.elapsed
			if st.nodes > 0 {
				p.nodes += st.nodes
				p.timedElapsed += st.elapsed
			}
			if st.depth > 0 {
				p.depthSum += st.depth
				p.depthN++
			}
			if st.clockLeft >= 0 {
				p.clockLeftSum += st.clockLeft
				p.clockLeftReported++
			}
		}
	}
}

// report renders one line per engine and phase with moves in it (the
// clock left only for moves played on a clock).
func (ms *moveStats) report(names [2]string) string {
	var b strings.Builder
	for e := range 2 {
		for ph := range phases {
			p := ms.byPhase[e][ph]
			if p.moves == 0 {
				continue
			}
			span := fmt.Sprintf("moves %d-%d", ph*phaseMoves+1, (ph+1)*phaseMoves)
			if ph == phases-1 {
				span = fmt.Sprintf("moves %d+", ph*phaseMoves+1)
			}
			fmt.Fprintf(&b, "%s %s: %d moves, %.0f ms a move", names[e], span, p.moves,
				float64(p.elapsed.Microseconds())/1000/float64(p.moves))
			if p.timedElapsed > 0 {
				fmt.Fprintf(&b, ", %.0f k nodes/s", float64(p.nodes)/p.timedElapsed.Seconds()/1000)
			}
			if p.depthN > 0 {
				fmt.Fprintf(&b, ", depth %.1f", float64(p.depthSum)/float64(p.depthN))
			}
			if p.clockLeftReported > 0 {
				fmt.Fprintf(&b, ", %.2f s left after the move", p.clockLeftSum.Seconds()/float64(p.clockLeftReported))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}
