package api

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// openAPIRoutes reads the method and path of every operation under `paths:`
// in openapi.yaml (paths at two spaces of indent, methods at four).
func openAPIRoutes(t *testing.T) []Route {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var routes []Route
	inPaths, path := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "paths:":
			inPaths = true
		case inPaths && line != "" && !strings.HasPrefix(line, " "):
			inPaths = false
		case inPaths && strings.HasPrefix(line, "  /") && strings.HasSuffix(line, ":"):
			path = strings.TrimSuffix(strings.TrimSpace(line), ":")
		case inPaths && path != "" && strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     "):
			word := strings.TrimSuffix(strings.TrimSpace(line), ":")
			if slices.Contains([]string{"get", "post", "put", "patch", "delete"}, word) {
				routes = append(routes, Route{Method: strings.ToUpper(word), Path: path})
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return routes
}

// TestOpenAPIMatchesMux fails when a route is served but not described in
// openapi.yaml, or described but not served.
func TestOpenAPIMatchesMux(t *testing.T) {
	key := func(r Route) string { return r.Method + " " + r.Path }
	var spec, served []string
	for _, r := range openAPIRoutes(t) {
		spec = append(spec, key(r))
	}
	for _, r := range Routes() {
		served = append(served, key(r))
	}
	slices.Sort(spec)
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
