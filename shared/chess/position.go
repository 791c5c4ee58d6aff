package chess

// Position is a chess position: placement, side to move, castling rights,
// en-passant square, move counters and whether Chess960 castling notation
// applies. It is a plain value (no pointers), so copying it is cheap and a
// copy is fully independent: play a move on a copy to keep the original.
//
// Castling rights are stored as the set of rook squares that may still
// castle, so standard chess and Chess960 share every line of code.
//
// The en-passant square is kept only when a legal en-passant capture exists
// (as python-chess and chess.js 1.x write FENs). Two positions that are the
// same for the repetition rule therefore have the same FEN prefix and the
// same Hash.
type Position struct {
	board       [64]Piece
	pieces      [7]Bitboard // by PieceType; pieces[0] is every occupied square
	colors      [2]Bitboard
	checkers    Bitboard // pieces giving check to the side to move
	castleRooks Bitboard // rook squares that keep a castling right
	hash        uint64
	halfmove    uint32
	fullmove    uint32
	kings       [2]Square
	side        Color
	ep          Square
	// epCandidate is the square a pawn just skipped when an enemy pawn
	// stands beside it, even if the capture would be illegal. It is not part
	// of the position's identity (FEN, hash); it only lets a refused
	// en-passant capture be explained as a move into check.
	epCandidate Square
	chess960    bool
}

// Turn returns the side to move.
func (p *Position) Turn() Color { return p.side }

// PieceAt returns the piece on s, or NoPiece.
func (p *Position) PieceAt(s Square) Piece { return p.board[s&63] }

// Occupied returns every occupied square.
func (p *Position) Occupied() Bitboard { return p.pieces[0] }

// ByColor returns the squares of colour c's pieces.
func (p *Position) ByColor(c Color) Bitboard { return p.colors[c] }

// ByType returns the squares of every piece of type t (both colours).
func (p *Position) ByType(t PieceType) Bitboard { return p.pieces[t] }

// Pieces returns the squares of colour c's pieces of type t.
func (p *Position) Pieces(c Color, t PieceType) Bitboard { return p.pieces[t] & p.colors[c] }

// KingSquare returns the square of colour c's king.
func (p *Position) KingSquare(c Color) Square { return p.kings[c] }

// Checkers returns the pieces giving check to the side to move.
func (p *Position) Checkers() Bitboard { return p.checkers }

// InCheck reports whether the side to move is in check.
func (p *Position) InCheck() bool { return p.checkers != 0 }

// EnPassant returns the en-passant target square, or NoSquare. It is set only
// when a legal en-passant capture exists.
func (p *Position) EnPassant() Square { return p.ep }

// CastlingRooks returns the squares of rooks that keep a castling right.
func (p *Position) CastlingRooks() Bitboard { return p.castleRooks }

// HalfmoveClock returns the plies since the last capture or pawn move.
func (p *Position) HalfmoveClock() int { return int(p.halfmove) }

// FullmoveNumber returns the FEN full-move number (starts at 1).
func (p *Position) FullmoveNumber() int { return int(p.fullmove) }

// Hash returns the Zobrist key, maintained incrementally.
func (p *Position) Hash() uint64 { return p.hash }

// Chess960 reports whether Chess960 castling conventions apply (king→rook
// castling input, Shredder-FEN output).
func (p *Position) Chess960() bool { return p.chess960 }

// Variant returns Chess960 or Standard.
func (p *Position) Variant() Variant {
	if p.chess960 {
		return VariantChess960
	}
	return VariantStandard
}

// Variant selects standard or Chess960 conventions.
type Variant uint8

const (
	// VariantAuto lets ParseFEN decide from the castling field.
	VariantAuto Variant = iota
	VariantStandard
	VariantChess960
)

// String returns "standard", "chess960" or "auto".
func (v Variant) String() string {
	switch v {
	case VariantStandard:
		return "standard"
	case VariantChess960:
		return "chess960"
	}
	return "auto"
}

// ParseVariant reads "standard" or "chess960".
func ParseVariant(s string) (Variant, bool) {
	switch s {
	case "standard":
		return VariantStandard, true
	case "chess960":
		return VariantChess960, true
	}
	return VariantAuto, false
}

// AttackersTo returns the pieces of both colours attacking s with the given
// occupancy.
func (p *Position) AttackersTo(s Square, occ Bitboard) Bitboard {
	return pawnAttacks[White][s]&p.pieces[Pawn]&p.colors[Black] |
		pawnAttacks[Black][s]&p.pieces[Pawn]&p.colors[White] |
		knightAttacks[s]&p.pieces[Knight] |
		kingAttacks[s]&p.pieces[King] |
		BishopAttacks(s, occ)&(p.pieces[Bishop]|p.pieces[Queen]) |
		RookAttacks(s, occ)&(p.pieces[Rook]|p.pieces[Queen])
}

// IsAttacked reports whether colour by attacks s in the current position.
func (p *Position) IsAttacked(s Square, by Color) bool {
	return p.attackedWith(s, by, p.pieces[0])
}

// attackedWith reports whether colour by attacks s given occupancy occ.
func (p *Position) attackedWith(s Square, by Color, occ Bitboard) bool {
	them := p.colors[by]
	if pawnAttacks[by^1][s]&p.pieces[Pawn]&them != 0 ||
		knightAttacks[s]&p.pieces[Knight]&them != 0 ||
		kingAttacks[s]&p.pieces[King]&them != 0 {
		return true
	}
	rq := (p.pieces[Rook] | p.pieces[Queen]) & them
	if rq != 0 && RookAttacks(s, occ)&rq != 0 {
		return true
	}
	bq := (p.pieces[Bishop] | p.pieces[Queen]) & them
	return bq != 0 && BishopAttacks(s, occ)&bq != 0
}

