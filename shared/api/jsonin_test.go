package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"chessapi/shared/game"
)

// The one strict decoder: every route refuses a repeated key at any depth
// with the key's dotted path, unknown keys alike, and the same body means
// the same answer on every route.

func TestDuplicateKeysAnyDepth(t *testing.T) {
	tests := []struct {
		name   string
		decode func([]byte) error
		body   string
		field  string
	}{
		{"positions top level", positionsDecoder, `{"fen":"8/8/8/8/8/8/8/K6k w - - 0 1","fen":"x"}`, "fen"},
		{"ai move top level", bestMoveDecoder, `{"depth":2,"depth":3}`, "depth"},
		{"create options", createDecoder, `{"options":{"drawMode":"fide","drawMode":"auto"}}`, "options.drawMode"},
		{"create opponent", createDecoder, `{"opponent":{"type":"ai","type":"human"}}`, "opponent.type"},
		{"create player", createDecoder, `{"player":{"name":"a","name":"b"}}`, "player.name"},
		{"join player", joinDecoder, `{"player":{"id":"a","id":"b"}}`, "player.id"},
		{"action top level", actionDecoder, `{"type":"resign","type":"move"}`, "type"},
		{"action payload", actionDecoder, `{"type":"move","payload":{"uci":"e2e4","uci":"d2d4"}}`, "payload.uci"},
		{"presence", presenceDecoder, `{"connected":true,"connected":false}`, "connected"},
		{"inside an unknown field", createDecoder, `{"x":{"y":1,"y":2}}`, "x.y"},
		{"inside an array", positionsDecoder, `{"moves":[{"a":1,"a":1}]}`, "moves.0.a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode([]byte(tt.body))
			d := describe(err, English)
			if d.Status != http.StatusBadRequest || d.Code != "duplicate_field" || d.Field != tt.field {
				t.Errorf("decode(%s) = %v → %d %s field %q; want 400 duplicate_field %q", tt.body, err, d.Status, d.Code, d.Field, tt.field)
			}
		})
	}
}

// TestDuplicateKeyOverHTTP is the case that answered 200 before one
// decoder read every body: {"fen":A,"fen":B} on /v1/positions.
func TestDuplicateKeyOverHTTP(t *testing.T) {
	a := newTestAPI(t)
	body := `{"fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1","fen":"4k3/8/8/8/8/8/8/4K3 w - - 0 1"}`
	r := a.do("POST", "/v1/positions", "", body).expect(t, http.StatusBadRequest)
	if code, field := r.errorCode(); code != "duplicate_field" || field != "fen" {
		t.Errorf("duplicate fen: %q %q; want duplicate_field fen (%s)", code, field, r.body)
	}
}

func TestUnknownFieldsAnyDepth(t *testing.T) {
	tests := []struct {
		name   string
		decode func([]byte) error
		body   string
		field  string
	}{
		{"positions", positionsDecoder, `{"fen2":"x"}`, "fen2"},
		{"ai move", bestMoveDecoder, `{"multipv":2}`, "multipv"},
		{"create options", createDecoder, `{"options":{"speed":1}}`, "options.speed"},
		{"create nested", createDecoder, `{"opponent":{"type":"human","colour":"white"}}`, "opponent.colour"},
		{"action payload", actionDecoder, `{"type":"move","payload":{"uci":"e2e4","x":1}}`, "payload.x"},
		{"action payload of another type", actionDecoder, `{"type":"move","payload":{"uci":"e2e4","accept":true}}`, "payload.accept"},
		{"presence", presenceDecoder, `{"connected":true,"why":"wifi"}`, "why"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := describe(tt.decode([]byte(tt.body)), Korean)
			if d.Status != http.StatusBadRequest || d.Code != "unknown_field" || d.Field != tt.field {
				t.Errorf("decode(%s) → %d %s field %q; want 400 unknown_field %q", tt.body, d.Status, d.Code, d.Field, tt.field)
			}
		})
	}
}

