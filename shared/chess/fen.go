package chess

import (
	"math/bits"
	"strconv"
	"strings"
)

// StartFEN is the standard starting position.
const StartFEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

// maxHalfmove bounds the half-move clock read from a FEN; anything larger is
// meaningless (the 75-move rule ends a game at 150) and would not fit.
const maxHalfmove = 1 << 20

// StartingPosition returns the standard starting position.
func StartingPosition() *Position {
	p, err := ParseFEN(StartFEN)
	if err != nil {
		panic("chess: start position: " + err.Error()) // unreachable: constant input
	}
	return p
}

// ParseFEN reads a FEN string, deciding between standard and Chess960 from
// the castling field: Shredder-FEN or X-FEN file letters, or KQkq rights
// whose king or rook is not on its standard square, mean Chess960. The
// half-move and full-move fields may be omitted (EPD style).
func ParseFEN(fen string) (*Position, error) { return ParseFENVariant(fen, VariantAuto) }

// ParseFENVariant reads a FEN string for the given variant. With
// VariantStandard, castling rights must be the standard ones; with
// VariantChess960 the position uses Chess960 conventions even when it looks
// standard (Scharnagl number 518).
func ParseFENVariant(fen string, v Variant) (*Position, error) {
	p := &Position{}
	if err := p.parseFEN(fen, v); err != nil {
		return nil, err
	}
	return p, nil
}

// UnmarshalText implements encoding.TextUnmarshaler with ParseFEN semantics.
func (p *Position) UnmarshalText(text []byte) error {
	var q Position
	if err := q.parseFEN(string(text), VariantAuto); err != nil {
		return err
	}
	*p = q
	return nil
}

// MarshalText implements encoding.TextMarshaler; it writes FEN().
func (p *Position) MarshalText() ([]byte, error) { return []byte(p.FEN()), nil }

func (p *Position) parseFEN(fen string, v Variant) error {
	fail := func(field string, err error, detail string) error {
		return &FENError{FEN: fen, Field: field, Err: err, Detail: detail}
	}
	fields := strings.Fields(fen)
	if len(fields) < 4 || len(fields) > 6 {
		return fail("fen", ErrFENSyntax, "want 4 to 6 space-separated fields, got "+strconv.Itoa(len(fields)))
	}
	*p = Position{ep: NoSquare, epCandidate: NoSquare, fullmove: 1}

	// Placement.
	ranks := strings.Split(fields[0], "/")
	if len(ranks) != 8 {
		return fail("placement", ErrFENSyntax, "want 8 ranks separated by '/'")
	}
	for i, row := range ranks {
		rank, file := 7-i, 0
		for j := 0; j < len(row); j++ {
			c := row[j]
			switch {
			case c >= '1' && c <= '8':
				file += int(c - '0')
			case pieceTypeFromLetter(c) != NoPieceType:
				if file >= 8 {
					return fail("placement", ErrFENSyntax, "rank "+strconv.Itoa(rank+1)+" has more than 8 squares")
				}
				color := White
				if c >= 'a' {
					color = Black
				}
				p.putPiece(MakePiece(color, pieceTypeFromLetter(c)), NewSquare(file, rank))
				file++
			default:
				return fail("placement", ErrFENSyntax, "unexpected character "+strconv.QuoteRune(rune(c)))
			}
		}
		if file != 8 {
			return fail("placement", ErrFENSyntax, "rank "+strconv.Itoa(rank+1)+" does not have 8 squares")
		}
	}

	// Side to move.
	switch fields[1] {
	case "w":
		p.side = White
	case "b":
		p.side = Black
	default:
		return fail("turn", ErrFENSyntax, "want w or b")
	}

	// Material sanity before anything looks for kings.
	for _, c := range [2]Color{White, Black} {
		if n := p.Pieces(c, King).Count(); n != 1 {
			return fail("placement", ErrKingCount, c.String()+" has "+strconv.Itoa(n))
		}
		if p.colors[c].Count() > 16 {
			return fail("placement", ErrTooManyPieces, c.String())
		}
		if p.Pieces(c, Pawn).Count() > 8 {
			return fail("placement", ErrTooManyPawns, c.String())
		}
		p.kings[c] = p.Pieces(c, King).First()
	}
	if p.pieces[Pawn]&(Rank1|Rank8) != 0 {
		return fail("placement", ErrPawnOnBackRank, (p.pieces[Pawn] & (Rank1 | Rank8)).First().String())
	}

	// Castling rights.
	chess960, err := p.parseCastling(fields[2], v)
	if err != nil {
		return fail("castling", err, fields[2])
	}
	p.chess960 = chess960

	// Check legality of the placement with respect to the side to move.
	them := p.side ^ 1
	if p.AttackersTo(p.kings[them], p.pieces[0])&p.colors[p.side] != 0 {
		return fail("placement", ErrOpponentInCheck, them.String()+" is in check but "+p.side.String()+" is to move")
	}
	p.checkers = p.AttackersTo(p.kings[p.side], p.pieces[0]) & p.colors[them]
	if p.checkers.Count() > 2 {
		return fail("placement", ErrImpossibleCheck, "")
	}

	// En passant.
	if fields[3] != "-" {
		ep, err := ParseSquare(fields[3])
		if err != nil {
			return fail("enPassant", ErrFENSyntax, fields[3])
		}
		if !p.plausibleEnPassant(ep) {
			return fail("enPassant", ErrEnPassantSquare, fields[3])
		}
		p.epCandidate = ep
		if p.enPassantLegal(ep) {
			p.ep = ep
		}
	}

	// Counters.
	if len(fields) > 4 {
		n, err := strconv.Atoi(fields[4])
		if err != nil || n < 0 || n > maxHalfmove {
			return fail("halfmove", ErrMoveCounterSyntax, fields[4])
		}
		p.halfmove = uint32(n)
	}
	if len(fields) > 5 {
		n, err := strconv.Atoi(fields[5])
		if err != nil || n < 0 || n > maxHalfmove {
			return fail("fullmove", ErrMoveCounterSyntax, fields[5])
		}
		p.fullmove = uint32(max(n, 1))
	}
	p.hash = p.computeHash()
	return nil
}

