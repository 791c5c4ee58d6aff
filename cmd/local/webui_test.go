package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"chessapi/infra/emulator/emulatortest"
)

// The client's HTTP side: what GET / and /assets/ answer, and that every
// other path still reaches the API unchanged.

func webTestServer(t *testing.T) *httptest.Server {
	t.Helper()
	web, err := newWebClient()
	if err != nil {
		t.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-From", "api")
		w.WriteHeader(http.StatusTeapot)
	})
	srv := httptest.NewServer(withWebClient(api, web))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, method, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	// The transport would add Accept-Encoding and decode gzip itself.
	tr := &http.Transport{DisableCompression: true}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

func TestWebClientServesPageAndAssets(t *testing.T) {
	srv := webTestServer(t)
	embedded, _ := fs.ReadFile(webFiles, "web/index.html")
	stylesheet, _ := fs.ReadFile(webFiles, "web/"+pageStylesheet)
	script, _ := fs.ReadFile(webFiles, "web/"+pageScript)
	page, policy, err := inlinePage(embedded, stylesheet, script)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path string
		header       map[string]string
		status       int
		ctype        string
		gzipped      bool
	}{
		{"GET", "/", nil, 200, "text/html; charset=utf-8", false},
		{"HEAD", "/", nil, 200, "text/html; charset=utf-8", false},
		{"GET", "/", map[string]string{"Accept-Encoding": "gzip, br"}, 200, "text/html; charset=utf-8", true},
		{"GET", "/", map[string]string{"Accept-Encoding": "gzip;q=0"}, 200, "text/html; charset=utf-8", false},
		{"GET", "/assets/game.js", map[string]string{"Accept-Encoding": "*"}, 200, "text/javascript; charset=utf-8", true},
		{"GET", "/assets/app.css", nil, 200, "text/css; charset=utf-8", false},
		{"GET", "/assets/nope.js", nil, 404, "text/plain; charset=utf-8", false},
		{"GET", "/assets/", nil, 404, "text/plain; charset=utf-8", false},
	} {
		res, body := get(t, tc.method, srv.URL+tc.path, tc.header)
		if res.StatusCode != tc.status || res.Header.Get("Content-Type") != tc.ctype {
			t.Errorf("%s %s %v: %d %q; want %d %q", tc.method, tc.path, tc.header, res.StatusCode, res.Header.Get("Content-Type"), tc.status, tc.ctype)
			continue
		}
		if tc.status != 200 {
			continue
		}
		if got := res.Header.Get("Content-Encoding") == "gzip"; got != tc.gzipped {
			t.Errorf("%s %s %v: gzip %v; want %v", tc.method, tc.path, tc.header, got, tc.gzipped)
		}
		if tc.method == "HEAD" {
			if len(body) != 0 {
				t.Errorf("HEAD %s: a body of %d bytes", tc.path, len(body))
			}
			continue
		}
		if tc.gzipped {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s: %v", tc.path, err)
			}
			body, _ = io.ReadAll(zr)
		}
		if tc.path == "/" && !bytes.Equal(body, page) {
			t.Errorf("GET / is not index.html with its stylesheet and script inlined")
		}
		if tc.path == "/" && res.Header.Get("Content-Security-Policy") != policy {
			t.Errorf("GET / with the content security policy %q; want %q", res.Header.Get("Content-Security-Policy"), policy)
		}
		if res.Header.Get("ETag") == "" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: headers %v", tc.path, res.Header)
		}
	}

	// Revalidation: the ETag of each representation answers 304.
	for _, enc := range []string{"", "gzip"} {
		h := map[string]string{"Accept-Encoding": enc}
		res, _ := get(t, "GET", srv.URL+"/assets/board.js", h)
		h["If-None-Match"] = res.Header.Get("ETag")
		if again, body := get(t, "GET", srv.URL+"/assets/board.js", h); again.StatusCode != 304 || len(body) != 0 {
			t.Errorf("If-None-Match %s (%q): %d with %d bytes; want 304, empty", h["If-None-Match"], enc, again.StatusCode, len(body))
		}
	}

	// Everything else is the API's, with its own 404 and 405.
	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/nope"}, {"POST", "/"}, {"GET", "/favicon.ico"}, {"GET", "/index.html"}, {"DELETE", "/assets/game.js"}, {"GET", "/v1/stream"},
	} {
		if res, _ := get(t, tc.method, srv.URL+tc.path, nil); res.StatusCode != http.StatusTeapot || res.Header.Get("X-From") != "api" {
			t.Errorf("%s %s: %d; want the API's answer", tc.method, tc.path, res.StatusCode)
		}
	}
}

