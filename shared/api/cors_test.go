package api

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// corsDo sends a request through WithCORS around the real handler.
func corsDo(t *testing.T, h http.Handler, method, path string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestCORSPreflight(t *testing.T) {
	a := newTestAPI(t)
	tests := []struct {
		name    string
		origins []string
		origin  string
		want    string // Access-Control-Allow-Origin; "" for none
	}{
		{"any origin", []string{"*"}, "https://play.example.com", "*"},
		{"listed origin", []string{"https://play.example.com", "https://staging.example.com"}, "https://staging.example.com", "https://staging.example.com"},
		{"listed origin, other case", []string{" https://Play.Example.com/ "}, "https://play.example.com", "https://play.example.com"},
		{"unlisted origin", []string{"https://play.example.com"}, "https://evil.example", ""},
		{"no origins", nil, "https://play.example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := WithCORS(a.handler, tt.origins)
			rec := corsDo(t, h, "OPTIONS", "/v1/games/abcdefgh1234/actions", map[string]string{
				"Origin": tt.origin, "Access-Control-Request-Method": "POST",
				"Access-Control-Request-Headers": "authorization, content-type, accept-language",
			})
			hd := rec.Header()
			if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
				t.Fatalf("preflight: %d %q; want 204 and no body", rec.Code, rec.Body)
			}
			if got := hd.Get("Access-Control-Allow-Origin"); got != tt.want {
				t.Errorf("Access-Control-Allow-Origin = %q; want %q", got, tt.want)
			}
			if !slices.Contains(hd.Values("Vary"), "Origin") {
				t.Errorf("Vary = %q; want Origin", hd.Values("Vary"))
			}
			if tt.want == "" {
				for k := range hd {
					if strings.HasPrefix(k, "Access-Control-") {
						t.Errorf("%s set for an origin that is not allowed", k)
					}
				}
				return
			}
			if got := hd.Get("Access-Control-Allow-Methods"); got != "GET, POST, PATCH, DELETE, OPTIONS" {
				t.Errorf("Access-Control-Allow-Methods = %q", got)
			}
			if got := hd.Get("Access-Control-Allow-Headers"); got != "Authorization, Content-Type, X-Api-Key, Accept-Language" {
				t.Errorf("Access-Control-Allow-Headers = %q", got)
			}
			if got := hd.Get("Access-Control-Max-Age"); got != "600" {
				t.Errorf("Access-Control-Max-Age = %q", got)
			}
			if hd.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("credentials allowed")
			}
		})
	}
}

func TestCORSActualRequests(t *testing.T) {
	a := newTestAPI(t)
	h := WithCORS(a.handler, []string{"https://play.example.com"})

	// An allowed origin: the answer is the API's, with the CORS headers.
	rec := corsDo(t, h, "POST", "/v1/games", map[string]string{"Origin": "https://play.example.com"})
	hd := rec.Header()
	if rec.Code != http.StatusCreated || hd.Get("Location") == "" {
		t.Fatalf("create through CORS: %d %s", rec.Code, rec.Body)
	}
	if got := hd.Get("Access-Control-Allow-Origin"); got != "https://play.example.com" {
		t.Errorf("Access-Control-Allow-Origin = %q", got)
	}
	if got := hd.Get("Access-Control-Expose-Headers"); got != "Location, Content-Language, Retry-After" {
		t.Errorf("Access-Control-Expose-Headers = %q", got)
	}
	if vary := hd.Values("Vary"); !slices.Contains(vary, "Origin") || !slices.Contains(vary, "Accept-Language") {
		t.Errorf("Vary = %q; want Origin and the API's Accept-Language", vary)
	}
	// Error answers carry them too (a page must read the error).
	rec = corsDo(t, h, "GET", "/v1/games/nosuchgameatall", map[string]string{"Origin": "https://play.example.com"})
	if rec.Code != http.StatusNotFound || rec.Header().Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("404 through CORS: %d, Allow-Origin %q", rec.Code, rec.Header().Get("Access-Control-Allow-Origin"))
	}

	// Another origin: the API's answer, without CORS headers.
	rec = corsDo(t, h, "GET", "/v1/health", map[string]string{"Origin": "https://evil.example"})
	if rec.Code != 200 || rec.Header().Get("Access-Control-Allow-Origin") != "" || rec.Header().Get("Access-Control-Expose-Headers") != "" {
		t.Errorf("other origin: %d %v", rec.Code, rec.Header())
	}

	// No Origin (apps, curl) and OPTIONS without a preflight's headers are
	// left alone: the API answers them as without the wrapper.
	for _, tc := range []struct {
		method string
		header map[string]string
	}{
		{"GET", nil},
		{"OPTIONS", nil},
		{"OPTIONS", map[string]string{"Origin": "https://play.example.com"}},
	} {
		got := corsDo(t, h, tc.method, "/v1/positions", tc.header)
		plain := corsDo(t, a.handler, tc.method, "/v1/positions", tc.header)
		if got.Code != plain.Code || got.Body.String() != plain.Body.String() {
			t.Errorf("%s %v: %d %s; without CORS %d %s", tc.method, tc.header, got.Code, got.Body, plain.Code, plain.Body)
		}
		if tc.header == nil {
			for k := range got.Header() {
				if strings.HasPrefix(k, "Access-Control-") {
					t.Errorf("%s without Origin: %s set", tc.method, k)
				}
			}
		}
	}
}

// TestCORSMatchesTemplate: WithCORS allows and exposes at least what
// template.yaml's CorsConfiguration does on AWS (methods, request and
// exposed headers, max age; header names compared without case).
func TestCORSMatchesTemplate(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				CorsConfiguration *struct {
					AllowMethods  []string `yaml:"AllowMethods"`
					AllowHeaders  []string `yaml:"AllowHeaders"`
					ExposeHeaders []string `yaml:"ExposeHeaders"`
					MaxAge        int      `yaml:"MaxAge"`
				} `yaml:"CorsConfiguration"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	// CloudFormation's short tags (!Ref, !Sub, ...) are not YAML's: read
	// them as plain nodes.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	var strip func(n *yaml.Node)
	strip = func(n *yaml.Node) {
		if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
			n.Tag = ""
		}
		for _, c := range n.Content {
			strip(c)
		}
	}
	strip(&root)
	if err := root.Decode(&tmpl); err != nil {
		t.Fatal(err)
	}
	found := false
	lower := func(xs []string) []string {
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = strings.ToLower(x)
		}
		slices.Sort(out)
		return out
	}
	for name, r := range tmpl.Resources {
		c := r.Properties.CorsConfiguration
		if r.Type != "AWS::Serverless::HttpApi" || c == nil {
			continue
		}
		found = true
		if got, want := lower(corsAllowMethods), lower(c.AllowMethods); !slices.Equal(got, want) {
			t.Errorf("%s: template allows methods %q; WithCORS %q", name, want, got)
		}
		for _, hd := range lower(c.AllowHeaders) {
			if !slices.Contains(lower(corsAllowHeaders), hd) {
				t.Errorf("%s: template allows header %q; WithCORS does not", name, hd)
			}
		}
		for _, hd := range lower(c.ExposeHeaders) {
			if !slices.Contains(lower(corsExposeHeaders), hd) {
				t.Errorf("%s: template exposes header %q; WithCORS does not", name, hd)
			}
		}
		if c.MaxAge != corsMaxAge {
			t.Errorf("%s: template MaxAge %d; WithCORS %d", name, c.MaxAge, corsMaxAge)
		}
	}
	if !found {
		t.Fatal("template.yaml has no HTTP API with a CorsConfiguration")
	}
}
