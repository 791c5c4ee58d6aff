package engine

import (
	"math"

	"chessapi/shared/chess"
)

// Win/draw/loss estimate. A search score in centipawns is turned into the
// chances of the side to move with the shape of Stockfish's win-rate model:
//
//	win(s)  = 1 / (1 + exp((a - s) / b))
//	loss(s) = win(-s) = 1 / (1 + exp((a + s) / b))
//	draw(s) = 1 - win(s) - loss(s)
//
// a is the score at which the side to move wins half its games, b how fast
// the chances change with the score. a depends on the material left,
// counted as in Stockfish (pawn 1, knight and bishop 3, rook 5, queen 9,
// both sides; 78 at the start), through t = clamp(m, wdlMaterialMin,
// wdlMaterialMax) / wdlMaterialRef:
//
//	a(t) = wdlA0 + wdlA1·t + wdlA2·t²     b = wdlB
//
// The coefficients are the maximum-likelihood fit to the outcomes of 400 of
// this engine's own games with the network evaluation (46 546 positions;
// docs/engine.md, "Win/draw/loss"; the fit is TestWDLCalibration, run with
// ENGINE_WDLFIT). Letting b depend on the material too did not fit better
// on the classical fit. a is positive over the whole range (its minimum is
// about 58 at t ≈ 1.15).
//
// Per mille values are rounded half up, win and loss each from its own
// formula, and draw takes the rest, so the three sum to 1000, a score and
// its negation swap win and loss exactly, and draw is never negative
// (a > 0 keeps win + loss below 1).
const (
	wdlMaterialMin = 10
	wdlMaterialMax = 78
	wdlMaterialRef = 58

	wdlA0 = 368.0
	wdlA1 = -540.6
	wdlA2 = 235.4
	wdlB  = 91.1

	// wdlScoreClamp bounds the centipawns fed to the model: beyond it the
	// chances do not move any more (and exp cannot overflow).
	wdlScoreClamp = 4000
)

// WDL estimates the chances of the side to move of pos, in per mille, for
// a search score of that position: win + draw + loss == 1000. A forced mate
// gives 1000/0/0 (Mate > 0) or 0/0/1000 (Mate < 0). A nil pos is taken to
// have the reference material (wdlMaterialRef, a middlegame).
//
// Negating the score swaps win and loss exactly; win never falls and loss
// never rises as the score grows; a score of 0 gives win == loss.
func WDL(score Score, pos *chess.Position) (win, draw, loss int) {
	switch {
	case score.Mate > 0:
		return 1000, 0, 0
	case score.Mate < 0:
		return 0, 0, 1000
	}
	a, b := wdlParams(wdlMaterial(pos))
	cp := float64(min(max(score.CP, -wdlScoreClamp), wdlScoreClamp))
	win = perMille(1 / (1 + math.Exp((a-cp)/b)))
	loss = perMille(1 / (1 + math.Exp((a+cp)/b)))
	return win, 1000 - win - loss, loss
}

// wdlParams returns a and b of the model for material m.
func wdlParams(m int) (a, b float64) {
	t := wdlPhase(m)
	return wdlA0 + (wdlA1+wdlA2*t)*t, wdlB
}

// wdlPhase is the model's t for material m.
func wdlPhase(m int) float64 {
	return float64(min(max(m, wdlMaterialMin), wdlMaterialMax)) / wdlMaterialRef
}

// wdlMaterial counts the material of both sides: pawn 1, knight and bishop
// 3, rook 5, queen 9 (78 in the starting position).
func wdlMaterial(pos *chess.Position) int {
	if pos == nil {
		return wdlMaterialRef
	}
	return pos.ByType(chess.Pawn).Count() +
		3*(pos.ByType(chess.Knight).Count()+pos.ByType(chess.Bishop).Count()) +
		5*pos.ByType(chess.Rook).Count() + 9*pos.ByType(chess.Queen).Count()
}

// perMille rounds a probability to per mille, half up.
func perMille(p float64) int { return int(math.Floor(p*1000 + 0.5)) }
