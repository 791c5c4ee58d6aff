package chess

// Checking one move without generating the legal list: replaying a stored
// game and validating a move from a cache (the engine's table) need "is
// this move legal here?" hundreds of times, where generating every legal
// move to look one up costs several times more.

// IsLegal reports whether m is a legal move of the side to move: exactly
// when m is among the moves GenerateMoves lists (tested against it on every
// position of random games, for every possible Move value that names a
// piece of the side to move).
func (p *Position) IsLegal(m Move) bool {
	from, to := m.From(), m.To()
	pc := p.board[from]
	us := p.side
	if m == NoMove || pc == NoPiece || pc.Color() != us {
		return false
	}
	switch m.Kind() {
	case KindCastling, KindEnPassant:
		// Rare, with conditions of their own: ask the generator.
		var legal MoveList
		p.GenerateMoves(&legal, GenAll)
		return legal.Contains(m)
	}
	if from == to || p.colors[us].Has(to) || (m.Kind() == KindNormal && m>>12&3 != 0) {
		return false // a normal move never carries promotion bits
	}
	occ := p.pieces[0]
	pt := pc.Type()
	if pt == Pawn {
		if (relativeRank(us, to) == 7) != (m.Kind() == KindPromotion) {
			return false
		}
		if !p.pawnCanReach(from, to, occ) {
			return false
		}
	} else {
		if m.Kind() != KindNormal || !pieceAttacks(pt, from, occ).Has(to) {
			return false
		}
	}
	return p.leavesKingSafe(m)
}

// pawnCanReach reports whether the pawn on from can go to to by a push, a
// double push from its start rank, or a capture of an enemy piece (en
// passant excluded).
func (p *Position) pawnCanReach(from, to Square, occ Bitboard) bool {
	us := p.side
	if PawnAttacks(us, from).Has(to) {
		return p.colors[us.Other()].Has(to)
	}
	step := 8
	if us == Black {
		step = -8
	}
	one := Square(int(from) + step) // on the board: a pawn never stands on its last rank
	if occ.Has(one) {
		return false
	}
	if to == one {
		return true
	}
	return relativeRank(us, from) == 1 && int(to) == int(one)+step && !occ.Has(to)
}

// pieceAttacks returns the squares a knight, bishop, rook, queen or king on
// s attacks with the given occupancy.
func pieceAttacks(pt PieceType, s Square, occ Bitboard) Bitboard {
	switch pt {
	case Knight:
		return KnightAttacks(s)
	case Bishop:
		return BishopAttacks(s, occ)
	case Rook:
		return RookAttacks(s, occ)
	case Queen:
		return QueenAttacks(s, occ)
	case King:
		return KingAttacks(s)
	}
	return 0
}

// leavesKingSafe reports whether the pseudo-legal move m leaves the mover's
// king unattacked.
func (p *Position) leavesKingSafe(m Move) bool {
	child := *p
	child.Play(m)
	return !child.IsAttacked(child.kings[p.side], p.side.Other())
}

// DecodeStoredUCI returns the move that UCI text u names in p, for text this
// program wrote itself (a stored game): it builds the move from the text
// and checks it with IsLegal instead of generating the legal moves. Text
// that is not a legal move in canonical UCI falls back to ParseUCI, so the
// answer and the error are always ParseUCI's.
func (p *Position) DecodeStoredUCI(u string) (Move, error) {
	if m, ok := p.storedUCIMove(u); ok && p.IsLegal(m) {
		return m, nil
	}
	return p.ParseUCI(u)
}

// storedUCIMove builds the Move that canonical UCI text u would name, or
// reports false when the text is not of that form.
func (p *Position) storedUCIMove(u string) (Move, bool) {
	if len(u) != 4 && len(u) != 5 {
		return NoMove, false
	}
	if u[0] < 'a' || u[0] > 'h' || u[1] < '1' || u[1] > '8' || u[2] < 'a' || u[2] > 'h' || u[3] < '1' || u[3] > '8' {
		return NoMove, false
	}
	from := NewSquare(int(u[0]-'a'), int(u[1]-'1'))
	to := NewSquare(int(u[2]-'a'), int(u[3]-'1'))
	pc := p.board[from]
	if len(u) == 5 {
		promo := pieceTypeFromLetter(u[4])
		if promo < Knight || promo > Queen || u[4] < 'a' {
			return NoMove, false
		}
		return newPromotion(from, to, promo), true
	}
	switch pc.Type() {
	case King:
		if p.castleRooks.Has(to) && p.board[to] == MakePiece(p.side, Rook) {
			return newCastling(from, to), true // king takes own rook (Chess960 UCI)
		}
		if !p.chess960 && (to == from+2 || to+2 == from) {
			// Standard castling as the king's two-square step: the rook is
			// the one on the side it moves to.
			for rooks := p.castleRooks & backRank(p.side); rooks != 0; {
				r := rooks.PopFirst()
				if (r > from) == (to > from) {
					return newCastling(from, r), true
				}
			}
		}
	case Pawn:
		if to == p.ep && to.File() != from.File() {
			return newEnPassant(from, to), true
		}
	}
	return newMove(from, to), true
}
