package chess

// Zobrist keys. They come from a fixed-seed generator so hashes are the same
// in every process and every release: stored data and tests may rely on them.
var (
	zobristPiece  [16][64]uint64 // indexed by Piece, then square
	zobristCastle [64]uint64     // per castling-rook square
	zobristEP     [8]uint64      // per en-passant file
	zobristSide   uint64         // xored in when Black is to move
)

func init() {
	// SplitMix64 with a fixed seed.
	state := uint64(0x2026_1129_c4e5_5000)
	next := func() uint64 {
		state += 0x9e3779b97f4a7c15
		z := state
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		return z ^ z>>31
	}
	for _, c := range [2]Color{White, Black} {
		for t := Pawn; t <= King; t++ {
			for s := range 64 {
				zobristPiece[MakePiece(c, t)][s] = next()
			}
		}
	}
	for s := range 64 {
		zobristCastle[s] = next()
	}
	for f := range 8 {
		zobristEP[f] = next()
	}
	zobristSide = next()
}

// computeHash returns the Zobrist key of p from scratch.
func (p *Position) computeHash() uint64 {
	var h uint64
	for s := Square(0); s < 64; s++ {
		if pc := p.board[s]; pc != NoPiece {
			h ^= zobristPiece[pc][s]
		}
	}
	for r := p.castleRooks; r != 0; {
		h ^= zobristCastle[r.PopFirst()]
	}
	if p.ep != NoSquare {
		h ^= zobristEP[p.ep.File()]
	}
	if p.side == Black {
		h ^= zobristSide
	}
	return h
}
