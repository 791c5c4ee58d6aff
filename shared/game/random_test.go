package game

import (
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// TestRandomGames plays random games of both variants with every option
// mix: mostly legal moves, with take-backs, draw offers, answers,
// resignations, timeouts and presence changes in between. After every
// change the invariants of FuzzApply hold and the state restores unchanged
// from what a stored form keeps of it.
//
// The default run plays 8 games (2 with -short); GAME_RANDOM_GAMES=N plays N (e.g. 3000
// for the long run documented in docs/game.md).
func TestRandomGames(t *testing.T) {
	games := 8
	if testing.Short() {
		games = 2
	}
	if env := os.Getenv("GAME_RANDOM_GAMES"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 1 {
			t.Fatalf("GAME_RANDOM_GAMES=%q is not a positive number", env)
		}
		games = n
	}
	finished := map[Reason]int{}
	for g := range games {
		rng := rand.New(rand.NewPCG(uint64(g), 99))
		script := []byte{byte(rng.IntN(256))}
		for range 200 + rng.IntN(400) {
			op := byte(rng.IntN(4)) // a legal move
			switch {
			case rng.IntN(300) == 0:
				op = byte(11 + rng.IntN(3)) // cancel/claim/resign, timeouts
			case rng.IntN(8) == 0:
				op = []byte{4, 5, 6, 7, 8, 9, 10, 14, 15}[rng.IntN(9)] // requests, answers, bad input, presence
			}
			wait := byte(rng.IntN(2))
			if rng.IntN(200) == 0 {
				wait = byte(rng.IntN(256))
			}
			script = append(script, op, byte(rng.IntN(256)), wait)
		}
		s := runScriptState(t, script)
		if s.Result != nil {
			finished[s.Result.Reason]++
		}
	}
	t.Logf("%d games; endings: %v", games, finished)
}

// runScriptState runs a FuzzApply script and returns the final state.
func runScriptState(t *testing.T, script []byte) *State {
	t.Helper()
	var last *State
	runScriptWith(t, script, func(s *State) { last = s })
	return last
}
