package engine

import "chessapi/shared/chess"

// The weakened levels (easy, normal, hard; their knobs are in levels.go).
// A weakened search is three steps:
//
//  1. a short full-strength "mate probe", bounded by nodes so a seed replays
//     exactly: a mate it finds is played, so no level misses a mate it can
//     see;
//  2. a full-width (no forward pruning), depth-capped search whose static
//     evaluations carry noise keyed by position and seed, with every root
//     move scored exactly;
//  3. a random pick among the root moves near the best, better ones more
//     likely.
//
// Nothing in it reads the clock except the limits themselves: with the same
// seed, position and limits a search that is not cut by time plays the same
// move with the same score and node count.

// runWeakened searches p at its weakened level; tb is the budget planned
// from p and maxDepth the request's depth cap.
func (s *searcher) runWeakened(p *Params, tb timeBudget, maxDepth int) Result {
	level := p.Level.settings()
	// A weakened level thinks up to its think time (less only when the
	// clock or movetime allows less), whatever the clock would allow; it
	// usually stops earlier at its depth cap.
	if tb.hard == 0 || tb.hard > level.thinkTime {
		tb.hard = level.thinkTime
	}
	tb.soft = tb.hard

	var probeSpent uint64
	if level.mateProbeDepth > 0 {
		// Limited by nodes rather than time so that a seed replays exactly;
		// the time limit is only a safety net on a slow machine.
		probeNodes := level.mateProbeNodes
		if p.Nodes > 0 {
			probeNodes = min(probeNodes, p.Nodes)
		}
		probe := s.iterate(searchConfig{
			maxDepth: min(level.mateProbeDepth, maxDepth), nodeLimit: probeNodes,
			hard: tb.hard * 6 / 10,
		})
		if probe.Score.Mate > 0 {
			if p.Info != nil {
				p.Info(Info{MultiPV: 1, Depth: probe.Depth, SelDepth: probe.SelDepth, Score: probe.Score, Nodes: probe.Nodes,
					Time: probe.Time, HashFull: s.tt.hashFull(), PV: probe.PV})
			}
			return probe
		}
		probeSpent = probe.Nodes
	}
	salt := splitMix(s.seed ^ uint64(p.Level)<<56)
	res := s.iterate(searchConfig{
		maxDepth: min(level.maxDepth, maxDepth), nodeLimit: p.Nodes, soft: tb.soft, hard: tb.hard,
		salt: salt, noise: level.evalNoise, exactRoot: level.pickMargin > 0, fullWidth: true, info: p.Info,
	})
	if level.pickMargin > 0 && len(s.rootScores) > 0 {
		res = s.pickWeakened(res, level.pickMargin)
	}
	res.Nodes += probeSpent
	res.Time = s.since(s.start)
	res.singleLine()
	return res
}

// pickWeakened chooses at random among the root moves scored within margin
// of the best, better moves more likely; a mate is always played.
func (s *searcher) pickWeakened(res Result, margin int32) Result {
	best := s.rootScores[0].score
	for _, rs := range s.rootScores {
		best = max(best, rs.score)
	}
	if best >= mateBound {
		return res
	}
	var total int64
	for _, rs := range s.rootScores {
		if rs.score >= best-margin {
			total += int64(margin - (best - rs.score) + 1)
		}
	}
	r := int64(splitMix(s.seed^0x9e3779b97f4a7c15) % uint64(total))
	for _, rs := range s.rootScores {
		if rs.score < best-margin {
			continue
		}
		r -= int64(margin - (best - rs.score) + 1)
		if r < 0 {
			if rs.move != res.BestMove {
				res.BestMove = rs.move
				res.Score = toScore(rs.score)
				res.PV = []chess.Move{rs.move}
			}
			break
		}
	}
	return res
}

// evaluate is the static evaluation plus the level's noise.
func (s *searcher) evaluate(pos *chess.Position) int32 {
	v := evaluate(pos)
	if s.noise > 0 {
		v += int32(splitMix(pos.Hash()^s.seed)%uint64(2*s.noise+1)) - s.noise
	}
	return v
}

// splitMix is the SplitMix64 finaliser: a cheap, well-mixed hash.
func splitMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
