package chess

import (
	"errors"
	"strconv"
)

// Move errors. They distinguish why a requested move was refused, so the
// layers above can answer precisely (the HTTP layer maps each to its code).
var (
	// ErrIllegalMove: no piece of the side to move can move so.
	ErrIllegalMove = errors.New("chess: illegal move")
	// ErrKingInCheck: the piece could move so, but it would leave (or put)
	// its own king under attack.
	ErrKingInCheck = errors.New("chess: move would leave the king in check")
	// ErrPromotionRequired: a pawn reaches the last rank and no piece was named.
	ErrPromotionRequired = errors.New("chess: promotion piece required")
	// ErrAmbiguousMove: SAN that fits more than one legal move.
	ErrAmbiguousMove = errors.New("chess: ambiguous move")
	// ErrSyntax: the move text is not UCI, SAN or long algebraic at all.
	ErrSyntax = errors.New("chess: malformed move")
)

// Position validation errors, wrapped in a *FENError naming the FEN field.
var (
	ErrFENSyntax         = errors.New("malformed field")
	ErrKingCount         = errors.New("each side needs exactly one king")
	ErrPawnOnBackRank    = errors.New("pawns cannot stand on rank 1 or 8")
	ErrTooManyPieces     = errors.New("more than 16 pieces of one colour")
	ErrTooManyPawns      = errors.New("more than 8 pawns of one colour")
	ErrOpponentInCheck   = errors.New("the side not to move is in check")
	ErrImpossibleCheck   = errors.New("more than two pieces give check")
	ErrCastlingRights    = errors.New("castling right without king and rook in place")
	ErrEnPassantSquare   = errors.New("impossible en-passant square")
	ErrChess960Castling  = errors.New("castling rights only possible in chess960")
	ErrMoveCounterSyntax = errors.New("move counter is not a non-negative number")
)

// SquareError reports a square name that is not a1..h8.
type SquareError struct{ Input string }

func (e *SquareError) Error() string {
	return "chess: invalid square " + strconv.Quote(e.Input)
}

// FENError reports why a FEN string was rejected. Field is one of
// "placement", "turn", "castling", "enPassant", "halfmove", "fullmove" or
// "fen" (the string as a whole); Err is one of the Err* values above.
type FENError struct {
	FEN    string
	Field  string
	Err    error
	Detail string // optional specifics, e.g. the offending character
}

func (e *FENError) Error() string {
	msg := "chess: fen " + e.Field + ": " + e.Err.Error()
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

func (e *FENError) Unwrap() error { return e.Err }

// MoveError reports a move that could not be read or played. Err is one of
// ErrIllegalMove, ErrKingInCheck, ErrPromotionRequired, ErrAmbiguousMove,
// ErrSyntax or a *SquareError.
type MoveError struct {
	Input string
	Err   error
}

func (e *MoveError) Error() string {
	return "chess: move " + strconv.Quote(e.Input) + ": " + trimPrefix(e.Err.Error())
}

func (e *MoveError) Unwrap() error { return e.Err }

func trimPrefix(s string) string {
	const p = "chess: "
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
