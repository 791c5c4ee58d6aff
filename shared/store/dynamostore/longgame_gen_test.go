package dynamostore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
)

// generateLongGame writes testdata/longgame.txt: two engine "players" play
// a 1,000-ply game through the real service (so every scripted action was
// accepted by the rules), with human-like think times and the other
// actions clients send. The game must still be playing at 1,000 plies, so
// the players avoid moves that would end it (mate, stalemate, a third
// repetition, the 50-move rule): past the opening they keep their pawns
// and captures for when the 50-move count needs resetting, which is how a
// real marathon endgame goes.
func generateLongGame(t testing.TB) {
	t.Helper()
	// A game can still corner itself (a bare king and a queen, no pawn
	// left, the 50-move count running out); then the next seed is tried.
	var g *generator
	seed := uint64(15) // issue 15
	for ; ; seed++ {
		if seed > 40 {
			t.Fatal("no seed from 15 to 40 played a 1,000-ply game")
		}
		g = &generator{t: t, r: newReplay(t), rng: rand.New(rand.NewPCG(seed, 2026)), eng: engine.New(engine.Options{HashMB: 16})}
		if g.play() {
			break
		}
		t.Logf("seed %d: %s", seed, g.stuck)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# A %d-ply human game for the stored-size figures (issue 15; see longgame_size_test.go).
# Written by engine self-play through the service (seed %d): each player takes the engine's
# best move at 40,000 nodes among its top lines, avoiding moves that end the game; think times
# are log-normal (median 2.5 s) under the default 10+5 clock; draw offers, take-back requests
# and disconnections happen along the way, as clients send them.
# One action per line: <seat w|b> <ms since the previous action> <action> [uci | accept | decline]
# Regenerate: go test ./shared/store/dynamostore -run TestLongGameItemSize -regenerate-longgame
`, longGamePlies, seed)
	for _, l := range g.lines {
		b.WriteString(l.String())
		b.WriteByte('\n')
	}
	if err := os.WriteFile(longGameFixture, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d actions", longGameFixture, len(g.lines))
}

type generator struct {
	t     testing.TB
	r     *replay
	rng   *rand.Rand
	eng   *engine.Engine
	lines []scriptLine
	stuck string // why the game could not go on
	// carried is the time of refused actions, added to the next line so
	// the replay's clock matches the generation's.
	carried time.Duration
}

// try sends l and keeps it if the service accepted it.
func (g *generator) try(l scriptLine) bool {
	if _, err := g.r.apply(l); err != nil {
		g.carried += l.delay
		return false
	}
	l.delay += g.carried
	g.carried = 0
	g.lines = append(g.lines, l)
	return true
}

func (g *generator) ms(lo, hi int) time.Duration {
	return time.Duration(lo+g.rng.IntN(hi-lo+1)) * time.Millisecond
}

// play plays the game to longGamePlies; false if it got stuck.
func (g *generator) play() bool {
	for len(g.r.state().Moves) < longGamePlies {
		if !g.move() {
			return false
		}
		g.episode()
	}
	return true
}

// move plays the side to move's move after a human-like think; false if
// every move would end the game.
func (g *generator) move() bool {
	st := g.r.state()
	pos := st.Position()
	mover := pos.Turn()
	m, ok := g.choose(st, pos)
	if !ok {
		g.stuck = fmt.Sprintf("ply %d: every move ends the game (%s)", len(st.Moves)+1, pos.FEN())
		return false
	}
	// Log-normal think time, median 2.5 s; never more than a sixth of what
	// is left on the clock, nor near the 30 s first-move limit.
	think := time.Duration(2500*math.Exp(0.9*g.rng.NormFloat64())) * time.Millisecond
	think = min(max(think, 300*time.Millisecond), 40*time.Second, time.Duration(st.Clock.RemainingMs[mover])*time.Millisecond/6)
	if len(st.Moves) < 2 {
		think = min(think, 15*time.Second)
	}
	if !g.try(scriptLine{seat: mover, delay: think, verb: "move", arg: pos.UCI(m)}) {
		g.t.Fatalf("ply %d: move %s refused", len(st.Moves)+1, pos.UCI(m))
	}
	return true
}

// choose picks the mover's move: usually the engine's best, sometimes its
// second or third line (players are not engines), never one that ends the
// game; past the opening, pawn moves and captures are kept for resetting
// the 50-move count, pawn moves first, so pieces stay on the board.
func (g *generator) choose(st *game.State, pos *chess.Position) (chess.Move, bool) {
	history := append(st.History(), pos.Hash())
	alive := func(m chess.Move) bool {
		child := *pos
		child.Play(m)
		seen := 0
		for _, h := range history {
			if h == child.Hash() {
				seen++
			}
		}
		return child.Status() == chess.StatusPlaying && seen < 2 && child.HalfmoveClock() < 99
	}
	capture := func(m chess.Move) bool {
		return pos.PieceAt(m.To()) != chess.NoPiece && !m.IsCastling() || m.IsEnPassant()
	}
	pawnPush := func(m chess.Move) bool { return pos.PieceAt(m.From()).Type() == chess.Pawn && !capture(m) }
	resets := func(m chess.Move) bool { return capture(m) || pos.PieceAt(m.From()).Type() == chess.Pawn }
	// want says which moves suit the game's stage.
	want := func(m chess.Move) bool { return true }
	switch {
	case pos.HalfmoveClock() >= 88:
		want = pawnPush
		if !slices.ContainsFunc(pos.LegalMoves(), func(m chess.Move) bool { return pawnPush(m) && alive(m) }) {
			want = resets
		}
	case len(st.Moves) >= 50:
		want = func(m chess.Move) bool { return !resets(m) }
	}
	res, err := g.eng.Search(context.Background(), engine.Params{Position: pos, History: st.History(), Nodes: 40_000, MultiPV: 4})
	if err != nil {
		g.t.Fatalf("ply %d: search: %v", len(st.Moves)+1, err)
	}
	var lines []chess.Move
	for _, l := range res.Lines {
		if alive(l.Move) && want(l.Move) {
			lines = append(lines, l.Move)
		}
	}
	if len(lines) > 0 {
		// The best suitable line most of the time, the next ones less often.
		i := 0
		for i < len(lines)-1 && g.rng.Float64() < 0.3 {
			i++
		}
		return lines[i], true
	}
	var fallback, any []chess.Move
	for _, m := range pos.LegalMoves() {
		if alive(m) {
			any = append(any, m)
			if want(m) {
				fallback = append(fallback, m)
			}
		}
	}
	if len(fallback) == 0 {
		fallback = any
	}
	if len(fallback) == 0 {
		return chess.NoMove, false
	}
	return fallback[g.rng.IntN(len(fallback))], true
}

// episode sometimes adds what else clients send between moves: the player
// who just moved offers a draw (declined) or asks for a take-back (mostly
// declined; accepted once per player late in the game, the default
// allowance), or cancels an offer; either seat's connection drops and
// comes back within the 60 s grace.
func (g *generator) episode() {
	st := g.r.state()
	mover := st.Position().Turn() // to move now
	last := mover.Other()         // just moved
	switch x := g.rng.Float64(); {
	case x < 1.0/40:
		if g.try(scriptLine{seat: last, delay: g.ms(300, 2000), verb: "offerDraw"}) {
			g.try(scriptLine{seat: mover, delay: g.ms(1500, 9000), verb: "respondDraw", arg: "decline"})
		}
	case x < 1.0/40+1.0/55:
		if g.try(scriptLine{seat: last, delay: g.ms(800, 4000), verb: "requestUndo"}) {
			answer := "decline"
			if len(st.Moves) > 600 && g.rng.IntN(2) == 0 {
				answer = "accept"
			}
			g.try(scriptLine{seat: mover, delay: g.ms(1000, 6000), verb: "respondUndo", arg: answer})
		}
	case x < 1.0/40+1.0/55+1.0/150:
		if g.try(scriptLine{seat: last, delay: g.ms(300, 1500), verb: "offerDraw"}) {
			g.try(scriptLine{seat: last, delay: g.ms(2000, 8000), verb: "cancelOffer"})
		}
	}
	if g.rng.Float64() < 1.0/70 {
		seat := chess.Color(g.rng.IntN(2))
		if g.try(scriptLine{seat: seat, delay: g.ms(200, 5000), verb: "disconnect"}) {
			g.try(scriptLine{seat: seat, delay: g.ms(3000, 45000), verb: "connect"})
		}
	}
}

// state is the game as stored now.
func (r *replay) state() *game.State {
	r.t.Helper()
	rec, err := r.store.Get(context.Background(), r.gameID)
	if err != nil {
		r.t.Fatal(err)
	}
	st, err := storedgame.Decode(rec.State)
	if err != nil {
		r.t.Fatal(err)
	}
	return st
}
