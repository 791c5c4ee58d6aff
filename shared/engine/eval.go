package engine

import "chessapi/shared/chess"

// Evaluation: a tapered sum of middlegame and endgame terms for each side,
// blended by the game phase (minor pieces 1, rooks 2, queens 4; 24 = all
// pieces on the board), then scaled for drawish material, plus a mop-up term
// that drives a bare king to the edge (to the bishop's corner in KBNK) so
// won endings are won, and a small bonus for the side to move.
//
// Terms per side: material and piece squares (pst.go), mobility (squares
// attacked that hold no own piece and no enemy pawn attacks), pawn structure
// (doubled, isolated, connected), passed pawns (by rank, free path, king
// distances in the endgame), king safety (pieces attacking the zone around
// the king, pawn shelter), rooks on open files and the bishop pair.

// Evaluation weights (centipawns; pairs are middlegame, endgame).
const (
	tempoBonus = 10

	bishopPairMg, bishopPairEg = 30, 50

	rookOpenFileMg, rookOpenFileEg         = 25, 10
	rookSemiOpenFileMg, rookSemiOpenFileEg = 12, 6

	doubledPawnMg, doubledPawnEg   = -10, -20
	isolatedPawnMg, isolatedPawnEg = -10, -12

	shelterMissing  = -18 // per file next to the king without an own pawn in front
	shelterOpenFile = -12 // ... and without an enemy pawn either
	shelterNear     = 8   // own pawn directly in front of the king's files

	kingAttackMaxPenalty = 500

	// Threats: enemy pieces attacked by a pawn, heavy pieces attacked by a
	// minor piece, and pieces attacked but not defended.
	threatByPawnMg, threatByPawnEg   = 45, 30
	threatByMinorMg, threatByMinorEg = 30, 20
	hangingMg, hangingEg             = 25, 15

	// scaleDrawish divides the score (by 8) when the stronger side has no
	// pawns and too little extra material to mate.
	drawishMaterialEdge = 400

	mopUpEdge     = 12 // per step of the bare king from the centre
	mopUpKings    = 6  // per step the kings are closer than 14 apart
	mopUpCorner   = 40 // per step of the bare king towards the bishop's corner (KBNK)
	mopUpKnight   = 4  // per step of the knight towards the bare king (KBNK)
	mopUpBaseline = 100
)

var (
	passedMg       = [8]int32{0, 0, 5, 10, 20, 40, 70, 0}
	passedEg       = [8]int32{0, 10, 15, 25, 45, 75, 120, 0}
	passedFreeEg   = [8]int32{0, 0, 2, 5, 10, 20, 35, 0}
	passedKingDist = [8]int32{0, 0, 0, 1, 2, 3, 5, 0}
	connectedBonus = [8]int32{0, 3, 5, 8, 14, 25, 40, 0}

	// mobility weight per safe square and the count that scores zero.
	mobilityMg     = [7]int32{chess.Knight: 4, chess.Bishop: 5, chess.Rook: 2, chess.Queen: 1}
	mobilityEg     = [7]int32{chess.Knight: 4, chess.Bishop: 5, chess.Rook: 4, chess.Queen: 2}
	mobilityOffset = [7]int32{chess.Knight: 4, chess.Bishop: 6, chess.Rook: 6, chess.Queen: 12}

	// kingAttackWeight counts the zone squares a piece of each type attacks.
	kingAttackWeight = [7]int32{chess.Knight: 2, chess.Bishop: 2, chess.Rook: 3, chess.Queen: 5}

	phaseWeight = [7]int32{chess.Knight: 1, chess.Bishop: 1, chess.Rook: 2, chess.Queen: 4}
)

const phaseTotal = 24

var (
	fileMask         [8]chess.Bitboard
	adjacentFiles    [8]chess.Bitboard
	forwardFile      [2][64]chess.Bitboard // squares ahead on the same file
	passedSpan       [2][64]chess.Bitboard // squares ahead on the same and adjacent files
	kingZone         [2][64]chess.Bitboard // king square, its neighbours and the row beyond
	centerDistance   [64]int32             // Manhattan distance to the nearest centre square
	squareDistance   [64][64]int32         // Chebyshev distance
	manhattanBetween [64][64]int32
)

