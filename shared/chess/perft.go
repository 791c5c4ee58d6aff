package chess

// Perft counts the leaf nodes of the legal move tree to the given depth.
// The last ply is bulk-counted: the legal moves of the frontier positions are
// counted without being generated or played (CountMoves).
func (p *Position) Perft(depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	return perft(positionStack(p, depth), depth, true)
}

// PerftFull is Perft without bulk counting: every leaf move is generated and
// played, which exercises Play as well as generation.
func (p *Position) PerftFull(depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	return perft(positionStack(p, depth), depth, false)
}

// positionStack holds one position per ply, the root first. The recursion
// plays into the next slot instead of a local copy: a local whose address
// is taken in a recursive call is moved to the heap by escape analysis,
// which would cost an allocation per node.
func positionStack(p *Position, depth int) []Position {
	stack := make([]Position, depth+1)
	stack[0] = *p
	return stack
}

func perft(stack []Position, depth int, bulk bool) uint64 {
	p := &stack[0]
	if depth == 0 {
		return 1
	}
	if bulk && depth == 1 {
		return uint64(p.CountMoves())
	}
	var l MoveList
	p.GenerateMoves(&l, GenAll)
	child := &stack[1]
	var n uint64
	for _, m := range l.Moves() {
		*child = *p
		child.Play(m)
		n += perft(stack[1:], depth-1, bulk)
	}
	return n
}

// DivideEntry is one root move and the perft count below it.
type DivideEntry struct {
	Move  Move
	Nodes uint64
}

// Divide returns the perft count below each legal root move, in generation
// order.
func (p *Position) Divide(depth int) []DivideEntry {
	var l MoveList
	p.GenerateMoves(&l, GenAll)
	out := make([]DivideEntry, 0, l.Len())
	stack := positionStack(p, depth)
	for _, m := range l.Moves() {
		stack[1] = *p
		stack[1].Play(m)
		out = append(out, DivideEntry{Move: m, Nodes: perft(stack[1:], depth-1, true)})
	}
	return out
}
