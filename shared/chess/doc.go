// Package chess is the rules of chess and Chess960: positions, strictly
// legal move generation, the notations (FEN, UCI, SAN, long algebraic,
// PGN) and the end-of-game conditions the rules decide alone (checkmate,
// stalemate, insufficient material). It keeps no game history and reads
// no clock: repetition, the fifty-move rule, clocks and results are the
// game reducer's (chessapi/shared/game), built on the keys and counters
// this package provides (RepetitionKey, HalfmoveClock).
//
// # Positions
//
// A *Position is read from FEN with ParseFEN (KQkq, X-FEN and
// Shredder-FEN castling fields; Chess960 when the field needs it, or by
// asking ParseFENVariant) or made with StartingPosition and Chess960Start.
// A Position is a plain value: copy it (q := *p) to try a move and keep the
// original. Invalid input is a *FENError naming the field ("placement",
// "castling", "enPassant", ...) and wrapping a sentinel such as
// ErrKingCount or ErrOpponentInCheck:
//
//	pos, err := chess.ParseFEN(text)
//	var fenErr *chess.FENError
//	if errors.As(err, &fenErr) {
//		// fenErr.Field is the field to point the user at
//	}
//
// # Moves
//
// A Move is a 16-bit value (from, to, kind, promotion piece); castling is
// stored as king-takes-own-rook so that both variants share one
// generator. LegalMoves lists the legal moves; hot code reuses a MoveList
// with GenerateMoves, or only counts them (CountMoves). A move is read from
// text by the position it is played in, and written back the same way:
//
//	m, err := pos.ParseUCI("e7e5")   // or pos.ParseSAN("e5"), pos.MoveFromSquares(chess.E7, chess.E5, chess.NoPieceType)
//	san := pos.SAN(m)                // "e5", before the move is played
//	pos.Play(m)                      // m must be legal in pos
//
// A refused move is a *MoveError saying why: ErrIllegalMove,
// ErrKingInCheck (the piece could move so, but its king would be
// attacked), ErrPromotionRequired, ErrAmbiguousMove or ErrSyntax.
//
// # The end of a game
//
// Status tells whether the side to move is checkmated or stalemated, or
// neither side can ever mate (StatusInsufficientMaterial); CannotMate asks
// it of one side (whether a flag fall loses or draws).
//
// # PGN
//
// ParsePGN reads a game (tags, a FEN start, SAN movetext; comments and
// variations skipped) into a PGNGame of Moves; PGNGame.Text writes one,
// the Seven Tag Roster first and SAN wrapped at 80 columns.
//
// The examples show each of these in a few lines; the package's
// correctness rests on perft (testdata/perft: every public suite, exact),
// random games checked against an oracle, and fuzzers of every parser.
package chess
