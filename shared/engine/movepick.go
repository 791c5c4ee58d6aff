package engine

import "chessapi/shared/chess"

// Move ordering. The legal moves of a node are generated at once and scored:
// the hash move first, then captures that do not lose material (MVV-LVA:
// most valuable victim, least valuable attacker) and queen promotions, the
// two killers, the counter move, the other quiet moves by history, and last
// the captures that lose material and under-promotions. pick hands them out
// best first by selection, so a node that cuts off early sorts little.

const (
	scoreHashMove    = 1 << 30
	scoreGoodNoisy   = 1 << 24
	scoreKiller0     = 1<<24 - 1
	scoreKiller1     = 1<<24 - 2
	scoreCounter     = 1<<24 - 3
	scoreBadNoisy    = -(1 << 24)
	scoreUnderPromos = -(1 << 25)
)

type movePicker struct {
	moves  [256]chess.Move
	scores [256]int32
	n, i   int
}

// init generates and scores the moves of pos. In quiescence (noisyOnly and
// not in check) only captures and promotions are generated.
func (mp *movePicker) init(pos *chess.Position, gen chess.GenType, ttMove chess.Move, h *heuristics, ply int, counter chess.Move) {
	var list chess.MoveList
	pos.GenerateMoves(&list, gen)
	mp.n, mp.i = list.Len(), 0
	side := pos.Turn()
	var k0, k1 chess.Move
	if h != nil {
		k0, k1 = h.killers[ply][0], h.killers[ply][1]
	}
	for i, m := range list.Moves() {
		mp.moves[i] = m
		var s int32
		victim := capturedType(pos, m)
		switch {
		case m == ttMove:
			s = scoreHashMove
		case m.Kind() == chess.KindPromotion && m.Promotion() != chess.Queen:
			s = scoreUnderPromos + int32(m.Promotion())
		case victim != chess.NoPieceType || m.Kind() == chess.KindPromotion:
			s = seeValue[victim]*8 - int32(pos.PieceAt(m.From()).Type())
			if m.Kind() == chess.KindPromotion {
				s += seeValue[chess.Queen]
			}
			if h != nil {
				s += *h.captureEntry(pos, m) / 16
			}
			if seeGE(pos, m, 0) {
				s += scoreGoodNoisy
			} else {
				s += scoreBadNoisy
			}
		case h == nil:
			s = 0
		case m == k0:
			s = scoreKiller0
		case m == k1:
			s = scoreKiller1
		case m == counter:
			s = scoreCounter
		default:
			s = h.history[side][m.From()][m.To()]
		}
		mp.scores[i] = s
	}
}

// next returns the best remaining move and its order score, or NoMove.
func (mp *movePicker) next() (chess.Move, int32) {
	if mp.i >= mp.n {
		return chess.NoMove, 0
	}
	best := mp.i
	for j := mp.i + 1; j < mp.n; j++ {
		if mp.scores[j] > mp.scores[best] {
			best = j
		}
	}
	mp.moves[mp.i], mp.moves[best] = mp.moves[best], mp.moves[mp.i]
	mp.scores[mp.i], mp.scores[best] = mp.scores[best], mp.scores[mp.i]
	m, s := mp.moves[mp.i], mp.scores[mp.i]
	mp.i++
	return m, s
}
