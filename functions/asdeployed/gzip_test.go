package asdeployed

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/shared/game"
)

// TestAsDeployedGzip: the move function gzip-encodes an answer of 1 KB or
// more for a client that accepts gzip, as API Gateway HTTP APIs do not: the
// Lambda adapter hands the bytes to API Gateway base64-encoded
// (isBase64Encoded), with Content-Encoding: gzip, and the body decodes to
// the same JSON as the answer without gzip. A short answer, or one to a
// client that does not accept gzip, is plain text.
func TestAsDeployedGzip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	s := newStack(t)
	move := start(t, moveSpec, s.env(moveSpec))
	st := sampleGame(t, "", time.Now())
	for _, uci := range []string{"e2e4", "e7e5", "g1f3", "b8c6"} {
		var err error
		if st, _, err = game.Reduce(st, game.Act{By: st.Turn(), Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	s.put(t, st)
	answer := func(name, acceptEncoding string) events.APIGatewayV2HTTPResponse {
		t.Helper()
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(evs[name].Raw, &req); err != nil {
			t.Fatal(err)
		}
		delete(req.Headers, "accept-encoding")
		if acceptEncoding != "" {
			req.Headers["accept-encoding"] = acceptEncoding
		}
		payload, _ := json.Marshal(req)
		res := invoke(t, move, name, payload)
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(res.Payload, &resp); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s (%v)", name, resp.StatusCode, res.Payload, err)
		}
		return resp
	}
	plain := answer("move/view-player.json", "")
	if plain.IsBase64Encoded || plain.Headers["Content-Encoding"] != "" || len(plain.Body) < 1024 || !json.Valid([]byte(plain.Body)) {
		t.Fatalf("without Accept-Encoding: base64 %v, Content-Encoding %q, %d bytes; want the JSON as it is", plain.IsBase64Encoded, plain.Headers["Content-Encoding"], len(plain.Body))
	}
	zipped := answer("move/view-player.json", "gzip, br")
	if !zipped.IsBase64Encoded || zipped.Headers["Content-Encoding"] != "gzip" {
		t.Fatalf("with Accept-Encoding gzip: base64 %v, Content-Encoding %q; want a base64 gzip body", zipped.IsBase64Encoded, zipped.Headers["Content-Encoding"])
	}
	raw, err := base64.StdEncoding.DecodeString(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	if json.Unmarshal(body, &a) != nil || json.Unmarshal([]byte(plain.Body), &b) != nil || !sameJSON(a["game"], b["game"]) {
		t.Errorf("the gzip body is not the plain answer: %.200s", body)
	}
	t.Logf("view of a 4-ply game: %d bytes, %d gzip-encoded (%d in base64 to API Gateway)", len(plain.Body), len(raw), len(zipped.Body))
	if health := answer("move/health.json", "gzip"); health.IsBase64Encoded || health.Headers["Content-Encoding"] != "" {
		t.Errorf("a short answer: base64 %v, Content-Encoding %q; want it as it is", health.IsBase64Encoded, health.Headers["Content-Encoding"])
	}
}

// sameJSON compares two decoded values but for the clock's reading time.
func sameJSON(a, b any) bool {
	strip := func(v any) any {
		if m, ok := v.(map[string]any); ok {
			c := map[string]any{}
			for k, x := range m {
				if k != "clock" {
					c[k] = x
				}
			}
			return c
		}
		return v
	}
	x, _ := json.Marshal(strip(a))
	y, _ := json.Marshal(strip(b))
	return bytes.Equal(x, y)
}
