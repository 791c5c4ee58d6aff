package game

import "math/bits"

// RNG is the game's seeded random number generator (SplitMix64). Its whole
// state is one number kept in the game state, so setup replays exactly from
// the seed (seeds/000 §8.4). It is used only at setup: colours, then the
// Chess960 number. Views never show it.
type RNG struct {
	State uint64 `json:"state,string"`
}

// next returns the next 64 random bits.
func (r *RNG) next() uint64 {
	r.State += 0x9e3779b97f4a7c15
	z := r.State
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a uniform number in [0, n), n > 0, without modulo bias
// (Lemire's multiply-and-reject).
func (r *RNG) intn(n uint64) uint64 {
	hi, lo := bits.Mul64(r.next(), n)
	if lo < n {
		threshold := -n % n
		for lo < threshold {
			hi, lo = bits.Mul64(r.next(), n)
		}
	}
	return hi
}
