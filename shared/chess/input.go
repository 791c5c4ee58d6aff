package chess

// Move input: turning what a user names (squares, a UCI string, a castling
// side) into a legal Move, with the refusal reason when there is none.
// The rules are those of seeds/000 §5.4:
//
//   - king → own castling rook's square castles in Chess960, and is refused
//     as an ordinary illegal move in standard chess;
//   - king → g or c file castles (both variants) unless that square is also
//     an ordinary one-square king move, which then wins;
//   - a promotion without a piece is refused with ErrPromotionRequired, a
//     piece named for a move that does not promote is ignored.

// MoveFromSquares returns the legal move of the side to move from from to to.
// promo names the promotion piece (NoPieceType when none was given).
// Errors are *MoveError wrapping ErrIllegalMove, ErrKingInCheck or
// ErrPromotionRequired.
func (p *Position) MoveFromSquares(from, to Square, promo PieceType) (Move, error) {
	input := from.String() + to.String()
	if promo != NoPieceType {
		input += string(promo.Letter())
	}
	m, err := p.resolveSquares(from, to, promo)
	if err != nil {
		return NoMove, &MoveError{Input: input, Err: err}
	}
	return m, nil
}

func (p *Position) resolveSquares(from, to Square, promo PieceType) (Move, error) {
	if from >= NoSquare || to >= NoSquare || from == to {
		return NoMove, ErrIllegalMove
	}
	pc := p.board[from]
	if pc == NoPiece || pc.Color() != p.side {
		return NoMove, ErrIllegalMove
	}
	var legal MoveList
	p.GenerateMoves(&legal, GenAll)

	if pc.Type() == King {
		if m, ok, err := p.resolveCastlingInput(&legal, from, to); ok {
			return m, err
		}
	}

	promotes := false
	for _, m := range legal.Moves() {
		if m.From() != from || m.To() != to || m.IsCastling() {
			continue
		}
		if m.Kind() != KindPromotion {
			return m, nil // a promotion piece given for a non-promotion is ignored
		}
		promotes = true
		if m.Promotion() == promo {
			return m, nil
		}
	}
	if promotes {
		if promo == NoPieceType {
			return NoMove, ErrPromotionRequired
		}
		return NoMove, ErrIllegalMove // e.g. promotion to a king or pawn
	}
	return NoMove, p.whyNotLegal(from, to)
}

// resolveCastlingInput handles king moves that may mean castling. ok reports
// whether the input was decided here (as a castling move or its refusal).
func (p *Position) resolveCastlingInput(legal *MoveList, from, to Square) (m Move, ok bool, err error) {
	us := p.side
	rights := p.castleRooks & backRank(us)
	if p.board[to] == MakePiece(us, Rook) && rights.Has(to) {
		if !p.chess960 {
			return NoMove, true, ErrIllegalMove // standard: king→rook is not castling
		}
		return p.castlingOrReason(legal, newCastling(from, to))
	}
	if kingAttacks[from].Has(to) || !backRank(us).Has(from) || !backRank(us).Has(to) {
		return NoMove, false, nil // an ordinary king move wins
	}
	for r := rights; r != 0; {
		rsq := r.PopFirst()
		if kingTo, _ := castleTargets(us, from, rsq); kingTo == to {
			return p.castlingOrReason(legal, newCastling(from, rsq))
		}
	}
	return NoMove, false, nil
}

// castlingOrReason returns the castling move if legal, else the reason.
func (p *Position) castlingOrReason(legal *MoveList, c Move) (Move, bool, error) {
	if legal.Contains(c) {
		return c, true, nil
	}
	return NoMove, true, p.castlingRefusal(c)
}

// castlingRefusal tells why a castling move with a right is not legal: an
// obstructed path makes it an impossible move, a check or an attacked square
// on the king's way makes it a move into check.
func (p *Position) castlingRefusal(c Move) error {
	us := p.side
	ksq, rsq := c.From(), c.To()
	kingTo, rookTo := castleTargets(us, ksq, rsq)
	occ := p.pieces[0] &^ SquareBB(ksq) &^ SquareBB(rsq)
	path := betweenBB[ksq][kingTo] | SquareBB(kingTo) | betweenBB[rsq][rookTo] | SquareBB(rookTo)
	if path&occ != 0 {
		return ErrIllegalMove
	}
	return ErrKingInCheck
}

// CastlingMove returns the legal castling move to the given side (the castle
// action of seeds/000 §8.2, which also disambiguates Chess960 cases where a
// king move and castling share a square).
func (p *Position) CastlingMove(side CastleSide) (Move, error) {
	us := p.side
	ksq := p.kings[us]
	input := "O-O"
	if side == QueenSide {
		input = "O-O-O"
	}
	for r := p.castleRooks & backRank(us); r != 0; {
		rsq := r.PopFirst()
		if (side == KingSide) != (rsq > ksq) {
			continue
		}
		c := newCastling(ksq, rsq)
		var legal MoveList
		p.GenerateMoves(&legal, GenAll)
		if legal.Contains(c) {
			return c, nil
		}
		return NoMove, &MoveError{Input: input, Err: p.castlingRefusal(c)}
	}
	return NoMove, &MoveError{Input: input, Err: ErrIllegalMove}
}

// whyNotLegal classifies a non-castling from→to that is not legal: if the
// piece could move so ignoring king safety, the move fails because of check.
func (p *Position) whyNotLegal(from, to Square) error {
	var pseudo MoveList
	p.generatePseudo(&pseudo)
	for _, m := range pseudo.Moves() {
		if m.From() == from && m.To() == to && !m.IsCastling() {
			return ErrKingInCheck
		}
	}
	return ErrIllegalMove
}

// generatePseudo emits pseudo-legal moves: every move the pieces can make by
// their movement rules, ignoring whether the own king is left attacked
// (castling is not included). It is used only to explain refusals.
func (p *Position) generatePseudo(l *MoveList) {
	l.n = 0
	us, them := p.side, p.side^1
	occ := p.pieces[0]
	own := p.colors[us]
	enemy := p.colors[them]
	for b := own; b != 0; {
		from := b.PopFirst()
		var t Bitboard
		switch p.board[from].Type() {
		case Knight:
			t = knightAttacks[from]
		case Bishop:
			t = BishopAttacks(from, occ)
		case Rook:
			t = RookAttacks(from, occ)
		case Queen:
			t = QueenAttacks(from, occ)
		case King:
			t = kingAttacks[from]
		case Pawn:
			push := pawnPushes(us, SquareBB(from)) &^ occ
			t = push | pawnAttacks[us][from]&enemy
			if relativeRank(us, from) == 1 {
				t |= pawnPushes(us, push) &^ occ
			}
			if ep := p.epCandidate; ep != NoSquare && pawnAttacks[us][from].Has(ep) {
				l.add(newEnPassant(from, ep))
			}
		}
		for t &^= own; t != 0; {
			to := t.PopFirst()
			if p.board[from].Type() == Pawn && (Rank1 | Rank8).Has(to) {
				addPromotions(l, from, to)
			} else {
				l.add(newMove(from, to))
			}
		}
	}
}
