package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"chessapi/shared/game"
)

// TestGzipAnswers: an answer of 1 KB or more is gzip-encoded for a client
// that accepts it, and not otherwise; a short one never is.
func TestGzipAnswers(t *testing.T) {
	body := strings.Repeat("x", gzipMinBytes)
	h := withGzip(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		n := len(body)
		if r.URL.Query().Has("short") {
			n = gzipMinBytes - 1
		}
		// In pieces, as a handler may write.
		for i := 0; i < n; i += 100 {
			_, _ = io.WriteString(w, body[i:min(n, i+100)])
		}
	}))
	for _, tt := range []struct {
		accept, query string
		gzipped       bool
	}{
		{"gzip", "", true},
		{"br;q=1.0, gzip;q=0.8", "", true},
		{"*", "", true},
		{"gzip;q=0", "", false},
		{"gzip;q=0, *", "", false},
		{"br", "", false},
		{"", "", false},
		{"gzip", "?short", false},
	} {
		req := httptest.NewRequest("GET", "/"+tt.query, nil)
		if tt.accept != "" {
			req.Header.Set("Accept-Encoding", tt.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		got := rec.Body.Bytes()
		if rec.Code != http.StatusTeapot || !strings.Contains(rec.Header().Get("Vary"), "Accept-Encoding") {
			t.Errorf("%q%s: status %d, Vary %q", tt.accept, tt.query, rec.Code, rec.Header().Get("Vary"))
		}
		if gz := rec.Header().Get("Content-Encoding") == "gzip"; gz != tt.gzipped {
			t.Errorf("Accept-Encoding %q%s: gzip %v; want %v", tt.accept, tt.query, gz, tt.gzipped)
			continue
		}
		if tt.gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if got, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		}
		want := len(body)
		if tt.query != "" {
			want = gzipMinBytes - 1
		}
		if len(got) != want || strings.Trim(string(got), "x") != "" {
			t.Errorf("%q%s: body of %d bytes; want %d", tt.accept, tt.query, len(got), want)
		}
	}
}

// TestMovesFalse: GET ?moves=false leaves the move list and the PGN out;
// anything but true or false is a 400 naming the field.
func TestMovesFalse(t *testing.T) {
	a := newTestAPI(t)
	white, black := a.createHumanGame(map[string]any{"colorAssignment": "hostWhite"})
	a.move(white, "e2e4").expect(t, http.StatusOK)
	a.move(black, "e7e5").expect(t, http.StatusOK)
	a.act(white, nil, map[string]any{"type": "resign"}).expect(t, http.StatusOK)
	full := a.do("GET", "/v1/games/"+white.gameID, "", nil).expect(t, http.StatusOK).game()
	lean := a.do("GET", "/v1/games/"+white.gameID+"?moves=false", "", nil).expect(t, http.StatusOK)
	g := lean.game()
	if _, ok := g["moves"]; ok {
		t.Error("moves=false: the view has moves")
	}
	if _, ok := g["result"].(map[string]any)["pgn"]; ok {
		t.Error("moves=false: the result has its PGN")
	}
	for k, v := range full {
		if k != "moves" && k != "result" && !equalJSON(v, g[k]) {
			t.Errorf("moves=false changed %s: %v → %v", k, v, g[k])
		}
	}
	if r := a.do("GET", "/v1/games/"+white.gameID+"?moves=no", "", nil).expect(t, http.StatusBadRequest); r.json["error"].(map[string]any)["field"] != "moves" {
		t.Errorf("moves=no: %s", r.body)
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// BenchmarkGzipAnswer is the compression of a move's answer, the whole
// view of a game of 40, 150 and 300 plies (random legal moves), through
// withGzip as the handler sends it:
//
//	go test -run '^$' -bench GzipAnswer -benchtime 2000x ./shared/api
func BenchmarkGzipAnswer(b *testing.B) {
	for _, plies := range []int{40, 150, 300} {
		body := longGameAnswer(b, plies)
		h := withGzip(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(body)
		}))
		req := httptest.NewRequest("POST", "/v1/games/g/actions", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		b.Run(fmt.Sprintf("plies%d", plies), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			var size int
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				size = w.Body.Len()
			}
			b.ReportMetric(float64(size), "gzip-bytes")
		})
	}
}

// longGameAnswer is the JSON answer of a move in a game of the given
// plies (random legal moves, 1.5 s each), as the mover sees it.
func longGameAnswer(b *testing.B, plies int) []byte {
	b.Helper()
	now := time.UnixMilli(1_700_000_000_000)
	s, _, err := game.New(game.NewGame{GameID: "bench-game-1", Options: game.DefaultOptions(), Host: game.Player{ID: "a"}, Seed: 1}, now)
	if err != nil {
		b.Fatal(err)
	}
	if s, _, err = game.Reduce(s, game.Join{Player: game.Player{ID: "b"}}, now); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, uint64(plies)))
	for s.Phase == game.PhasePlaying && len(s.Moves) < plies {
		pos := s.Position()
		moves := pos.LegalMoves()
		now = now.Add(1500 * time.Millisecond)
		next, _, err := game.Reduce(s, game.Act{By: s.Turn(), Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: pos.UCI(moves[rng.IntN(len(moves))])}}}, now)
		if err != nil {
			b.Fatal(err)
		}
		s = next
	}
	by := s.Turn().Other()
	v, err := game.ViewOf(s, &by, now)
	if err != nil {
		b.Fatal(err)
	}
	body, err := json.Marshal(gameResponse{Game: v})
	if err != nil {
		b.Fatal(err)
	}
	return body
}
