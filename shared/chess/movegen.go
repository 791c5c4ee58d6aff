package chess

// Strictly legal move generation. Pins and check evasions are computed up
// front, so every generated move is legal without playing it:
//
//   - in double check only the king moves;
//   - in single check every other move must capture the checker or block
//     on a square between it and the king (checkMask);
//   - a pinned piece moves only along the line through its king;
//   - king destinations are tested with the king removed from the board, so
//     it cannot step back along a slider's ray;
//   - en passant is verified by removing both pawns (the horizontal pin).
//
// This file holds only the hot code; the rest lives in files by concept.

// GenType selects which legal moves a generator emits.
type GenType uint8

const (
	// GenAll emits every legal move.
	GenAll GenType = GenNoisy | GenQuiet
	// GenNoisy emits captures (en passant included) and promotions.
	GenNoisy GenType = 1
	// GenQuiet emits the remaining moves: non-capturing, non-promoting moves
	// and castling.
	GenQuiet GenType = 2
)

// LegalMoves returns every legal move. It allocates; hot code should use
// GenerateMoves with a reused MoveList.
func (p *Position) LegalMoves() []Move {
	var l MoveList
	p.GenerateMoves(&l, GenAll)
	return append([]Move(nil), l.Moves()...)
}

// pinned returns our pieces pinned against our king.
func (p *Position) pinned() Bitboard {
	us, them := p.side, p.side^1
	ksq := p.kings[us]
	occ := p.pieces[0]
	snipers := (RookAttacks(ksq, 0)&(p.pieces[Rook]|p.pieces[Queen]) |
		BishopAttacks(ksq, 0)&(p.pieces[Bishop]|p.pieces[Queen])) & p.colors[them]
	var pinned Bitboard
	for snipers != 0 {
		s := snipers.PopFirst()
		b := betweenBB[ksq][s] & occ
		if b != 0 && !b.moreThanOne() {
			pinned |= b & p.colors[us]
		}
	}
	return pinned
}

// Pinned returns the pieces of the side to move pinned against their king.
func (p *Position) Pinned() Bitboard { return p.pinned() }

// GenerateMoves appends to l (after clearing it) the legal moves of the kind
// requested. It never allocates.
func (p *Position) GenerateMoves(l *MoveList, gen GenType) {
	l.n = 0
	us, them := p.side, p.side^1
	occ := p.pieces[0]
	own := p.colors[us]
	enemy := p.colors[them]
	ksq := p.kings[us]

	var targetKinds Bitboard
	if gen&GenNoisy != 0 {
		targetKinds |= enemy
	}
	if gen&GenQuiet != 0 {
		targetKinds |= ^occ
	}

	// King moves.
	occNoKing := occ &^ SquareBB(ksq)
	for t := kingAttacks[ksq] & targetKinds; t != 0; {
		to := t.PopFirst()
		if !p.attackedWith(to, them, occNoKing) {
			l.add(newMove(ksq, to))
		}
	}
	if p.checkers.moreThanOne() {
		return
	}

	checkMask := ^Bitboard(0)
	if p.checkers != 0 {
		checkMask = betweenBB[ksq][p.checkers.First()] | p.checkers
	}
	pinned := p.pinned()
	targets := targetKinds & checkMask

	// Knights (a pinned knight can never move).
	for b := p.pieces[Knight] & own &^ pinned; b != 0; {
		from := b.PopFirst()
		for t := knightAttacks[from] & targets; t != 0; {
			l.add(newMove(from, t.PopFirst()))
		}
	}
	// Sliders.
	for b := (p.pieces[Bishop] | p.pieces[Queen]) & own; b != 0; {
		from := b.PopFirst()
		t := BishopAttacks(from, occ) & targets
		if pinned.Has(from) {
			t &= lineBB[ksq][from]
		}
		for t != 0 {
			l.add(newMove(from, t.PopFirst()))
		}
	}
	for b := (p.pieces[Rook] | p.pieces[Queen]) & own; b != 0; {
		from := b.PopFirst()
		t := RookAttacks(from, occ) & targets
		if pinned.Has(from) {
			t &= lineBB[ksq][from]
		}
		for t != 0 {
			l.add(newMove(from, t.PopFirst()))
		}
	}

	p.genPawnMoves(l, gen, pinned, checkMask)

	if gen&GenQuiet != 0 && p.checkers == 0 && p.castleRooks&backRank(us) != 0 {
		p.genCastling(l)
	}
}

