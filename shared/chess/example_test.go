package chess_test

import (
	"errors"
	"fmt"

	"chessapi/shared/chess"
)

func Example() {
	pos := chess.StartingPosition()
	for _, s := range []string{"e4", "e5", "Nf3"} {
		m, err := pos.ParseSAN(s)
		if err != nil {
			fmt.Println(err)
			return
		}
		pos.Play(m)
	}
	fmt.Println(pos.FEN())
	fmt.Println(pos.Status(), pos.CountMoves())
	// Output:
	// rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2
	// playing 29
}

func ExamplePosition_MoveFromSquares() {
	pos, _ := chess.ParseFEN("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1")
	_, err := pos.MoveFromSquares(chess.B7, chess.B8, chess.NoPieceType)
	fmt.Println(err)
	m, _ := pos.MoveFromSquares(chess.B7, chess.B8, chess.Queen)
	fmt.Println(pos.UCI(m), pos.SAN(m))
	// Output:
	// chess: move "b7b8": promotion piece required
	// b7b8q b8=Q+
}

func ExampleChess960Start() {
	pos, _ := chess.Chess960Start(0)
	fmt.Println(pos.FEN())
	_, err := pos.CastlingMove(chess.KingSide)
	fmt.Println(err)
	// Output:
	// bbqnnrkr/pppppppp/8/8/8/8/PPPPPPPP/BBQNNRKR w HFhf - 0 1
	// chess: move "O-O": illegal move
}

func ExampleParsePGN() {
	g, err := chess.ParsePGN(`[White "Morphy"] 1. e4 e5 2. Nf3 d6 {Philidor} 3. d4 1-0`)
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := g.Tag("White")
	fmt.Println(w, len(g.Moves), g.Result)
	// Output:
	// Morphy 5 1-0
}

// A position from FEN, its legal moves, one played by UCI and one by SAN,
// and the status once the game is over.
func Example_rules() {
	pos, err := chess.ParseFEN("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(pos.LegalMoves()), "legal moves, white to move")

	m, err := pos.ParseUCI("d1d8")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(pos.SAN(m))
	pos.Play(m)
	fmt.Println(pos.Status(), pos.FEN())

	// No legal move at all: the side to move is mated, and any move text is
	// refused with a reason.
	_, err = pos.ParseSAN("Kf8")
	fmt.Println(errors.Is(err, chess.ErrKingInCheck), err)
	// Output:
	// 20 legal moves, white to move
	// Rd8#
	// checkmate 3R2k1/5ppp/8/8/8/8/5PPP/6K1 b - - 1 1
	// true chess: move "Kf8": move would leave the king in check
}

// A FEN that cannot be a position says which field is wrong.
func ExampleParseFEN() {
	_, err := chess.ParseFEN("8/8/8/8/8/8/8/4K3 w - - 0 1")
	var fenErr *chess.FENError
	fmt.Println(errors.As(err, &fenErr), errors.Is(err, chess.ErrKingCount))
	fmt.Println(err)
	// Output:
	// true true
	// chess: fen placement: each side needs exactly one king (black has 0)
}

// A game written as PGN from a start position and the moves played.
func ExamplePGNGame_Text() {
	pos := chess.StartingPosition()
	start := *pos
	var moves []chess.Move
	for _, s := range []string{"f3", "e5", "g4", "Qh4#"} {
		m, err := pos.ParseSAN(s)
		if err != nil {
			fmt.Println(err)
			return
		}
		moves = append(moves, m)
		pos.Play(m)
	}
	g := chess.PGNGame{
		Tags:   []chess.PGNTag{{Name: "White", Value: "Fool"}, {Name: "Black", Value: "Anyone"}},
		Start:  &start,
		Moves:  moves,
		Result: "0-1",
	}
	text, err := g.Text()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(text)
	fmt.Println(pos.Status())
	// Output:
	// [Event "?"]
	// [Site "?"]
	// [Date "????.??.??"]
	// [Round "?"]
	// [White "Fool"]
	// [Black "Anyone"]
	// [Result "0-1"]
	//
	// 1. f3 e5 2. g4 Qh4# 0-1
	// checkmate
}
