package chess

// Perft counts the leaf nodes of the legal move tree to the given depth.
// The last ply is bulk-counted: the legal moves of the frontier positions are
// counted without being generated or played (CountMoves).
func (p *Position) Perft(depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	if depth == 1 {
		return uint64(p.CountMoves())
	}
	var l MoveList
	p.GenerateMoves(&l, GenAll)
	var n uint64
	for _, m := range l.Moves() {
		child := *p
		child.Play(m)
		n += child.Perft(depth - 1)
	}
	return n
}

// PerftFull is Perft without bulk counting: every leaf move is generated and
// played, which exercises Play as well as generation.
func (p *Position) PerftFull(depth int) uint64 {
	if depth <= 0 {
		return 1
	}
	var l MoveList
	p.GenerateMoves(&l, GenAll)
	var n uint64
	for _, m := range l.Moves() {
		child := *p
		child.Play(m)
		n += child.PerftFull(depth - 1)
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
	for _, m := range l.Moves() {
		child := *p
		child.Play(m)
		out = append(out, DivideEntry{Move: m, Nodes: child.Perft(depth - 1)})
	}
	return out
}
