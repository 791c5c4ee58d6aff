package obs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"chessapi/shared/credential"
)

func TestNewLogger(t *testing.T) {
	var buf syncBuffer
	log := NewLogger(&buf, slog.LevelInfo, "function", "move")
	log.Debug("hidden")
	log.Info("shown", "n", 3)
	lines := buf.lines()
	if len(lines) != 1 {
		t.Fatalf("%d lines: %v", len(lines), lines)
	}
	m := decodeLine(t, lines[0])
	if m["msg"] != "shown" || m["level"] != "INFO" || m["function"] != "move" || fmt.Sprint(m["n"]) != "3" || m["time"] == nil {
		t.Errorf("line %v", m)
	}
	if _, ok := m[KeyRequestID]; ok {
		t.Errorf("request id without a request: %v", m)
	}
}

func TestRequestContextFields(t *testing.T) {
	var buf syncBuffer
	log := NewLogger(&buf, slog.LevelDebug, "function", "move")
	ctx := WithRequest(context.Background(), RequestInfo{RequestID: "apigw-1", LambdaRequestID: "lambda-1", Route: "POST /v1/games"})

	log.InfoContext(ctx, "before")
	SetGameID(ctx, "g123")
	child, cancel := context.WithCancel(ctx) // derived contexts share the record
	defer cancel()
	log.With("extra", 1).WarnContext(child, "after")
	Logger(WithLogger(ctx, log)).Error("bound logger without a context")
	log.Info("no context")

	lines := buf.lines()
	if len(lines) != 4 {
		t.Fatalf("%d lines", len(lines))
	}
	tests := []struct {
		line int
		want map[string]string
		not  []string
	}{
		{0, map[string]string{"msg": "before", KeyRequestID: "apigw-1", KeyLambdaRequestID: "lambda-1", KeyRoute: "POST /v1/games"}, []string{KeyGameID}},
		{1, map[string]string{"msg": "after", KeyGameID: "g123", KeyRequestID: "apigw-1", "extra": "1", "function": "move"}, nil},
		{2, map[string]string{"msg": "bound logger without a context", KeyGameID: "g123", KeyRequestID: "apigw-1", "level": "ERROR"}, nil},
		{3, map[string]string{"msg": "no context"}, []string{KeyRequestID, KeyGameID}},
	}
	for _, tt := range tests {
		m := decodeLine(t, lines[tt.line])
		for k, v := range tt.want {
			if fmt.Sprint(m[k]) != v {
				t.Errorf("line %d: %s = %v, want %q (%s)", tt.line, k, m[k], v, lines[tt.line])
			}
		}
		for _, k := range tt.not {
			if _, ok := m[k]; ok {
				t.Errorf("line %d has %s: %s", tt.line, k, lines[tt.line])
			}
		}
	}
	if info, ok := Request(child); !ok || info.GameID != "g123" || info.RequestID != "apigw-1" {
		t.Errorf("Request = %+v, %v", info, ok)
	}
}

func TestRequestHelpersWithoutRequest(t *testing.T) {
	ctx := context.Background()
	SetGameID(ctx, "x") // no-op, no panic
	SetRoute(ctx, "x")
	if _, ok := Request(ctx); ok {
		t.Error("Request found info in a bare context")
	}
	if Logger(ctx) != slog.Default() {
		t.Error("Logger of a bare context is not slog.Default()")
	}
	var nilCtx context.Context
	if Logger(nilCtx) == nil {
		t.Error("Logger(nil) is nil")
	}
}

func TestContextHandlerGroupsAndWrapping(t *testing.T) {
	var buf syncBuffer
	h := NewContextHandler(slog.NewJSONHandler(&buf, nil))
	if NewContextHandler(h) != h {
		t.Error("wrapping a ContextHandler again")
	}
	ctx := WithRequest(context.Background(), RequestInfo{RequestID: "r1"})
	slog.New(h).WithGroup("g").InfoContext(ctx, "grouped", "a", 1)
	m := decodeLine(t, buf.lines()[0])
	g, _ := m["g"].(map[string]any)
	if g == nil || g[KeyRequestID] != "r1" || fmt.Sprint(g["a"]) != "1" {
		t.Errorf("grouped line %v", m)
	}
}

// TestConcurrentSetGameID: the record is shared and locked (run with -race).
func TestConcurrentSetGameID(t *testing.T) {
	var buf syncBuffer
	log := NewLogger(&buf, slog.LevelInfo)
	ctx := WithRequest(context.Background(), RequestInfo{RequestID: "r"})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				SetGameID(ctx, fmt.Sprintf("g%d-%d", i, j))
				log.InfoContext(ctx, "x")
			}
		})
	}
	wg.Wait()
	if n := len(buf.lines()); n != 800 {
		t.Errorf("%d lines", n)
	}
}

