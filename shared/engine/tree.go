package engine

import "chessapi/shared/chess"

// The tree search below the driver (search.go): a principal-variation
// negamax with the node-level pruning (reverse futility, razoring, null
// move, internal iterative reduction), the move-level pruning and late-move
// reductions, and a quiescence search of captures, promotions and check
// evasions at the leaves. Every margin is in margins.go.

// node is what the pruning decisions of one negamax node read.
type node struct {
	ply, depth int
	pvNode     bool
	cutNode    bool
	inCheck    bool
	improving  bool
	staticEval int32 // -infinity in check
	us         chess.Color
	key        uint64 // the node's table key
	// The table's entry, when there was one (ttDepth −1 when not).
	ttDepth int
	ttScore int32
	ttBound bound
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
			return s.evaluate(ply)
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
	// The singular-extension search of this node (st.excluded set) is a
	// search of a different move set: it neither reads nor writes the
	// node's entry.
	singularSearch := st.excluded != chess.NoMove
	hit = hit && !singularSearch
	ttMove := chess.NoMove
	var ttScore int32
	if hit {
		ttMove = tte.move
		ttScore = fromTT(int32(tte.score), ply)
		if !pvNode && int(tte.depth) >= depth && pos.HalfmoveClock() < 90 {
			if v, ok := ttCutoff(&tte, ttScore, alpha, beta); ok {
				return v
			}
		}
	}

	n := node{ply: ply, depth: depth, pvNode: pvNode, cutNode: cutNode, inCheck: inCheck, us: pos.Turn(), key: key, ttDepth: -1}
	if hit {
		n.ttDepth, n.ttScore, n.ttBound = int(tte.depth), ttScore, tte.bound()
	}
	n.staticEval = -infinity
	eval := -infinity
	if !inCheck {
		n.staticEval, eval = s.nodeEval(ply, &tte, hit, ttScore)
	}
	st.staticEval = n.staticEval
	n.improving = !inCheck && ply >= 2 && n.staticEval > s.stack[ply-2].staticEval
	s.heur.killers[ply+1] = [2]chess.Move{}

	if !pvNode && !inCheck && !s.fullWidth && !singularSearch {
		if v, ok := s.pruneNode(&n, alpha, beta, eval); ok {
			return v
		}
	}

	// Internal iterative reduction: no hash move, probably a poor node.
	if depth >= iirMinDepth && ttMove == chess.NoMove && (pvNode || cutNode) && !s.fullWidth && !singularSearch {
		depth--
		n.depth = depth
	}

	// Singular extension: is the hash move much better than every other?
	ttExt := 0
	if !root && hit && ttMove != chess.NoMove && depth >= seMinDepth && !s.fullWidth &&
		int(tte.depth) >= depth-seTTDepthMargin && tte.bound() != boundUpper &&
		abs32(ttScore) < mateBound && ply < 2*s.rootDepth {
		singularBeta := ttScore - int32(seMarginPerDepth*depth)
		st.excluded = ttMove
		v := s.negamax(ply, (depth-1)/2, singularBeta-1, singularBeta, cutNode)
		st.excluded = chess.NoMove
		s.pvLen[ply] = 0 // the line found without the hash move is not this node's
		if s.stopped {
			return 0
		}
		switch {
		case v < singularBeta:
			ttExt = 1
		case singularBeta >= beta:
			return singularBeta // multi-cut: another move beats beta too
		}
	}

	if root && s.rootHint != chess.NoMove {
		ttMove = s.rootHint // a later multi-PV line: its move of the last iteration first
	}
	mp := s.initPicker(ply, ttMove)
	if mp.n == 0 {
		if inCheck {
			return -mateScore + int32(ply)
		}
		return 0
	}

	bestScore, bestMove := -infinity, chess.NoMove
	moveCount, quietCount := 0, 0
	var quiets, noisies [64]chess.Move
	nQuiets, nNoisies := 0, 0
	skipQuiets := false
	canPrune := !root && !s.fullWidth && hasNonPawnMaterial(pos, n.us)
	for {
		m, order := mp.next()
		if m == chess.NoMove {
			break
		}
		if root && len(s.excluded) > 0 && s.isExcluded(m) {
			continue
		}
		if m == st.excluded {
			continue
		}
		quiet := !isNoisy(pos, m)
		if quiet && skipQuiets {
			continue
		}
		special := order >= scoreCounter && order < scoreGoodNoisy // killer or counter
		var hist int32
		if quiet {
			hist = s.heur.history[n.us][m.From()][m.To()]
		}
		futile := false
		if canPrune && bestScore > -mateBound {
			var skip, restQuiets bool
			skip, restQuiets, futile = pruneMove(&n, pos, m, quiet, special, hist, quietCount, alpha)
			skipQuiets = skipQuiets || restQuiets
			if skip {
				continue
			}
		}

		givesCheck := s.play(ply, m).InCheck()
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
		} else if nNoisies < len(noisies) {
			noisies[nNoisies] = m
			nNoisies++
		}

		var score int32
		if root && s.exactRoot {
			score = -s.negamax(ply+1, depth-1, -infinity, infinity, false)
		} else {
			r := -1 // no reduced search
			if depth >= lmrMinDepth && moveCount > 1+boolInt(pvNode) && (quiet || order < 0) && !s.fullWidth {
				r = reduction(&n, moveCount, quiet, givesCheck || special, hist)
			}
			ext := 0
			if m == ttMove {
				ext = ttExt
			}
			score = s.searchMove(&n, moveCount, r, ext, alpha, beta)
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
				s.updatePV(ply, m)
				if root {
					s.rootBest, s.rootBestScore = m, score
					s.rootPV = append(s.rootPV[:0], s.pv[0][:s.pvLen[0]]...)
				}
				if score >= beta {
					if quiet {
						s.rewardCutoff(ply, depth, n.us, m, quiets[:nQuiets])
						s.heur.rewardCapture(pos, chess.NoMove, depth, noisies[:nNoisies])
					} else {
						s.heur.rewardCapture(pos, m, depth, noisies[:nNoisies])
					}
					break
				}
				alpha = score
			}
		}
	}

	if singularSearch {
		if moveCount == 0 {
			return alpha // the excluded move was the only one
		}
		return bestScore
	}
	// The root is not stored when its score is of some moves only (exact
	// root scores of weakened levels, later multi-PV lines).
	if !(root && (s.exactRoot || s.pvIdx > 0)) {
		s.storeNode(key, &n, bestMove, bestScore, beta)
	}
	return bestScore
}

