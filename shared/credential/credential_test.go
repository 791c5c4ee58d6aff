package credential

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// counting is a random source that yields 0, 1, 2, … so minted texts can
// be compared with what the encodings give for the same bytes.
type counting struct{ next byte }

func (c *counting) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = c.next
		c.next++
	}
	return len(p), nil
}

func seq(from, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(from + i)
	}
	return b
}

// The issued forms are the ones the service, the edge and shared/apikey
// always issued: same prefixes, lengths, encodings and bytes read, so
// every credential already handed out stays well formed and its stored
// hash keeps matching.
func TestIssuedFormsAreUnchanged(t *testing.T) {
	b32 := base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)
	codeOf := func(b []byte) string {
		const alphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
		out := make([]byte, len(b))
		for i, v := range b {
			out[i] = alphabet[int(v)%len(alphabet)]
		}
		return string(out)
	}
	tests := []struct {
		kind   Kind
		name   string
		prefix string
		length int
		want   string
	}{
		{SeatToken, "seat token", "st_", 46, "st_" + base64.RawURLEncoding.EncodeToString(seq(0, 32))},
		{PlayerToken, "player token", "pt_", 46, "pt_" + base64.RawURLEncoding.EncodeToString(seq(0, 32))},
		{APIKey, "API key", "ak_", 72, "ak_" + b32.EncodeToString(seq(0, 10)) + "_" + b32.EncodeToString(seq(10, 32))},
		{LinkCode, "link code", "", 8, codeOf(seq(0, 8))},
		{InviteCode, "invite code", "", 10, codeOf(seq(0, 10))},
		{RecoveryCode, "recovery code", "", 29, func() string {
			c := codeOf(seq(0, 24))
			return c[0:4] + "-" + c[4:8] + "-" + c[8:12] + "-" + c[12:16] + "-" + c[16:20] + "-" + c[20:24]
		}()},
		{SessionID, "session id", "se_", 25, "se_" + base64.RawURLEncoding.EncodeToString(seq(0, 16))},
	}
	if len(tests) != len(Kinds()) {
		t.Fatalf("%d kinds in the table, %d here: a kind without a test", len(Kinds()), len(tests))
	}
	for _, tt := range tests {
		got, err := tt.kind.Mint(&counting{})
		if err != nil {
			t.Fatalf("%v.Mint = %v", tt.kind, err)
		}
		if got != tt.want {
			t.Errorf("%v.Mint = %q; want %q", tt.kind, got, tt.want)
		}
		if tt.kind.String() != tt.name || tt.kind.Prefix() != tt.prefix || tt.kind.Len() != tt.length || len(got) != tt.length {
			t.Errorf("%v: name %q prefix %q Len %d, minted %d long; want %q %q %d", tt.kind, tt.kind.String(), tt.kind.Prefix(), tt.kind.Len(), len(got), tt.name, tt.prefix, tt.length)
		}
		if k, ok := KindOf(got); !ok || k != tt.kind {
			t.Errorf("KindOf(%q) = %v, %v; want %v", got, k, ok, tt.kind)
		}
	}
	if APIKey.PartLen(0) != 16 || APIKey.PartLen(1) != 52 || APIKey.PartLen(2) != 0 || SeatToken.PartLen(0) != 43 {
		t.Error("PartLen is wrong")
	}
}

func TestHashIsSHA256Hex(t *testing.T) {
	// sha256("abc"), the FIPS 180-2 example.
	if got, want := Hash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"; got != want {
		t.Errorf(`Hash("abc") = %s; want %s`, got, want)
	}
}

// Tokens issued before this package existed (the samples in deploy/) are
// well formed.
func TestKnownIssuedTokens(t *testing.T) {
	for text, want := range map[string]Kind{
		"st_P1tE2NH9e3f6bwxiuLCdgx6UKnn6D4qyg3T_FxgvwqU": SeatToken,
		"st_7XWVxe9mJD0Ll6MD7vKpFCFGKstsG_VpeMbefMABhlE": SeatToken,
		"pt_Xq3LmV8rT2nBw9ZkC4hJ7pYs1dF6gUe0aRiOtNvM5cQ": PlayerToken,
		"st_" + strings.Repeat("a", 43):                  SeatToken, // any 43 base64url characters, as the edge always accepted
	} {
		if k, ok := KindOf(text); !ok || k != want {
			t.Errorf("KindOf(%q) = %v, %v; want %v", text, k, ok, want)
		}
	}
}

