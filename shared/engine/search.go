package engine

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"chessapi/shared/chess"
)

// The search: iterative deepening with aspiration windows over a
// principal-variation search (negamax alpha-beta, zero windows for all but
// the first move), a quiescence search of captures and promotions at the
// leaves, and the pruning and reductions whose margins are in margins.go.
// Position objects are copied down a fixed stack (copy-make), so nothing is
// allocated per node.

const (
	maxPly    = 128
	infinity  = int32(32000)
	mateScore = int32(31000) // score of mating at the root; mate in n plies = mateScore - n
	mateBound = mateScore - 2*maxPly
	// nullMove marks a passed turn on the stack; b1b1 is never a legal move.
	nullMove = chess.Move(1 | 1<<6)
	// noNullDistance stands for "no null move on the path".
	noNullDistance = 1 << 20
)

// lmrTable[depth][moveNumber] is the base late-move reduction in plies.
var lmrTable [64][64]int8

func init() {
	for d := 1; d < 64; d++ {
		for m := 1; m < 64; m++ {
			r := (lmrBase + math.Log(float64(d))*math.Log(float64(m))*100/lmrDivisor) / 100
			lmrTable[d][m] = int8(r)
		}
	}
}

type stackEntry struct {
	pos        chess.Position
	picker     movePicker
	move       chess.Move  // move played from this ply (nullMove for a pass)
	movedPiece chess.Piece // the piece that made it
	staticEval int32
	nullDist   int // plies since the last null move on the path
}

// rootScore is a root move's exact score, kept for weakened levels.
type rootScore struct {
	move  chess.Move
	score int32
}

type searcher struct {
	tt    *transpositionTable
	heur  heuristics
	stack [maxPly + 2]stackEntry

	// hashes holds the game history followed by the current path:
	// hashes[histLen+ply] is the key of stack[ply].pos.
	hashes  []uint64
	histLen int

	pv    [maxPly + 1][maxPly + 1]chess.Move
	pvLen [maxPly + 1]int

	// Per-search state.
	ctx       context.Context
	start     time.Time
	hardStop  time.Time
	hasHard   bool
	nodeLimit uint64
	nodes     uint64
	seldepth  int
	stopped   bool

	// Weakening (zero at full strength).
	salt      uint64 // xored into TT keys so weakened results stay apart
	seed      uint64
	noise     int32
	exactRoot bool // score every root move with a full window
	// fullWidth turns off forward pruning (null move, futility, late move
	// pruning and reductions): weakened levels search shallow but see
	// everything within their depth.
	fullWidth bool

	rootBest      chess.Move
	rootBestScore int32
	rootPV        []chess.Move
	rootScores    []rootScore

	// Multi-PV: the line being searched (0-based), the root moves of the
	// lines already found in this iteration (skipped at the root), and the
	// move this line had in the previous iteration (searched first).
	pvIdx    int
	excluded []chess.Move
	rootHint chess.Move
}

func newSearcher(tt *transpositionTable) *searcher {
	return &searcher{tt: tt, rootPV: make([]chess.Move, 0, maxPly), hashes: make([]uint64, 0, 512+maxPly)}
}

func (s *searcher) clearHeuristics() { s.heur.clear() }

// searchConfig is one pass of iterative deepening.
type searchConfig struct {
	maxDepth  int
	nodeLimit uint64
	soft      time.Duration // 0 = none
	hard      time.Duration // 0 = none
	salt      uint64
	noise     int32
	exactRoot bool
	fullWidth bool
	multiPV   int // lines to search, 1..MaxMultiPV (0 = 1)
	info      func(Info)
}

