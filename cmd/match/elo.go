package main

import (
	"fmt"
	"math"
)

// tally counts results from the first engine's point of view.
type tally struct {
	wins, draws, losses int
}

func (t tally) games() int { return t.wins + t.draws + t.losses }

// score is the points share of the first engine, 0..1.
func (t tally) score() float64 {
	n := t.games()
	if n == 0 {
		return 0.5
	}
	return (float64(t.wins) + float64(t.draws)/2) / float64(n)
}

// eloFromScore converts a score share to an Elo difference (logistic
// model); shares of 0 and 1 are clamped so the result stays finite.
func eloFromScore(s float64) float64 {
	s = min(max(s, 1e-3), 1-1e-3)
	return -400 * math.Log10(1/s-1)
}

// elo returns the Elo difference and its 95% confidence interval, from the
// per-game score variance (trinomial: win, draw, loss).
func (t tally) elo() (diff, lo, hi float64) {
	n := float64(t.games())
	s := t.score()
	if n == 0 {
		return 0, math.Inf(-1), math.Inf(1)
	}
	variance := (float64(t.wins)*(1-s)*(1-s) + float64(t.draws)*(0.5-s)*(0.5-s) + float64(t.losses)*s*s) / n
	se := math.Sqrt(variance / n)
	return eloFromScore(s), eloFromScore(s - 1.96*se), eloFromScore(s + 1.96*se)
}

func (t tally) String() string {
	d, lo, hi := t.elo()
	return fmt.Sprintf("games %d: +%d =%d -%d, score %.1f%%, Elo %+.0f [%+.0f, %+.0f] (95%%)",
		t.games(), t.wins, t.draws, t.losses, 100*t.score(), d, lo, hi)
}