// genPawnMoves emits pawn moves; pinned pawns are handled one by one.
func (p *Position) genPawnMoves(l *MoveList, gen GenType, pinned, checkMask Bitboard) {
	us, them := p.side, p.side^1
	occ := p.pieces[0]
	enemy := p.colors[them]
	ksq := p.kings[us]
	pawns := p.pieces[Pawn] & p.colors[us]
	free := pawns &^ pinned

	var up, left, right int // square deltas of a push and the two captures
	var rank3, last Bitboard
	if us == White {
		up, left, right, rank3, last = 8, 7, 9, Rank3, Rank8
	} else {
		up, left, right, rank3, last = -8, -9, -7, Rank6, Rank1
	}

	// Unpinned pawns, set-wise.
	single := pawnPushes(us, free) &^ occ
	double := pawnPushes(us, single&rank3) &^ occ
	single &= checkMask
	double &= checkMask
	var capL, capR Bitboard
	if us == White {
		capL = (free &^ FileA) << 7 & enemy & checkMask
		capR = (free &^ FileH) << 9 & enemy & checkMask
	} else {
		capL = (free &^ FileA) >> 9 & enemy & checkMask
		capR = (free &^ FileH) >> 7 & enemy & checkMask
	}
	if gen&GenQuiet != 0 {
		for b := single &^ last; b != 0; {
			to := b.PopFirst()
			l.add(newMove(Square(int(to)-up), to))
		}
		for b := double; b != 0; {
			to := b.PopFirst()
			l.add(newMove(Square(int(to)-2*up), to))
		}
	}
	if gen&GenNoisy != 0 {
		for b := capL &^ last; b != 0; {
			to := b.PopFirst()
			l.add(newMove(Square(int(to)-left), to))
		}
		for b := capR &^ last; b != 0; {
			to := b.PopFirst()
			l.add(newMove(Square(int(to)-right), to))
		}
		for b := single & last; b != 0; {
			to := b.PopFirst()
			addPromotions(l, Square(int(to)-up), to)
		}
		for b := capL & last; b != 0; {
			to := b.PopFirst()
			addPromotions(l, Square(int(to)-left), to)
		}
		for b := capR & last; b != 0; {
			to := b.PopFirst()
			addPromotions(l, Square(int(to)-right), to)
		}
	}

	// Pinned pawns: each moves only along its pin line.
	for b := pawns & pinned; b != 0; {
		from := b.PopFirst()
		line := lineBB[ksq][from]
		var t Bitboard
		if gen&GenQuiet != 0 || SquareBB(Square(int(from)+up))&last != 0 {
			push := SquareBB(Square(int(from)+up)) &^ occ
			t |= push
			if push&rank3 != 0 {
				t |= pawnPushes(us, push) &^ occ
			}
		}
		if gen&GenNoisy != 0 {
			t |= pawnAttacks[us][from] & enemy
		}
		for t &= line & checkMask; t != 0; {
			to := t.PopFirst()
			if last.Has(to) {
				if gen&GenNoisy != 0 {
					addPromotions(l, from, to)
				}
			} else if gen&GenQuiet != 0 || enemy.Has(to) {
				l.add(newMove(from, to))
			}
		}
	}

	if p.ep != NoSquare && gen&GenNoisy != 0 {
		capSq := p.ep ^ 8
		// In check, en passant helps only by taking the checking pawn (or
		// blocking on the target square).
		if checkMask.Has(capSq) || checkMask.Has(p.ep) {
			for b := pawnAttacks[them][p.ep] & pawns; b != 0; {
				if from := b.PopFirst(); p.enPassantSafe(from, p.ep) {
					l.add(newEnPassant(from, p.ep))
				}
			}
		}
	}
}

// enPassantSafe reports whether our pawn on from may take en passant onto
// ep without leaving our king attacked: with our pawn on ep and both pawns
// gone from their squares, nothing but the taken pawn attacks the king. It
// is the one test of an en-passant capture's legality (the generator,
// CountMoves and the en-passant square's bookkeeping, enPassantLegal, all
// ask it), covering the pinned capturer that leaves its line through the
// king and the rank pin that only opens when both pawns leave the rank.
func (p *Position) enPassantSafe(from, ep Square) bool {
	us := p.side
	capSq := ep ^ 8
	occ := p.pieces[0]&^SquareBB(from)&^SquareBB(capSq) | SquareBB(ep)
	return p.AttackersTo(p.kings[us], occ)&p.colors[us^1]&^SquareBB(capSq) == 0
}

func addPromotions(l *MoveList, from, to Square) {
	l.add(newPromotion(from, to, Queen))
	l.add(newPromotion(from, to, Knight))
	l.add(newPromotion(from, to, Rook))
	l.add(newPromotion(from, to, Bishop))
}