func TestWellFormedRefuses(t *testing.T) {
	seat, _ := SeatToken.Mint(&counting{})
	key, _ := APIKey.Mint(&counting{})
	tests := []struct {
		kind Kind
		text string
		why  string
	}{
		{SeatToken, "", "empty"},
		{SeatToken, seat[:45], "short"},
		{SeatToken, seat + "A", "long"},
		{SeatToken, "pt_" + seat[3:], "another kind's prefix"},
		{SeatToken, "ST_" + seat[3:], "prefix in capitals"},
		{SeatToken, seat[:10] + "+" + seat[11:], "not base64url"},
		{SeatToken, seat[:10] + "=" + seat[11:], "padding"},
		{SeatToken, seat[:10] + "é" + seat[12:], "not ASCII"},
		{APIKey, strings.ToUpper(key), "capitals"},
		{APIKey, key[:19] + "-" + key[20:], "no separator"},
		{APIKey, key[:len(key)-1] + "b", "not the canonical base32 (unused low bits set)"},
		{APIKey, key[:5] + "1" + key[6:], "a digit outside base32"},
		{LinkCode, "ABCDEFG", "short"},
		{LinkCode, "ABCDEFGO", "O is a look-alike"},
		{LinkCode, "ABCDEFG1", "1 is a look-alike"},
		{LinkCode, "abcdefgh", "lowercase (Normalize first)"},
		{InviteCode, "ABCDEFGH", "a link code's length"},
		{Kind(0), seat, "no kind"},
		{Kind(200), seat, "unknown kind"},
	}
	for _, tt := range tests {
		if tt.kind.WellFormed(tt.text) {
			t.Errorf("%v.WellFormed(%q) = true; want false (%s)", tt.kind, tt.text, tt.why)
		}
	}
	if _, ok := KindOf("hello"); ok {
		t.Error(`KindOf("hello") found a kind`)
	}
	if Kind(0).String() != "credential.Kind(0)" || Kind(0).Len() != 0 || Kind(0).Prefix() != "" {
		t.Error("the zero Kind is not empty")
	}
}

func TestSplit(t *testing.T) {
	key, _ := APIKey.Mint(&counting{})
	parts, ok := APIKey.Split(key)
	if !ok || len(parts) != 2 || "ak_"+parts[0]+"_"+parts[1] != key || len(parts[0]) != 16 {
		t.Fatalf("APIKey.Split(%q) = %q, %v", key, parts, ok)
	}
	if _, ok := APIKey.Split(key[1:]); ok {
		t.Error("Split of a malformed key succeeded")
	}
	if !APIKey.PartWellFormed(0, parts[0]) || !APIKey.PartWellFormed(1, parts[1]) || APIKey.PartWellFormed(0, parts[1]) ||
		APIKey.PartWellFormed(2, parts[0]) || APIKey.PartWellFormed(-1, parts[0]) || Kind(0).PartWellFormed(0, parts[0]) {
		t.Error("PartWellFormed is wrong")
	}
}

func TestNormalize(t *testing.T) {
	for _, tt := range []struct {
		kind  Kind
		typed string
		want  string
		ok    bool
	}{
		{LinkCode, "ABCD2345", "ABCD2345", true},
		{LinkCode, "abcd-2345", "ABCD2345", true},
		{LinkCode, " ab cd 23 45 ", "ABCD2345", true},
		{LinkCode, "abcd-234", "", false},
		{LinkCode, "abcd-23456", "", false},
		{LinkCode, "abcd-234o", "", false},
		{LinkCode, "abcd-234ㅁ", "", false},
		{LinkCode, strings.Repeat("A", 1000), "", false},
		{InviteCode, "zzzz-zzzz-zz", "ZZZZZZZZZZ", true},
		{SeatToken, "st_" + strings.Repeat("a", 43), "", false}, // machine-read: exact or nothing
	} {
		got, ok := tt.kind.Normalize(tt.typed)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("%v.Normalize(%q) = %q, %v; want %q, %v", tt.kind, tt.typed, got, ok, tt.want, tt.ok)
		}
	}
}

func TestMintReadsExactlyItsBytesAndReportsAShortSource(t *testing.T) {
	src := bytes.NewReader(make([]byte, 32+5))
	if _, err := SeatToken.Mint(src); err != nil {
		t.Fatal(err)
	}
	if src.Len() != 5 {
		t.Errorf("a seat token read %d bytes; want 32", 37-src.Len())
	}
	_, err := SeatToken.Mint(src)
	if !errors.Is(err, io.ErrUnexpectedEOF) || !strings.HasPrefix(err.Error(), "credential: mint seat token: random source") {
		t.Errorf("Mint from a short source = %v; want a credential error wrapping io.ErrUnexpectedEOF", err)
	}
	if _, err := Kind(0).Mint(src); err == nil {
		t.Error("Mint of no kind = nil error")
	}
}

func TestLogNames(t *testing.T) {
	names := strings.Join(LogNames(), ",")
	for _, want := range []string{"seatToken", "playerToken", "apiKey", "x-api-key", "linkCode", "inviteCode"} {
		if !strings.Contains(names, want) {
			t.Errorf("LogNames() = %s; lacks %s", names, want)
		}
	}
}

