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
	"slices"
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
	assets     map[string]*webAsset // by URL path
	pagePolicy string               // the page's Content-Security-Policy
}

// The page carries its stylesheet and its one script inline, put in at
// start-up from the files under assets/: a first visit is one request
// instead of three, and a reload revalidates one ETag instead of three.
// On the 2-core test machine the two sub-requests kept the client's code
// from the browser until 101–257 ms after navigation start, where the page
// itself arrived by 8–49 ms (docs/web-client.md, "Measurements"). The
// source index.html keeps the ordinary tags, to read and to edit; the files
// stay served under /assets/ too.
const (
	pageStylesheet    = "assets/app.css"
	pageScript        = "assets/bundle/app.js"
	pageStylesheetTag = `<link rel="stylesheet" href="` + pageStylesheet + `">`
	pageScriptTag     = `<script type="module" src="` + pageScript + `"></script>`
)

// pageContentSecurityPolicy allows the page nothing but its own origin (its
// API and stream: CSP 'self' covers ws: to the same host) and exactly its
// own inline script and stylesheet, named by their SHA-256 hashes, so no
// other inline code runs. Styles set from the script through the CSSOM
// (element.style) are not inline styles to CSP and need no allowance.
func pageContentSecurityPolicy(script, stylesheet []byte) string {
	hash := func(b []byte) string {
		sum := sha256.Sum256(b)
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return "default-src 'self'; script-src " + hash(script) + "; style-src " + hash(stylesheet) + "; " +
		"img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

// inlinePage returns index.html with its stylesheet and script tags replaced
// by the files' contents, and the page's content security policy.
func inlinePage(page, stylesheet, script []byte) ([]byte, string, error) {
	// The contents end their element at the first "</style" or "</script"
	// (any case) whatever surrounds it; esbuild escapes "</script" in its
	// output, and this check keeps it so.
	for _, c := range []struct {
		name, closing string
		body          []byte
	}{{pageStylesheet, "</style", stylesheet}, {pageScript, "</script", script}} {
		if bytes.Contains(bytes.ToLower(c.body), []byte(c.closing)) {
			return nil, "", fmt.Errorf("%s contains %q and cannot be inlined", c.name, c.closing)
		}
	}
	for _, tag := range []string{pageStylesheetTag, pageScriptTag} {
		if bytes.Count(page, []byte(tag)) != 1 {
			return nil, "", fmt.Errorf("index.html must contain %s exactly once", tag)
		}
	}
	out := bytes.Replace(page, []byte(pageStylesheetTag), slices.Concat([]byte("<style>"), stylesheet, []byte("</style>")), 1)
	out = bytes.Replace(out, []byte(pageScriptTag), slices.Concat([]byte(`<script type="module">`), script, []byte("</script>")), 1)
	return out, pageContentSecurityPolicy(script, stylesheet), nil
}

// newWebClient reads the embedded client.
func newWebClient() (*webClient, error) {
	root, err := fs.Sub(webFiles, "web")
	if err != nil {
		return nil, err
	}
	c := &webClient{assets: map[string]*webAsset{}}
	var page []byte
	err = fs.WalkDir(root, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(root, name)
		if err != nil {
			return err
		}
		if name == "index.html" {
			page = body // served once the files it takes in are read
			return nil
		}
		if !strings.HasPrefix(name, "assets/") {
			return fmt.Errorf("%s is outside assets/ and would not be served", name)
		}
		c.assets["/"+name], err = prepareAsset(name, body)
		return err
	})
	if err == nil && page == nil {
		err = fmt.Errorf("index.html is missing")
	}
	for _, name := range []string{pageStylesheet, pageScript} {
		if err == nil && c.assets["/"+name] == nil {
			err = fmt.Errorf("%s (inlined into the page) is missing", name)
		}
	}
	if err == nil {
		page, c.pagePolicy, err = inlinePage(page, c.assets["/"+pageStylesheet].body, c.assets["/"+pageScript].body)
	}
	if err == nil {
		c.assets["/"], err = prepareAsset("index.html", page)
	}
	if err != nil {
		return nil, fmt.Errorf("web client: %w", err)
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
		h.Set("Content-Security-Policy", c.pagePolicy)
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