// initPicker prepares the move picker of stack[ply] with the hash move and
// the counter move to the previous move.
func (s *searcher) initPicker(ply int, ttMove chess.Move) *movePicker {
	var counter chess.Move
	if ply > 0 {
		if prev := s.stack[ply-1].move; prev != nullMove && prev != chess.NoMove {
			counter = s.heur.counter[s.stack[ply-1].movedPiece][prev.To()]
		}
	}
	mp := &s.stack[ply].picker
	mp.init(&s.stack[ply].pos, chess.GenAll, ttMove, &s.heur, ply, counter)
	return mp
}

// storeNode writes node n's result to the table: a lower bound when it cut
// off, exact when a move raised alpha, an upper bound otherwise; the static
// evaluation with it (none in check).
func (s *searcher) storeNode(key uint64, n *node, bestMove chess.Move, bestScore, beta int32) {
	bd := boundUpper
	switch {
	case bestScore >= beta:
		bd = boundLower
	case bestMove != chess.NoMove:
		bd = boundExact
	}
	storedEval := n.staticEval
	if n.inCheck {
		storedEval = noEval
	}
	s.tt.store(key, bestMove, toTT(bestScore, n.ply), storedEval, n.depth, bd)
}

// ttCutoff returns the stored score when the entry's bound settles the
// window (the caller has checked that its depth suffices).
func ttCutoff(e *ttEntry, score, alpha, beta int32) (int32, bool) {
	switch e.bound() {
	case boundExact:
		return score, true
	case boundLower:
		return score, score >= beta
	case boundUpper:
		return score, score <= alpha
	}
	return 0, false
}

