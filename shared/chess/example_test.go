package chess_test

import (
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
