package chess

import "strings"

// UCI returns the move in UCI notation for this position's variant:
// castling as king→target square (e1g1) in standard chess and as king→rook
// square (UCI_Chess960) in Chess960.
func (p *Position) UCI(m Move) string {
	if m.IsCastling() && !p.chess960 {
		kingTo, _ := castleTargets(p.side, m.From(), m.To())
		return m.From().String() + kingTo.String()
	}
	return m.String()
}

// ParseUCI reads a UCI move ("e2e4", "e7e8q") and returns the legal move it
// names, applying the input rules of MoveFromSquares (so "e1g1" castles in
// both variants when g1 is not an ordinary king step, and king→rook castles
// in Chess960 only).
func (p *Position) ParseUCI(s string) (Move, error) {
	if len(s) != 4 && len(s) != 5 {
		return NoMove, &MoveError{Input: s, Err: ErrSyntax}
	}
	from, err1 := ParseSquare(s[0:2])
	to, err2 := ParseSquare(s[2:4])
	if err1 != nil || err2 != nil {
		return NoMove, &MoveError{Input: s, Err: ErrSyntax}
	}
	promo := NoPieceType
	if len(s) == 5 {
		promo = pieceTypeFromLetter(s[4])
		if promo == NoPieceType || promo == Pawn || promo == King || s[4] < 'a' {
			return NoMove, &MoveError{Input: s, Err: ErrSyntax}
		}
	}
	m, err := p.resolveSquares(from, to, promo)
	if err != nil {
		return NoMove, &MoveError{Input: s, Err: err}
	}
	return m, nil
}

// SAN returns the move in Standard Algebraic Notation: piece letter,
// disambiguation by file, then rank, then both (only among legal moves),
// "x" for captures, "=Q" for promotions, O-O / O-O-O, and "+" or "#".
// m must be legal in p.
func (p *Position) SAN(m Move) string {
	var legal MoveList
	p.GenerateMoves(&legal, GenAll)
	return p.san(m, &legal)
}

// SANs returns the SAN of each move, generating the legal moves once.
func (p *Position) SANs(moves []Move) []string {
	var legal MoveList
	p.GenerateMoves(&legal, GenAll)
	out := make([]string, len(moves))
	for i, m := range moves {
		out[i] = p.san(m, &legal)
	}
	return out
}

func (p *Position) san(m Move, legal *MoveList) string {
	var b []byte
	from, to := m.From(), m.To()
	switch {
	case m.IsCastling():
		if to > from {
			b = append(b, "O-O"...)
		} else {
			b = append(b, "O-O-O"...)
		}
	case p.board[from].Type() == Pawn:
		if from.File() != to.File() {
			b = append(b, 'a'+byte(from.File()), 'x')
		}
		b = append(b, to.String()...)
		if pr := m.Promotion(); pr != NoPieceType {
			b = append(b, '=', pr.Letter()-0x20)
		}
	default:
		pt := p.board[from].Type()
		b = append(b, pt.Letter()-0x20)
		b = append(b, p.disambiguation(m, pt, legal)...)
		if p.board[to] != NoPiece {
			b = append(b, 'x')
		}
		b = append(b, to.String()...)
	}
	return string(append(b, p.checkSuffix(m)...))
}

// disambiguation returns "", the file, the rank or the square of the origin,
// whichever is the first that singles the move out among legal moves.
func (p *Position) disambiguation(m Move, pt PieceType, legal *MoveList) string {
	from, to := m.From(), m.To()
	ambiguous, sameFile, sameRank := false, false, false
	for _, o := range legal.Moves() {
		if o == m || o.To() != to || o.From() == from || o.IsCastling() || p.board[o.From()].Type() != pt {
			continue
		}
		ambiguous = true
		sameFile = sameFile || o.From().File() == from.File()
		sameRank = sameRank || o.From().Rank() == from.Rank()
	}
	switch {
	case !ambiguous:
		return ""
	case !sameFile:
		return from.String()[:1]
	case !sameRank:
		return from.String()[1:]
	}
	return from.String()
}

func (p *Position) checkSuffix(m Move) string {
	child := *p
	child.Play(m)
	if !child.InCheck() {
		return ""
	}
	if child.CountMoves() == 0 {
		return "#"
	}
	return "+"
}

// LAN returns the move in long algebraic notation: "Ng1-f3", "e7xe8=Q+",
// "O-O". m must be legal in p.
func (p *Position) LAN(m Move) string {
	if m.IsCastling() {
		return p.SAN(m)
	}
	var b []byte
	pt := p.board[m.From()].Type()
	if pt != Pawn {
		b = append(b, pt.Letter()-0x20)
	}
	b = append(b, m.From().String()...)
	if p.board[m.To()] != NoPiece || m.IsEnPassant() {
		b = append(b, 'x')
	} else {
		b = append(b, '-')
	}
	b = append(b, m.To().String()...)
	if pr := m.Promotion(); pr != NoPieceType {
		b = append(b, '=', pr.Letter()-0x20)
	}
	return string(append(b, p.checkSuffix(m)...))
}

