package chess

import "fmt"

// Color is the side a piece belongs to. The zero value is White.
type Color uint8

const (
	White Color = iota
	Black
)

// Other returns the opposite colour.
func (c Color) Other() Color { return c ^ 1 }

// String returns "white" or "black", the spelling used everywhere in the API.
func (c Color) String() string {
	if c == White {
		return "white"
	}
	return "black"
}

// MarshalText implements encoding.TextMarshaler: "white" or "black", so a
// Color is a JSON string (and a valid JSON object key).
func (c Color) MarshalText() ([]byte, error) {
	if c > Black {
		return nil, fmt.Errorf("chess: invalid colour %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler; it accepts exactly
// "white" and "black".
func (c *Color) UnmarshalText(text []byte) error {
	switch string(text) {
	case "white":
		*c = White
	case "black":
		*c = Black
	default:
		return fmt.Errorf("chess: colour %q is not \"white\" or \"black\"", text)
	}
	return nil
}

// PieceType is a kind of piece without colour. NoPieceType is the zero value.
type PieceType uint8

const (
	NoPieceType PieceType = iota
	Pawn
	Knight
	Bishop
	Rook
	Queen
	King
)

// pieceLetters indexes lower-case letters by PieceType.
const pieceLetters = " pnbrqk"

// Letter returns the lower-case letter of the piece type ('p', 'n', ... 'k'),
// or 0 for NoPieceType.
func (t PieceType) Letter() byte {
	if t == NoPieceType || t > King {
		return 0
	}
	return pieceLetters[t]
}

// String returns the English name of the piece type.
func (t PieceType) String() string {
	switch t {
	case Pawn:
		return "pawn"
	case Knight:
		return "knight"
	case Bishop:
		return "bishop"
	case Rook:
		return "rook"
	case Queen:
		return "queen"
	case King:
		return "king"
	}
	return "none"
}

// pieceTypeFromLetter maps 'p','n','b','r','q','k' (either case) to a type.
func pieceTypeFromLetter(c byte) PieceType {
	switch c | 0x20 {
	case 'p':
		return Pawn
	case 'n':
		return Knight
	case 'b':
		return Bishop
	case 'r':
		return Rook
	case 'q':
		return Queen
	case 'k':
		return King
	}
	return NoPieceType
}

// Piece is a coloured piece: type in the low 3 bits, colour in bit 3.
// NoPiece (zero) marks an empty square.
type Piece uint8

// NoPiece is the content of an empty square.
const NoPiece Piece = 0

// MakePiece combines a colour and a piece type.
func MakePiece(c Color, t PieceType) Piece { return Piece(uint8(c)<<3 | uint8(t)) }

// Type returns the piece's type.
func (p Piece) Type() PieceType { return PieceType(p & 7) }

// Color returns the piece's colour (meaningless for NoPiece).
func (p Piece) Color() Color { return Color(p >> 3) }

// Letter returns the FEN letter: upper case for White, lower case for Black.
func (p Piece) Letter() byte {
	l := p.Type().Letter()
	if l != 0 && p.Color() == White {
		l -= 0x20
	}
	return l
}

// Square is a board square, a1 = 0, b1 = 1, ..., h8 = 63.
type Square uint8

// NoSquare marks "no square" (e.g. no en-passant square).
const NoSquare Square = 64

// Named squares.
const (
	A1, B1, C1, D1, E1, F1, G1, H1 Square = 0, 1, 2, 3, 4, 5, 6, 7
	A2, B2, C2, D2, E2, F2, G2, H2 Square = 8, 9, 10, 11, 12, 13, 14, 15
	A3, B3, C3, D3, E3, F3, G3, H3 Square = 16, 17, 18, 19, 20, 21, 22, 23
	A4, B4, C4, D4, E4, F4, G4, H4 Square = 24, 25, 26, 27, 28, 29, 30, 31
	A5, B5, C5, D5, E5, F5, G5, H5 Square = 32, 33, 34, 35, 36, 37, 38, 39
	A6, B6, C6, D6, E6, F6, G6, H6 Square = 40, 41, 42, 43, 44, 45, 46, 47
	A7, B7, C7, D7, E7, F7, G7, H7 Square = 48, 49, 50, 51, 52, 53, 54, 55
	A8, B8, C8, D8, E8, F8, G8, H8 Square = 56, 57, 58, 59, 60, 61, 62, 63
)

// NewSquare returns the square on file f (0 = a) and rank r (0 = rank 1).
func NewSquare(file, rank int) Square { return Square(rank*8 + file) }

// File returns 0..7 for files a..h.
func (s Square) File() int { return int(s & 7) }

// Rank returns 0..7 for ranks 1..8.
func (s Square) Rank() int { return int(s >> 3) }

// String returns the algebraic name ("e4"), or "-" for NoSquare.
func (s Square) String() string {
	if s >= NoSquare {
		return "-"
	}
	return string([]byte{'a' + byte(s.File()), '1' + byte(s.Rank())})
}

// ParseSquare parses an algebraic square name such as "e4".
func ParseSquare(name string) (Square, error) {
	if len(name) != 2 || name[0] < 'a' || name[0] > 'h' || name[1] < '1' || name[1] > '8' {
		return NoSquare, &SquareError{Input: name}
	}
	return NewSquare(int(name[0]-'a'), int(name[1]-'1')), nil
}

// relativeRank returns the rank as seen from colour c (0 = own back rank).
func relativeRank(c Color, s Square) int {
	if c == White {
		return s.Rank()
	}
	return 7 - s.Rank()
}