// run searches p (at least two legal moves) under the engine lock.
func (s *searcher) run(ctx context.Context, start time.Time, p *Params, overhead time.Duration) Result {
	s.ctx, s.start = ctx, start
	s.tt.newSearch()
	seed := p.Seed
	if seed == 0 {
		seed = uint64(start.UnixNano())
	}
	s.seed = seed

	// History first, then the root.
	hist := p.History
	if len(hist) > 1024 {
		hist = hist[len(hist)-1024:]
	}
	s.hashes = append(s.hashes[:0], hist...)
	s.histLen = len(hist)
	s.hashes = append(s.hashes, make([]uint64, maxPly+2)...)
	s.stack[0].pos = *p.Position
	s.stack[0].nullDist = noNullDistance
	s.hashes[s.histLen] = p.Position.Hash()

	noLimit := p.MoveTime == 0 && p.WhiteTime == 0 && p.BlackTime == 0 && p.WhiteInc == 0 && p.BlackInc == 0 &&
		p.Depth == 0 && p.Nodes == 0 && !p.Infinite
	lp := *p
	level := p.Level.settings()
	if noLimit {
		lp.MoveTime = p.Level.ThinkTime()
	}
	tb := planTime(ctx, start, &lp, p.Position.Turn() == chess.White, overhead)
	maxDepth := maxPly - 1
	if p.Depth > 0 {
		maxDepth = ClampDepth(p.Depth)
	}

	if !p.Level.Weakened() {
		return s.iterate(searchConfig{maxDepth: maxDepth, nodeLimit: p.Nodes, soft: tb.soft, hard: tb.hard,
			multiPV: min(max(p.MultiPV, 1), MaxMultiPV), info: p.Info})
	}

	// A weakened level thinks up to its think time (less only when the
	// clock or movetime allows less), whatever the clock would allow; it
	// usually stops earlier at its depth cap.
	if tb.hard == 0 || tb.hard > level.thinkTime {
		tb.hard = level.thinkTime
	}
	tb.soft = tb.hard

	// First a full-strength probe, so no level misses a mate it can find.
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
	salt := splitMix(seed ^ uint64(p.Level)<<56)
	res := s.iterate(searchConfig{
		maxDepth: min(level.maxDepth, maxDepth), nodeLimit: p.Nodes, soft: tb.soft, hard: tb.hard,
		salt: salt, noise: level.evalNoise, exactRoot: level.pickMargin > 0, fullWidth: true, info: p.Info,
	})
	if level.pickMargin > 0 && len(s.rootScores) > 0 {
		res = s.pickWeakened(res, level.pickMargin)
	}
	res.Nodes += probeSpent
	res.Time = time.Since(start)
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

// iterate runs iterative deepening under cfg.
//
// With cfg.multiPV lines, each iteration searches the root once per line:
// line i is the best move when the moves of lines 0..i-1 of this iteration
// are excluded, each search with its own aspiration window around the
// line's score of the previous iteration. The lines of an iteration are
// then ordered by score (a later line may score higher: search
// instability). A search stopped inside an iteration answers the lines of
// the last completed one; with one line it also keeps a root move that had
// beaten the old best, as before.
func (s *searcher) iterate(cfg searchConfig) Result {
	s.nodes, s.seldepth, s.stopped = 0, 0, false
	s.salt, s.noise, s.exactRoot, s.fullWidth = cfg.salt, cfg.noise, cfg.exactRoot, cfg.fullWidth
	s.nodeLimit = cfg.nodeLimit
	s.hasHard = cfg.hard > 0
	s.hardStop = s.start.Add(cfg.hard)
	s.rootScores = s.rootScores[:0]
	s.pvIdx, s.rootHint, s.excluded = 0, chess.NoMove, s.excluded[:0]

	// A legal move from the start, in case time runs out at once.
	root := &s.stack[0]
	var list chess.MoveList
	root.pos.GenerateMoves(&list, chess.GenAll)
	s.rootBest, s.rootBestScore = list.At(0), 0
	if e, ok := s.tt.probe(root.pos.Hash() ^ s.salt); ok && list.Contains(e.move) {
		s.rootBest = e.move
	}
	s.rootPV = append(s.rootPV[:0], s.rootBest)
	nLines := min(max(cfg.multiPV, 1), list.Len())

	res := Result{BestMove: s.rootBest, PV: []chess.Move{s.rootBest}}
	var lastScores []rootScore
	var lines, cur []rootLine // last completed iteration's lines, this iteration's
	prevScore := int32(0)
	prevBest := chess.NoMove
	stable := 0
	for depth := 1; depth <= cfg.maxDepth; depth++ {
		s.seldepth = 0
		s.rootScores = s.rootScores[:0]
		s.excluded = s.excluded[:0]
		cur = cur[:0]
		var score int32
		for i := range nLines {
			s.pvIdx, s.rootHint = i, chess.NoMove
			lineScore := prevScore
			if i < len(lines) {
				lineScore = lines[i].score
				if i > 0 && !s.isExcluded(lines[i].move) {
					s.rootHint = lines[i].move
				}
			}
			score = s.aspirate(cfg, depth, lineScore)
			if s.stopped {
				break
			}
			cur = append(cur, rootLine{move: s.rootBest, score: score, pv: append([]chess.Move(nil), s.rootPV...)})
			s.excluded = append(s.excluded, s.rootBest)
		}
		s.pvIdx, s.rootHint = 0, chess.NoMove
		if s.stopped {
			// A move that beat the previous best in the unfinished iteration
			// was fully searched and is kept.
			if nLines == 1 && s.rootBest != res.BestMove && len(s.rootPV) > 0 {
				res.BestMove = s.rootBest
				res.Score = toScore(s.rootBestScore)
				res.PV = append([]chess.Move(nil), s.rootPV...)
			}
			break
		}
		if nLines > 1 {
			slices.SortStableFunc(cur, func(a, b rootLine) int { return cmp.Compare(b.score, a.score) })
			score = cur[0].score
			lines = append(lines[:0], cur...)
		}
		res.BestMove = cur[0].move
		res.Score = toScore(score)
		res.Depth = depth
		res.PV = append(res.PV[:0:0], cur[0].pv...)
		lastScores = append(lastScores[:0], s.rootScores...)
		prevScore = score
		if nLines == 1 {
			s.report(cfg.info, depth, score, BoundExact)
		} else {
			for i, l := range lines {
				s.reportLine(cfg.info, i+1, depth, l.score, BoundExact, l.pv)
			}
		}

		if res.BestMove == prevBest {
			stable++
		} else {
			stable = 0
		}
		prevBest = res.BestMove
		elapsed := time.Since(s.start)
		if cfg.soft > 0 && elapsed > time.Duration(float64(cfg.soft)*stabilityFactor(stable)) {
			break
		}
		if cfg.hard > 0 && elapsed > cfg.hard/2 && cfg.soft == cfg.hard {
			break
		}
		// A mate found with room to spare will not get shorter.
		if score >= mateBound && depth > int(mateScore-score)+4 {
			break
		}
	}
	s.rootScores = append(s.rootScores[:0], lastScores...)
	res.SelDepth = s.seldepth
	res.Nodes = s.nodes
	if res.Depth == 0 {
		res.Depth = 1
	}
	switch {
	case nLines == 1:
		res.singleLine()
	case len(lines) == 0:
		// Stopped before the first iteration completed: rank the moves by
		// the static evaluation after them, which takes well under a
		// millisecond.
		lines = s.staticLines(&list, nLines)
		fallthrough
	default:
		res.Lines = make([]Line, len(lines))
		for i, l := range lines {
			res.Lines[i] = Line{Move: l.move, Score: toScore(l.score), PV: l.pv, Depth: res.Depth}
		}
		res.BestMove, res.Score, res.PV = res.Lines[0].Move, res.Lines[0].Score, res.Lines[0].PV
	}
	res.Time = time.Since(s.start)
	return res
}

// rootLine is one line of a multi-PV iteration.
type rootLine struct {
	move  chess.Move
	score int32
	pv    []chess.Move
}

// aspirate searches the root at depth (the moves in s.excluded left out)
// with an aspiration window around prev, widening it until the score falls
// inside, and returns the score (meaningless when s.stopped).
func (s *searcher) aspirate(cfg searchConfig, depth int, prev int32) int32 {
	alpha, beta := -infinity, infinity
	delta := int32(aspirationWindow)
	if depth >= aspirationMinDepth && !s.exactRoot && abs32(prev) < mateBound {
		alpha, beta = max(prev-delta, -infinity), min(prev+delta, infinity)
	}
	for {
		score := s.negamax(0, depth, alpha, beta, false)
		if s.stopped {
			return score
		}
		if score <= alpha {
			beta = (alpha + beta) / 2
			alpha = max(score-delta, -infinity)
			s.reportLine(cfg.info, s.pvIdx+1, depth, score, BoundUpper, s.rootPV)
		} else if score >= beta {
			beta = min(score+delta, infinity)
			s.reportLine(cfg.info, s.pvIdx+1, depth, score, BoundLower, s.rootPV)
		} else {
			return score
		}
		delta += delta / 2
		if delta > 1000 {
			alpha, beta = -infinity, infinity
		}
	}
}

// staticLines ranks the root moves by the static evaluation after each
// (mate when it mates) and returns the best n.
func (s *searcher) staticLines(list *chess.MoveList, n int) []rootLine {
	out := make([]rootLine, 0, list.Len())
	var child chess.Position
	for _, m := range list.Moves() {
		child = s.stack[0].pos
		child.Play(m)
		v := -s.evaluate(&child)
		if child.IsCheckmate() {
			v = mateScore - 1
		}
		out = append(out, rootLine{move: m, score: v, pv: []chess.Move{m}})
	}
	slices.SortStableFunc(out, func(a, b rootLine) int { return cmp.Compare(b.score, a.score) })
	return out[:n]
}

// isExcluded reports whether root move m is already one of this
// iteration's lines.
func (s *searcher) isExcluded(m chess.Move) bool {
	return slices.Contains(s.excluded, m)
}

func (s *searcher) report(info func(Info), depth int, score int32, b Bound) {
	s.reportLine(info, 1, depth, score, b, s.rootPV)
}

// reportLine reports line multiPV (1-based) of the current iteration.
func (s *searcher) reportLine(info func(Info), multiPV, depth int, score int32, b Bound, pv []chess.Move) {
	if info == nil {
		return
	}
	info(Info{
		MultiPV: multiPV, Depth: depth, SelDepth: s.seldepth, Score: toScore(score), Bound: b,
		Nodes: s.nodes, Time: time.Since(s.start), HashFull: s.tt.hashFull(),
		PV: append([]chess.Move(nil), pv...),
	})
}

// toScore converts an internal score to a Score.
func toScore(v int32) Score {
	switch {
	case v >= mateBound:
		return Score{Mate: int(mateScore-v+1) / 2}
	case v <= -mateBound:
		return Score{Mate: -int(mateScore+v) / 2}
	}
	return Score{CP: int(v)}
}

// poll counts a node and checks the limits every pollInterval nodes.
func (s *searcher) poll() bool {
	s.nodes++
	if s.nodes&(pollInterval-1) == 0 && !s.stopped {
		if s.hasHard && !time.Now().Before(s.hardStop) {
			s.stopped = true
		} else if s.nodeLimit > 0 && s.nodes >= s.nodeLimit {
			s.stopped = true
		} else if s.ctx.Err() != nil {
			s.stopped = true
		}
	}
	return s.stopped
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

// isDraw reports a draw by the fifty-move rule, insufficient material or
// repetition of any earlier position of the path or the game.
func (s *searcher) isDraw(ply int) bool {
	st := &s.stack[ply]
	pos := &st.pos
	hm := pos.HalfmoveClock()
	if hm >= 100 && !(pos.InCheck() && pos.CountMoves() == 0) {
		return true
	}
	if pos.InsufficientMaterial() {
		return true
	}
	idx := s.histLen + ply
	limit := min(hm, st.nullDist)
	h := pos.Hash()
	for i := idx - 4; i >= idx-limit && i >= 0; i -= 2 {
		if s.hashes[i] == h {
			return true
		}
	}
	return false
}

// hasNonPawnMaterial reports whether c has a piece besides king and pawns
// (null-move pruning is unsafe in pawn endings: zugzwang).
func hasNonPawnMaterial(pos *chess.Position, c chess.Color) bool {
	return pos.ByColor(c)&^pos.Pieces(c, chess.Pawn)&^pos.Pieces(c, chess.King) != 0
}

// enter prepares stack[ply+1] after a move (or nullMove) from ply.
func (s *searcher) enter(ply int, m chess.Move) {
	st, child := &s.stack[ply], &s.stack[ply+1]
	st.move = m
	if m == nullMove {
		st.movedPiece = chess.NoPiece
		child.nullDist = 0
	} else {
		st.movedPiece = st.pos.PieceAt(m.From())
		child.nullDist = st.nullDist + 1
	}
	s.hashes[s.histLen+ply+1] = child.pos.Hash()
}

func (s *searcher) negamax(ply, depth int, alpha, beta int32, cutNode bool) int32 {
	s.pvLen[ply] = 0
	st := &s.stack[ply]
	pos := &st.pos
	inCheck := pos.InCheck()
	if inCheck && ply < checkExtensionMaxPly {
		depth++
	}
	if depth <= 0 {
		return s.qsearch(ply, alpha, beta)
	}
	if s.poll() {
		return 0
	}
	s.seldepth = max(s.seldepth, ply)
	root := ply == 0
	pvNode := beta-alpha > 1
	if !root {
		if s.isDraw(ply) {
			return 0
		}
		if ply >= maxPly {
			return s.evaluate(pos)
		}
		// Mate distance pruning: no line from here beats a shorter mate.
		alpha = max(alpha, -mateScore+int32(ply))
		beta = min(beta, mateScore-int32(ply)-1)
		if alpha >= beta {
			return alpha
		}
	}

	key := pos.Hash() ^ s.salt
	tte, hit := s.tt.probe(key)
	ttMove := chess.NoMove
	var ttScore int32
	if hit {
		ttMove = tte.move
		ttScore = fromTT(int32(tte.score), ply)
		if !pvNode && int(tte.depth) >= depth && pos.HalfmoveClock() < 90 {
			switch tte.bound() {
			case boundExact:
				return ttScore
			case boundLower:
				if ttScore >= beta {
					return ttScore
				}
			case boundUpper:
				if ttScore <= alpha {
					return ttScore
				}
			}
		}
	}

	staticEval, eval := -infinity, -infinity
	if !inCheck {
		if hit && tte.eval != noEval {
			staticEval = int32(tte.eval)
		} else {
			staticEval = s.evaluate(pos)
		}
		eval = staticEval
		if hit {
			b := tte.bound()
			if b == boundExact || (b == boundLower && ttScore > eval) || (b == boundUpper && ttScore < eval) {
				eval = ttScore
			}
		}
	}
	st.staticEval = staticEval
	improving := !inCheck && ply >= 2 && staticEval > s.stack[ply-2].staticEval
	s.heur.killers[ply+1] = [2]chess.Move{}
	us := pos.Turn()

	if !pvNode && !inCheck && !s.fullWidth {
		// Reverse futility: far above beta at low depth, assume it holds.
		if depth <= rfpMaxDepth && eval < mateBound {
			margin := int32(rfpMargin * depth)
			if improving {
				margin -= rfpImproving
			}
			if eval-margin >= beta {
				return eval
			}
		}
		// Razoring: far below alpha, let quiescence decide.
		if depth <= razorMaxDepth && eval+int32(razorMargin*depth) < alpha {
			q := s.qsearch(ply, alpha, alpha+1)
			if q <= alpha {
				return q
			}
		}
		// Null move: if passing still beats beta, a real move will too.
		if depth >= nmpMinDepth && eval >= beta && staticEval >= beta && ply > 0 &&
			s.stack[ply-1].move != nullMove && hasNonPawnMaterial(pos, us) && beta > -mateBound {
			r := nmpBase + depth/nmpDepthDivisor + int(min((eval-beta)/nmpEvalDivisor, nmpMaxEvalBonus))
			child := &s.stack[ply+1]
			child.pos = *pos
			child.pos.PlayNull()
			s.enter(ply, nullMove)
			score := -s.negamax(ply+1, depth-1-r, -beta, -beta+1, !cutNode)
			if s.stopped {
				return 0
			}
			if score >= beta {
				if score >= mateBound {
					score = beta
				}
				return score
			}
		}
	}

	// Internal iterative reduction: no hash move, probably a poor node.
	if depth >= iirMinDepth && ttMove == chess.NoMove && (pvNode || cutNode) && !s.fullWidth {
		depth--
	}

	if root && s.rootHint != chess.NoMove {
		ttMove = s.rootHint // a later multi-PV line: its move of the last iteration first
	}
	var counter chess.Move
	if ply > 0 {
		if prev := s.stack[ply-1].move; prev != nullMove && prev != chess.NoMove {
			counter = s.heur.counter[s.stack[ply-1].movedPiece][prev.To()]
		}
	}
	mp := &st.picker
	mp.init(pos, chess.GenAll, ttMove, &s.heur, ply, counter)
	if mp.n == 0 {
		if inCheck {
			return -mateScore + int32(ply)
		}
		return 0
	}

	bestScore, bestMove := -infinity, chess.NoMove
	moveCount, quietCount := 0, 0
	var quiets [64]chess.Move
	nQuiets := 0
	skipQuiets := false
	canPrune := !root && !s.fullWidth && hasNonPawnMaterial(pos, us)
	for {
		m, order := mp.next()
		if m == chess.NoMove {
			break
		}
		if root && len(s.excluded) > 0 && s.isExcluded(m) {
			continue
		}
		quiet := !isNoisy(pos, m)
		if quiet && skipQuiets {
			continue
		}
		special := order >= scoreCounter && order < scoreGoodNoisy // killer or counter
		var hist int32
		if quiet {
			hist = s.heur.history[us][m.From()][m.To()]
		}
		futile := false
		if canPrune && bestScore > -mateBound {
			if quiet {
				lmpLimit := lmpBase + depth*depth
				if !improving {
					lmpLimit /= 2
				}
				if depth <= lmpMaxDepth && quietCount >= lmpLimit {
					skipQuiets = true
					continue
				}
				if depth <= historyPruneDepth && hist < int32(-historyPruneLimit*depth) && !special {
					continue
				}
				futile = !inCheck && depth <= futilityMaxDepth && !special &&
					staticEval+futilityBase+int32(futilityPerDepth*depth) <= alpha
				if depth <= seeQuietMaxDepth && !seeGE(pos, m, int32(-seeQuietMargin*depth)) {
					continue
				}
			} else if depth <= seeNoisyMaxDepth && !seeGE(pos, m, int32(-seeNoisyMargin*depth*depth)) {
				continue
			}
		}

		child := &s.stack[ply+1]
		child.pos = *pos
		child.pos.Play(m)
		givesCheck := child.pos.InCheck()
		if futile && !givesCheck {
			continue
		}
		s.enter(ply, m)
		moveCount++
		if quiet {
			quietCount++
			if nQuiets < len(quiets) {
				quiets[nQuiets] = m
				nQuiets++
			}
		}

		newDepth := depth - 1
		var score int32
		switch {
		case root && s.exactRoot:
			score = -s.negamax(ply+1, newDepth, -infinity, infinity, false)
		default:
			fullZeroWindow := !pvNode || moveCount > 1
			if depth >= lmrMinDepth && moveCount > 1+boolInt(pvNode) && (quiet || order < 0) && !s.fullWidth {
				r := int(lmrTable[min(depth, 63)][min(moveCount, 63)])
				if !pvNode {
					r++
				}
				if cutNode {
					r++
				}
				if improving {
					r--
				}
				if givesCheck || special {
					r--
				}
				if quiet {
					r -= int(hist / lmrHistoryDivisor)
				}
				r = min(max(r, 0), newDepth-1)
				score = -s.negamax(ply+1, newDepth-r, -alpha-1, -alpha, true)
				fullZeroWindow = score > alpha && r > 0
			}
			if fullZeroWindow {
				score = -s.negamax(ply+1, newDepth, -alpha-1, -alpha, !cutNode)
			}
			if pvNode && (moveCount == 1 || (score > alpha && (root || score < beta))) {
				score = -s.negamax(ply+1, newDepth, -beta, -alpha, false)
			}
		}
		if s.stopped {
			return 0
		}
		if root && s.exactRoot {
			s.rootScores = append(s.rootScores, rootScore{move: m, score: score})
		}

		if score > bestScore {
			bestScore = score
			if score > alpha {
				bestMove = m
				s.pv[ply][0] = m
				n := copy(s.pv[ply][1:], s.pv[ply+1][:s.pvLen[ply+1]])
				s.pvLen[ply] = n + 1
				if root {
					s.rootBest, s.rootBestScore = m, score
					s.rootPV = append(s.rootPV[:0], s.pv[0][:s.pvLen[0]]...)
				}
				if score >= beta {
					if quiet {
						var prev chess.Move
						var prevPiece chess.Piece
						if ply > 0 {
							prev, prevPiece = s.stack[ply-1].move, s.stack[ply-1].movedPiece
						}
						s.heur.rewardQuiet(us, m, prev, prevPiece, ply, depth, quiets[:nQuiets])
					}
					break
				}
				alpha = score
			}
		}
	}

	bd := boundUpper
	switch {
	case bestScore >= beta:
		bd = boundLower
	case bestMove != chess.NoMove:
		bd = boundExact
	}
	storedEval := staticEval
	if inCheck {
		storedEval = noEval
	}
	// The root is not stored when its score is of some moves only (exact
	// root scores of weakened levels, later multi-PV lines).
	if !(root && (s.exactRoot || s.pvIdx > 0)) {
		s.tt.store(key, bestMove, toTT(bestScore, ply), storedEval, depth, bd)
	}
	return bestScore
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// qsearch resolves captures (and check evasions) until the position is
// quiet, so the static evaluation is not taken in the middle of an exchange.
func (s *searcher) qsearch(ply int, alpha, beta int32) int32 {
	s.pvLen[ply] = 0
	if s.poll() {
		return 0
	}
	s.seldepth = max(s.seldepth, ply)
	st := &s.stack[ply]
	pos := &st.pos
	if ply >= maxPly {
		return s.evaluate(pos)
	}
	if pos.InsufficientMaterial() {
		return 0
	}
	inCheck := pos.InCheck()
	pvNode := beta-alpha > 1

	key := pos.Hash() ^ s.salt
	tte, hit := s.tt.probe(key)
	ttMove := chess.NoMove
	if hit {
		ttMove = tte.move
		ttScore := fromTT(int32(tte.score), ply)
		if !pvNode {
			switch tte.bound() {
			case boundExact:
				return ttScore
			case boundLower:
				if ttScore >= beta {
					return ttScore
				}
			case boundUpper:
				if ttScore <= alpha {
					return ttScore
				}
			}
		}
	}

	bestScore := -infinity
	staticEval := int32(noEval)
	if !inCheck {
		if hit && tte.eval != noEval {
			staticEval = int32(tte.eval)
		} else {
			staticEval = s.evaluate(pos)
		}
		if staticEval >= beta {
			return staticEval
		}
		alpha = max(alpha, staticEval)
		bestScore = staticEval
	}

	gen := chess.GenNoisy
	if inCheck {
		gen = chess.GenAll
	}
	mp := &st.picker
	mp.init(pos, gen, ttMove, nil, ply, chess.NoMove)
	if mp.n == 0 && inCheck {
		return -mateScore + int32(ply)
	}
	bestMove := chess.NoMove
	for {
		m, order := mp.next()
		if m == chess.NoMove {
			break
		}
		if !inCheck {
			if order < 0 && m.Kind() != chess.KindPromotion {
				break // the rest lose material (SEE < 0)
			}
			if m.Kind() != chess.KindPromotion &&
				staticEval+seeValue[capturedType(pos, m)]+qsDeltaMargin <= alpha {
				continue
			}
		}
		child := &s.stack[ply+1]
		child.pos = *pos
		child.pos.Play(m)
		score := -s.qsearch(ply+1, -beta, -alpha)
		if s.stopped {
			return 0
		}
		if score > bestScore {
			bestScore = score
			if score > alpha {
				bestMove = m
				s.pv[ply][0] = m
				n := copy(s.pv[ply][1:], s.pv[ply+1][:s.pvLen[ply+1]])
				s.pvLen[ply] = n + 1
				if score >= beta {
					break
				}
				alpha = score
			}
		}
	}
	bd := boundUpper
	switch {
	case bestScore >= beta:
		bd = boundLower
	case bestMove != chess.NoMove && pvNode:
		bd = boundExact
	}
	s.tt.store(key, bestMove, toTT(bestScore, ply), staticEval, 0, bd)
	return bestScore
}
