package push_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// The layering the stream's ports exist for (STYLE §15): the ports import
// nothing of this module, and no storage adapter or stream adapter compiles
// the HTTP edge. Read from the go command itself, so an import added
// anywhere below (directly or through another package) fails here.
const (
	module   = "chessapi"
	httpEdge = "chessapi/shared/api"
	ports    = "chessapi/shared/push"
)

// listedPackage is the part of `go list -json` this test reads.
type listedPackage struct {
	ImportPath string
	Deps       []string
}

// goList runs `go list -json patterns` and returns each
// matched package with its transitive dependencies (Deps is the closure).
func goList(t *testing.T, patterns ...string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Deps"}, patterns...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(patterns, " "), err, stderr.String())
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		t.Fatalf("go list %s matched no package", strings.Join(patterns, " "))
	}
	return pkgs
}

func ours(deps []string) []string {
	var out []string
	for _, d := range deps {
		if d == module || strings.HasPrefix(d, module+"/") {
			out = append(out, d)
		}
	}
	return out
}

// TestPortsImportNothingOfOurs: shared/push depends on the standard
// library only.
func TestPortsImportNothingOfOurs(t *testing.T) {
	for _, p := range goList(t, ports) {
		if got := ours(p.Deps); len(got) > 0 {
			t.Errorf("%s depends on %v; the ports package must import nothing of %s", p.ImportPath, got, module)
		}
	}
}

// TestBelowTheEdgeNoHTTPEdge: no package under shared/store or shared/push
// compiles the HTTP edge, and no storage package compiles the stream's
// ports (the store declares the records it keeps).
func TestBelowTheEdgeNoHTTPEdge(t *testing.T) {
	for _, p := range goList(t, "chessapi/shared/store/...", "chessapi/shared/push/...") {
		storage := strings.HasPrefix(p.ImportPath, "chessapi/shared/store/")
		for _, d := range ours(p.Deps) {
			if d == httpEdge || strings.HasPrefix(d, httpEdge+"/") {
				t.Errorf("%s depends on the HTTP edge (%s)", p.ImportPath, d)
			}
			if storage && (d == ports || strings.HasPrefix(d, ports+"/")) {
				t.Errorf("%s depends on the stream's ports (%s)", p.ImportPath, d)
			}
		}
	}
}
