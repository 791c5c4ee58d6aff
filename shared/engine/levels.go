package engine

import (
	"errors"
	"fmt"
	"time"
)

// Level is a playing strength (SPEC §8, seeds/003). The zero value is
// LevelMax, full strength.
type Level uint8

const (
	LevelMax Level = iota
	LevelEasy
	LevelNormal
	LevelHard
)

// ErrUnknownLevel: ParseLevel was given a name that is not a level.
var ErrUnknownLevel = errors.New("engine: unknown level")

// LevelError reports a level name ParseLevel does not know.
type LevelError struct{ Input string }

func (e *LevelError) Error() string {
	return fmt.Sprintf("engine: unknown level %q (want easy, normal, hard or max)", e.Input)
}

// Unwrap lets errors.Is(err, ErrUnknownLevel) match.
func (e *LevelError) Unwrap() error { return ErrUnknownLevel }

// ParseLevel reads "easy", "normal", "hard" or "max".
func ParseLevel(s string) (Level, error) {
	for l, set := range levelTable {
		if set.name == s {
			return Level(l), nil
		}
	}
	return LevelMax, &LevelError{Input: s}
}

// String returns the level's name as ParseLevel reads it.
func (l Level) String() string { return l.settings().name }

// Label returns the rating the level is labelled with (seeds/003): 900,
// 1300, 1600, or 0 for max, which has no label.
func (l Level) Label() int { return l.settings().label }

// ThinkTime is the level's time per move (seeds/003: about 0.2, 0.9 and
// 2.2 s). A weakened level never thinks longer, whatever it is given, and
// stops earlier when it reaches its depth cap. For LevelMax it is
// DefaultMoveTime, used only when a search is given no limit at all.
func (l Level) ThinkTime() time.Duration { return l.settings().thinkTime }

// Weakened reports whether the level plays below full strength.
func (l Level) Weakened() bool { return l != LevelMax }

// Request limits of POST /v1/ai/move (SPEC §5).
const (
	// MinMoveTime is the shortest accepted movetime: shorter requests are
	// raised to it.
	MinMoveTime = 10 * time.Millisecond
	// MaxMoveTime is the longest accepted movetime (movetimeMs ≤ 10000).
	MaxMoveTime = 10 * time.Second
	// DefaultMoveTime is the think time of LevelMax when a request names
	// neither a movetime nor a depth.
	DefaultMoveTime = time.Second
	// MaxDepth is the deepest nominal depth a request may ask for.
	MaxDepth = 64
)

// ClampMoveTime returns d limited to MinMoveTime..MaxMoveTime.
func ClampMoveTime(d time.Duration) time.Duration {
	return min(max(d, MinMoveTime), MaxMoveTime)
}

// ClampDepth returns d limited to 1..MaxDepth.
func ClampDepth(d int) int { return min(max(d, 1), MaxDepth) }

// levelSettings are the knobs that make a level weaker than full strength.
type levelSettings struct {
	name      string
	label     int
	thinkTime time.Duration
	// maxDepth caps the nominal depth of the weakened search (0 = none).
	maxDepth int
	// evalNoise is the amplitude in centipawns of a pseudo-random offset
	// added to every static evaluation (keyed by position and seed, so a
	// position keeps its error within a search).
	evalNoise int32
	// pickMargin: the root scores every move exactly and plays a random one
	// among those within this many centipawns of the best (0 = the best).
	pickMargin int32
	// mateProbeDepth and mateProbeNodes limit the full-strength search run
	// first so a weakened level still plays any mate it finds (0 = no probe).
	mateProbeDepth int
	mateProbeNodes uint64
	// classical makes the level evaluate with eval.go even on an engine
	// with Evaluation EvalNetwork, the default (the whole search, probe
	// included). Easy keeps it: it was calibrated against Stockfish on the
	// classical evaluation. Normal and hard follow the engine's evaluation,
	// like max: they were recalibrated on the network (docs/engine.md,
	// "Strength"; 64 games each against Stockfish's UCI_Elo).
	classical bool
}

// levelTable is indexed by Level. The numbers were set by matches against
// Stockfish and between the levels (docs/engine.md).
var levelTable = [...]levelSettings{
	LevelMax:    {name: "max", thinkTime: DefaultMoveTime},
	LevelEasy:   {name: "easy", label: 900, thinkTime: 200 * time.Millisecond, maxDepth: 1, evalNoise: 88, pickMargin: 112, mateProbeDepth: 7, mateProbeNodes: 30_000, classical: true},
	LevelNormal: {name: "normal", label: 1300, thinkTime: 900 * time.Millisecond, maxDepth: 3, evalNoise: 80, pickMargin: 80, mateProbeDepth: 9, mateProbeNodes: 100_000},
	LevelHard:   {name: "hard", label: 1600, thinkTime: 2200 * time.Millisecond, maxDepth: 4, evalNoise: 80, pickMargin: 70, mateProbeDepth: 11, mateProbeNodes: 300_000},
}

func (l Level) settings() *levelSettings {
	if int(l) >= len(levelTable) {
		return &levelTable[LevelMax]
	}
	return &levelTable[l]
}