// plausibleEnPassant reports whether ep could be the square a pawn of the
// side not to move just skipped: on the right rank, empty, with that pawn in
// front of it and its start square empty.
func (p *Position) plausibleEnPassant(ep Square) bool {
	us, them := p.side, p.side^1
	if relativeRank(us, ep) != 5 || p.pieces[0].Has(ep) {
		return false
	}
	pushed := ep ^ 8                          // where the double-stepped pawn stands
	origin := Square(2*int(ep) - int(pushed)) // the square it came from
	return p.board[pushed] == MakePiece(them, Pawn) && !p.pieces[0].Has(origin)
}

// parseCastling fills castleRooks from a KQkq, X-FEN or Shredder-FEN field
// and reports whether the rights need Chess960 conventions.
func (p *Position) parseCastling(field string, v Variant) (chess960 bool, err error) {
	if field == "-" {
		return v == VariantChess960, nil
	}
	usesFileLetters := false
	for i := 0; i < len(field); i++ {
		c := field[i]
		color := White
		if c >= 'a' {
			color = Black
		}
		king := p.kings[color]
		rank := 0
		if color == Black {
			rank = 7
		}
		if king.Rank() != rank {
			return false, ErrCastlingRights
		}
		ownRooks := p.Pieces(color, Rook) & rankBB(rank)
		var rook Square
		switch lc := c | 0x20; {
		case lc == 'k': // outermost rook on the king's h-side
			side := ownRooks & ^(SquareBB(king)<<1 - 1)
			if side == 0 {
				return false, ErrCastlingRights
			}
			rook = side.Last()
		case lc == 'q': // outermost rook on the king's a-side
			side := ownRooks & (SquareBB(king) - 1)
			if side == 0 {
				return false, ErrCastlingRights
			}
			rook = side.First()
		case lc >= 'a' && lc <= 'h':
			usesFileLetters = true
			rook = NewSquare(int(lc-'a'), rank)
			if !ownRooks.Has(rook) {
				return false, ErrCastlingRights
			}
		default:
			return false, ErrFENSyntax
		}
		if p.castleRooks.Has(rook) {
			return false, ErrFENSyntax // the same right twice
		}
		// At most one right on each side of the king.
		sameSide := SquareBB(king) - 1 // a-side squares
		if rook > king {
			sameSide = ^(SquareBB(king)<<1 - 1)
		}
		if p.castleRooks&sameSide&rankBB(rank) != 0 {
			return false, ErrCastlingRights
		}
		p.castleRooks |= SquareBB(rook)
	}

	standard := true
	for r := p.castleRooks; r != 0; {
		s := r.PopFirst()
		color := White
		if s.Rank() == 7 {
			color = Black
		}
		if p.kings[color].File() != 4 || (s.File() != 0 && s.File() != 7) {
			standard = false
		}
	}
	switch v {
	case VariantStandard:
		if !standard {
			return false, ErrChess960Castling
		}
		return false, nil
	case VariantChess960:
		return true, nil
	}
	return !standard || usesFileLetters, nil
}

