package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"chessapi/shared/api/streamtest"
)

// BenchmarkStreamBytesPerGame: what one seat is sent over 300 plies of the
// long game (shared/store/dynamostore/testdata/longgame.txt: moves, draw
// offers, take-backs), on the stream and over HTTP. Each iteration plays
// the 300 plies in a fresh game against the real local server.
//
//	go test -run '^$' -bench StreamBytesPerGame -benchtime 3x ./cmd/local
//
// Reported, per game, for White's connection:
//
//   - stream-wire-B: bytes received on the socket (frames, permessage-
//     deflate as negotiated), the subscribe's answer included;
//     stream-json-B: the same messages' JSON before compression;
//   - change-p50-B / change-max-B: a change message's JSON; the first and
//     last 100 plies' maxima too (early-max-B, late-max-B), to show they
//     do not grow with the game;
//   - http-gzip-B / http-B: the answers to White's own actions (POST
//     .../actions, the whole view each time), with Accept-Encoding: gzip
//     and without; http-lean-gzip-B the same with ?moves=false.
func BenchmarkStreamBytesPerGame(b *testing.B) {
	script, err := streamtest.LongGame()
	if err != nil {
		b.Fatal(err)
	}
	c := client{t: b, base: startServer(b)}
	var wire, raw, changes, httpGzip, httpPlain, httpLean []int
	var early, late []int
	for range b.N {
		w := playForBytes(b, c, script)
		wire = append(wire, w.wire)
		raw = append(raw, w.json)
		changes = append(changes, w.changes...)
		early = append(early, slices.Max(w.changes[:100]))
		late = append(late, slices.Max(w.changes[len(w.changes)-100:]))
		httpGzip, httpPlain, httpLean = append(httpGzip, w.httpGzip), append(httpPlain, w.httpPlain), append(httpLean, w.httpLean)
	}
	slices.Sort(changes)
	b.ReportMetric(mean(wire), "stream-wire-B")
	b.ReportMetric(mean(raw), "stream-json-B")
	b.ReportMetric(float64(changes[len(changes)/2]), "change-p50-B")
	b.ReportMetric(float64(changes[len(changes)-1]), "change-max-B")
	b.ReportMetric(mean(early), "early-max-B")
	b.ReportMetric(mean(late), "late-max-B")
	b.ReportMetric(mean(httpGzip), "http-gzip-B")
	b.ReportMetric(mean(httpPlain), "http-B")
	b.ReportMetric(mean(httpLean), "http-lean-gzip-B")
}

func mean(xs []int) float64 {
	return float64(sum(xs)) / float64(len(xs))
}

// gameBytes is what White was sent over one game.
type gameBytes struct {
	wire, json                    int
	changes                       []int
	httpGzip, httpPlain, httpLean int
}

// countingConn counts the bytes read from a connection.
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

func playForBytes(b *testing.B, c client, script []streamtest.ScriptLine) gameBytes {
	id, tokens := c.humanGame(map[string]any{"colorAssignment": "hostWhite"})
	var read atomic.Int64
	dialer := &net.Dialer{}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: conn, read: &read}, nil
	}}}
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(c.base, "http")+"/v1/stream", &websocket.DialOptions{
		HTTPClient: hc, HTTPHeader: http.Header{"Authorization": {"Bearer " + tokens["white"]}},
		CompressionMode: websocket.CompressionNoContextTakeover,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(1 << 20)
	read.Store(0) // the upgrade's own bytes are not the game's
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"action":"subscribe","gameId":"`+id+`"}`)); err != nil {
		b.Fatal(err)
	}
	var out gameBytes
	follow := streamtest.New()
	readUntil := func(v int64) {
		for g := follow.Game(id); g == nil || g.Version < v; g = follow.Game(id) {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, data, err := ws.Read(rctx)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
			m, err := streamtest.Decode(data)
			if err != nil {
				b.Fatal(err)
			}
			if err := follow.Apply(m); err != nil {
				b.Fatal(err)
			}
			out.json += len(data)
			if m["type"] == "change" {
				out.changes = append(out.changes, len(data))
			}
		}
	}
	seat := map[string]string{"w": tokens["white"], "b": tokens["black"]}
	plies := 0
	for _, l := range script {
		if plies >= 300 {
			break
		}
		body, presence := l.Body()
		path := "/v1/games/" + id + "/actions"
		if presence {
			path = "/v1/games/" + id + "/presence"
		}
		var v int64
		if l.Seat == "w" && !presence {
			// White's own action, answered three ways: the second and
			// third as retries of the first (same requestId), so the game
			// changes once.
			body["requestId"] = time.Now().Format(time.RFC3339Nano)
			var answer map[string]any
			out.httpGzip += actionBytes(b, c, path, seat[l.Seat], body, true, &answer)
			out.httpPlain += actionBytes(b, c, path, seat[l.Seat], body, false, nil)
			out.httpLean += actionBytes(b, c, path+"?moves=false", seat[l.Seat], body, true, nil)
			v = int64(answer["game"].(map[string]any)["version"].(float64))
		} else {
			code, resp := c.call("POST", path, seat[l.Seat], body)
			if code != 200 {
				b.Fatalf("%s %s: %d %v", l.Seat, l.Verb, code, resp)
			}
			v = int64(resp["game"].(map[string]any)["version"].(float64))
		}
		if l.Verb == "move" {
			plies++
		}
		readUntil(v)
	}
	out.wire = int(read.Load())
	return out
}

// actionBytes sends an action and returns the answer's bytes as they came
// (gzip-encoded when asked and large enough).
func actionBytes(b *testing.B, c client, path, token string, body map[string]any, compressed bool, answer *map[string]any) int {
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(data))
	req.Header.Set("Authorization", "Bearer "+token)
	if compressed {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	tr := &http.Transport{DisableCompression: true}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != 200 {
		b.Fatalf("%s: %d %v %s", path, res.StatusCode, err, raw)
	}
	if answer != nil {
		plain := raw
		if res.Header.Get("Content-Encoding") == "gzip" {
			if plain, err = gunzip(raw); err != nil {
				b.Fatal(err)
			}
		}
		if err := json.Unmarshal(plain, answer); err != nil {
			b.Fatal(err)
		}
	}
	return len(raw)
}

func gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