func positionsDecoder(b []byte) error { _, err := decodePositions(b); return err }
func bestMoveDecoder(b []byte) error  { _, err := decodeBestMove(b); return err }
func createDecoder(b []byte) error    { _, err := decodeCreate(b); return err }
func joinDecoder(b []byte) error      { _, err := decodeJoin(b); return err }
func newPlayerDecoder(b []byte) error { _, err := decodeNewPlayer(b); return err }
func renameDecoder(b []byte) error    { _, err := decodeRename(b); return err }
func linkDecoder(b []byte) error      { _, err := decodeLink(b); return err }
func quickDecoder(b []byte) error     { _, err := decodeQuick(b); return err }
func actionDecoder(b []byte) error    { _, err := decodeAction(b); return err }
func presenceDecoder(b []byte) error  { _, err := decodePresence(b); return err }
func recoverDecoder(b []byte) error   { _, _, err := decodeRecover(b); return err }
func labelDecoder(b []byte) error     { _, err := decodeLabel(b); return err }

// FuzzParseJSON: the strict reader never panics, accepts exactly the JSON
// objects encoding/json accepts that have no repeated key (at any depth)
// and are not nested deeper than the limit, and every refusal is a 400.
func FuzzParseJSON(f *testing.F) {
	for _, seed := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,{"c":null}]}}`, `{"a":1,"a":2}`, `[1]`, `{"a":"\u00e9"} x`, ``, `{"a":1e999}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		root, err := parseJSON(body, false)
		trimmed := bytes.Trim(body, " \t\r\n")
		valid := json.Valid(body) && len(trimmed) > 0 && trimmed[0] == '{'
		if err != nil {
			if d := describe(err, English); d.Status != http.StatusBadRequest || d.Message == "" {
				t.Fatalf("parseJSON(%q) = %v → %+v; want a 400 with a message", body, err, d)
			}
			var input *game.InputError
			if valid && !errors.As(err, &input) && !strings.Contains(err.Error(), whyTooDeep) {
				t.Fatalf("parseJSON(%q) refused valid JSON with %v (not a duplicate key)", body, err)
			}
			return
		}
		if !valid {
			t.Fatalf("parseJSON(%q) accepted what encoding/json does not", body)
		}
		checkNoDuplicates(t, root)
	})
}

func checkNoDuplicates(t *testing.T, n *node) {
	seen := map[string]bool{}
	for _, m := range n.members {
		if seen[m.key] {
			t.Fatalf("accepted a repeated key %q at %q", m.key, n.path)
		}
		seen[m.key] = true
		checkNoDuplicates(t, m.value)
	}
	for _, item := range n.items {
		checkNoDuplicates(t, item)
	}
}

// FuzzDecodeRequests: every request decoder answers any body with a value
// or a 400 (never a panic, never another status).
func FuzzDecodeRequests(f *testing.F) {
	for _, seed := range []string{`{"type":"move","payload":{"from":"e2","to":"e4"}}`, `{"options":{"undo":3}}`, `{"fen":"x","moves":["e2e4"]}`, `{"multiPv":3,"level":"max"}`,
		`{"opponent":{"type":"human","invite":"private"},"options":{"room":"expert","waitingExpirySec":600}}`, `{"inviteCode":"H4KX7MZQ2P"}`,
		`{"name":"지우"}`, `{"code":"K7M2-QX9P"}`, `{"room":"free","options":{"timeControl":"5+3"}}`,
		`{"playerId":"pl_x","recoveryCode":"K7M2-QX9P-H4KX-7MZQ-2PRT-8WNE"}`, `{"label":"iPhone"}`, `{"rematchOf":"g1","options":{}}`} {
		f.Add([]byte(seed))
	}
	decoders := []func([]byte) error{positionsDecoder, bestMoveDecoder, createDecoder, joinDecoder, actionDecoder, presenceDecoder,
		newPlayerDecoder, renameDecoder, linkDecoder, quickDecoder, recoverDecoder, labelDecoder}
	f.Fuzz(func(t *testing.T, body []byte) {
		for i, decode := range decoders {
			if err := decode(body); err != nil {
				if d := describe(err, Korean); d.Status != http.StatusBadRequest || d.Message == "" {
					t.Fatalf("decoder %d (%q) = %v → %+v; want a 400 with a message", i, body, err, d)
				}
			}
		}
	})
}

