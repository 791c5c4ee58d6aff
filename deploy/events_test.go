package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"chessapi/shared/notify"
)

// The request bodies of SPEC §5, as strict shapes: an event whose body has a
// field the API does not define fails here before it fails in a handler.
type (
	createGameBody struct {
		Options   map[string]any `json:"options,omitempty"`
		Opponent  *opponentBody  `json:"opponent"`
		Player    *playerBody    `json:"player,omitempty"`
		RematchOf string         `json:"rematchOf,omitempty"`
	}
	opponentBody struct {
		Type   string `json:"type"`
		Level  string `json:"level,omitempty"`
		Invite string `json:"invite,omitempty"`
	}
	playerBody struct {
		ID   string `json:"id,omitempty"`
		Name string `json:"name,omitempty"`
	}
	actionBody struct {
		Type            string          `json:"type"`
		Payload         json.RawMessage `json:"payload,omitempty"`
		ExpectedVersion *int64          `json:"expectedVersion,omitempty"`
		RequestID       string          `json:"requestId,omitempty"`
	}
	presenceBody struct {
		Connected *bool `json:"connected"`
	}
	positionsBody struct {
		FEN     string   `json:"fen,omitempty"`
		Variant string   `json:"variant,omitempty"`
		Moves   []string `json:"moves,omitempty"`
	}
	aiMoveBody struct {
		FEN        string   `json:"fen,omitempty"`
		Variant    string   `json:"variant,omitempty"`
		Moves      []string `json:"moves,omitempty"`
		Level      string   `json:"level,omitempty"`
		MovetimeMs *int     `json:"movetimeMs,omitempty"`
		Depth      *int     `json:"depth,omitempty"`
	}
	// The action payloads of seeds/000 §8.2 (move also takes {uci} or {san},
	// SPEC §3).
	movePayload struct {
		From      string `json:"from,omitempty"`
		To        string `json:"to,omitempty"`
		Promotion string `json:"promotion,omitempty"`
		UCI       string `json:"uci,omitempty"`
		SAN       string `json:"san,omitempty"`
	}
	castlePayload struct {
		Side string `json:"side"`
	}
	respondPayload struct {
		Accept *bool `json:"accept"`
	}
	emptyPayload struct{}
)

// seatRoutes need a seat token (SPEC §5), playerRoutes a player token
// (SPEC §12).
var (
	seatRoutes   = []string{"POST /v1/games/{id}/actions", "POST /v1/games/{id}/presence"}
	playerRoutes = []string{"GET /v1/players/me", "PATCH /v1/players/me", "GET /v1/players/me/games",
		"POST /v1/players/me/link-codes", "POST /v1/lobby/quick",
		"DELETE /v1/players/me", "GET /v1/players/me/sessions", "PATCH /v1/players/me/sessions/current",
		"DELETE /v1/players/me/sessions/{id}", "POST /v1/players/me/recovery-code", "GET /v1/players/me/blocks",
		"POST /v1/players/me/blocks/{id}", "DELETE /v1/players/me/blocks/{id}",
		"POST /v1/players/me/devices", "GET /v1/players/me/devices", "DELETE /v1/players/me/devices/{id}",
		"GET /v1/players/me/notifications", "POST /v1/players/me/notifications/read"}
	// pathIDs is what {id} holds in each route's events: the sample game,
	// or for the account routes a sample player or session.
	pathIDs = map[string]string{
		"GET /v1/players/{id}":                "SamplePlayerID",
		"POST /v1/players/me/blocks/{id}":     "SampleOpponentID",
		"DELETE /v1/players/me/blocks/{id}":   "SampleOpponentID",
		"DELETE /v1/players/me/sessions/{id}": "SampleSecondSessionID",
		"DELETE /v1/players/me/devices/{id}":  "SampleDeviceID",
	}
	sampleIDs = map[string]string{"SamplePlayerID": SamplePlayerID, "SampleOpponentID": SampleOpponentID, "SampleSecondSessionID": SampleSecondSessionID, "SampleDeviceID": SampleDeviceID}
)

var (
	squareRE = regexp.MustCompile(`^[a-h][1-8]$`)
	uciRE    = regexp.MustCompile(`^[a-h][1-8][a-h][1-8][qrbn]?$`)
)