// TestInlinePage: the page's stylesheet and script go inline exactly where
// their tags were, the policy allows exactly those two by hash and no
// other inline code, and what cannot be inlined safely is refused.
func TestInlinePage(t *testing.T) {
	const stylesheet, script = "body { color: red }", `document.title = "<\/script>";`
	page := []byte("<head>\n" + pageStylesheetTag + "\n" + pageScriptTag + "\n</head><body></body>")
	out, policy, err := inlinePage(page, []byte(stylesheet), []byte(script))
	if err != nil {
		t.Fatal(err)
	}
	want := "<head>\n<style>body { color: red }</style>\n<script type=\"module\">document.title = \"<\\/script>\";</script>\n</head><body></body>"
	if string(out) != want {
		t.Errorf("inlined page\n%s\nwant\n%s", out, want)
	}
	// The hashes of exactly the inlined texts, from openssl:
	// printf '%s' TEXT | openssl dgst -sha256 -binary | base64
	for _, hash := range []string{
		"script-src 'sha256-V/oUP9YubisNQcfuSjD517DlfYfT/3PK1xmvzz5SHqg=';",
		"style-src 'sha256-kl6HQb5peP+QG0x7FWklMRxR/HYq4xozK9Oa6BWSDQA=';",
	} {
		if !strings.Contains(policy, hash) {
			t.Errorf("policy %q lacks %q", policy, hash)
		}
	}
	if strings.Contains(policy, "unsafe-inline") || strings.Contains(policy, "script-src 'self'") {
		t.Errorf("policy %q allows more than the page's own inline code", policy)
	}

	for _, tc := range []struct {
		name, page, stylesheet, script string
		wantErr                        string
	}{
		{"a script ending its element", pageStylesheetTag + pageScriptTag, stylesheet, `x = "</SCRIPT>"`, `contains "</script"`},
		{"a stylesheet ending its element", pageStylesheetTag + pageScriptTag, `/* </style> */`, script, `contains "</style"`},
		{"no script tag", pageStylesheetTag, stylesheet, script, "exactly once"},
		{"two stylesheet tags", pageStylesheetTag + pageStylesheetTag + pageScriptTag, stylesheet, script, "exactly once"},
	} {
		_, _, err := inlinePage([]byte(tc.page), []byte(tc.stylesheet), []byte(tc.script))
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: error %v; want one saying %q", tc.name, err, tc.wantErr)
		}
	}
}

// TestLocalServerMountsClient: the real server answers GET / with the
// client and keeps the API's JSON errors for unknown paths.
func TestLocalServerMountsClient(t *testing.T) {
	c := startLocal(t)
	res, body := get(t, "GET", c.base+"/", nil)
	bundle, _ := fs.ReadFile(webFiles, "web/assets/bundle/app.js")
	if res.StatusCode != 200 || !bytes.Contains(body, slices.Concat([]byte(`<script type="module">`), bundle, []byte(`</script>`))) {
		t.Fatalf("GET /: %d %.200s; want the page with the bundle inline", res.StatusCode, body)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v1/nope", 404, "not_found"},
		{"POST", "/", 404, "not_found"},
		{"PUT", "/v1/games", 405, "method_not_allowed"},
	} {
		res, body := get(t, tc.method, c.base+tc.path, nil)
		var e struct{ Error struct{ Code string } }
		_ = json.Unmarshal(body, &e)
		if res.StatusCode != tc.status || e.Error.Code != tc.code {
			t.Errorf("%s %s: %d %s; want the API's %d %s", tc.method, tc.path, res.StatusCode, body, tc.status, tc.code)
		}
	}
}

