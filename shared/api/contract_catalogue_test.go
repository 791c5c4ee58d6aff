package api

import (
	"bufio"
	"encoding/json"
	"html"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"chessapi/internal/apispec"
	"chessapi/shared/apikey"
	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The error catalogue: every code a client can see, its status, and its
// Korean and English texts. The codes and texts live in texts.go (korean,
// english), the statuses in errors.go (describe, ruleStatus). The tests
// here hold docs/errors.md and openapi.yaml to them, so neither can drift:
// a code added to texts.go without a row in docs/errors.md, a status
// changed in errors.go, a reworded message, or an error response in
// openapi.yaml that lists a code of another status fails.

// errorsDoc is the catalogue's document, from this package's directory.
var errorsDoc = filepath.Join("..", "..", "docs", "errors.md")

// catalogueErrors maps every code to an error the edge describes with it:
// describe gives its status (and ErrorJSON its response).
func catalogueErrors() map[string]error {
	m := map[string]error{
		"invalid_json":       &syntaxError{why: whySyntax},
		"missing_field":      game.FieldRequired("type"),
		"unknown_field":      &game.InputError{Field: "payload.x", Problem: game.ProblemUnknown},
		"duplicate_field":    &game.InputError{Field: "fen", Problem: game.ProblemDuplicate},
		"invalid_field":      game.FieldOneOf("variant", "standard", "chess960"),
		"invalid_fen":        &service.FENError{Field: "fen", Err: chess.ErrKingCount},
		"invalid_body":       ErrBadBody,
		"invalid_path":       ErrBadPath,
		"unauthorized":       service.ErrUnauthorized,
		"invalid_token":      errInvalidToken,
		"invalid_api_key":    errBadAPIKey,
		"forbidden":          service.ErrForbidden,
		"game_not_found":     service.ErrNotFound,
		"not_found":          errNotFoundRoute,
		"method_not_allowed": errMethodNotAllowed,
		"version_conflict":   &service.ConflictError{},
		"body_too_large":     errBodyTooLarge,
		"request_id_reused":  service.ErrRequestIDReused,
		"game_too_large":     service.ErrTooLarge,
		"no_legal_moves":     &service.NoMoveError{Status: chess.StatusCheckmate},
		"busy":               service.ErrBusy,
		"unavailable":        ErrUnavailable,
		"internal":           ErrInternal,
		// Stream only: describe gives the status the HTTP API would use.
		"too_many_subscriptions": ErrTooManySubscriptions,
		"rate_limited":           &apikey.LimitError{KeyID: "k", Limit: "perSecond", Max: 1, Wait: time.Second},
		"player_required":        service.ErrPlayerRequired,
		"link_code_invalid":      service.ErrLinkCodeInvalid,
		"too_many_devices":       service.ErrTooManyDevices,
		"platform_unavailable":   service.ErrPlatformUnavailable,
		"device_not_found":       service.ErrDeviceNotFound,
		"notification_not_found": service.ErrNotificationNotFound,
		"recovery_code_invalid":  service.ErrRecoveryCodeInvalid,
		"player_not_found":       service.ErrPlayerNotFound,
		"session_not_found":      service.ErrSessionNotFound,
		"blocked":                service.ErrBlocked,
		"too_many_blocks":        service.ErrTooManyBlocks,
	}
	for _, c := range game.Codes() {
		m[c.String()] = &game.RuleError{Code: c}
	}
	return m
}

// streamOnlyCodes are catalogue codes sent only as WebSocket stream error
// messages (openapi.yaml: components.schemas.StreamError), never as an HTTP
// answer.
var streamOnlyCodes = []string{"too_many_subscriptions"}

// futureCodes are catalogue codes no error of the code maps to yet, with
// the status they are documented with (none at the moment).
var futureCodes = map[string]int{}

// catalogueStatus returns every code's status: describe's, or the
// documented one of a future code.
func catalogueStatus(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for code, err := range catalogueErrors() {
		d := describe(err, Korean)
		if d.Code != code {
			t.Fatalf("describe(%T) = code %q; the catalogue test expects %q", err, d.Code, code)
		}
		out[code] = d.Status
	}
	maps.Copy(out, futureCodes)
	return out
}

// detailedCodes are the codes whose message says more than the code's
// catalogue text (the field and the problem, the JSON or FEN problem).
var detailedCodes = []string{"invalid_json", "missing_field", "unknown_field", "duplicate_field", "invalid_field", "invalid_fen"}

func hasHangul(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Hangul, r) })
}

