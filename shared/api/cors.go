package api

import (
	"net/http"
	"strconv"
	"strings"
)

// CORS as the HTTP API's CorsConfiguration in template.yaml answers it on
// AWS, for the local server and any other listener without API Gateway in
// front. On AWS API Gateway answers preflights itself and replaces the CORS
// headers of the function's answers, so the same wrapper there is harmless.

// The CORS policy: the methods and request headers of template.yaml's
// CorsConfiguration (plus Accept-Language, which the API reads for its
// texts), the response headers a browser page may read, and how long a
// preflight answer may be cached (MaxAge).
var (
	corsAllowMethods  = []string{"GET", "POST", "PATCH", "DELETE", "OPTIONS"}
	corsAllowHeaders  = []string{"Authorization", "Content-Type", "X-Api-Key", "Accept-Language"}
	corsExposeHeaders = []string{"Location", "Content-Language", "Retry-After"}
)

const corsMaxAge = 600 // seconds

// WithCORS wraps next with the API's CORS policy for allowedOrigins (exact
// origins such as "https://play.example.com"; "*" allows any origin):
//
//   - a preflight (OPTIONS with Origin and Access-Control-Request-Method)
//     is answered here with 204: for an allowed origin with the
//     Access-Control-Allow-Origin, -Methods, -Headers and -Max-Age headers;
//     for another origin with none of them (the browser then refuses), as
//     API Gateway does, so next never sees a preflight;
//   - an actual request from an allowed origin gets Access-Control-Allow-
//     Origin and Access-Control-Expose-Headers (Location, Content-Language,
//     Retry-After) on its answer;
//   - every other request is passed on untouched.
//
// Answers to requests with an Origin say Vary: Origin. Seat tokens
// travel in the Authorization header, never in cookies, so no credentials
// are allowed and "*" exposes nothing.
func WithCORS(next http.Handler, allowedOrigins []string) http.Handler {
	anyOrigin := false
	allowed := map[string]bool{}
	for _, o := range allowedOrigins {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		switch {
		case o == "*":
			anyOrigin = true
		case o != "":
			allowed[strings.ToLower(o)] = true
		}
	}
	// allowOrigin is the Access-Control-Allow-Origin for origin ("" when
	// the origin is not allowed).
	allowOrigin := func(origin string) string {
		switch {
		case origin == "":
			return ""
		case anyOrigin:
			return "*"
		case allowed[strings.ToLower(strings.TrimRight(origin, "/"))]:
			return origin
		}
		return ""
	}
	methods := strings.Join(corsAllowMethods, ", ")
	headers := strings.Join(corsAllowHeaders, ", ")
	expose := strings.Join(corsExposeHeaders, ", ")
	maxAge := strconv.Itoa(corsMaxAge)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		allow := allowOrigin(origin)
		h.Add("Vary", "Origin")
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			if allow != "" {
				h.Set("Access-Control-Allow-Origin", allow)
				h.Set("Access-Control-Allow-Methods", methods)
				h.Set("Access-Control-Allow-Headers", headers)
				h.Set("Access-Control-Max-Age", maxAge)
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if allow != "" {
			h.Set("Access-Control-Allow-Origin", allow)
			h.Set("Access-Control-Expose-Headers", expose)
		}
		next.ServeHTTP(w, r)
	})
}
