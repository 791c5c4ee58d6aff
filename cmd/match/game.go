package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"chessapi/shared/chess"
)

// timeControl is base time plus increment per move (Fischer), or, with
// nodes set, a fixed node budget per move and no clock (the result then
// does not depend on the machine's load).
type timeControl struct {
	base, inc time.Duration
	nodes     uint64
}

// nodesAnswerTimeout bounds the wait for a move searched by nodes.
const nodesAnswerTimeout = time.Minute

// adjudication settings.
type adjudication struct {
	// timeMargin is tolerated beyond a player's clock before a time loss
	// (process and pipe latency of this machine).
	timeMargin time.Duration
	// resignScore, if > 0: a game is scored as won when both engines agree
	// for resignMoves consecutive moves each that one side is at least this
	// many centipawns ahead.
	resignScore int
	resignMoves int
	// maxPlies ends a game as a draw (0 = never).
	maxPlies int
}

// outcome of a game from White's point of view.
type outcome int

const (
	whiteWins outcome = iota
	blackWins
	draw
)

func (o outcome) pgn() string {
	switch o {
	case whiteWins:
		return "1-0"
	case blackWins:
		return "0-1"
	}
	return "1/2-1/2"
}

type gameRecord struct {
	white, black string
	opening      opening
	moves        []string // UCI, after the opening
	sans         []string
	result       outcome
	reason       string
	// stats are each side's moves (index: chess.White, chess.Black).
	stats [2][]moveStat
	// restart: an engine misbehaved (no answer, exited) and must be
	// replaced before the next game.
	restart bool
}

// playGame plays one game from op between white and black; tc[0] is
// White's time control, tc[1] Black's.
func playGame(white, black *uciEngine, op opening, tc [2]timeControl, adj adjudication) (gameRecord, error) {
	rec := gameRecord{white: white.spec.name, black: black.spec.name, opening: op}
	pos, err := chess.ParseFEN(op.fen)
	if err != nil {
		return rec, fmt.Errorf("opening %q: %w", op.name, err)
	}
	counts := map[string]int{pos.RepetitionKey(): 1}
	for _, u := range op.moves {
		m, err := pos.ParseUCI(u)
		if err != nil {
			return rec, fmt.Errorf("opening %q: %w", op.name, err)
		}
		pos.Play(m)
		counts[pos.RepetitionKey()]++
	}
	played := append([]string(nil), op.moves...)
	engines := [2]*uciEngine{white, black}
	for _, e := range engines {
		if err := e.send("ucinewgame"); err != nil {
			return rec, err
		}
		if err := e.ready(); err != nil {
			return rec, err
		}
	}
	clock := [2]time.Duration{tc[0].base, tc[1].base}
	var winningStreak [2]int // consecutive moves each side's engine claimed a big edge
	var losingStreak [2]int

	finish := func(o outcome, reason string) (gameRecord, error) {
		rec.result, rec.reason = o, reason
		return rec, nil
	}
	lose := func(c chess.Color, reason string) (gameRecord, error) {
		if c == chess.White {
			return finish(blackWins, reason)
		}
		return finish(whiteWins, reason)
	}

	for ply := 0; ; ply++ {
		switch pos.Status() {
		case chess.StatusCheckmate:
			return lose(pos.Turn(), "checkmate")
		case chess.StatusStalemate:
			return finish(draw, "stalemate")
		case chess.StatusInsufficientMaterial:
			return finish(draw, "insufficient material")
		}
		if pos.HalfmoveClock() >= 100 {
			return finish(draw, "50-move rule")
		}
		if counts[pos.RepetitionKey()] >= 3 {
			return finish(draw, "threefold repetition")
		}
		if adj.maxPlies > 0 && ply >= adj.maxPlies {
			return finish(draw, "adjudicated: move limit")
		}

		side := pos.Turn()
		e := engines[side]
		posCmd := positionCommand(op.fen, played)
		goCmd := fmt.Sprintf("go wtime %d btime %d winc %d binc %d",
			clock[chess.White].Milliseconds(), clock[chess.Black].Milliseconds(), tc[0].inc.Milliseconds(), tc[1].inc.Milliseconds())
		wait := clock[side] + adj.timeMargin + time.Second
		if tc[side].nodes > 0 {
			goCmd, wait = fmt.Sprintf("go nodes %d", tc[side].nodes), nodesAnswerTimeout
		}
		res, err := e.think(posCmd, goCmd, wait)
		if err != nil {
			// The process may still answer later or be gone: replace it.
			rec.restart = true
			if errors.Is(err, errTimeout) {
				return lose(side, "time forfeit (no answer)")
			}
			return lose(side, err.Error())
		}
		if tc[side].nodes == 0 {
			clock[side] -= res.elapsed
		}
		if clock[side] < -adj.timeMargin {
			return lose(side, fmt.Sprintf("time forfeit (%v over)", -clock[side]))
		}
		clock[side] = max(clock[side], 0) + tc[side].inc
		left := clock[side]
		if tc[side].nodes > 0 {
			left = -1 // no clock
		}
		rec.stats[side] = append(rec.stats[side], moveStat{elapsed: res.elapsed, nodes: res.nodes, depth: res.depth, clockLeft: left})
		m, err := pos.ParseUCI(res.move)
		if err != nil {
			return lose(side, fmt.Sprintf("illegal move %q: %v", res.move, err))
		}
		rec.sans = append(rec.sans, pos.SAN(m))
		rec.moves = append(rec.moves, res.move)
		played = append(played, res.move)
		pos.Play(m)
		counts[pos.RepetitionKey()]++

		if adj.resignScore > 0 && res.hasScore {
			if res.score >= adj.resignScore {
				winningStreak[side]++
			} else {
				winningStreak[side] = 0
			}
			if res.score <= -adj.resignScore {
				losingStreak[side]++
			} else {
				losingStreak[side] = 0
			}
			other := side.Other()
			if winningStreak[side] >= adj.resignMoves && losingStreak[other] >= adj.resignMoves {
				return lose(other, "adjudicated: resign score")
			}
			if losingStreak[side] >= adj.resignMoves && winningStreak[other] >= adj.resignMoves {
				return lose(side, "adjudicated: resign score")
			}
		}
	}
}

// pgn renders the game as PGN.
func (g *gameRecord) pgn(round int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "[Event \"cmd/match\"]\n[Round \"%d\"]\n[White \"%s\"]\n[Black \"%s\"]\n[Result \"%s\"]\n[FEN \"%s\"]\n[SetUp \"1\"]\n[Termination \"%s\"]\n\n",
		round, g.white, g.black, g.result.pgn(), g.opening.fen, g.reason)
	pos, err := chess.ParseFEN(g.opening.fen)
	if err == nil {
		all := append(append([]string(nil), g.opening.moves...), g.moves...)
		for i, u := range all {
			m, err := pos.ParseUCI(u)
			if err != nil {
				break
			}
			if pos.Turn() == chess.White {
				fmt.Fprintf(&b, "%d. ", pos.FullmoveNumber())
			} else if i == 0 {
				fmt.Fprintf(&b, "%d... ", pos.FullmoveNumber())
			}
			b.WriteString(pos.SAN(m) + " ")
			pos.Play(m)
		}
	}
	b.WriteString(g.result.pgn() + "\n\n")
	return b.String()
}