// castleTargets returns where king and rook land when colour c castles with
// the rook on rookFrom: g and f files on the king side, c and d on the queen
// side, whatever the start squares (standard and Chess960 alike).
func castleTargets(c Color, kingFrom, rookFrom Square) (kingTo, rookTo Square) {
	rank := 0
	if c == Black {
		rank = 7
	}
	if rookFrom > kingFrom {
		return NewSquare(6, rank), NewSquare(5, rank)
	}
	return NewSquare(2, rank), NewSquare(3, rank)
}

// CastleSideOf returns the side a castling move castles to.
func CastleSideOf(m Move) CastleSide {
	if !m.IsCastling() {
		return NoCastle
	}
	if m.To() > m.From() {
		return KingSide
	}
	return QueenSide
}

func (p *Position) putPiece(pc Piece, s Square) {
	bb := SquareBB(s)
	p.board[s] = pc
	p.pieces[0] |= bb
	p.pieces[pc.Type()] |= bb
	p.colors[pc.Color()] |= bb
	p.hash ^= zobristPiece[pc][s]
}

func (p *Position) removePiece(s Square) {
	pc := p.board[s]
	bb := SquareBB(s)
	p.board[s] = NoPiece
	p.pieces[0] &^= bb
	p.pieces[pc.Type()] &^= bb
	p.colors[pc.Color()] &^= bb
	p.hash ^= zobristPiece[pc][s]
}

func (p *Position) movePiece(from, to Square) {
	pc := p.board[from]
	fromTo := SquareBB(from) | SquareBB(to)
	p.board[from] = NoPiece
	p.board[to] = pc
	p.pieces[0] ^= fromTo
	p.pieces[pc.Type()] ^= fromTo
	p.colors[pc.Color()] ^= fromTo
	p.hash ^= zobristPiece[pc][from] ^ zobristPiece[pc][to]
}

// Play plays the legal move m on p, updating every field and the hash
// incrementally. m must be legal in p (from GenerateMoves or one of the
// parse functions); use a copy of p to keep the position before the move.
func (p *Position) Play(m Move) {
	us, them := p.side, p.side^1
	from, to := m.From(), m.To()

	if p.ep != NoSquare {
		p.hash ^= zobristEP[p.ep.File()]
		p.ep = NoSquare
	}
	oldRights := p.castleRooks
	p.epCandidate = NoSquare
	p.halfmove++

	if m.Kind() == KindCastling {
		kingTo, rookTo := castleTargets(us, from, to)
		rook := p.board[to]
		p.removePiece(to)
		p.movePieceTo(from, kingTo)
		p.putPiece(rook, rookTo)
		p.kings[us] = kingTo
		p.castleRooks &^= backRank(us)
	} else {
		moving := p.board[from]
		capSq := to
		if m.Kind() == KindEnPassant {
			capSq = to ^ 8 // the pushed pawn stands behind the target square
		}
		if p.board[capSq] != NoPiece {
			p.removePiece(capSq)
			p.halfmove = 0
		}
		p.movePiece(from, to)
		switch moving.Type() {
		case Pawn:
			p.halfmove = 0
			if m.Kind() == KindPromotion {
				p.removePiece(to)
				p.putPiece(MakePiece(us, m.Promotion()), to)
			} else if from^to == 16 {
				p.maybeSetEnPassant(Square((int(from)+int(to))/2), them)
			}
		case King:
			p.kings[us] = to
			p.castleRooks &^= backRank(us)
		}
		p.castleRooks &^= SquareBB(from) | SquareBB(to)
	}

	for changed := oldRights ^ p.castleRooks; changed != 0; {
		p.hash ^= zobristCastle[changed.PopFirst()]
	}
	p.side = them
	p.hash ^= zobristSide
	if us == Black {
		p.fullmove++
	}
	p.checkers = p.AttackersTo(p.kings[them], p.pieces[0]) & p.colors[us]
	if p.ep != NoSquare && !p.enPassantLegal(p.ep) {
		p.hash ^= zobristEP[p.ep.File()]
		p.ep = NoSquare
	}
}

// movePieceTo moves a piece, allowing from == to (Chess960 castling where the
// king already stands on its target square).
func (p *Position) movePieceTo(from, to Square) {
	if from != to {
		p.movePiece(from, to)
	}
}

// maybeSetEnPassant records ep as the en-passant square if a pawn of colour
// capturer stands ready to take; legality is checked once the move is complete.
func (p *Position) maybeSetEnPassant(ep Square, capturer Color) {
	if pawnAttacks[capturer^1][ep]&p.pieces[Pawn]&p.colors[capturer] != 0 {
		p.ep = ep
		p.epCandidate = ep
		p.hash ^= zobristEP[ep.File()]
	}
}

// enPassantLegal reports whether the side to move has a legal en-passant
// capture onto ep.
func (p *Position) enPassantLegal(ep Square) bool {
	us := p.side
	for cands := pawnAttacks[us^1][ep] & p.pieces[Pawn] & p.colors[us]; cands != 0; {
		if p.enPassantSafe(cands.PopFirst(), ep) {
			return true
		}
	}
	return false
}

// PlayNull passes the turn (for null-move pruning in a search). The side to
// move must not be in check.
func (p *Position) PlayNull() {
	p.epCandidate = NoSquare
	if p.ep != NoSquare {
		p.hash ^= zobristEP[p.ep.File()]
		p.ep = NoSquare
	}
	p.halfmove++
	if p.side == Black {
		p.fullmove++
	}
	p.side ^= 1
	p.hash ^= zobristSide
	p.checkers = 0
}
