package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"chessapi/shared/obs"
	"chessapi/shared/service"
)

// noProfiles serves only the public profile (of nobody); the other routes
// the test sends stop at the edge (no token).
type noProfiles struct{ Games }

func (noProfiles) PublicProfileOf(context.Context, string) (service.PublicProfile, error) {
	return service.PublicProfile{}, service.ErrPlayerNotFound
}

// The access log names the route with its method, as it did when every
// route was a method pattern of the mux (one pattern per path now: the
// account routes overlap "/v1/players/{id}"), and a method the path does
// not serve is still 405 with Allow.
func TestRoutesInTheAccessLog(t *testing.T) {
	var buf bytes.Buffer
	h := obs.Middleware(slog.New(slog.NewJSONHandler(&buf, nil)), NewHandler(Deps{Games: noProfiles{}}))
	for _, tt := range []struct{ method, path, route string }{
		{"GET", "/v1/players/me", "GET /v1/players/me"},
		{"GET", "/v1/players/pl_Abcdefghijklmnopqrstuv", "GET /v1/players/{id}"},
		{"DELETE", "/v1/players/me/sessions/se_x", "DELETE /v1/players/me/sessions/{id}"},
		{"PATCH", "/v1/players/me/sessions/current", "PATCH /v1/players/me/sessions/current"},
		{"HEAD", "/v1/health", "GET /v1/health"},
	} {
		buf.Reset()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		var line struct{ Route string }
		if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line.Route != tt.route {
			t.Errorf("%s %s: logged route %q (%v); want %q", tt.method, tt.path, line.Route, err, tt.route)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("PUT", "/v1/players/me", nil))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, PATCH, DELETE" || !strings.Contains(rec.Body.String(), "method_not_allowed") {
		t.Errorf("PUT /v1/players/me: %d, Allow %q, %s", rec.Code, rec.Header().Get("Allow"), rec.Body)
	}
}