func TestParseBearer(t *testing.T) {
	good := "st_" + strings.Repeat("Ab9_-", 8) + "xyz"
	tests := []struct {
		header string
		token  string
		ok     bool
		bad    bool
	}{
		{"", "", false, false},
		{"Bearer " + good, good, true, false},
		{"bearer " + good, good, true, false},
		{"Bearer  " + good + " ", good, true, false},
		{"Bearer st_short", "", false, true},
		{"Bearer " + good + " extra", "", false, true},
		{"Basic " + good, "", false, true},
		{"Bearer", "", false, true},
		{good, "", false, true},
		{"Bearer pt_" + good[3:], "pt_" + good[3:], true, false}, // a player token
		{"Bearer pt_short", "", false, true},
		{"Bearer xt_" + good[3:], "", false, true}, // not an issued prefix
		{"Bearer st_" + strings.Repeat("é", 43), "", false, true},
	}
	for _, tt := range tests {
		token, ok, err := ParseBearer(tt.header)
		if token != tt.token || ok != tt.ok || (err != nil) != tt.bad {
			t.Errorf("ParseBearer(%q) = %q, %v, %v; want %q, %v, error %v", tt.header, token, ok, err, tt.token, tt.ok, tt.bad)
		}
		if tt.bad && describe(err, English).Status != http.StatusUnauthorized {
			t.Errorf("ParseBearer(%q) error answers %d; want 401", tt.header, describe(err, English).Status)
		}
	}
}

// FuzzParseBearer: a header either holds one well-formed token (returned
// as it appears in the header) or is refused with a 401; never a panic.
func FuzzParseBearer(f *testing.F) {
	for _, seed := range []string{"", "Bearer st_" + strings.Repeat("a", 43), "Bearer  x", "bearer\tst_", "Bearer " + strings.Repeat("\x00", 50)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		token, ok, err := ParseBearer(header)
		switch {
		case err != nil:
			if ok || token != "" || describe(err, English).Status != http.StatusUnauthorized {
				t.Fatalf("ParseBearer(%q) = %q, %v, %v; a refusal must be a bare 401", header, token, ok, err)
			}
		case ok:
			if !wellFormedToken(token) || !strings.Contains(header, token) || !utf8.ValidString(token) {
				t.Fatalf("ParseBearer(%q) accepted %q", header, token)
			}
		default:
			if header != "" {
				t.Fatalf("ParseBearer(%q) = no token, no error; only an empty header may", header)
			}
		}
	})
}

