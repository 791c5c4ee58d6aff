package api

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"chessapi/deploy"
	"chessapi/internal/apispec"
)

// TestEventsFollowOpenAPI validates the request of every HTTP file in
// events/ (the samples `sam local invoke -e` sends, replayed by the Lambda
// and as-deployed tests, whose answers those tests validate) against
// openapi.yaml: method and path of an operation, parameters, headers and
// body. A sample request the contract does not allow fails.
func TestEventsFollowOpenAPI(t *testing.T) {
	spec := apispec.MustLoad(t)
	evs, err := deploy.LoadEvents(filepath.Join("..", "..", "events"))
	if err != nil {
		t.Fatal(err)
	}
	var operations []string
	for _, ev := range evs {
		if ev.Kind != deploy.HTTPEvent {
			continue
		}
		t.Run(ev.Name, func(t *testing.T) {
			req, body, err := apispec.HTTPRequest(*ev.HTTP)
			if err != nil {
				t.Fatal(err)
			}
			if err := spec.ValidateRequest(apispec.Exchange{Request: req, Body: body}); err != nil {
				t.Errorf("%s: %v", ev.Name, err)
			}
			operations = append(operations, spec.Operation(req))
		})
	}
	// Every operation has a sample request.
	for _, route := range Routes() {
		req := httptestRequest(route)
		if op := spec.Operation(req); !slices.Contains(operations, op) {
			t.Errorf("events/ has no sample request for %s %s (operation %s)", route.Method, route.Path, op)
		}
	}
}

// httptestRequest is a request to a route, with {id} filled in.
func httptestRequest(r Route) *http.Request {
	return httptest.NewRequest(r.Method, strings.ReplaceAll(r.Path, "{id}", deploy.SampleGameID), nil)
}
