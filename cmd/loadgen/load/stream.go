package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// streamMessage is the part of a server message on the stream the players
// read.
type streamMessage struct {
	Type    string `json:"type"`
	GameID  string `json:"gameId"`
	Version int64  `json:"version"`
	Events  []struct {
		Type  string `json:"type"`
		Color string `json:"color"`
		At    int64  `json:"at"`
	} `json:"events"`
	Game        *view      `json:"game"`
	Delta       *viewDelta `json:"delta"`
	GameOmitted bool       `json:"gameOmitted"`
	Code        string     `json:"code"`
}

// viewDelta is the part of a change's delta (SPEC §16.1) the players
// read: the fields of view that changed, the move added, the moves kept
// after a take-back.
type viewDelta struct {
	Version     int64            `json:"version"`
	Phase       *string          `json:"phase"`
	Turn        *string          `json:"turn"`
	LegalMoves  *json.RawMessage `json:"legalMoves"`
	MovesLength *int             `json:"movesLength"`
	Move        *struct {
		Color string `json:"color"`
		At    int64  `json:"at"`
	} `json:"move"`
}

// apply returns v with d applied (v is not modified).
func (d *viewDelta) apply(v *view) (*view, error) {
	next := *v
	next.Version = d.Version
	if d.Phase != nil {
		next.Phase = *d.Phase
	}
	if d.Turn != nil {
		next.Turn = *d.Turn
	}
	if d.LegalMoves != nil {
		next.LegalMoves = nil
		if err := json.Unmarshal(*d.LegalMoves, &next.LegalMoves); err != nil {
			return nil, fmt.Errorf("delta legalMoves: %w", err)
		}
	}
	next.Moves = v.Moves[:len(v.Moves):len(v.Moves)]
	if d.MovesLength != nil && *d.MovesLength <= len(next.Moves) {
		next.Moves = next.Moves[:*d.MovesLength]
	}
	if d.Move != nil {
		next.Moves = append(next.Moves, struct {
			Color string `json:"color"`
			At    int64  `json:"at"`
		}{d.Move.Color, d.Move.At})
	}
	return &next, nil
}

// received is a stream message with the time its last byte was read.
type received struct {
	msg streamMessage
	at  time.Time
}

// streamURL is the WebSocket URL of the stream on the server at base.
func streamURL(base string) string {
	return "ws" + strings.TrimPrefix(base, "http") + "/v1/stream"
}

// dialStream opens a stream connection authenticated by token ("" for a
// spectator) and subscribes it to game id.
func dialStream(ctx context.Context, base, token, id string) (*websocket.Conn, error) {
	opts := &websocket.DialOptions{HTTPHeader: http.Header{}}
	if token != "" {
		opts.HTTPHeader.Set("Authorization", "Bearer "+token)
	}
	ws, _, err := websocket.Dial(ctx, streamURL(base), opts)
	if err != nil {
		return nil, &requestError{what: "stream dial", err: err}
	}
	// The library's default limit (32 KB) is below the view of a long game.
	ws.SetReadLimit(maxAnswer)
	sub, _ := json.Marshal(map[string]any{"action": "subscribe", "gameId": id})
	if err := ws.Write(ctx, websocket.MessageText, sub); err != nil {
		ws.CloseNow()
		return nil, &requestError{what: "stream subscribe", err: err}
	}
	return ws, nil
}

// readStream reads ws until it fails, timing each message when its last
// byte has arrived (before decoding, as an HTTP answer is timed), and
// closes out; the failure is left in *failed.
func readStream(ctx context.Context, ws *websocket.Conn, out chan<- received, failed *error) {
	defer close(out)
	for {
		_, data, err := ws.Read(ctx)
		at := time.Now()
		if err != nil {
			*failed = err
			return
		}
		var m streamMessage
		if err := json.Unmarshal(data, &m); err != nil {
			*failed = fmt.Errorf("message is not JSON: %w", err)
			return
		}
		select {
		case out <- received{m, at}:
		case <-ctx.Done():
			return
		}
	}
}

// streamSeat is one seat of ModeStream: it holds one connection subscribed
// to the game and moves when the change of the opponent's move arrives.
func (g *gameRun) streamSeat(ctx context.Context, me string, rng *rand.Rand) error {
	ws, err := dialStream(ctx, g.pop.api.base, g.tokens[me], g.id)
	if err != nil {
		return err
	}
	// A clean close, as an app leaving the game would; the close
	// handshake is bounded by the library (5 s).
	defer ws.Close(websocket.StatusNormalClosure, "")
	msgs := make(chan received, 64)
	var readErr error
	go readStream(ctx, ws, msgs, &readErr)

	stall := time.NewTimer(g.pop.cfg.StallTimeout)
	defer stall.Stop()
	subscribed := false
	var lastMine int64
	var v *view // the seat's view, from the subscribed, then each delta
	for {
		var r received
		select {
		case m, ok := <-msgs:
			if !ok {
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				return fmt.Errorf("stream closed: %w", readErr)
			}
			r = m
		case <-stall.C:
			return fmt.Errorf("stream stall: no move of the opponent within %v", g.pop.cfg.StallTimeout)
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		switch r.msg.Type {
		case "subscribed":
			if r.msg.Game == nil {
				return errors.New("subscribed without the view (gameOmitted)")
			}
			if v == nil || r.msg.Version >= v.Version {
				v = r.msg.Game
			}
		case "change":
			if v == nil || r.msg.Version <= v.Version {
				continue // a version the seat has
			}
			if r.msg.Version != v.Version+1 || r.msg.Delta == nil {
				return fmt.Errorf("change %d after version %d", r.msg.Version, v.Version)
			}
			if v, err = r.msg.Delta.apply(v); err != nil {
				return err
			}
		case "error":
			return fmt.Errorf("stream error %s", r.msg.Code)
		default: // pong
			continue
		}
		if !subscribed {
			subscribed = true
			if err := g.ready(ctx); err != nil {
				return err
			}
		}
		if r.msg.Type == "change" {
			for _, e := range r.msg.Events {
				if e.Type == "moved" && e.Color == opponent(me) {
					g.track.seen(r.msg.Version, r.at, e.At)
					stall.Reset(g.pop.cfg.StallTimeout)
				}
			}
		}
		if v.Phase == phaseFinished {
			return nil
		}
		// Messages older than one's own last move are stale: they were
		// queued while the move was in flight.
		if v.Phase != phasePlaying || v.Turn != me || r.msg.Version <= lastMine {
			continue
		}
		ans, err := g.takeTurn(ctx, me, v, rng)
		if err != nil {
			return err
		}
		lastMine = ans.Version
		stall.Reset(g.pop.cfg.StallTimeout)
		if ans.Phase == phaseFinished {
			return nil
		}
	}
}