// nodeEval returns the static evaluation of stack[ply] (the table's when it
// has one) and the eval the pruning uses: the table's score instead when its
// bound says the true score lies on that side of the static one.
func (s *searcher) nodeEval(ply int, tte *ttEntry, hit bool, ttScore int32) (staticEval, eval int32) {
	if hit && tte.eval != noEval {
		staticEval = int32(tte.eval)
	} else {
		staticEval = s.evaluate(ply)
	}
	eval = staticEval
	if hit {
		b := tte.bound()
		if b == boundExact || (b == boundLower && ttScore > eval) || (b == boundUpper && ttScore < eval) {
			eval = ttScore
		}
	}
	return staticEval, eval
}

// pruneNode tries to settle a non-PV node that is not in check before its
// moves are searched: reverse futility, razoring and the null move. It
// reports the score to return and whether one was found.
func (s *searcher) pruneNode(n *node, alpha, beta, eval int32) (int32, bool) {
	ply, depth := n.ply, n.depth
	// Reverse futility: far above beta at low depth, assume it holds.
	if depth <= rfpMaxDepth && eval < mateBound {
		margin := int32(rfpMargin * depth)
		if n.improving {
			margin -= rfpImproving
		}
		if eval-margin >= beta {
			return eval, true
		}
	}
	// Razoring: far below alpha, let quiescence decide.
	if depth <= razorMaxDepth && eval+int32(razorMargin*depth) < alpha {
		q := s.qsearch(ply, alpha, alpha+1)
		if q <= alpha {
			return q, true
		}
	}
	// Null move: if passing still beats beta, a real move will too.
	pos := &s.stack[ply].pos
	if depth >= nmpMinDepth && eval >= beta && n.staticEval >= beta && ply > 0 &&
		s.stack[ply-1].move != nullMove && hasNonPawnMaterial(pos, n.us) && beta > -mateBound {
		r := nmpBase + depth/nmpDepthDivisor + int(min((eval-beta)/nmpEvalDivisor, nmpMaxEvalBonus))
		s.play(ply, nullMove)
		s.enter(ply, nullMove)
		score := -s.negamax(ply+1, depth-1-r, -beta, -beta+1, !n.cutNode)
		if s.stopped {
			return 0, true
		}
		if score >= beta {
			if score >= mateBound {
				score = beta
			}
			return score, true
		}
	}
	// ProbCut: a capture that beats beta by probcutMargin in a search of
	// depth − probcutReduction (after a quiescence search agrees)
	// would most likely beat beta at full depth too. Skipped when the table
	// already says a search nearly that deep stays below that bound.
	probBeta := beta + probcutMargin
	if depth >= probcutMinDepth && abs32(beta) < mateBound-probcutMargin &&
		!(n.ttDepth >= depth-probcutReduction+1 && n.ttBound&boundUpper != 0 && n.ttScore < probBeta) {
		mp := &s.stack[ply].picker
		mp.init(pos, chess.GenNoisy, chess.NoMove, nil, ply, chess.NoMove)
		for {
			m, order := mp.next()
			if m == chess.NoMove || order < 0 {
				break // the rest lose material
			}
			if !seeGE(pos, m, probBeta-n.staticEval) {
				continue
			}
			s.play(ply, m)
			s.enter(ply, m)
			score := -s.qsearch(ply+1, -probBeta, -probBeta+1)
			if score >= probBeta {
				score = -s.negamax(ply+1, depth-probcutReduction, -probBeta, -probBeta+1, !n.cutNode)
			}
			if s.stopped {
				return 0, true
			}
			if score >= probBeta {
				s.tt.store(n.key, m, toTT(score, ply), n.staticEval, depth-probcutReduction+1, boundLower)
				return score, true
			}
		}
	}
	return 0, false
}

