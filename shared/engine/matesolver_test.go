package engine

import "chessapi/shared/chess"

// mateIn reports by brute force whether the side to move can force mate in
// at most n moves. It shares no code with the engine's search, so it can
// check the engine's mate claims and the mate fixtures.
func mateIn(pos *chess.Position, n int) bool {
	if n <= 0 {
		return false
	}
	var list chess.MoveList
	pos.GenerateMoves(&list, chess.GenAll)
	// Checks first: most forced mates start with one.
	moves := append([]chess.Move(nil), list.Moves()...)
	for pass := 0; pass < 2; pass++ {
		for _, m := range moves {
			child := *pos
			child.Play(m)
			if child.InCheck() != (pass == 0) {
				continue
			}
			if allRepliesMated(&child, n-1) {
				return true
			}
		}
	}
	return false
}

// allRepliesMated reports whether the side to move is mated now or after
// every reply within n more moves of the other side.
func allRepliesMated(pos *chess.Position, n int) bool {
	var list chess.MoveList
	pos.GenerateMoves(&list, chess.GenAll)
	if list.Len() == 0 {
		return pos.InCheck()
	}
	if n == 0 {
		return false
	}
	for _, m := range list.Moves() {
		child := *pos
		child.Play(m)
		if !mateIn(&child, n) {
			return false
		}
	}
	return true
}
