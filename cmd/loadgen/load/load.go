// Package load plays many human-vs-human games at once against a running
// chess API, the way apps do, and measures what the players feel: how long
// a move request takes, and how long after a move the opponent learns of it
// (delivery). It is the engine of cmd/loadgen and of the delivery benchmark
// in cmd/local, so both measure the same thing.
//
// How the opponent learns of a move is the mode:
//
//   - fetch: right after every move the opponent reads the view
//     (GET /v1/games/{id}). Nothing waits; the learning is as fast as two
//     sequential requests. This is what cmd/loadgen always did.
//   - poll: every seat that waits for the opponent holds a long poll
//     (GET /v1/games/{id}?afterVersion=N) and moves when it returns with
//     the opponent's move — the way a simple app learns of a move.
//   - stream: both seats hold one WebSocket connection each to /v1/stream,
//     subscribed to their game; a seat moves when the change of the
//     opponent's move arrives on its stream. Nothing polls.
//
// Several modes run side by side in one run (Config.Modes), each with its
// own Config.Games games, so that a comparison shares the machine's noise.
//
// Clocks. Every duration is taken in this process with time.Now, whose
// monotonic reading Go uses for differences: "sent" is just before the
// mover's request is written, "answered" when its answer has been read,
// "notified" when the opponent's long poll answer or stream message has
// been read (before it is decoded). The server's commit time is not in the
// data; the nearest is the move's own stamp (the "at" of its moved event
// and of its entry in the view's moves), the server's wall clock in Unix
// milliseconds when it applied the move, before the store's write (and
// fsync). "stamp → notified" compares it with this process's wall clock at
// notification: the same clock on one machine, but millisecond resolution
// (±1 ms) and not monotonic. The commit lies between sent and answered, so
// "sent → notified" bounds delivery from above and "answered → notified"
// from below (it is negative when the opponent heard before the mover).
package load

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is how the opponent learns of a move.
type Mode string

// The modes (see the package comment).
const (
	ModeFetch  Mode = "fetch"
	ModePoll   Mode = "poll"
	ModeStream Mode = "stream"
)

// ParseModes reads a -mode value: one mode, "both" (poll and stream side by
// side), or a comma-separated list of modes.
func ParseModes(s string) ([]Mode, error) {
	if s == "both" {
		return []Mode{ModePoll, ModeStream}, nil
	}
	var out []Mode
	for part := range strings.SplitSeq(s, ",") {
		m := Mode(strings.TrimSpace(part))
		switch m {
		case ModeFetch, ModePoll, ModeStream:
		default:
			return nil, fmt.Errorf("-mode: %q is not one of fetch, poll, stream, both (or a comma-separated list of the first three)", part)
		}
		if slices.Contains(out, m) {
			return nil, fmt.Errorf("-mode: %q named twice", m)
		}
		out = append(out, m)
	}
	return out, nil
}

// Config is one run.
type Config struct {
	// BaseURL is the server, e.g. http://127.0.0.1:3000.
	BaseURL string
	// Modes run side by side, each with Games games of its own.
	Modes []Mode
	// Games is how many games of each mode are played at once; a finished
	// game is replaced by a new one.
	Games int
	// Duration ends the run (0: only MaxMoves ends it).
	Duration time.Duration
	// MaxMoves ends the run after this many moves in all (0: no limit).
	// Every game then stops at its next turn, after the delivery of the
	// last move was seen, so each counted move has its delivery measured.
	MaxMoves int
	// Think is the pause before each move, spread uniformly over ±50 % so
	// that games do not move in lockstep (0: move as soon as it is one's
	// turn, a closed loop at the server's saturation).
	Think time.Duration
	// StallTimeout fails a game whose seat waits this long for the
	// opponent's move (default 30 s): a lost delivery shows up as an error
	// instead of a silently stuck game.
	StallTimeout time.Duration
	// Seed makes the random moves repeatable per game slot.
	Seed uint64
	// HTTPClient sends the requests (default: keep-alive pool sized for
	// the run, 30 s timeout, which outlasts the server's 20 s long poll).
	HTTPClient *http.Client
	// NoGzip refuses gzip-encoded answers (the default client accepts
	// them, as the HTTP stacks of phones do); it applies to the default
	// client only.
	NoGzip bool
	// AnswersWithoutMoves sends the moves with ?moves=false: the mover's
	// answer leaves the move list out, as a client that follows the game
	// by deltas (and so holds the list) would ask.
	AnswersWithoutMoves bool
}

func (c *Config) check() error {
	switch {
	case c.BaseURL == "":
		return errors.New("-url: empty")
	case !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://"):
		return fmt.Errorf("-url: %q does not start with http:// or https://", c.BaseURL)
	case len(c.Modes) == 0:
		return errors.New("-mode: no mode")
	case c.Games < 1:
		return fmt.Errorf("-games: %d; at least 1", c.Games)
	case c.Duration < 0:
		return fmt.Errorf("-duration: %v is negative", c.Duration)
	case c.MaxMoves < 0:
		return fmt.Errorf("-moves: %d is negative", c.MaxMoves)
	case c.Duration == 0 && c.MaxMoves == 0:
		return errors.New("-duration and -moves: both 0, the run would never end")
	case c.Think < 0:
		return fmt.Errorf("-think: %v is negative", c.Think)
	case c.StallTimeout < 0:
		return fmt.Errorf("stall timeout %v is negative", c.StallTimeout)
	}
	return nil
}

