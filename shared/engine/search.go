package engine

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine/nnue"
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
	// excluded is the hash move left out by the singular-extension
	// search of this node (NoMove outside it).
	excluded chess.Move
}

// rootScore is a root move's exact score, kept for weakened levels.
type rootScore struct {
	move  chess.Move
	score int32
}

type searcher struct {
	tt    *transpositionTable
	ev    netEvaluator
	heur  heuristics
	stack [maxPly + 2]stackEntry

	// hashes holds the game history followed by the current path:
	// hashes[histLen+ply] is the key of stack[ply].pos.
	hashes  []uint64
	histLen int

	pv    [maxPly + 1][maxPly + 1]chess.Move
	pvLen [maxPly + 1]int

	now func() time.Time // the Engine's clock

	// Per-search state.
	ctx       context.Context
	start     time.Time
	hardStop  time.Time
	hasHard   bool
	nodeLimit uint64
	nodes     uint64
	seldepth  int
	stopped   bool
	rootDepth int // the iteration's depth (singular extensions stay within twice it)

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

// newSearcher returns a searcher on tt evaluating with net (nil: the
// classical evaluation).
func newSearcher(tt *transpositionTable, net *nnue.Network) *searcher {
	s := &searcher{tt: tt, now: time.Now, rootPV: make([]chess.Move, 0, maxPly), hashes: make([]uint64, 0, 512+maxPly)}
	s.ev.net = net
	return s
}

// since is time.Since on the searcher's clock.
func (s *searcher) since(t time.Time) time.Duration { return s.now().Sub(t) }

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
	s.setRoot(p.Position)
	s.stack[0].nullDist = noNullDistance
	s.hashes[s.histLen] = p.Position.Hash()

	noLimit := p.MoveTime == 0 && p.WhiteTime == 0 && p.BlackTime == 0 && p.WhiteInc == 0 && p.BlackInc == 0 &&
		p.Depth == 0 && p.Nodes == 0 && !p.Infinite
	lp := *p
	if noLimit {
		lp.MoveTime = p.Level.ThinkTime()
	}
	tb := planTime(ctx, start, &lp, p.Position.Turn() == chess.White, overhead)
	maxDepth := maxPly - 1
	if p.Depth > 0 {
		maxDepth = ClampDepth(p.Depth)
	}

	if p.Level.Weakened() {
		return s.runWeakened(p, tb, maxDepth)
	}
	return s.iterate(searchConfig{maxDepth: maxDepth, nodeLimit: p.Nodes, soft: tb.soft, hard: tb.hard,
		multiPV: min(max(p.MultiPV, 1), MaxMultiPV), info: p.Info})
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
		s.seldepth, s.rootDepth = 0, depth
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
		elapsed := s.since(s.start)
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
	res.Time = s.since(s.start)
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
	for _, m := range list.Moves() {
		child := s.play(0, m)
		v := -s.evaluate(1)
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
		Nodes: s.nodes, Time: s.since(s.start), HashFull: s.tt.hashFull(),
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
		if s.hasHard && !s.now().Before(s.hardStop) {
			s.stopped = true
		} else if s.nodeLimit > 0 && s.nodes >= s.nodeLimit {
			s.stopped = true
		} else if s.ctx.Err() != nil {
			s.stopped = true
		}
	}
	return s.stopped
}