func TestRedact(t *testing.T) {
	tok := "st_" + strings.Repeat("a", 43)
	ptok := "pt_" + strings.Repeat("b", 43)
	key, _ := APIKey.Mint(&counting{})
	tests := []struct{ in, want string }{
		{"", ""},
		{"no token here", "no token here"},
		{tok, "st_[REDACTED]"},
		{"Bearer " + tok, "Bearer st_[REDACTED]"},
		{tok + " and " + tok, "st_[REDACTED] and st_[REDACTED]"},
		{"?token=" + tok + "&x=1", "?token=st_[REDACTED]&x=1"},
		{"st_short", "st_short"},                                                     // too short to be a token
		{"first_st_" + strings.Repeat("b", 30), "first_st_[REDACTED]"},               // after an underscore
		{"last_state_with_a_rather_long_name", "last_state_with_a_rather_long_name"}, // inside a word
		{"receipt_number_and_something_long", "receipt_number_and_something_long"},   // pt_ inside a word
		{"token%3D" + tok + "%26x", "token%3Dst_[REDACTED]%26x"},                     // after a %XX escape
		{"x" + tok, "xst_[REDACTED]"},                                                // a whole token is masked wherever it starts
		{"st_" + strings.Repeat("c", 20), "st_[REDACTED]"},                           // a piece of one
		{"st_st_" + strings.Repeat("d", 25), "st_[REDACTED]"},
		{"player " + ptok + ".", "player pt_[REDACTED]."},
		{"key=" + key, "key=ak_[REDACTED]"},
		{"key " + key[:30] + "…", "key ak_[REDACTED]…"}, // a truncated key
		{"code ABCD2345 ok", "code ABCD2345 ok"},        // codes are masked by name, not here
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !MayContain(tt.in) && Redact(tt.in) != tt.in {
			t.Errorf("MayContain(%q) = false but Redact changes it", tt.in)
		}
	}
}

// spellings are the ways a credential shows up in a log line.
func spellings(secret string) map[string]string {
	js, _ := json.Marshal(map[string]string{"token": secret})
	return map[string]string{
		"plain":         secret,
		"bearer":        "Authorization: Bearer " + secret,
		"json":          string(js),
		"quoted":        fmt.Sprintf("token %q rejected", secret),
		"query":         "/v1/games/g1/stream?token=" + secret + "&lang=ko",
		"url-values":    url.Values{"token": {secret}, "lang": {"ko"}}.Encode(),
		"url-encoded":   "redirect=" + url.QueryEscape("/x?token="+secret),
		"token%3D":      "q=token%3D" + secret + "%26lang%3Dko",
		"path":          "GET /v1/games/" + secret,
		"glued to word": "token" + secret,
		"error":         fmt.Errorf("seat %s: %w", secret, errors.New("forbidden")).Error(),
	}
}

// One credential of each kind recognised in free text, in every spelling:
// masked, with no 12-character piece of its random part left.
func TestRedactMasksEveryKindInEverySpelling(t *testing.T) {
	random := rand.NewChaCha8([32]byte{'r', 'e', 'd', 'a', 'c', 't'})
	for _, k := range Kinds() {
		secret, err := k.Mint(random)
		if err != nil {
			t.Fatal(err)
		}
		if k.format().public {
			if k.format().inFreeText || len(k.format().logNames) > 0 {
				t.Errorf("%v is no secret but is masked", k)
			}
			continue
		}
		if !k.format().inFreeText {
			if !strings.Contains(strings.Join(LogNames(), ","), k.format().logNames[0]) {
				t.Errorf("%v is masked neither in free text nor by name", k)
			}
			continue
		}
		body := secret[len(k.Prefix()):]
		for name, line := range spellings(secret) {
			out := Redact(line)
			for i := 0; i+12 <= len(body); i++ {
				if strings.Contains(out, body[i:i+12]) {
					t.Errorf("%v, %s: Redact(%q) = %q keeps %q", k, name, line, out, body[i:i+12])
					break
				}
			}
			if !strings.Contains(out, k.Prefix()+Redacted) {
				t.Errorf("%v, %s: Redact(%q) = %q; want the prefix and %s in its place", k, name, line, out, Redacted)
			}
		}
	}
}

