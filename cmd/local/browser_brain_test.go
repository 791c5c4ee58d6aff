package main

import (
	"slices"
	"strings"
	"testing"
)

// brainMove picks white's move in the browser's game against the easy AI:
// the server's own engine at full strength (POST /v1/ai/move), steered so
// the game shows a promotion before it ends. A promotion is played when
// legal. While nothing has promoted and white is winning, a pawn push that
// no black move can capture goes first if a short search from black's side
// says white still wins after it, and a mate is put off for the best move
// that does not mate and keeps the win.
func brainMove(t *testing.T, c client, view map[string]any, promoted bool) string {
	t.Helper()
	var legal []map[string]any
	for _, m := range view["legalMoves"].([]any) {
		legal = append(legal, m.(map[string]any))
	}
	for _, m := range legal {
		if m["promotion"] == "q" {
			return m["uci"].(string)
		}
	}
	history := []string{}
	for _, m := range view["moves"].([]any) {
		history = append(history, m.(map[string]any)["uci"].(string))
	}
	answer := engineMove(t, c, map[string]any{"moves": history, "movetimeMs": 60, "multiPv": 5})
	if promoted || !winning(answer["score"], 1) {
		return answer["bestMove"].(string)
	}
	board := fenBoard(view["fen"].(string))
	var pushes []map[string]any
	for _, m := range legal {
		if board[m["from"].(string)] == 'P' && safe(c, append(slices.Clone(history), m["uci"].(string)), m["to"].(string)) {
			pushes = append(pushes, m)
		}
	}
	slices.SortFunc(pushes, func(a, b map[string]any) int { return strings.Compare(b["to"].(string)[1:], a["to"].(string)[1:]) })
	for _, m := range pushes[:min(len(pushes), 3)] {
		reply := engineMove(t, c, map[string]any{"moves": append(slices.Clone(history), m["uci"].(string)), "depth": 4})
		if winning(reply["score"], -1) {
			return m["uci"].(string)
		}
	}
	for _, l := range answer["lines"].([]any) {
		line := l.(map[string]any)
		if !strings.HasSuffix(line["san"].(string), "#") && winning(line["score"], 1) {
			return line["move"].(string)
		}
	}
	return answer["bestMove"].(string)
}

func engineMove(t *testing.T, c client, req map[string]any) map[string]any {
	t.Helper()
	code, answer := c.call("POST", "/v1/ai/move", "", req)
	if code != 200 {
		t.Fatalf("brain: /v1/ai/move %v: %d %v", req, code, answer)
	}
	return answer
}

// winning: a score (of the side to move; sign -1 reads it for the other
// side) of a mate or at least three pawns.
func winning(score any, sign float64) bool {
	s := score.(map[string]any)
	if mate, ok := s["mate"].(float64); ok {
		return mate*sign > 0
	}
	return s["cp"].(float64)*sign >= 300
}

// safe: after moves, no legal black move lands on square.
func safe(c client, moves []string, square string) bool {
	code, pos := c.call("POST", "/v1/positions", "", map[string]any{"moves": moves})
	if code != 200 || pos["status"] != "playing" {
		return false
	}
	for _, m := range pos["legalMoves"].([]any) {
		if m.(map[string]any)["to"] == square {
			return false
		}
	}
	return true
}

// fenBoard maps squares to FEN piece letters.
func fenBoard(fen string) map[string]byte {
	out := map[string]byte{}
	rows := strings.Split(strings.Fields(fen)[0], "/")
	for i, row := range rows {
		file := 0
		for j := 0; j < len(row); j++ {
			ch := row[j]
			if ch >= '1' && ch <= '8' {
				file += int(ch - '0')
				continue
			}
			out[string(rune('a'+file))+string(rune('8'-i))] = ch
			file++
		}
	}
	return out
}