func loadRepoEvents(t *testing.T) []Event {
	t.Helper()
	evs, err := LoadEvents(filepath.Join(repoRoot, "events"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestEventsMatchTemplateAndSpec(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	routes := map[string]Route{}
	for _, r := range tmpl.Routes {
		routes[r.Pattern()] = r
	}
	for _, ev := range loadRepoEvents(t) {
		t.Run(ev.Name, func(t *testing.T) {
			switch ev.Kind {
			case HTTPEvent:
				checkHTTPEvent(t, ev, routes)
			case TimeoutEvent:
				if ev.Timeout.GameID != SampleGameID {
					t.Errorf("gameId = %q; want %q", ev.Timeout.GameID, SampleGameID)
				}
			case AITaskEvent:
				if ev.AITask.GameID != SampleGameID {
					t.Errorf("gameId = %q; want %q", ev.AITask.GameID, SampleGameID)
				}
			case WebSocketEvent:
				checkWebSocketEvent(t, ev, tmpl)
			case StreamRecordsEvent:
				checkStreamRecords(t, ev)
			default:
				t.Errorf("kind = %v", ev.Kind)
			}
		})
	}
}

func checkHTTPEvent(t *testing.T, ev Event, routes map[string]Route) {
	t.Helper()
	req := ev.HTTP
	route, ok := routes[req.RouteKey]
	if !ok {
		t.Fatalf("routeKey %q is not a template route", req.RouteKey)
	}
	if !slices.Contains(ev.Functions, route.Function) {
		t.Errorf("routeKey %q goes to %s, but the event is in the directory of %s", req.RouteKey, route.Function, ev.Functions)
	}
	rc := req.RequestContext
	if rc.RouteKey != req.RouteKey || rc.Stage != "$default" || rc.HTTP.Method != route.Method ||
		rc.HTTP.Path != req.RawPath || rc.HTTP.Protocol != "HTTP/1.1" || rc.HTTP.SourceIP == "" ||
		rc.HTTP.UserAgent != req.Headers["user-agent"] || rc.RequestID == "" || rc.TimeEpoch == 0 {
		t.Errorf("requestContext %+v does not match the request (route %q, rawPath %q)", rc, req.RouteKey, req.RawPath)
	}
	if req.IsBase64Encoded {
		t.Error("isBase64Encoded = true; the API sends JSON text")
	}

	// The raw path is the route with its parameters filled in.
	wantPath := route.Path
	wantID := SampleGameID
	if name, ok := pathIDs[req.RouteKey]; ok {
		wantID = sampleIDs[name]
	}
	for name, value := range req.PathParameters {
		if name != "id" || value != wantID {
			t.Errorf("pathParameters[%q] = %q; want only id = %q", name, value, wantID)
		}
		wantPath = strings.ReplaceAll(wantPath, "{"+name+"}", value)
	}
	if req.RawPath != wantPath {
		t.Errorf("rawPath = %q; want %q", req.RawPath, wantPath)
	}

	query, err := url.ParseQuery(req.RawQueryString)
	if err != nil {
		t.Errorf("rawQueryString %q: %v", req.RawQueryString, err)
	}
	if len(query) != len(req.QueryStringParameters) {
		t.Errorf("queryStringParameters %v do not match rawQueryString %q", req.QueryStringParameters, req.RawQueryString)
	}
	for k, v := range req.QueryStringParameters {
		if query.Get(k) != v {
			t.Errorf("queryStringParameters[%q] = %q; rawQueryString has %q", k, v, query.Get(k))
		}
	}
	if v, ok := req.QueryStringParameters["afterVersion"]; ok {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n < 0 || (req.RouteKey != "GET /v1/games/{id}" && req.RouteKey != "GET /v1/games/{id}/events" && req.RouteKey != "GET /v1/games/{id}/poll") {
			t.Errorf("afterVersion=%q on %s; want a version number on GET /v1/games/{id}, its /events or its /poll", v, req.RouteKey)
		}
	}

	for name := range req.Headers {
		if name != strings.ToLower(name) {
			t.Errorf("header %q: HTTP API v2 events carry lower-case header names", name)
		}
	}
	auth, hasAuth := req.Headers["authorization"]
	if hasAuth && auth != "Bearer "+SampleWhiteToken && auth != "Bearer "+SampleBlackToken && auth != "Bearer "+SamplePlayerToken {
		t.Errorf("authorization = %q; want a Bearer with one of the sample seat tokens or the sample player token", auth)
	}
	if slices.Contains(playerRoutes, req.RouteKey) && auth != "Bearer "+SamplePlayerToken {
		t.Errorf("%s needs a player token; the event has %q", req.RouteKey, auth)
	}
	if slices.Contains(seatRoutes, req.RouteKey) && !hasAuth {
		t.Errorf("%s needs a seat token; the event has no authorization header", req.RouteKey)
	}
	if key, ok := req.Headers["x-api-key"]; ok && (key != SampleAIAPIKey || req.RouteKey != "POST /v1/ai/move") {
		t.Errorf("x-api-key = %q on %s; want %q and only on POST /v1/ai/move", key, req.RouteKey, SampleAIAPIKey)
	}

	if req.Body == "" {
		if route.Method == "POST" && !slices.Contains([]string{"POST /v1/games/{id}/join", "POST /v1/players/me/link-codes",
			"POST /v1/players/me/recovery-code", "POST /v1/players/me/blocks/{id}"}, req.RouteKey) {
			t.Errorf("%s event has no body", req.RouteKey)
		}
		if _, ok := req.Headers["content-length"]; ok {
			t.Error("content-length header on a request without a body")
		}
		return
	}
	if route.Method == "GET" {
		t.Errorf("GET event with a body")
	}
	if got, want := req.Headers["content-length"], strconv.Itoa(len(req.Body)); got != want {
		t.Errorf("content-length = %q; the body has %s bytes", got, want)
	}
	if ct := req.Headers["content-type"]; ct != "application/json" {
		t.Errorf("content-type = %q; want application/json", ct)
	}
	if err := checkBody(req.RouteKey, []byte(req.Body)); err != nil {
		t.Errorf("body %s: %v", req.Body, err)
	}
}

// checkBody holds a request body to SPEC §5 (and seeds/000 §8.2 for action
// payloads).
func checkBody(routeKey string, body []byte) error {
	switch routeKey {
	case "POST /v1/games":
		var b createGameBody
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if b.RematchOf != "" {
			// A rematch is the old game again: it takes no options and no
			// opponent (SPEC §16.2).
			if b.Opponent != nil || b.Options != nil {
				return errors.New("a rematch takes no options or opponent")
			}
			if b.RematchOf != SampleGameID {
				return fmt.Errorf("rematchOf = %q; want the sample game", b.RematchOf)
			}
			return nil
		}
		if b.Opponent == nil {
			return errors.New("create needs an opponent")
		}
		switch {
		case b.Opponent.Type == "human" && b.Opponent.Level == "":
		case b.Opponent.Type == "ai" && slices.Contains([]string{"easy", "normal", "hard", "max"}, b.Opponent.Level):
		default:
			return fmt.Errorf("opponent %+v is neither {type:human} nor {type:ai, level}", *b.Opponent)
		}
		if b.RematchOf != "" && b.RematchOf != SampleGameID {
			return fmt.Errorf("rematchOf = %q; want the sample game", b.RematchOf)
		}
		return nil
	case "POST /v1/games/{id}/actions":
		var b actionBody
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		return checkAction(b)
	case "POST /v1/games/{id}/presence":
		var b presenceBody
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if b.Connected == nil {
			return errors.New("presence needs connected")
		}
		return nil
	case "POST /v1/positions":
		var b positionsBody
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		return checkMoves(b.Variant, b.Moves)
	case "POST /v1/ai/move":
		var b aiMoveBody
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if b.Level != "" && b.MovetimeMs != nil {
			return errors.New("level and movetimeMs are alternatives")
		}
		if b.MovetimeMs != nil && (*b.MovetimeMs <= 0 || *b.MovetimeMs > 10000) {
			return fmt.Errorf("movetimeMs = %d; want 1..10000", *b.MovetimeMs)
		}
		if b.Level != "" && !slices.Contains([]string{"easy", "normal", "hard", "max"}, b.Level) {
			return fmt.Errorf("level = %q", b.Level)
		}
		return checkMoves(b.Variant, b.Moves)
	case "POST /v1/players", "PATCH /v1/players/me":
		var b struct {
			Name *string `json:"name"`
		}
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if routeKey == "PATCH /v1/players/me" && b.Name == nil {
			return errors.New("rename needs a name")
		}
		return nil
	case "POST /v1/players/link":
		var b struct {
			Code string `json:"code"`
		}
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if len(b.Code) != 8 {
			return fmt.Errorf("code %q is not 8 characters", b.Code)
		}
		return nil
	case "POST /v1/players/me/devices": // SPEC §16.3
		var b struct {
			Platform string `json:"platform"`
			Token    string `json:"token"`
			Locale   string `json:"locale,omitempty"`
		}
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if p, ok := notify.ParsePlatform(b.Platform); !ok || !p.ValidToken(b.Token) {
			return fmt.Errorf("platform %q with token %q: not a platform and one of its tokens", b.Platform, b.Token)
		}
		if _, ok := notify.ParseLocale(b.Locale); b.Locale != "" && !ok {
			return fmt.Errorf("locale %q is neither ko nor en", b.Locale)
		}
		return nil
	case "POST /v1/players/me/notifications/read":
		var b struct {
			UpTo string `json:"upTo"`
		}
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if b.UpTo != SampleNotificationID {
			return fmt.Errorf("upTo = %q; want the sample notification", b.UpTo)
		}
		return nil
	case "PATCH /v1/players/me/sessions/current":
		var b struct {
			Label *string `json:"label"`
		}
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if b.Label == nil {
			return errors.New("a label is required")
		}
		return nil
	case "POST /v1/players/recover":
		var b struct {
			PlayerID     string `json:"playerId"`
			RecoveryCode string `json:"recoveryCode"`
		}
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if b.PlayerID != SamplePlayerID || !strings.EqualFold(b.RecoveryCode, SampleRecoveryCode) {
			return fmt.Errorf("recover %q with %q; want the sample player and its code", b.PlayerID, b.RecoveryCode)
		}
		return nil
	case "POST /v1/lobby/quick":
		var b struct {
			Room    string         `json:"room"`
			Options map[string]any `json:"options,omitempty"`
		}
		if err := strictJSON(body, &b); err != nil {
			return err
		}
		if !slices.Contains([]string{"free", "beginner", "intermediate", "expert"}, b.Room) {
			return fmt.Errorf("room %q", b.Room)
		}
		return nil
	case "POST /v1/games/{id}/join":
		var b struct {
			Player     *playerBody `json:"player,omitempty"`
			InviteCode string      `json:"inviteCode,omitempty"`
		}
		return strictJSON(body, &b)
	}
	return fmt.Errorf("%s takes no body", routeKey)
}

func checkMoves(variant string, moves []string) error {
	if variant != "" && variant != "standard" && variant != "chess960" {
		return fmt.Errorf("variant = %q", variant)
	}
	for _, m := range moves {
		if !uciRE.MatchString(m) {
			return fmt.Errorf("move %q is not UCI", m)
		}
	}
	return nil
}

func checkAction(b actionBody) error {
	payload := []byte(b.Payload)
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	switch b.Type {
	case "move":
		var p movePayload
		if err := strictJSON(payload, &p); err != nil {
			return err
		}
		fromTo := p.From != "" || p.To != ""
		forms := 0
		for _, used := range []bool{fromTo, p.UCI != "", p.SAN != ""} {
			if used {
				forms++
			}
		}
		if forms != 1 {
			return fmt.Errorf("move payload %s: want exactly one of {from,to}, {uci}, {san}", b.Payload)
		}
		if fromTo && (!squareRE.MatchString(p.From) || !squareRE.MatchString(p.To)) ||
			p.UCI != "" && !uciRE.MatchString(p.UCI) ||
			p.Promotion != "" && !strings.Contains("qrbn", p.Promotion) {
			return fmt.Errorf("move payload %s is malformed", b.Payload)
		}
	case "castle":
		var p castlePayload
		if err := strictJSON(payload, &p); err != nil {
			return err
		}
		if p.Side != "king" && p.Side != "queen" {
			return fmt.Errorf("castle side = %q", p.Side)
		}
	case "respondUndo", "respondDraw":
		var p respondPayload
		if err := strictJSON(payload, &p); err != nil {
			return err
		}
		if p.Accept == nil {
			return fmt.Errorf("%s needs accept", b.Type)
		}
	case "claimDraw", "requestUndo", "offerDraw", "cancelOffer", "resign":
		if err := strictJSON(payload, &emptyPayload{}); err != nil {
			return err
		}
	default:
		return fmt.Errorf("action type %q is not one of seeds/000 §8.2 (timeout is system-only)", b.Type)
	}
	return nil
}

func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// TestEventsCoverEverything: every route, every action type and both
// non-HTTP inputs have a sample.
func TestEventsCoverEverything(t *testing.T) {
	evs := loadRepoEvents(t)
	tmpl := loadRepoTemplate(t)
	covered := map[string]int{}
	actions := map[string]int{}
	kinds := map[EventKind]int{}
	for _, ev := range evs {
		kinds[ev.Kind]++
		if ev.Kind != HTTPEvent {
			continue
		}
		covered[ev.HTTP.RouteKey]++
		if ev.HTTP.RouteKey == "POST /v1/games/{id}/actions" {
			var b actionBody
			if err := json.Unmarshal([]byte(ev.HTTP.Body), &b); err == nil {
				actions[b.Type]++
			}
		}
	}
	for _, r := range tmpl.Routes {
		if covered[r.Pattern()] == 0 {
			t.Errorf("no event for route %s", r.Pattern())
		}
	}
	for _, a := range []string{"move", "castle", "claimDraw", "requestUndo", "respondUndo", "offerDraw", "respondDraw", "cancelOffer", "resign"} {
		if actions[a] == 0 {
			t.Errorf("no event for action type %s", a)
		}
	}
	if kinds[TimeoutEvent] == 0 || kinds[AITaskEvent] == 0 {
		t.Errorf("events by kind = %v; want timeout and AI task samples", kinds)
	}
}

func TestDecodeEventRejects(t *testing.T) {
	valid, err := os.ReadFile(filepath.Join(repoRoot, "events", "move", "health.json"))
	if err != nil {
		t.Fatal(err)
	}
	withExtra := bytes.Replace(valid, []byte(`"version": "2.0",`), []byte(`"version": "2.0", "surprise": 1,`), 1)
	if bytes.Equal(withExtra, valid) {
		t.Fatal("health.json no longer has the line this test edits")
	}
	tests := []struct {
		name     string
		function string
		raw      string
	}{
		{"unknown field in an HTTP event", "MoveFunction", string(withExtra)},
		{"HTTP event of another payload version", "MoveFunction", `{"version":"1.0","routeKey":"GET /v1/health"}`},
		{"task sent to the move function", "MoveFunction", `{"gameId":"g","version":1}`},
		{"timeout task with an unknown field", "TimeoutFunction", `{"gameId":"g","version":1,"deadline":"2026-11-29T14:15:05Z","by":"x"}`},
		{"timeout task with a non-RFC 3339 deadline", "TimeoutFunction", `{"gameId":"g","version":1,"deadline":"tomorrow"}`},
		{"timeout task without deadline", "TimeoutFunction", `{"gameId":"g","version":1}`},
		{"timeout task with a string version", "TimeoutFunction", `{"gameId":"g","version":"1","deadline":"2026-11-29T14:15:05Z"}`},
		{"AI task with version 0", "AiFunction", `{"gameId":"g","version":0}`},
		{"AI task without game", "AiFunction", `{"version":3}`},
		{"AI task with a deadline", "AiFunction", `{"gameId":"g","version":3,"deadline":"2026-11-29T14:15:05Z"}`},
		{"two JSON values", "AiFunction", `{"gameId":"g","version":3} {}`},
		{"not JSON", "AiFunction", `gameId=g`},
		{"unknown function", "ChessFunction", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ev, err := DecodeEvent(tt.function, []byte(tt.raw)); !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("DecodeEvent(%s, %q) = %v kind, %v; want ErrInvalidEvent", tt.function, tt.raw, ev.Kind, err)
			}
		})
	}
}

func TestLoadEventsRejectsStrayFiles(t *testing.T) {
	task := []byte(`{"gameId":"g","version":1,"deadline":"2026-11-29T14:15:05Z"}`)
	tests := []struct {
		name  string
		files map[string][]byte
	}{
		{"file outside a function directory", map[string][]byte{"deadline.json": task}},
		{"unknown directory", map[string][]byte{"scheduler/deadline.json": task}},
		{"not a .json file", map[string][]byte{"timeout/deadline.yaml": task}},
		{"invalid event", map[string][]byte{"timeout/deadline.json": []byte(`{}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, data := range tt.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if evs, err := LoadEvents(dir); err == nil {
				t.Errorf("LoadEvents(%v) = %d events, nil; want an error", tt.files, len(evs))
			}
		})
	}

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "timeout"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"README.md": []byte("# events\n"), "timeout/deadline.json": task} {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	evs, err := LoadEvents(dir)
	if err != nil || len(evs) != 1 || evs[0].Name != "timeout/deadline.json" || evs[0].Function != "TimeoutFunction" || evs[0].Timeout == nil {
		t.Errorf("LoadEvents(README + one task) = %+v, %v; want the one timeout event", evs, err)
	}
}
