package api

import (
	"slices"
	"testing"

	"chessapi/internal/apispec"
)

// openapi.yaml is the API's contract. Loading it (apispec.Load) validates it
// as an OpenAPI 3.1 document with kin-openapi, examples included; the tests
// here hold it to the rules of apispec.Lint and to the routes the handler
// serves. Every response the handler tests get is validated against it by
// the test helper (helpers_test.go), and the error catalogue is checked
// against it in contract_catalogue_test.go.

// TestOpenAPILint fails on every rule of apispec.Lint that openapi.yaml
// breaks: operation ids, examples, the statuses every route can answer,
// error bodies that are the Error schema narrowed to their codes, no bare
// objects and closed response objects.
func TestOpenAPILint(t *testing.T) {
	spec := apispec.MustLoad(t)
	for _, err := range spec.Lint() {
		t.Error(err)
	}
}

// TestOpenAPIMatchesMux fails when a route is served but not described in
// openapi.yaml, or described but not served.
func TestOpenAPIMatchesMux(t *testing.T) {
	spec := apispec.MustLoad(t).Routes()
	var served []string
	for _, r := range Routes() {
		served = append(served, r.Method+" "+r.Path)
	}
	slices.Sort(served)
	for _, r := range served {
		if !slices.Contains(spec, r) {
			t.Errorf("route %s is served but missing from openapi.yaml", r)
		}
	}
	for _, r := range spec {
		if !slices.Contains(served, r) {
			t.Errorf("openapi.yaml describes %s, which is not served", r)
		}
	}
	if len(spec) == 0 {
		t.Fatal("no routes read from openapi.yaml")
	}
}