// genCastling emits the castling moves allowed by seeds/000 §5.2, one rule
// for standard chess and Chess960: king and rook unmoved (the right), not in
// check (checked by the caller), every square between the king and its
// target and between the rook and its target empty except for the king and
// rook themselves, and no square the king passes or lands on attacked, with
// the castling rook removed from the board (so a rook shielding the king's
// target square does not make castling legal).
func (p *Position) genCastling(l *MoveList) {
	us, them := p.side, p.side^1
	ksq := p.kings[us]
	for rooks := p.castleRooks & backRank(us); rooks != 0; {
		rsq := rooks.PopFirst()
		if p.castlingAllowed(us, them, ksq, rsq) {
			l.add(newCastling(ksq, rsq))
		}
	}
}

func (p *Position) castlingAllowed(us, them Color, ksq, rsq Square) bool {
	kingTo, rookTo := castleTargets(us, ksq, rsq)
	occ := p.pieces[0] &^ SquareBB(ksq) &^ SquareBB(rsq)
	path := betweenBB[ksq][kingTo] | SquareBB(kingTo) | betweenBB[rsq][rookTo] | SquareBB(rookTo)
	if path&occ != 0 {
		return false
	}
	kingPath := betweenBB[ksq][kingTo] | SquareBB(kingTo)
	for kingPath != 0 {
		if p.attackedWith(kingPath.PopFirst(), them, occ) {
			return false
		}
	}
	return true
}

// CountMoves returns the number of legal moves without generating them: the
// same rules as GenerateMoves, but destination sets are counted with
// popcount. Perft uses it for the last ply (bulk counting); a test checks it
// against GenerateMoves on many positions.
func (p *Position) CountMoves() int {
	us, them := p.side, p.side^1
	occ := p.pieces[0]
	own := p.colors[us]
	enemy := p.colors[them]
	ksq := p.kings[us]

	n := 0
	occNoKing := occ &^ SquareBB(ksq)
	for t := kingAttacks[ksq] &^ own; t != 0; {
		if !p.attackedWith(t.PopFirst(), them, occNoKing) {
			n++
		}
	}
	if p.checkers.moreThanOne() {
		return n
	}
	checkMask := ^Bitboard(0)
	if p.checkers != 0 {
		checkMask = betweenBB[ksq][p.checkers.First()] | p.checkers
	}
	pinned := p.pinned()
	targets := ^own & checkMask

	for b := p.pieces[Knight] & own &^ pinned; b != 0; {
		n += (knightAttacks[b.PopFirst()] & targets).Count()
	}
	for b := (p.pieces[Bishop] | p.pieces[Queen]) & own; b != 0; {
		from := b.PopFirst()
		t := BishopAttacks(from, occ) & targets
		if pinned.Has(from) {
			t &= lineBB[ksq][from]
		}
		n += t.Count()
	}
	for b := (p.pieces[Rook] | p.pieces[Queen]) & own; b != 0; {
		from := b.PopFirst()
		t := RookAttacks(from, occ) & targets
		if pinned.Has(from) {
			t &= lineBB[ksq][from]
		}
		n += t.Count()
	}

	pawns := p.pieces[Pawn] & own
	free := pawns &^ pinned
	var rank3, last Bitboard
	var single, capL, capR Bitboard
	if us == White {
		rank3, last = Rank3, Rank8
		single = free << 8 &^ occ
		capL = (free &^ FileA) << 7 & enemy
		capR = (free &^ FileH) << 9 & enemy
	} else {
		rank3, last = Rank6, Rank1
		single = free >> 8 &^ occ
		capL = (free &^ FileA) >> 9 & enemy
		capR = (free &^ FileH) >> 7 & enemy
	}
	double := pawnPushes(us, single&rank3) &^ occ & checkMask
	single &= checkMask
	capL &= checkMask
	capR &= checkMask
	n += (single &^ last).Count() + double.Count() + (capL &^ last).Count() + (capR &^ last).Count() +
		4*((single&last).Count()+(capL&last).Count()+(capR&last).Count())

	for b := pawns & pinned; b != 0; {
		from := b.PopFirst()
		push := SquareBB(from) << 8
		if us == Black {
			push = SquareBB(from) >> 8
		}
		push &^= occ
		t := push | pawnAttacks[us][from]&enemy
		if push&rank3 != 0 {
			t |= pawnPushes(us, push) &^ occ
		}
		t &= lineBB[ksq][from] & checkMask
		n += (t &^ last).Count() + 4*(t&last).Count()
	}

	if p.ep != NoSquare && (checkMask.Has(p.ep^8) || checkMask.Has(p.ep)) {
		for b := pawnAttacks[them][p.ep] & pawns; b != 0; {
			if p.enPassantSafe(b.PopFirst(), p.ep) {
				n++
			}
		}
	}

	if p.checkers == 0 {
		for rooks := p.castleRooks & backRank(us); rooks != 0; {
			if p.castlingAllowed(us, them, ksq, rooks.PopFirst()) {
				n++
			}
		}
	}
	return n
}