// Result is one mode's part of a run.
type Result struct {
	Mode  Mode
	Games int
	// Moves is how many moves were answered 200.
	Moves       int
	Elapsed     time.Duration
	MovesPerSec float64
	// Move is request sent → answer read, for the mover.
	Move Summary
	// SentToNotified, AnswerToNotified and StampToNotified are the
	// delivery of each move to the opponent (see the package comment).
	SentToNotified   Summary
	AnswerToNotified Summary
	StampToNotified  Summary
	// Undelivered counts moves whose delivery was not seen: moves still in
	// flight when the run's time ran out (at most one per game), or lost.
	Undelivered int
	// Finished counts games played to their end.
	Finished int
	// Errors counts failures by kind ("move 409 not_your_turn", "stream
	// stall", ...); a failed game is abandoned and replaced.
	Errors map[string]int
}

// ErrorCount is the number of errors of all kinds.
func (r Result) ErrorCount() int {
	n := 0
	for _, c := range r.Errors {
		n += c
	}
	return n
}

// Run plays cfg's games until its Duration or MaxMoves is reached, or ctx
// ends, and returns one Result per mode, in cfg.Modes order. It fails only
// when it cannot start (bad configuration, server unreachable); errors
// during the run are counted in the results.
func Run(ctx context.Context, cfg Config) ([]Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.StallTimeout == 0 {
		cfg.StallTimeout = 30 * time.Second
	}
	client := cfg.HTTPClient
	if client == nil {
		client = newHTTPClient(cfg.Games * len(cfg.Modes) * 2)
		client.Transport.(*http.Transport).DisableCompression = cfg.NoGzip
	}
	h := &httpAPI{base: strings.TrimRight(cfg.BaseURL, "/"), client: client, answersWithoutMoves: cfg.AnswersWithoutMoves}
	if err := h.health(ctx); err != nil {
		return nil, fmt.Errorf("server not reachable at %s: %w", cfg.BaseURL, err)
	}
	if cfg.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
	}
	moves := &budget{limit: int64(cfg.MaxMoves)}
	pops := make([]*population, len(cfg.Modes))
	start := time.Now()
	var wg sync.WaitGroup
	for i, mode := range cfg.Modes {
		p := &population{mode: mode, cfg: &cfg, api: h, budget: moves, errors: map[string]int{}}
		pops[i] = p
		for slot := range cfg.Games {
			wg.Go(func() { p.slot(ctx, uint64(i)<<32|uint64(slot)) })
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	out := make([]Result, len(pops))
	for i, p := range pops {
		out[i] = p.result(elapsed)
	}
	return out, nil
}

func newHTTPClient(conns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = conns + 16
	t.MaxIdleConnsPerHost = conns + 16
	return &http.Client{Transport: t, Timeout: 30 * time.Second}
}

// budget hands out at most limit moves (none when limit is 0: unlimited).
type budget struct {
	limit int64
	used  atomic.Int64
}

func (b *budget) take() bool {
	return b.limit <= 0 || b.used.Add(1) <= b.limit
}

func (b *budget) exhausted() bool {
	return b.limit > 0 && b.used.Load() >= b.limit
}

// population is the games of one mode.
type population struct {
	mode   Mode
	cfg    *Config
	api    *httpAPI
	budget *budget

	mu                                                sync.Mutex
	moves                                             []time.Duration
	sentToNotified, answerToNotified, stampToNotified []time.Duration
	undelivered, finished                             int
	errors                                            map[string]int
}

// slot plays games one after the other until the run ends.
func (p *population) slot(ctx context.Context, id uint64) {
	for n := uint64(0); ctx.Err() == nil && !p.budget.exhausted(); n++ {
		g := &gameRun{pop: p, seed: [2]uint64{p.cfg.Seed ^ id, n}}
		if err := g.play(ctx); err != nil && ctx.Err() == nil {
			p.fail(err)
			// A server that fails everything is not hammered in a loop.
			select {
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	}
}

func (p *population) fail(err error) {
	key := err.Error()
	var re *requestError
	if errors.As(err, &re) {
		key = re.key()
	}
	p.mu.Lock()
	p.errors[key]++
	p.mu.Unlock()
}

func (p *population) moved(d time.Duration) {
	p.mu.Lock()
	p.moves = append(p.moves, d)
	p.mu.Unlock()
}

func (p *population) delivered(d delivery) {
	p.mu.Lock()
	p.sentToNotified = append(p.sentToNotified, d.notified.Sub(d.sent))
	p.answerToNotified = append(p.answerToNotified, d.notified.Sub(d.answered))
	p.stampToNotified = append(p.stampToNotified, time.Duration(d.notified.UnixMilli()-d.stampMs)*time.Millisecond)
	p.mu.Unlock()
}

func (p *population) gameOver(undelivered int, finished bool) {
	p.mu.Lock()
	p.undelivered += undelivered
	if finished {
		p.finished++
	}
	p.mu.Unlock()
}

func (p *population) result(elapsed time.Duration) Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Result{
		Mode: p.mode, Games: p.cfg.Games, Moves: len(p.moves), Elapsed: elapsed,
		MovesPerSec:      float64(len(p.moves)) / elapsed.Seconds(),
		Move:             Summarize(p.moves),
		SentToNotified:   Summarize(p.sentToNotified),
		AnswerToNotified: Summarize(p.answerToNotified),
		StampToNotified:  Summarize(p.stampToNotified),
		Undelivered:      p.undelivered,
		Finished:         p.finished,
		Errors:           maps.Clone(p.errors),
	}
}