func TestRedaction(t *testing.T) {
	token := "st_" + strings.Repeat("Ab3-_", 8) + "xyz" // 43 characters after st_
	var buf syncBuffer
	log := NewLogger(&buf, slog.LevelDebug)
	log.Info("attrs",
		"authorization", "Bearer "+token,
		"Authorization", "Bearer abc",
		"x-api-key", "partner-key-1",
		"X-Api-Key", "partner-key-2",
		"apiKey", "partner-key-3",
		"token", "anything",
		"seat_token", "anything2",
		"password", "hunter2",
		"Cookie", "session=1",
		"err", errors.New("bad seat "+token+" given"),
		"note", "token "+token+".",
		slog.Group("req", "authorization", "Bearer xyz"),
		"headers", http.Header{"Authorization": {"Bearer hdr-secret-1"}, "X-Api-Key": {"hdr-secret-2"}, "Accept-Language": {"en"}, "X-Note": {"has " + token}},
		"query", url.Values{"token": {"qry-secret-3"}, "lang": {"ko"}},
		"tokenHash", "keep-this-hash",
		"gameId", "g1",
	)
	log.Info("message mentions " + token)
	out := buf.String()
	for _, secret := range []string{token, "hdr-secret-1", "hdr-secret-2", "qry-secret-3", "Bearer abc", "partner-key-1", "partner-key-2", "partner-key-3", "anything", "hunter2", "session=1", "Bearer xyz"} {
		if strings.Contains(out, secret) {
			t.Errorf("log output contains %q:\n%s", secret, out)
		}
	}
	for _, keep := range []string{`"Accept-Language":["en"]`, `"lang":["ko"]`, `"X-Note":["has st_[REDACTED]"]`, "keep-this-hash", `"gameId":"g1"`, `bad seat st_[REDACTED] given`, `token st_[REDACTED].`, `message mentions st_[REDACTED]`} {
		if !strings.Contains(out, keep) {
			t.Errorf("log output lacks %q:\n%s", keep, out)
		}
	}
}

// One credential of every kind, minted as the service mints them, logged
// in every spelling a careless line might use: none survives, nor any
// 12-character piece of one (codes, shorter, must not appear at all).
func TestLoggerMasksEveryCredentialKind(t *testing.T) {
	random := rand.NewChaCha8([32]byte{'o', 'b', 's'})
	var buf syncBuffer
	log := NewLogger(&buf, slog.LevelDebug)
	type minted struct {
		kind   credential.Kind
		secret string
	}
	var all []minted
	for _, k := range credential.Kinds() {
		if !k.Secret() {
			continue // a session id: its owner lists it, nothing to mask
		}
		secret, err := k.Mint(random)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, minted{k, secret})
		js, _ := json.Marshal(map[string]string{"token": secret})
		if k.Prefix() != "" { // recognised in any text
			log.Info("seat " + secret + " rejected")
			log.Info("spellings",
				"note", "token "+secret+".",
				"json", string(js),
				"urlEncoded", "q=token%3D"+secret+"%26lang%3Dko",
				"escaped", url.QueryEscape("/v1/games/g1?token="+secret),
				"query", "/v1/games/g1/stream?token="+secret+"&lang=ko",
				"err", fmt.Errorf("seat %s: %w", secret, errors.New("forbidden")),
				"headers", http.Header{"X-Note": {"has " + secret}},
				"values", url.Values{"next": {"/x?token=" + secret}},
				slog.Group("req", "path", "/v1/games/"+secret),
			)
		}
		// Under the names credentials travel under, whatever their kind.
		log.Info("named", "seatToken", secret, "playerToken", secret, "apiKey", secret, "x-api-key", secret,
			"linkCode", secret, "inviteCode", secret, "token", secret,
			"headers", http.Header{"X-Api-Key": {secret}, "Authorization": {"Bearer " + secret}},
			"query", url.Values{"token": {secret}, "linkCode": {secret}})
	}
	out := buf.String()
	for _, m := range all {
		body := m.secret[len(m.kind.Prefix()):]
		piece := min(12, len(body))
		for i := 0; i+piece <= len(body); i++ {
			if strings.Contains(out, body[i:i+piece]) {
				t.Errorf("the log keeps %q of a %v:\n%s", body[i:i+piece], m.kind, out)
				break
			}
		}
	}
	for _, want := range []string{"st_[REDACTED]", "pt_[REDACTED]", "ak_[REDACTED]", `"linkCode":"[REDACTED]"`, `"inviteCode":"[REDACTED]"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s:\n%s", want, out)
		}
	}
}

func TestIsSecretKey(t *testing.T) {
	for key, want := range map[string]bool{
		"authorization": true, "Authorization": true, "AUTHORIZATION": true, "x-api-key": true, "X-Api-Key": true,
		"apiKey": true, "api_key": true, "token": true, "Token": true, "seatToken": true, "player_token": true,
		"linkCode": true, "link_code": true, "inviteCode": true, "invite-code": true,
		"password": true, "secret": true, "cookie": true, "Set-Cookie": true,
		"Proxy-Authorization": true, "proxy_authorization": true,
		"tokenHash": false, "gameId": false, "requestId": false, "route": false, "status": false, "msg": false,
		"tokens": false, "authorizationHeaderLength": false, "key": false, "code": false,
	} {
		if got := isSecretKey(key); got != want {
			t.Errorf("isSecretKey(%q) = %v, want %v", key, got, want)
		}
	}
}
