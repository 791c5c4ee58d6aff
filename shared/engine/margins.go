package engine

// Search constants: every pruning and reduction margin, in one block so they
// can be tuned together. Depths are in plies, margins in centipawns.
const (
	// Aspiration windows start this wide around the previous score from
	// aspirationMinDepth on and widen by half of themselves on each failure.
	aspirationMinDepth = 5
	aspirationWindow   = 16

	// Reverse futility (static null move): at shallow depth a node whose
	// static eval beats beta by rfpMargin per ply is cut.
	rfpMaxDepth  = 8
	rfpMargin    = 75
	rfpImproving = 60 // subtracted from the margin when the eval is improving

	// Razoring: far below alpha at depth <= razorMaxDepth, check with a
	// quiescence search.
	razorMaxDepth = 2
	razorMargin   = 250

	// Null-move pruning: reduction nmpBase + depth/nmpDepthDivisor, more when
	// the eval is far above beta.
	nmpMinDepth     = 3
	nmpBase         = 3
	nmpDepthDivisor = 4
	nmpEvalDivisor  = 200
	nmpMaxEvalBonus = 3

	// ProbCut: from probcutMinDepth on, a capture whose reply is searched
	// probcutReduction plies shallower than the node (the main search would
	// search it one less) and beats beta + probcutMargin cuts.
	probcutMinDepth  = 5
	probcutMargin    = 200
	probcutReduction = 4

	// Singular extensions: from seMinDepth on, a hash move whose lower or
	// exact score is at most seTTDepthMargin plies shallower is searched one
	// ply deeper when every other move fails below its score minus
	// seMarginPerDepth·depth at half depth; when that reduced search beats
	// beta as well, the node is cut (multi-cut).
	seMinDepth       = 8
	seTTDepthMargin  = 3
	seMarginPerDepth = 2

	// Internal iterative reduction: without a hash move, search one ply less.
	iirMinDepth = 4

	// Late move pruning: at depth <= lmpMaxDepth, quiet moves after
	// lmpBase + depth² (halved when not improving) are skipped.
	lmpMaxDepth = 8
	lmpBase     = 3

	// Futility pruning of quiet moves: skipped when static eval + margin
	// cannot reach alpha.
	futilityMaxDepth  = 8
	futilityBase      = 80
	futilityPerDepth  = 90
	historyPruneDepth = 3    // quiets with very bad history are pruned up to this depth
	historyPruneLimit = 4000 // ... when their history is below -limit·depth

	// SEE pruning in the main search: quiets losing more than
	// seeQuietMargin·depth, captures losing more than seeNoisyMargin·depth².
	seeQuietMaxDepth = 8
	seeQuietMargin   = 60
	seeNoisyMaxDepth = 6
	seeNoisyMargin   = 20

	// Late move reductions: r = lmrBase + ln(depth)·ln(moveNumber)/lmrDivisor
	// (in hundredths), adjusted per move.
	lmrMinDepth       = 3
	lmrBase           = 75
	lmrDivisor        = 225
	lmrHistoryDivisor = 6000

	// Quiescence: delta pruning skips captures that cannot lift the score
	// to alpha even with this margin.
	qsDeltaMargin = 150

	// Check extension: positions in check are searched one ply deeper, as
	// long as the ply stays below this fraction of the maximum.
	checkExtensionMaxPly = maxPly / 2
)