func init() {
	for f := 0; f < 8; f++ {
		fileMask[f] = chess.FileA << f
	}
	for f := 0; f < 8; f++ {
		if f > 0 {
			adjacentFiles[f] |= fileMask[f-1]
		}
		if f < 7 {
			adjacentFiles[f] |= fileMask[f+1]
		}
	}
	for s := 0; s < 64; s++ {
		sq := chess.Square(s)
		f, r := sq.File(), sq.Rank()
		for r2 := 0; r2 < 8; r2++ {
			rowSpan := fileMask[f] | adjacentFiles[f]
			row := chess.Rank1 << (8 * r2)
			if r2 > r {
				forwardFile[chess.White][s] |= fileMask[f] & row
				passedSpan[chess.White][s] |= rowSpan & row
			}
			if r2 < r {
				forwardFile[chess.Black][s] |= fileMask[f] & row
				passedSpan[chess.Black][s] |= rowSpan & row
			}
		}
		zone := chess.KingAttacks(sq) | chess.SquareBB(sq)
		kingZone[chess.White][s] = zone | zone<<8
		kingZone[chess.Black][s] = zone | zone>>8
		cf, cr := int32(max(3-f, f-4)), int32(max(3-r, r-4))
		centerDistance[s] = cf + cr
		for t := 0; t < 64; t++ {
			o := chess.Square(t)
			df, dr := abs32(int32(f-o.File())), abs32(int32(r-o.Rank()))
			squareDistance[s][t] = max(df, dr)
			manhattanBetween[s][t] = df + dr
		}
	}
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

func relativeRank(c chess.Color, s chess.Square) int {
	if c == chess.White {
		return s.Rank()
	}
	return 7 - s.Rank()
}

// pawnAttackSet returns every square attacked by colour c's pawns.
func pawnAttackSet(c chess.Color, pawns chess.Bitboard) chess.Bitboard {
	if c == chess.White {
		return (pawns&^chess.FileA)<<7 | (pawns&^chess.FileH)<<9
	}
	return (pawns&^chess.FileA)>>9 | (pawns&^chess.FileH)>>7
}

// evaluate returns the static evaluation of pos from the side to move's
// point of view.
func evaluate(pos *chess.Position) int32 {
	var mg, eg [2]int32
	var phase int32
	occ := pos.Occupied()
	pawns := [2]chess.Bitboard{pos.Pieces(chess.White, chess.Pawn), pos.Pieces(chess.Black, chess.Pawn)}
	pawnAtt := [2]chess.Bitboard{pawnAttackSet(chess.White, pawns[0]), pawnAttackSet(chess.Black, pawns[1])}
	kings := [2]chess.Square{pos.KingSquare(chess.White), pos.KingSquare(chess.Black)}
	var nonPawn [2]int32 // non-pawn material (middlegame values)
	var attacked, attackedByMinor [2]chess.Bitboard

	for c := chess.White; c <= chess.Black; c++ {
		them := c.Other()
		own := pos.ByColor(c)
		mobilityArea := ^own &^ pawnAtt[them]
		zone := kingZone[them][kings[them]]
		var attackers, attackUnits int32

		for pt := chess.Pawn; pt <= chess.King; pt++ {
			for b := pos.Pieces(c, pt); b != 0; {
				sq := b.PopFirst()
				mg[c] += pstMg[c][pt][sq]
				eg[c] += pstEg[c][pt][sq]
				var att chess.Bitboard
				switch pt {
				case chess.Knight:
					att = chess.KnightAttacks(sq)
				case chess.Bishop:
					att = chess.BishopAttacks(sq, occ)
				case chess.Rook:
					att = chess.RookAttacks(sq, occ)
					file := fileMask[sq.File()]
					if file&pawns[c] == 0 {
						if file&pawns[them] == 0 {
							mg[c] += rookOpenFileMg
							eg[c] += rookOpenFileEg
						} else {
							mg[c] += rookSemiOpenFileMg
							eg[c] += rookSemiOpenFileEg
						}
					}
				case chess.Queen:
					att = chess.QueenAttacks(sq, occ)
				default:
					continue
				}
				phase += phaseWeight[pt]
				nonPawn[c] += materialMg[pt]
				attacked[c] |= att
				if pt == chess.Knight || pt == chess.Bishop {
					attackedByMinor[c] |= att
				}
				n := int32((att & mobilityArea).Count())
				mg[c] += mobilityMg[pt] * (n - mobilityOffset[pt])
				eg[c] += mobilityEg[pt] * (n - mobilityOffset[pt])
				if z := att & zone; z != 0 {
					attackers++
					attackUnits += kingAttackWeight[pt] * int32(z.Count())
				}
			}
		}
		if pos.Pieces(c, chess.Bishop).Count() >= 2 {
			mg[c] += bishopPairMg
			eg[c] += bishopPairEg
		}
		// King attack: counts only with two attackers, or a queen among them.
		if attackers >= 2 || (attackers == 1 && pos.Pieces(c, chess.Queen) != 0 && attackUnits >= 10) {
			mg[c] += min(attackUnits*attackUnits/2, kingAttackMaxPenalty)
		}
		pm, pe := evalPawns(pos, c, pawns, kings)
		mg[c] += pm
		eg[c] += pe
		mg[c] += kingShelter(c, kings[c], pawns)
	}

	for c := chess.White; c <= chess.Black; c++ {
		them := c.Other()
		attacked[c] |= pawnAtt[c] | chess.KingAttacks(kings[c])
		targets := pos.ByColor(them) &^ pawns[them] &^ pos.Pieces(them, chess.King)
		n := int32((targets & pawnAtt[c]).Count())
		mg[c] += n * threatByPawnMg
		eg[c] += n * threatByPawnEg
		heavy := pos.Pieces(them, chess.Rook) | pos.Pieces(them, chess.Queen)
		n = int32((heavy & attackedByMinor[c]).Count())
		mg[c] += n * threatByMinorMg
		eg[c] += n * threatByMinorEg
	}
	for c := chess.White; c <= chess.Black; c++ {
		them := c.Other()
		hanging := pos.ByColor(them) &^ pos.Pieces(them, chess.King) & attacked[c] &^ attacked[them]
		n := int32(hanging.Count())
		mg[c] += n * hangingMg
		eg[c] += n * hangingEg
	}

	phase = min(phase, phaseTotal)
	mgScore := mg[chess.White] - mg[chess.Black]
	egScore := eg[chess.White] - eg[chess.Black]
	score := (mgScore*phase + egScore*(phaseTotal-phase)) / phaseTotal
	score = scaleEndgame(pos, score, nonPawn, pawns)
	score += mopUp(pos, score, nonPawn, pawns, kings)

	if pos.Turn() == chess.Black {
		score = -score
	}
	return score + tempoBonus
}

// evalPawns scores colour c's pawn structure and passed pawns.
func evalPawns(pos *chess.Position, c chess.Color, pawns [2]chess.Bitboard, kings [2]chess.Square) (mg, eg int32) {
	them := c.Other()
	own := pawns[c]
	support := pawnAttackSet(c, own)
	for b := own; b != 0; {
		sq := b.PopFirst()
		f := sq.File()
		r := relativeRank(c, sq)
		if forwardFile[c][sq]&own != 0 {
			mg += doubledPawnMg
			eg += doubledPawnEg
		}
		if adjacentFiles[f]&own == 0 {
			mg += isolatedPawnMg
			eg += isolatedPawnEg
		}
		phalanx := adjacentFiles[f] & own & (chess.Rank1 << (8 * sq.Rank()))
		if phalanx != 0 || support.Has(sq) {
			mg += connectedBonus[r]
			eg += connectedBonus[r] * 3 / 4
		}
		if passedSpan[c][sq]&pawns[them] == 0 && forwardFile[c][sq]&own == 0 {
			mg += passedMg[r]
			eg += passedEg[r]
			front := sq + 8
			if c == chess.Black {
				front = sq - 8
			}
			if pos.PieceAt(front) == chess.NoPiece {
				eg += passedFreeEg[r]
			}
			w := passedKingDist[r]
			eg += w * (squareDistance[kings[them]][front]*5 - squareDistance[kings[c]][front]*2)
		}
	}
	return mg, eg
}

// kingShelter scores the pawns in front of a castled-looking king
// (middlegame only).
func kingShelter(c chess.Color, ksq chess.Square, pawns [2]chess.Bitboard) int32 {
	if relativeRank(c, ksq) > 1 {
		return shelterMissing * 2
	}
	var s int32
	kf := ksq.File()
	for f := max(kf-1, 0); f <= min(kf+1, 7); f++ {
		ahead := fileMask[f] & passedSpan[c][ksq]
		ownAhead := ahead & pawns[c]
		if ownAhead == 0 {
			s += shelterMissing
			if ahead&pawns[c.Other()] == 0 {
				s += shelterOpenFile
			}
			continue
		}
		near := ownAhead & (chess.KingAttacks(ksq) | kingZone[c][ksq])
		if near != 0 {
			s += shelterNear
		}
	}
	return s
}

// scaleEndgame shrinks scores of endings the stronger side cannot win:
// no pawns and at most a minor piece more, or only knights against a bare
// king; and halves opposite-coloured bishop endings.
func scaleEndgame(pos *chess.Position, score int32, nonPawn [2]int32, pawns [2]chess.Bitboard) int32 {
	strong := chess.White
	if score < 0 {
		strong = chess.Black
	}
	weak := strong.Other()
	if pawns[strong] == 0 {
		edge := nonPawn[strong] - nonPawn[weak]
		onlyKnights := pos.ByColor(strong)&^pos.Pieces(strong, chess.King)&^pos.Pieces(strong, chess.Knight) == 0
		if edge < drawishMaterialEdge || (onlyKnights && nonPawn[weak] == 0) {
			return score / 8
		}
	}
	wb, bb := pos.Pieces(chess.White, chess.Bishop), pos.Pieces(chess.Black, chess.Bishop)
	if nonPawn[chess.White] == materialMg[chess.Bishop] && nonPawn[chess.Black] == materialMg[chess.Bishop] &&
		wb.Count() == 1 && bb.Count() == 1 &&
		(wb&chess.LightSquares != 0) != (bb&chess.LightSquares != 0) {
		return score / 2
	}
	return score
}

// mopUp helps to mate a bare king: it pushes that king to the edge (in
// KBNK to a corner of the bishop's colour) and brings the other king close.
func mopUp(pos *chess.Position, score int32, nonPawn [2]int32, pawns [2]chess.Bitboard, kings [2]chess.Square) int32 {
	strong := chess.White
	if score < 0 {
		strong = chess.Black
	}
	weak := strong.Other()
	if nonPawn[weak] != 0 || pawns[weak] != 0 || nonPawn[strong] < materialMg[chess.Rook] {
		return 0
	}
	if pos.ByColor(strong)&^pos.Pieces(strong, chess.King)&^pos.Pieces(strong, chess.Knight) == 0 {
		return 0 // knights alone cannot force mate
	}
	wk, sk := kings[weak], kings[strong]
	bonus := int32(mopUpBaseline) + mopUpKings*(14-manhattanBetween[wk][sk])
	bishops := pos.Pieces(strong, chess.Bishop)
	if pawns[strong] == 0 && bishops.Count() == 1 && pos.Pieces(strong, chess.Knight).Count() == 1 &&
		nonPawn[strong] == materialMg[chess.Bishop]+materialMg[chess.Knight] {
		// Mate is only possible in a corner of the bishop's colour.
		c1, c2 := chess.A1, chess.H8 // dark corners
		if bishops&chess.LightSquares != 0 {
			c1, c2 = chess.H1, chess.A8
		}
		d := min(squareDistance[wk][c1], squareDistance[wk][c2])
		knight := pos.Pieces(strong, chess.Knight).First()
		bonus += mopUpCorner*(7-d) + mopUpEdge*centerDistance[wk]/2 + mopUpKnight*(7-squareDistance[knight][wk])
	} else {
		bonus += mopUpEdge * centerDistance[wk]
	}
	if strong == chess.Black {
		return -bonus
	}
	return bonus
}
