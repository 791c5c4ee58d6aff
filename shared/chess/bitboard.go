package chess

import "math/bits"

// Bitboard is a set of squares, bit i set for Square(i).
type Bitboard uint64

// Useful square sets.
const (
	FileA Bitboard = 0x0101010101010101
	FileH Bitboard = FileA << 7
	Rank1 Bitboard = 0xff
	Rank2 Bitboard = Rank1 << 8
	Rank3 Bitboard = Rank1 << 16
	Rank4 Bitboard = Rank1 << 24
	Rank5 Bitboard = Rank1 << 32
	Rank6 Bitboard = Rank1 << 40
	Rank7 Bitboard = Rank1 << 48
	Rank8 Bitboard = Rank1 << 56

	LightSquares Bitboard = 0x55aa55aa55aa55aa
	DarkSquares  Bitboard = ^LightSquares
)

// SquareBB returns the set holding only s.
func SquareBB(s Square) Bitboard { return 1 << s }

// Has reports whether s is in the set.
func (b Bitboard) Has(s Square) bool { return b&(1<<(s&63)) != 0 }

// Count returns the number of squares in the set.
func (b Bitboard) Count() int { return bits.OnesCount64(uint64(b)) }

// First returns the lowest square of a non-empty set.
func (b Bitboard) First() Square { return Square(bits.TrailingZeros64(uint64(b))) }

// Last returns the highest square of a non-empty set.
func (b Bitboard) Last() Square { return Square(63 - bits.LeadingZeros64(uint64(b))) }

// PopFirst removes and returns the lowest square of a non-empty set.
func (b *Bitboard) PopFirst() Square {
	s := Square(bits.TrailingZeros64(uint64(*b)))
	*b &= *b - 1
	return s
}

// moreThanOne reports whether the set has at least two squares.
func (b Bitboard) moreThanOne() bool { return b&(b-1) != 0 }

func rankBB(rank int) Bitboard { return Rank1 << (8 * rank) }

// backRank returns the first rank of colour c.
func backRank(c Color) Bitboard {
	if c == White {
		return Rank1
	}
	return Rank8
}

// pawnPushes returns the squares single-pushed pawns of colour c would reach.
func pawnPushes(c Color, pawns Bitboard) Bitboard {
	if c == White {
		return pawns << 8
	}
	return pawns >> 8
}

// pawnAttacksBB returns every square attacked by the pawns of colour c.
func pawnAttacksBB(c Color, pawns Bitboard) Bitboard {
	if c == White {
		return (pawns&^FileA)<<7 | (pawns&^FileH)<<9
	}
	return (pawns&^FileA)>>9 | (pawns&^FileH)>>7
}
