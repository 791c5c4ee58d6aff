package chess

// Move is a move packed in 16 bits:
//
//	bits 0-5   from square
//	bits 6-11  to square (for castling: the square of the castling rook)
//	bits 12-13 promotion piece (knight, bishop, rook, queen) when a promotion
//	bits 14-15 kind: normal, promotion, en passant, castling
//
// Castling is encoded as "king takes own rook" (as Ethereal and the
// UCI_Chess960 convention do), so one encoding serves standard chess and
// Chess960; Position.UCI writes it as e1g1 in standard games.
// The zero Move (NoMove) is never legal.
type Move uint16

// NoMove is the zero Move.
const NoMove Move = 0

// MoveKind tells how a move is played.
type MoveKind uint8

const (
	KindNormal MoveKind = iota
	KindPromotion
	KindEnPassant
	KindCastling
)

func newMove(from, to Square) Move { return Move(from) | Move(to)<<6 }

func newPromotion(from, to Square, t PieceType) Move {
	return Move(from) | Move(to)<<6 | Move(t-Knight)<<12 | Move(KindPromotion)<<14
}

func newEnPassant(from, to Square) Move {
	return Move(from) | Move(to)<<6 | Move(KindEnPassant)<<14
}

func newCastling(kingFrom, rookFrom Square) Move {
	return Move(kingFrom) | Move(rookFrom)<<6 | Move(KindCastling)<<14
}

// From returns the origin square.
func (m Move) From() Square { return Square(m & 63) }

// To returns the destination square; for castling, the castling rook's square.
func (m Move) To() Square { return Square(m >> 6 & 63) }

// Kind returns how the move is played.
func (m Move) Kind() MoveKind { return MoveKind(m >> 14) }

// Promotion returns the piece a pawn promotes to, or NoPieceType.
func (m Move) Promotion() PieceType {
	if m.Kind() != KindPromotion {
		return NoPieceType
	}
	return PieceType(m>>12&3) + Knight
}

// IsCastling reports whether the move castles.
func (m Move) IsCastling() bool { return m.Kind() == KindCastling }

// IsEnPassant reports whether the move is an en-passant capture.
func (m Move) IsEnPassant() bool { return m.Kind() == KindEnPassant }

// String returns the move in Chess960 UCI form (castling as king→rook);
// use Position.UCI for the variant-correct form.
func (m Move) String() string {
	if m == NoMove {
		return "0000"
	}
	s := m.From().String() + m.To().String()
	if p := m.Promotion(); p != NoPieceType {
		s += string(p.Letter())
	}
	return s
}

// CastleSide names a castling direction.
type CastleSide uint8

const (
	NoCastle CastleSide = iota
	KingSide
	QueenSide
)

// String returns "king", "queen" or "".
func (s CastleSide) String() string {
	switch s {
	case KingSide:
		return "king"
	case QueenSide:
		return "queen"
	}
	return ""
}

// MoveList is a fixed-capacity list that move generation fills without
// allocating. 256 exceeds the maximum number of legal moves in any
// position (218).
type MoveList struct {
	n     int
	moves [256]Move
}

// Len returns the number of moves in the list.
func (l *MoveList) Len() int { return l.n }

// At returns the i-th move.
func (l *MoveList) At(i int) Move { return l.moves[i] }

// Moves returns the moves as a slice aliasing the list's storage.
func (l *MoveList) Moves() []Move { return l.moves[:l.n] }

// Contains reports whether m is in the list.
func (l *MoveList) Contains(m Move) bool {
	for _, x := range l.moves[:l.n] {
		if x == m {
			return true
		}
	}
	return false
}

// Clear empties the list.
func (l *MoveList) Clear() { l.n = 0 }

func (l *MoveList) add(m Move) {
	l.moves[l.n] = m
	l.n++
}
