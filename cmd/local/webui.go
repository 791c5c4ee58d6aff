package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// The reference web client (issue 14): plain ES modules (web/assets), and
// the page's one script bundled from them by esbuild (web/assets/bundle,
// committed; make web), embedded in the binary. It talks to the server
// only through the public HTTP API and the stream, as any app would.
//
//go:embed web
var webFiles embed.FS

// webAsset is one file of the client, prepared once at start-up: the
// embedded files never change while the process runs, so their gzip form
// and ETag are computed once instead of on every request.
type webAsset struct {
	body        []byte
	gzipped     []byte // nil when gzip would not make the file smaller
	contentType string
	etag        string // strong, from the content
}

// webClient serves the client's files: the page at "/" and its files under
// "/assets/".
type webClient struct {
	assets map[string]*webAsset // by URL path
}

// webContentSecurityPolicy allows the page nothing but its own origin: its
// modules, its API and stream (CSP 'self' covers ws: to the same host), and
// the data: URLs of the piece images. Inline styles stay allowed because the
// pieces' stylesheet is built by a module at start-up.
const webContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// newWebClient reads the embedded client.
func newWebClient() (*webClient, error) {
	root, err := fs.Sub(webFiles, "web")
	if err != nil {
		return nil, err
	}
	c := &webClient{assets: map[string]*webAsset{}}
	err = fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		urlPath := "/" + name
		if name == "index.html" {
			urlPath = "/"
		} else if !strings.HasPrefix(name, "assets/") {
			return fmt.Errorf("web client: %s is outside assets/ and would not be served", name)
		}
		c.assets[urlPath], err = prepareAsset(name, body)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("web client: %w", err)
	}
	if c.assets["/"] == nil {
		return nil, fmt.Errorf("web client: index.html is missing")
	}
	return c, nil
}

func prepareAsset(name string, body []byte) (*webAsset, error) {
	ctype := mime.TypeByExtension(path.Ext(name))
	if ctype == "" {
		return nil, fmt.Errorf("%s: no content type for its extension", name)
	}
	// The types the client uses, set explicitly: the system's MIME table
	// (which mime consults) may lack or mislabel .js on some machines.
	switch path.Ext(name) {
	case ".js":
		ctype = "text/javascript; charset=utf-8"
	case ".css":
		ctype = "text/css; charset=utf-8"
	case ".html":
		ctype = "text/html; charset=utf-8"
	}
	sum := sha256.Sum256(body)
	a := &webAsset{body: body, contentType: ctype, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(body); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if buf.Len() < len(body) {
		a.gzipped = buf.Bytes()
	}
	return a, nil
}

// withWebClient puts the client in front of the API: GET / and
// GET /assets/... are the client's, everything else (every /v1 route, the
// stream, and the API's own JSON 404 and 405 answers) goes to api unchanged.
func withWebClient(api http.Handler, web *webClient) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", web)
	mux.Handle("GET /assets/", web)
	mux.Handle("/", api)
	return mux
}

func (c *webClient) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := c.assets[r.URL.Path]
	if a == nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	// Revalidate every time: file names carry no version, and a 304 on
	// loopback costs next to nothing.
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	if r.URL.Path == "/" {
		h.Set("Content-Security-Policy", webContentSecurityPolicy)
		h.Set("Referrer-Policy", "no-referrer") // share links carry invite codes
	}
	body, etag := a.body, a.etag
	if a.gzipped != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		// A representation of its own, so it has an ETag of its own.
		body, etag = a.gzipped, strings.TrimSuffix(a.etag, `"`)+`-gz"`
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", etag)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// acceptsGzip reports whether an Accept-Encoding header allows gzip (listed
// by name or by "*", without q=0).
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q, found := strings.CutPrefix(strings.TrimSpace(params), "q=")
		if !found {
			return true
		}
		v, err := strconv.ParseFloat(q, 64)
		return err == nil && v > 0
	}
	return false
}

// etagMatches reports whether an If-None-Match header lists etag (or "*").
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == etag || tag == "*" {
			return true
		}
	}
	return false
}