// FEN returns the position in Forsyth-Edwards Notation: KQkq castling for
// standard games, Shredder-FEN (rook files, e.g. HAha) for Chess960. The
// en-passant field names a square only when a legal capture exists.
func (p *Position) FEN() string {
	var buf [96]byte
	return string(p.AppendFEN(buf[:0]))
}

// AppendFEN appends the FEN of the position to b and returns the extended
// slice. Replaying a stored game writes one FEN per move; appending into one
// buffer makes that a single allocation for the whole game.
func (p *Position) AppendFEN(b []byte) []byte {
	b = p.AppendRepetitionKey(b)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(p.halfmove), 10)
	b = append(b, ' ')
	return strconv.AppendUint(b, uint64(p.fullmove), 10)
}

// RepetitionKey returns the first four FEN fields (placement, side to move,
// castling rights and the en-passant square only when a legal en-passant
// capture exists): two positions are the same for the repetition rules
// (FIDE 9.2, seeds/000 §8.1) exactly when their keys are equal, and then
// their Hash values are equal too, so counting repetitions by Hash is the
// same rule without building the text.
func (p *Position) RepetitionKey() string {
	var buf [96]byte
	return string(p.AppendRepetitionKey(buf[:0]))
}

// fenLetters maps a Piece (type in the low three bits, colour in bit 3) to
// its FEN letter without the branches of Piece.Letter.
const fenLetters = "?PNBRQK??pnbrqk?"

// AppendRepetitionKey appends RepetitionKey to b. It writes the placement
// into a fixed scratch array walking only the occupied squares, then
// appends it at once: a replayed game writes one per move.
func (p *Position) AppendRepetitionKey(b []byte) []byte {
	var buf [72]byte // 64 squares + 7 slashes at most
	n := 0
	occupied := p.pieces[0]
	for rank := 7; rank >= 0; rank-- {
		row := uint8(occupied >> (8 * rank))
		file := 0
		for row != 0 {
			f := bits.TrailingZeros8(row)
			if f > file {
				buf[n] = byte('0' + f - file)
				n++
			}
			buf[n] = fenLetters[p.board[8*rank+f]&15]
			n++
			row &= row - 1
			file = f + 1
		}
		if file < 8 {
			buf[n] = byte('0' + 8 - file)
			n++
		}
		if rank > 0 {
			buf[n] = '/'
			n++
		}
	}
	b = append(b, buf[:n]...)
	if p.side == White {
		b = append(b, " w "...)
	} else {
		b = append(b, " b "...)
	}
	b = p.appendCastling(b)
	b = append(b, ' ')
	if p.ep == NoSquare {
		return append(b, '-')
	}
	return append(b, 'a'+byte(p.ep.File()), '1'+byte(p.ep.Rank()))
}

// CastlingString returns the castling field: KQkq style for standard games,
// Shredder-FEN file letters for Chess960, "-" when no right remains.
func (p *Position) CastlingString() string {
	var buf [8]byte
	return string(p.appendCastling(buf[:0]))
}

func (p *Position) appendCastling(b []byte) []byte {
	if p.castleRooks == 0 {
		return append(b, '-')
	}
	for _, c := range [2]Color{White, Black} {
		rooks := p.castleRooks & backRank(c)
		// Descending file order: king side first (HAha, KQ).
		for rooks != 0 {
			s := rooks.Last()
			rooks &^= SquareBB(s)
			var letter byte
			if p.chess960 {
				letter = 'A' + byte(s.File())
			} else if s > p.kings[c] {
				letter = 'K'
			} else {
				letter = 'Q'
			}
			if c == Black {
				letter += 0x20
			}
			b = append(b, letter)
		}
	}
	return b
}