func TestDecodeStreamMessage(t *testing.T) {
	v := int64(7)
	good := []struct {
		body string
		want StreamRequest
	}{
		{`{"action":"ping"}`, StreamRequest{Action: ActionPing}},
		{`{"action":"subscribe","gameId":"abc"}`, StreamRequest{Action: ActionSubscribe, GameID: "abc"}},
		{`{"action":"subscribe","gameId":"abc","afterVersion":7}`, StreamRequest{Action: ActionSubscribe, GameID: "abc", AfterVersion: &v}},
		{`{"action":"unsubscribe","gameId":"abc"}`, StreamRequest{Action: ActionUnsubscribe, GameID: "abc"}},
		{`{"action":"sync","gameId":"abc"}`, StreamRequest{Action: ActionSync, GameID: "abc"}},
		{`{"action":"subscribe","player":"me"}`, StreamRequest{Action: ActionSubscribe, Player: true}},
		{`{"action":"unsubscribe","player":"me"}`, StreamRequest{Action: ActionUnsubscribe, Player: true}},
	}
	for _, tt := range good {
		got, err := DecodeStreamMessage([]byte(tt.body))
		if err != nil || got.Action != tt.want.Action || got.GameID != tt.want.GameID || got.Player != tt.want.Player || (got.AfterVersion == nil) != (tt.want.AfterVersion == nil) {
			t.Errorf("DecodeStreamMessage(%s) = %+v, %v; want %+v", tt.body, got, err, tt.want)
		}
	}
	bad := []struct{ body, code, field string }{
		{`not json`, "invalid_json", ""},
		{`{}`, "missing_field", "action"},
		{`{"action":"jump"}`, "invalid_field", "action"},
		{`{"action":"subscribe"}`, "missing_field", "gameId"},
		{`{"action":"subscribe","gameId":"a","afterVersion":-1}`, "invalid_field", "afterVersion"},
		{`{"action":"subscribe","gameId":"a","gameId":"b"}`, "duplicate_field", "gameId"},
		{`{"action":"ping","gameId":"a"}`, "invalid_field", "gameId"},
		{`{"action":"unsubscribe","gameId":"a","afterVersion":1}`, "invalid_field", "afterVersion"},
		{`{"action":"ping","x":1}`, "unknown_field", "x"},
		{`{"action":"subscribe","gameId":7}`, "invalid_field", "gameId"},
		{`{"action":"sync"}`, "missing_field", "gameId"},
		{`{"action":"sync","gameId":"a","afterVersion":1}`, "invalid_field", "afterVersion"},
		{`{"action":"sync","gameId":"a","player":"me"}`, "invalid_field", "player"},
		{`{"action":"subscribe","player":"you"}`, "invalid_field", "player"},
		{`{"action":"subscribe","player":"me","gameId":"a"}`, "invalid_field", "gameId"},
		{`{"action":"subscribe","player":"me","afterVersion":1}`, "invalid_field", "afterVersion"},
		{`{"action":"ping","player":"me"}`, "invalid_field", "player"},
		{`{"action":"subscribe","player":1}`, "invalid_field", "player"},
		{`{"action":"ping"}` + strings.Repeat(" ", MaxStreamMessage), "body_too_large", ""},
	}
	for _, tt := range bad {
		_, err := DecodeStreamMessage([]byte(tt.body))
		m := StreamError(err, "", English)
		if m.Type != MsgError || m.Code != tt.code || m.Field != tt.field || m.Message == "" {
			t.Errorf("DecodeStreamMessage(%.60s) → %+v; want error %s on %q", tt.body, m, tt.code, tt.field)
		}
	}
}

// FuzzDecodeStreamMessage: any client message decodes to one of the five
// actions with what it needs (a game, or for subscribe and unsubscribe the
// account; afterVersion only with a subscribe to a game), or to an error
// message with a code and a text; never a panic.
func FuzzDecodeStreamMessage(f *testing.F) {
	for _, seed := range []string{`{"action":"ping"}`, `{"action":"subscribe","gameId":"g","afterVersion":3}`, `{"action":"unsubscribe","gameId":"g"}`, `[]`, `{"action":null}`,
		`{"action":"sync","gameId":"g"}`, `{"action":"subscribe","player":"me"}`, `{"action":"unsubscribe","player":"me"}`,
		`{"action":"subscribe","player":"me","gameId":"g"}`, `{"action":"sync","player":"me"}`, `{"action":"subscribe","player":"you"}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeStreamMessage(body)
		if err != nil {
			if m := StreamError(err, "", Korean); m.Code == "" || m.Message == "" || m.Code == "internal" {
				t.Fatalf("DecodeStreamMessage(%q) error %v → %+v", body, err, m)
			}
			return
		}
		switch req.Action {
		case ActionPing:
			if req.GameID != "" || req.AfterVersion != nil || req.Player {
				t.Fatalf("ping with %+v", req)
			}
		case ActionSync:
			if req.Player || req.AfterVersion != nil {
				t.Fatalf("sync with %+v from %q", req, body)
			}
		case ActionSubscribe, ActionUnsubscribe:
			if req.AfterVersion != nil && *req.AfterVersion < 0 {
				t.Fatalf("negative afterVersion from %q", body)
			}
			if req.Player && (req.GameID != "" || req.AfterVersion != nil) {
				t.Fatalf("an account subscription with a game or a version: %+v from %q", req, body)
			}
			if req.Action == ActionUnsubscribe && req.AfterVersion != nil {
				t.Fatalf("unsubscribe with afterVersion from %q", body)
			}
		default:
			t.Fatalf("DecodeStreamMessage(%q) = action %q", body, req.Action)
		}
	})
}