// TestErrorCatalogueComplete: the two languages have the same codes, every
// code has a status (an error describe maps to it, or a documented future
// code), and each text is in its language.
func TestErrorCatalogueComplete(t *testing.T) {
	status := catalogueStatus(t)
	ko, en := slices.Sorted(maps.Keys(korean.codes)), slices.Sorted(maps.Keys(english.codes))
	if !slices.Equal(ko, en) {
		t.Errorf("Korean and English catalogues differ:\nko %q\nen %q", ko, en)
	}
	if got := slices.Sorted(maps.Keys(status)); !slices.Equal(got, ko) {
		t.Errorf("codes with a status %q\ncodes with a text %q\n(add the new code to catalogueErrors or futureCodes)", got, ko)
	}
	for code, s := range status {
		if s < 400 || s > 599 {
			t.Errorf("%s: status %d is not an error status", code, s)
		}
		if !hasHangul(korean.codes[code]) {
			t.Errorf("%s: Korean text %q has no Korean", code, korean.codes[code])
		}
		if m := english.codes[code]; m == "" || hasHangul(m) {
			t.Errorf("%s: English text %q", code, m)
		}
	}
	// The adapters word errors through ErrorJSON: the same code and status
	// in both languages, the text in the one asked for.
	for code, err := range catalogueErrors() {
		for _, tc := range []struct {
			header string
			lang   Lang
		}{{"", Korean}, {"ko-KR", Korean}, {"en", English}, {"fr, en;q=0.5", English}} {
			st, body, lang := ErrorJSON(err, tc.header)
			var got struct {
				Error errorJSON `json:"error"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("ErrorJSON(%s): %v", code, err)
			}
			want := catalogue(tc.lang).codes[code]
			detailed := slices.Contains(detailedCodes, code)
			if st != status[code] || got.Error.Code != code || lang != tc.lang.String() ||
				(!detailed && got.Error.Message != want) || (detailed && hasHangul(got.Error.Message) != (tc.lang == Korean)) {
				t.Errorf("ErrorJSON(%s, Accept-Language %q) = %d %s (%s); want %d, code %s, message %q in %s",
					code, tc.header, st, body, lang, status[code], code, want, tc.lang)
			}
		}
	}
}

// docRow is one row of docs/errors.md's table.
type docRow struct {
	code, meaning, korean, english, field string
	status                                int
}

// readErrorsDoc parses the table of docs/errors.md: the first Markdown
// table whose header starts with "code".
func readErrorsDoc(t *testing.T) []docRow {
	t.Helper()
	f, err := os.Open(errorsDoc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []docRow
	inTable := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i, c := range cells {
			cells[i] = strings.TrimSpace(c)
		}
		switch {
		case !inTable && len(cells) > 0 && strings.EqualFold(cells[0], "code"):
			if want := []string{"code", "status", "meaning", "Korean", "English", "field"}; !slices.Equal(cells, want) {
				t.Fatalf("%s:%d: table header %q; want %q", errorsDoc, n, cells, want)
			}
			inTable = true
			continue
		case !inTable:
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		if len(cells) != 6 {
			t.Fatalf("%s:%d: %d cells; want 6", errorsDoc, n, len(cells))
		}
		status, err := strconv.Atoi(cells[1])
		if err != nil {
			t.Fatalf("%s:%d: status %q", errorsDoc, n, cells[1])
		}
		text := func(s string) string { return html.UnescapeString(strings.Trim(s, "`")) }
		rows = append(rows, docRow{
			code: strings.Trim(cells[0], "`"), status: status, meaning: cells[2],
			korean: text(cells[3]), english: text(cells[4]), field: cells[5],
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: no error table", errorsDoc)
	}
	return rows
}

// fieldRule is the first word of a row's field column: always, never or
// sometimes.
func (r docRow) fieldRule() string {
	word, _, _ := strings.Cut(r.field, " ")
	return strings.TrimRight(strings.ToLower(word), ":;,.")
}

// TestErrorsDocMatchesCatalogue holds docs/errors.md's table to the code:
// the same codes, each with describe's status and texts.go's texts, and a
// field rule.
func TestErrorsDocMatchesCatalogue(t *testing.T) {
	status := catalogueStatus(t)
	rows := readErrorsDoc(t)
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.code] {
			t.Errorf("docs/errors.md lists %s twice", r.code)
		}
		seen[r.code] = true
		want, ok := status[r.code]
		if !ok {
			t.Errorf("docs/errors.md lists %s, which the code does not have", r.code)
			continue
		}
		if r.status != want {
			t.Errorf("docs/errors.md: %s is %d; the code answers %d", r.code, r.status, want)
		}
		if r.korean != korean.codes[r.code] {
			t.Errorf("docs/errors.md: %s Korean text %q; texts.go has %q", r.code, r.korean, korean.codes[r.code])
		}
		if r.english != english.codes[r.code] {
			t.Errorf("docs/errors.md: %s English text %q; texts.go has %q", r.code, r.english, english.codes[r.code])
		}
		if r.meaning == "" {
			t.Errorf("docs/errors.md: %s has no meaning", r.code)
		}
		if rule := r.fieldRule(); !slices.Contains([]string{"always", "never", "sometimes"}, rule) {
			t.Errorf("docs/errors.md: %s field rule %q; want it to start with always, never or sometimes", r.code, r.field)
		}
	}
	for _, code := range slices.Sorted(maps.Keys(status)) {
		if !seen[code] {
			t.Errorf("docs/errors.md has no row for %s (%d)", code, status[code])
		}
	}
	// The table is ordered by status, so people find a status's codes together.
	if !slices.IsSortedFunc(rows, func(a, b docRow) int { return a.status - b.status }) {
		t.Errorf("docs/errors.md's table is not ordered by status")
	}
}

// TestOpenAPIErrorCodesMatchCatalogue: every code an error response of
// openapi.yaml lists is a catalogue code answered with that status, and
// every catalogue code is listed by some response of its status.
func TestOpenAPIErrorCodesMatchCatalogue(t *testing.T) {
	status := catalogueStatus(t)
	listed := map[string]bool{}
	for _, use := range apispec.MustLoad(t).ErrorCodes() {
		want, ok := status[use.Code]
		switch {
		case !ok:
			t.Errorf("openapi.yaml %s → %d lists %s, which is no code of the catalogue", use.Where, use.Status, use.Code)
		case want != use.Status:
			t.Errorf("openapi.yaml %s → %d lists %s, which the code answers with %d", use.Where, use.Status, use.Code, want)
		default:
			listed[use.Code] = true
		}
	}
	streamCodes := apispec.MustLoad(t).StreamErrorCodes()
	for _, code := range streamCodes {
		if _, ok := status[code]; !ok {
			t.Errorf("openapi.yaml StreamError lists %s, which is no code of the catalogue", code)
		}
	}
	for _, code := range streamOnlyCodes {
		if listed[code] {
			t.Errorf("openapi.yaml lists the stream-only code %s in an HTTP response", code)
		}
		if !slices.Contains(streamCodes, code) {
			t.Errorf("openapi.yaml StreamError does not list the stream-only code %s", code)
		}
		listed[code] = true
	}
	for _, code := range slices.Sorted(maps.Keys(status)) {
		if !listed[code] {
			t.Errorf("no error response of openapi.yaml lists %s (%d)", code, status[code])
		}
	}
}