// assertNoCredential fails if out holds a prefix of a free-text kind
// followed by a whole credential's worth of URL-safe characters.
func assertNoCredential(t *testing.T, in, out string) {
	t.Helper()
	for _, k := range freeText {
		p := k.Prefix()
		body := k.Len() - len(p)
		for i := strings.Index(out, p); i >= 0; {
			n := 0
			for j := i + len(p); j < len(out) && isBase64URL(out[j]); j++ {
				n++
			}
			if n >= body {
				t.Fatalf("Redact(%q) = %q still holds a %v at %d", in, out, k, i)
			}
			next := strings.Index(out[i+1:], p)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
}

// FuzzRedact: Redact never panics, its output never holds a whole
// credential of a free-text kind, a credential minted from the fuzzer's
// bytes and put anywhere is gone, and redacting twice changes nothing.
func FuzzRedact(f *testing.F) {
	f.Add("", "", []byte{}, uint8(1))
	f.Add("Bearer ", " given", []byte{1, 2, 3}, uint8(1))
	f.Add("token%3D", "%26x", []byte{9}, uint8(2))
	f.Add("xst_", "_st_st_", []byte{255, 0, 255}, uint8(3))
	f.Add(`{"token":"`, `"}`, []byte("seed"), uint8(2))
	f.Add("last_state_with_a_rather_long_name", "pt_pt_pt_", []byte{7}, uint8(3))
	f.Fuzz(func(t *testing.T, before, after string, seed []byte, kind uint8) {
		k := freeText[int(kind)%len(freeText)]
		if len(seed) == 0 {
			seed = []byte{0}
		}
		secret, err := k.Mint(bytes.NewReader(bytes.Repeat(seed, 64/len(seed)+64)))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []string{before + after, before + secret + after} {
			out := Redact(in)
			assertNoCredential(t, in, out)
			if again := Redact(out); again != out {
				t.Fatalf("Redact(Redact(%q)) = %q; want %q (idempotent)", in, again, out)
			}
			if !MayContain(in) && out != in {
				t.Fatalf("MayContain(%q) = false but Redact changed it to %q", in, out)
			}
		}
		if out := Redact(before + secret + after); strings.Contains(out, secret) {
			t.Fatalf("Redact(%q) = %q keeps the %v", before+secret+after, out, k)
		}
	})
}

func BenchmarkRedact(b *testing.B) {
	tok, _ := SeatToken.Mint(&counting{})
	for _, bc := range []struct{ name, s string }{
		{"no credential", `POST /v1/games/AbCdEfGhIjKlMnOpQrStUv/actions answered 200 in 3.2ms, last_state_with_a_long_name`},
		{"one token", "seat " + tok + " is not a seat of this game"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Redact(bc.s)
			}
		})
	}
}

func TestRecoveryCodeAndSessionID(t *testing.T) {
	code, err := RecoveryCode.Mint(&counting{})
	if err != nil {
		t.Fatal(err)
	}
	const alphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
	var plain []byte
	for i := range 24 {
		plain = append(plain, alphabet[i%31])
	}
	want := string(plain[0:4]) + "-" + string(plain[4:8]) + "-" + string(plain[8:12]) + "-" + string(plain[12:16]) + "-" + string(plain[16:20]) + "-" + string(plain[20:24])
	if code != want || RecoveryCode.Len() != 29 || !RecoveryCode.WellFormed(code) {
		t.Fatalf("RecoveryCode.Mint = %q (Len %d); want %q, 29", code, RecoveryCode.Len(), want)
	}
	if k, ok := KindOf(code); !ok || k != RecoveryCode {
		t.Errorf("KindOf(%q) = %v, %v", code, k, ok)
	}
	for _, typed := range []string{strings.ToLower(code), strings.ReplaceAll(code, "-", ""), strings.ReplaceAll(code, "-", " "), " " + strings.ReplaceAll(code, "-", "--") + " "} {
		if got, ok := RecoveryCode.Normalize(typed); !ok || got != code {
			t.Errorf("RecoveryCode.Normalize(%q) = %q, %v; want %q", typed, got, ok, code)
		}
	}
	for _, bad := range []string{code[:28], code + "2", strings.ReplaceAll(code, "-", ""), code[:4] + code[5:9] + "-" + "-" + code[10:], strings.Replace(code, "2", "0", 1), "st_" + code} {
		if RecoveryCode.WellFormed(bad) {
			t.Errorf("RecoveryCode.WellFormed(%q) = true", bad)
		}
	}
	if _, ok := RecoveryCode.Normalize(code[:28]); ok {
		t.Error("a code one character short normalized")
	}

	id, err := SessionID.Mint(&counting{})
	if err != nil || id != "se_"+base64.RawURLEncoding.EncodeToString(seq(0, 16)) || SessionID.Len() != 25 || !SessionID.WellFormed(id) {
		t.Fatalf("SessionID.Mint = %q, %v", id, err)
	}
	if Redact("session "+id) != "session "+id {
		t.Error("a session id was masked; it is not a secret")
	}
	if !strings.Contains(strings.Join(LogNames(), ","), "recoveryCode") {
		t.Error("recovery codes are not masked by name")
	}
}