// pruneMove decides, before move m is played, whether it is skipped (late
// move pruning, bad history, SEE), whether every later quiet move is skipped
// too (late move pruning's limit reached), and whether the move is futile:
// skipped after playing it unless it gives check.
func pruneMove(n *node, pos *chess.Position, m chess.Move, quiet, special bool, hist int32, quietCount int, alpha int32) (skip, skipQuiets, futile bool) {
	depth := n.depth
	if !quiet {
		return depth <= seeNoisyMaxDepth && !seeGE(pos, m, int32(-seeNoisyMargin*depth*depth)), false, false
	}
	lmpLimit := lmpBase + depth*depth
	if !n.improving {
		lmpLimit /= 2
	}
	if depth <= lmpMaxDepth && quietCount >= lmpLimit {
		return true, true, false
	}
	if depth <= historyPruneDepth && hist < int32(-historyPruneLimit*depth) && !special {
		return true, false, false
	}
	futile = !n.inCheck && depth <= futilityMaxDepth && !special &&
		n.staticEval+futilityBase+int32(futilityPerDepth*depth) <= alpha
	if depth <= seeQuietMaxDepth && !seeGE(pos, m, int32(-seeQuietMargin*depth)) {
		return true, false, futile
	}
	return false, false, futile
}

// reduction is the late-move reduction of the moveCount-th move of node n:
// the table's, more at non-PV and cut nodes, less when improving, for checks
// and killers/counter moves (lighter), and by the quiet move's history;
// between 0 and depth-2 plies.
func reduction(n *node, moveCount int, quiet, lighter bool, hist int32) int {
	r := int(lmrTable[min(n.depth, 63)][min(moveCount, 63)])
	if !n.pvNode {
		r++
	}
	if n.cutNode {
		r++
	}
	if n.improving {
		r--
	}
	if lighter {
		r--
	}
	if quiet {
		r -= int(hist / lmrHistoryDivisor)
	}
	return min(max(r, 0), n.depth-2)
}

// searchMove searches the move just played from node n (stack[n.ply+1])
// the PVS way: a zero-window search reduced by r plies (r < 0: none), again
// at full depth (extended by ext plies) if that beats alpha, and with the
// full window at PV nodes for the first move and for any move that lands
// inside the window.
func (s *searcher) searchMove(n *node, moveCount, r, ext int, alpha, beta int32) int32 {
	ply, newDepth := n.ply, n.depth-1+ext
	var score int32
	fullZeroWindow := !n.pvNode || moveCount > 1
	if r >= 0 {
		score = -s.negamax(ply+1, newDepth-r, -alpha-1, -alpha, true)
		fullZeroWindow = score > alpha && r > 0
	}
	if fullZeroWindow {
		score = -s.negamax(ply+1, newDepth, -alpha-1, -alpha, !n.cutNode)
	}
	if n.pvNode && (moveCount == 1 || (score > alpha && (ply == 0 || score < beta))) {
		score = -s.negamax(ply+1, newDepth, -beta, -alpha, false)
	}
	return score
}

// updatePV makes m followed by the child's line the PV of ply.
func (s *searcher) updatePV(ply int, m chess.Move) {
	s.pv[ply][0] = m
	n := copy(s.pv[ply][1:], s.pv[ply+1][:s.pvLen[ply+1]])
	s.pvLen[ply] = n + 1
}

// rewardCutoff updates killers, history and the counter move after quiet
// move m cut off at ply; tried are the quiet moves searched before it.
func (s *searcher) rewardCutoff(ply, depth int, us chess.Color, m chess.Move, tried []chess.Move) {
	var prev chess.Move
	var prevPiece chess.Piece
	if ply > 0 {
		prev, prevPiece = s.stack[ply-1].move, s.stack[ply-1].movedPiece
	}
	s.heur.rewardQuiet(us, m, prev, prevPiece, ply, depth, tried)
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
		return s.evaluate(ply)
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
		if !pvNode {
			if v, ok := ttCutoff(&tte, fromTT(int32(tte.score), ply), alpha, beta); ok {
				return v
			}
		}
	}

	bestScore := -infinity
	staticEval := int32(noEval)
	if !inCheck {
		if hit && tte.eval != noEval {
			staticEval = int32(tte.eval)
		} else {
			staticEval = s.evaluate(ply)
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
		s.play(ply, m)
		score := -s.qsearch(ply+1, -beta, -alpha)
		if s.stopped {
			return 0
		}
		if score > bestScore {
			bestScore = score
			if score > alpha {
				bestMove = m
				s.updatePV(ply, m)
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
