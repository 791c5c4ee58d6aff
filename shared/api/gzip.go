package api

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"

	// At the same level two to three times as fast as compress/gzip, and
	// a little smaller (BenchmarkGzipAnswer; docs/push.md).
	"github.com/klauspost/compress/gzip"
)

// Compressed answers (SPEC §16.1): an answer of at least gzipMinBytes to a
// client that accepts gzip (Accept-Encoding) is sent gzip-encoded. It is
// done here, in the handler, because the same handler answers locally and
// from the Lambda functions, and API Gateway HTTP APIs do not compress: a
// gzip body is not UTF-8, so the Lambda adapter hands it to API Gateway
// base64-encoded (isBase64Encoded), which sends the client the bytes.
// Smaller answers are sent as they are: under a kilobyte the header and
// the CPU cost more than the bytes saved.
const gzipMinBytes = 1024

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// withGzip wraps h so that its answers are compressed when they may be.
func withGzip(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Accept-Encoding")
		if r.Method == http.MethodHead || !acceptsGzip(r.Header.Values("Accept-Encoding")) {
			h.ServeHTTP(w, r)
			return
		}
		gw := &gzipResponse{ResponseWriter: w, status: http.StatusOK}
		defer gw.finish()
		h.ServeHTTP(gw, r)
	})
}

// acceptsGzip reads Accept-Encoding (RFC 9110 §12.5.3): gzip, or "*" when
// gzip is not named, with a quality above zero.
func acceptsGzip(values []string) bool {
	star := false
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			name = strings.ToLower(strings.TrimSpace(name))
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						q = f
					}
				}
			}
			switch name {
			case "gzip", "x-gzip":
				return q > 0
			case "*":
				star = q > 0
			}
		}
	}
	return star
}

// gzipResponse holds the answer's first bytes until it knows whether it
// reaches gzipMinBytes; then it writes it compressed, or as it is.
type gzipResponse struct {
	http.ResponseWriter
	status      int
	wroteHeader bool // WriteHeader was called (held until the body decides)
	buf         bytes.Buffer
	gz          *gzip.Writer
	passed      bool // the answer goes out uncompressed
}

func (g *gzipResponse) WriteHeader(status int) {
	if g.wroteHeader || g.passed || g.gz != nil {
		return
	}
	g.status, g.wroteHeader = status, true
	if status < 200 || status == http.StatusNoContent || status == http.StatusNotModified {
		g.pass() // no body
	}
}

func (g *gzipResponse) Write(p []byte) (int, error) {
	switch {
	case g.passed:
		return g.ResponseWriter.Write(p)
	case g.gz != nil:
		return g.gz.Write(p)
	}
	g.buf.Write(p)
	if g.buf.Len() >= gzipMinBytes {
		if err := g.compress(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// pass sends the status and what is held, uncompressed.
func (g *gzipResponse) pass() {
	g.passed = true
	g.ResponseWriter.WriteHeader(g.status)
	if g.buf.Len() > 0 {
		_, _ = g.ResponseWriter.Write(g.buf.Bytes())
		g.buf.Reset()
	}
}

// compress starts the compressed answer with what is held. An answer that
// is already encoded is passed on as it is.
func (g *gzipResponse) compress() error {
	h := g.Header()
	if h.Get("Content-Encoding") != "" {
		g.pass()
		return nil
	}
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	g.ResponseWriter.WriteHeader(g.status)
	g.gz = gzipWriters.Get().(*gzip.Writer)
	g.gz.Reset(g.ResponseWriter)
	_, err := g.gz.Write(g.buf.Bytes())
	g.buf.Reset()
	return err
}

// finish ends the answer: the compressed stream closed, or the short
// answer sent as it is.
func (g *gzipResponse) finish() {
	switch {
	case g.gz != nil:
		_ = g.gz.Close()
		g.gz.Reset(nil)
		gzipWriters.Put(g.gz)
	case !g.passed:
		g.pass()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (g *gzipResponse) Unwrap() http.ResponseWriter { return g.ResponseWriter }
