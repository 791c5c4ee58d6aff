package game

import (
	"math/bits"
	"strconv"

	"chessapi/shared/chess"
)

// pieceLetters maps a chess.Piece (type in the low three bits, colour in
// bit 3) to its FEN letter.
const pieceLetters = "?PNBRQK??pnbrqk?"

// appendFEN appends pos.FEN() to b. Replaying a stored game writes one FEN
// per move, and doing it into a reused buffer makes that several times
// cheaper than building each string from scratch; a test checks it against
// Position.FEN on random games of both variants.
func appendFEN(b []byte, pos *chess.Position) []byte {
	occupied := pos.Occupied()
	for rank := 7; rank >= 0; rank-- {
		row := uint8(occupied >> (8 * rank))
		file := 0
		for row != 0 {
			f := bits.TrailingZeros8(row)
			if f > file {
				b = append(b, byte('0'+f-file))
			}
			b = append(b, pieceLetters[pos.PieceAt(chess.Square(8*rank+f))&15])
			row &= row - 1
			file = f + 1
		}
		if file < 8 {
			b = append(b, byte('0'+8-file))
		}
		if rank > 0 {
			b = append(b, '/')
		}
	}
	if pos.Turn() == chess.White {
		b = append(b, " w "...)
	} else {
		b = append(b, " b "...)
	}
	if pos.CastlingRooks() == 0 {
		b = append(b, '-')
	} else {
		b = append(b, pos.CastlingString()...)
	}
	b = append(b, ' ')
	if ep := pos.EnPassant(); ep == chess.NoSquare {
		b = append(b, '-')
	} else {
		b = append(b, 'a'+byte(ep.File()), '1'+byte(ep.Rank()))
	}
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(pos.HalfmoveClock()), 10)
	b = append(b, ' ')
	return strconv.AppendInt(b, int64(pos.FullmoveNumber()), 10)
}

// findMove returns the move of the legal list that canonical UCI text u
// names: pos.UCI(m) == u. Non-canonical text (e.g. "e1h1" for standard
// castling) is not found; callers fall back to Position.ParseUCI.
func findMove(pos *chess.Position, legal *chess.MoveList, u string) (chess.Move, bool) {
	if len(u) != 4 && len(u) != 5 {
		return chess.NoMove, false
	}
	from, ok1 := squareOf(u[0], u[1])
	to, ok2 := squareOf(u[2], u[3])
	if !ok1 || !ok2 {
		return chess.NoMove, false
	}
	promo := chess.NoPieceType
	if len(u) == 5 {
		switch u[4] {
		case 'q':
			promo = chess.Queen
		case 'r':
			promo = chess.Rook
		case 'b':
			promo = chess.Bishop
		case 'n':
			promo = chess.Knight
		default:
			return chess.NoMove, false
		}
	}
	for _, m := range legal.Moves() {
		if m.From() != from || m.Promotion() != promo {
			continue
		}
		target := m.To()
		if m.IsCastling() && !pos.Chess960() {
			target = castleKingTarget(pos.Turn(), chess.CastleSideOf(m).String())
		}
		if target == to {
			return m, true
		}
	}
	return chess.NoMove, false
}

func squareOf(file, rank byte) (chess.Square, bool) {
	if file < 'a' || file > 'h' || rank < '1' || rank > '8' {
		return chess.NoSquare, false
	}
	return chess.NewSquare(int(file-'a'), int(rank-'1')), true
}