// TestWebClientTexts: every text key the client uses is in both languages,
// and every result reason of the API has its beginner's explanation.
func TestWebClientTexts(t *testing.T) {
	src, err := fs.ReadFile(webFiles, "web/assets/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	catalogue := string(src)
	koStart, enStart := strings.Index(catalogue, "const ko = {"), strings.Index(catalogue, "const en = {")
	end := strings.Index(catalogue, "const catalogues")
	if koStart < 0 || enStart < koStart || end < enStart {
		t.Fatal("i18n.js: the ko and en catalogues are not where this test looks")
	}
	keyRE := regexp.MustCompile(`'([a-zA-Z0-9.]+)':`)
	keys := func(s string) []string {
		var out []string
		for _, m := range keyRE.FindAllStringSubmatch(s, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return out
	}
	ko, en := keys(catalogue[koStart:enStart]), keys(catalogue[enStart:end])
	if !slices.Equal(ko, en) {
		for _, k := range ko {
			if !slices.Contains(en, k) {
				t.Errorf("%q has no English text", k)
			}
		}
		for _, k := range en {
			if !slices.Contains(ko, k) {
				t.Errorf("%q has no Korean text", k)
			}
		}
	}
	// Literal keys in the code.
	used := regexp.MustCompile(`\bt\('([a-zA-Z0-9.]+)'[,)]`)
	entries, _ := fs.ReadDir(webFiles, "web/assets")
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".js") {
			continue
		}
		code, _ := fs.ReadFile(webFiles, "web/assets/"+e.Name())
		for _, m := range used.FindAllStringSubmatch(string(code), -1) {
			if !slices.Contains(ko, m[1]) {
				t.Errorf("%s uses text %q, which is not in the catalogue", e.Name(), m[1])
			}
		}
	}
	// Keys built at run time, from the API's enumerations.
	spec, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum       []string `yaml:"enum"`
				Properties map[string]struct {
					Enum []string `yaml:"enum"`
				} `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	families := map[string][]string{
		"result.why.": doc.Components.Schemas["Result"].Properties["reason"].Enum,
		"ai.level.":   doc.Components.Schemas["AILevel"].Enum,
		"piece.":      {"k", "q", "r", "b", "n", "p"},
		"color.":      {"white", "black"},
		"phase.":      {"waiting", "playing", "finished"},
		"conn.":       {"connecting", "live", "offline"},
		"game.claim.": {"threefold", "fiftyMove"},
		"room.":       {"free", "beginner", "intermediate", "expert"},
	}
	for prefix, values := range families {
		if len(values) == 0 {
			t.Errorf("openapi.yaml: no values found for %s*", prefix)
		}
		for _, v := range values {
			if !slices.Contains(ko, prefix+v) {
				t.Errorf("no text %s%s (the client builds this key from the API's values)", prefix, v)
			}
		}
	}
}

// webBundleArgs build the page's one script from the client's modules
// (web/assets/*.js, the readable source): esbuild, pinned in
// infra/package-lock.json, follows the imports from app.js, the lazily
// imported screens included, into one minified ES module. One request
// instead of thirteen is most of the first load's gain on a small machine
// (docs/web-client.md).
var webBundleArgs = []string{"web/assets/app.js", "--bundle", "--format=esm", "--minify", "--target=es2020", "--legal-comments=none", "--log-level=warning"}

const webBundle = "web/assets/bundle/app.js"

// TestWebBundleIsCurrent rebuilds the bundle and compares it with the
// committed one, so the page never runs code older than its modules.
// UPDATE_WEB_BUNDLE=1 (make web) writes it instead.
func TestWebBundleIsCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: needs esbuild from infra/node_modules")
	}
	out := filepath.Join(t.TempDir(), "app.js")
	cmd := exec.Command(emulatortest.Esbuild(t), append(slices.Clone(webBundleArgs), "--outfile="+out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}
	built, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("UPDATE_WEB_BUNDLE") == "1" {
		if err := os.MkdirAll(filepath.Dir(webBundle), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(webBundle, built, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", webBundle, len(built))
		return
	}
	committed, err := os.ReadFile(webBundle)
	if err != nil || !bytes.Equal(built, committed) {
		t.Fatalf("%s is not the bundle of web/assets/*.js (%v): run make web", webBundle, err)
	}
}
