package engine

import "chessapi/shared/chess"

// Quiet-move ordering memory, kept between the searches of a game and
// cleared by NewGame:
//   - killers: per ply, the last two quiet moves that caused a beta cutoff;
//   - history: per side, from and to square, how often a quiet move cut off
//     (bonus depth², gravity keeps it within ±historyMax);
//   - counter moves: per piece and destination of the previous move, the
//     quiet reply that refuted it;
//   - capture history: per moving piece, destination and captured piece
//     type, how often the capture cut off (bonus), or was searched before
//     the move that did (malus, also when that move was quiet); it orders
//     captures of the same victim after MVV, within the good and the bad
//     ones (+24 [−10, +60] over 256 games at 25 k nodes, +10 [−38, +60]
//     over 100 at 10+0.1, docs/engine.md).

const historyMax = 16384

type heuristics struct {
	killers [maxPly + 1][2]chess.Move
	history [2][64][64]int32
	counter [16][64]chess.Move
	// capture: per moving piece, destination and captured type, how often
	// the capture cut off (the same bonus and gravity).
	capture [16][64][chess.King + 1]int32
}

func (h *heuristics) clear() { *h = heuristics{} }

// historyBonus is the reward for a cutoff at depth.
func historyBonus(depth int) int32 { return int32(min(depth*depth*16+32*depth, 2000)) }

// updateHistory moves entry towards ±historyMax by bonus, slower as it gets
// close (gravity), so recent results count more than old ones.
func updateHistory(entry *int32, bonus int32) {
	abs := bonus
	if abs < 0 {
		abs = -abs
	}
	*entry += bonus - *entry*abs/historyMax
}

// rewardQuiet records that quiet move m cut off at ply; tried are the quiet
// moves searched before it, which get a malus.
func (h *heuristics) rewardQuiet(side chess.Color, m chess.Move, prev chess.Move, prevPiece chess.Piece, ply, depth int, tried []chess.Move) {
	if h.killers[ply][0] != m {
		h.killers[ply][1] = h.killers[ply][0]
		h.killers[ply][0] = m
	}
	bonus := historyBonus(depth)
	updateHistory(&h.history[side][m.From()][m.To()], bonus)
	for _, q := range tried {
		if q != m {
			updateHistory(&h.history[side][q.From()][q.To()], -bonus)
		}
	}
	if prev != chess.NoMove && prev != nullMove {
		h.counter[prevPiece][prev.To()] = m
	}
}

// rewardCapture records that the noisy move best (NoMove: a quiet move)
// cut off; tried are the noisy moves searched before it, which get a malus.
func (h *heuristics) rewardCapture(pos *chess.Position, best chess.Move, depth int, tried []chess.Move) {
	bonus := historyBonus(depth)
	if best != chess.NoMove {
		updateHistory(h.captureEntry(pos, best), bonus)
	}
	for _, q := range tried {
		if q != best {
			updateHistory(h.captureEntry(pos, q), -bonus)
		}
	}
}

func (h *heuristics) captureEntry(pos *chess.Position, m chess.Move) *int32 {
	return &h.capture[pos.PieceAt(m.From())][m.To()][capturedType(pos, m)]
}
