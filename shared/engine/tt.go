package engine

import "chessapi/shared/chess"

// Transposition table.
//
// Layout: a power-of-two array of buckets; a bucket is four 16-byte entries,
// 64 bytes, one cache line, so a probe touches one line. The bucket index is
// the low bits of the position key; every entry keeps the full 64-bit key,
// so a false hit needs a full 64-bit collision.
//
//	entry (16 bytes)
//	  key   uint64  Zobrist key (xor the level's salt, see searcher.salt)
//	  move  uint16  best or refutation move (chess.Move), NoMove if none
//	  score int16   search score, mate scores relative to this node (see toTT)
//	  eval  int16   static evaluation, noEval if none (in check)
//	  depth int8    draft of the search that produced the score
//	  flags uint8   bound (low 2 bits) | generation << 2
//
// Replacement: an entry with the same key is overwritten unless the old one
// is deeper and still of this search (exact bounds always win); otherwise
// the entry with the smallest depth − 4·age is replaced, where age counts
// searches since the entry was written (generation mod 64), so stale deep
// entries eventually give way.
type transpositionTable struct {
	buckets    []ttBucket
	mask       uint64
	generation uint8
}

type ttEntry struct {
	key   uint64
	move  chess.Move
	score int16
	eval  int16
	depth int8
	flags uint8
}

const ttBucketEntries = 4

type ttBucket [ttBucketEntries]ttEntry

type bound uint8

const (
	boundNone  bound = 0
	boundUpper bound = 1 // failed low: true score <= score
	boundLower bound = 2 // failed high: true score >= score
	boundExact bound = boundUpper | boundLower
)

const noEval = -32768

func (e *ttEntry) bound() bound { return bound(e.flags & 3) }
func (e *ttEntry) age(gen uint8) int {
	return int((gen - e.flags>>2) & 63)
}

func newTranspositionTable(mb int) *transpositionTable {
	n := uint64(mb) << 20 / 64
	size := uint64(1)
	for size*2 <= n {
		size *= 2
	}
	return &transpositionTable{buckets: make([]ttBucket, size), mask: size - 1}
}

func (t *transpositionTable) clear() {
	clear(t.buckets)
	t.generation = 0
}

// newSearch ages every entry by one generation.
func (t *transpositionTable) newSearch() { t.generation = (t.generation + 1) & 63 }

// probe returns the entry for key.
func (t *transpositionTable) probe(key uint64) (ttEntry, bool) {
	b := &t.buckets[key&t.mask]
	for i := range b {
		if b[i].key == key && b[i].flags != 0 {
			return b[i], true
		}
	}
	return ttEntry{}, false
}

// store records a search result; score must already be converted by toTT.
func (t *transpositionTable) store(key uint64, move chess.Move, score, eval int32, depth int, bd bound) {
	b := &t.buckets[key&t.mask]
	slot := &b[0]
	worst := 1 << 30
	for i := range b {
		e := &b[i]
		if e.key == key || e.flags == 0 {
			slot = e
			break
		}
		if v := int(e.depth) - 4*e.age(t.generation); v < worst {
			worst, slot = v, e
		}
	}
	if slot.key == key && slot.flags != 0 {
		if move == chess.NoMove {
			move = slot.move // keep the old best move for ordering
		}
		if bd != boundExact && int(slot.depth) > depth+2 && slot.age(t.generation) == 0 {
			return
		}
	}
	*slot = ttEntry{
		key:   key,
		move:  move,
		score: int16(score),
		eval:  int16(eval),
		depth: int8(depth),
		flags: uint8(bd) | t.generation<<2,
	}
}

// hashFull returns the per-mille of the first 1000 entries written in this
// search (UCI hashfull).
func (t *transpositionTable) hashFull() int {
	n, used := 0, 0
	for i := 0; i < len(t.buckets) && n < 1000; i++ {
		for j := range t.buckets[i] {
			e := &t.buckets[i][j]
			if e.flags != 0 && e.age(t.generation) == 0 {
				used++
			}
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return used * 1000 / n
}

// toTT converts a score for storage: mate scores count plies from this node
// instead of from the root, so they stay right when the position is reached
// at another ply.
func toTT(score int32, ply int) int32 {
	switch {
	case score >= mateBound:
		return score + int32(ply)
	case score <= -mateBound:
		return score - int32(ply)
	}
	return score
}

// fromTT undoes toTT for a node at ply.
func fromTT(score int32, ply int) int32 {
	switch {
	case score >= mateBound:
		return score - int32(ply)
	case score <= -mateBound:
		return score + int32(ply)
	}
	return score
}