// ParseSANStrict accepts only the exact SAN that SAN(m) produces.
func (p *Position) ParseSANStrict(s string) (Move, error) {
	m, err := p.ParseSAN(s)
	if err != nil {
		return NoMove, err
	}
	if p.SAN(m) != s {
		return NoMove, &MoveError{Input: s, Err: ErrSyntax}
	}
	return m, nil
}

// ParseSAN reads a move in SAN, tolerating the forms people type: "0-0" and
// "0-0-0", a promotion without "=" ("e8Q") or in lower case ("e8=q"), a
// missing or superfluous "x", "+" or "#", annotations ("!?"), "e.p.", and
// long algebraic notation ("Ng1-f3", "e2e4"). The move must still be
// unambiguous and legal.
func (p *Position) ParseSAN(s string) (Move, error) {
	m, err := p.parseSAN(s)
	if err != nil {
		return NoMove, &MoveError{Input: s, Err: err}
	}
	return m, nil
}

// sanQuery is what a SAN string asks for.
type sanQuery struct {
	castle   CastleSide
	piece    PieceType
	fromFile int // -1 when not given
	fromRank int // -1 when not given
	to       Square
	promo    PieceType
}

func parseSANText(s string) (sanQuery, error) {
	q := sanQuery{fromFile: -1, fromRank: -1}
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(t, "e.p.")
	t = strings.TrimRight(t, "+#!? ")
	if len(t) > 12 {
		return q, ErrSyntax
	}
	switch t {
	case "O-O", "0-0", "o-o":
		q.castle = KingSide
		return q, nil
	case "O-O-O", "0-0-0", "o-o-o":
		q.castle = QueenSide
		return q, nil
	}
	// Promotion suffix.
	if n := len(t); n >= 3 {
		if pt := pieceTypeFromLetter(t[n-1]); pt >= Knight && pt <= Queen && t[n-2] != '=' && t[n-2] >= '1' && t[n-2] <= '8' {
			q.promo = pt
			t = t[:n-1]
		} else if pt >= Knight && pt <= Queen && t[n-2] == '=' {
			q.promo = pt
			t = t[:n-2]
		}
	}
	// Piece letter (upper case only: 'b' is a file).
	q.piece = Pawn
	if len(t) > 0 && t[0] >= 'A' && t[0] <= 'Z' {
		q.piece = pieceTypeFromLetter(t[0])
		if q.piece == NoPieceType {
			return q, ErrSyntax
		}
		t = t[1:]
	}
	// Drop capture and LAN separators; what is left is [file][rank]square.
	t = strings.NewReplacer("x", "", ":", "", "-", "").Replace(t)
	if len(t) < 2 || len(t) > 4 {
		return q, ErrSyntax
	}
	to, err := ParseSquare(t[len(t)-2:])
	if err != nil {
		return q, ErrSyntax
	}
	q.to = to
	for _, c := range []byte(t[:len(t)-2]) {
		switch {
		case c >= 'a' && c <= 'h' && q.fromFile < 0 && q.fromRank < 0:
			q.fromFile = int(c - 'a')
		case c >= '1' && c <= '8' && q.fromRank < 0:
			q.fromRank = int(c - '1')
		default:
			return q, ErrSyntax
		}
	}
	if q.promo != NoPieceType && q.piece != Pawn {
		return q, ErrSyntax
	}
	return q, nil
}

func (p *Position) parseSAN(s string) (Move, error) {
	q, err := parseSANText(s)
	if err != nil {
		return NoMove, err
	}
	if q.castle != NoCastle {
		m, err := p.CastlingMove(q.castle)
		if err != nil {
			return NoMove, err.(*MoveError).Err
		}
		return m, nil
	}
	var legal MoveList
	p.GenerateMoves(&legal, GenAll)
	found, promoMissing := NoMove, false
	for _, m := range legal.Moves() {
		if !q.matches(p, m) {
			continue
		}
		if m.Kind() == KindPromotion && q.promo == NoPieceType {
			promoMissing = true
			continue
		}
		if m.Kind() == KindPromotion && m.Promotion() != q.promo {
			continue
		}
		if found != NoMove {
			return NoMove, ErrAmbiguousMove
		}
		found = m
	}
	switch {
	case found != NoMove:
		return found, nil
	case promoMissing:
		return NoMove, ErrPromotionRequired
	}
	var pseudo MoveList
	p.generatePseudo(&pseudo)
	for _, m := range pseudo.Moves() {
		if q.matches(p, m) {
			return NoMove, ErrKingInCheck
		}
	}
	return NoMove, ErrIllegalMove
}

func (q *sanQuery) matches(p *Position, m Move) bool {
	from := m.From()
	return !m.IsCastling() && m.To() == q.to && p.board[from].Type() == q.piece &&
		(q.fromFile < 0 || from.File() == q.fromFile) &&
		(q.fromRank < 0 || from.Rank() == q.fromRank)
}
