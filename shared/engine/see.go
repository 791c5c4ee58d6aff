package engine

import "chessapi/shared/chess"

// Static exchange evaluation: the material balance of the capture sequence
// on one square when both sides always recapture with their least valuable
// attacker and may stop whenever continuing would lose. Sliders behind the
// pieces that have captured (x-rays) join in as they leave. Pins are ignored.

// seeValue is the material value of each piece type for SEE and MVV-LVA.
var seeValue = [7]int32{chess.NoPieceType: 0, chess.Pawn: 100, chess.Knight: 320, chess.Bishop: 330,
	chess.Rook: 500, chess.Queen: 950, chess.King: 20000}

// capturedType returns the type of the piece m captures, NoPieceType for a
// non-capture (castling "captures" its own rook and is not a capture).
func capturedType(pos *chess.Position, m chess.Move) chess.PieceType {
	switch m.Kind() {
	case chess.KindCastling:
		return chess.NoPieceType
	case chess.KindEnPassant:
		return chess.Pawn
	}
	return pos.PieceAt(m.To()).Type()
}

// isNoisy reports whether m captures or promotes.
func isNoisy(pos *chess.Position, m chess.Move) bool {
	return m.Kind() == chess.KindPromotion || capturedType(pos, m) != chess.NoPieceType
}

// seeGE reports whether the static exchange value of m for the side to move
// is at least threshold. Castling, en passant and promotions count as 0.
func seeGE(pos *chess.Position, m chess.Move, threshold int32) bool {
	if m.Kind() != chess.KindNormal {
		return threshold <= 0
	}
	from, to := m.From(), m.To()
	// swap is what the side about to capture must at least win back.
	swap := seeValue[pos.PieceAt(to).Type()] - threshold
	if swap < 0 {
		return false
	}
	swap = seeValue[pos.PieceAt(from).Type()] - swap
	if swap <= 0 {
		return true
	}

	occ := pos.Occupied() &^ chess.SquareBB(from) &^ chess.SquareBB(to)
	attackers := pos.AttackersTo(to, occ)
	diagonal := pos.ByType(chess.Bishop) | pos.ByType(chess.Queen)
	straight := pos.ByType(chess.Rook) | pos.ByType(chess.Queen)
	stm := pos.Turn()
	res := 1 // 1 while the side that moved first is winning the exchange
	for {
		stm = stm.Other()
		attackers &= occ
		mine := attackers & pos.ByColor(stm)
		if mine == 0 {
			break
		}
		res ^= 1
		pt := chess.Pawn
		for ; pt < chess.King; pt++ {
			if mine&pos.ByType(pt) != 0 {
				break
			}
		}
		if pt == chess.King {
			// The king may take only if nothing can take it back.
			if attackers&^pos.ByColor(stm) != 0 {
				return res^1 == 1
			}
			return res == 1
		}
		swap = seeValue[pt] - swap
		if swap < int32(res) {
			break
		}
		occ &^= chess.SquareBB((mine & pos.ByType(pt)).First())
		switch pt {
		case chess.Pawn, chess.Bishop:
			attackers |= chess.BishopAttacks(to, occ) & diagonal
		case chess.Rook:
			attackers |= chess.RookAttacks(to, occ) & straight
		case chess.Queen:
			attackers |= chess.BishopAttacks(to, occ)&diagonal | chess.RookAttacks(to, occ)&straight
		}
	}
	return res == 1
}
