package repocheck

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// listedPackage is what `go list -json` says of a package that this test
// reads.
type listedPackage struct {
	ImportPath string
	Name       string
	Imports    []string
}

// TestTestingOnlyInTestCode: "testing" is imported outside _test.go files
// only by packages whose name ends in "test" (helpers such as storetest,
// emulatortest), and only tests and other such helpers import those. A
// command or adapter that needs what a helper does calls the error-returning
// function the helper wraps.
func TestTestingOnlyInTestCode(t *testing.T) {
	cmd := exec.Command("go", "list", "-json=ImportPath,Name,Imports", "./...")
	cmd.Dir = moduleRoot(t)
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	for dec := json.NewDecoder(strings.NewReader(string(out))); ; {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list ./... listed %d packages; want the whole module", len(pkgs))
	}
	helpers := map[string]bool{}
	for _, p := range pkgs {
		if isTestHelper(p) {
			helpers[p.ImportPath] = true
		}
	}
	for _, p := range pkgs {
		if isTestHelper(p) {
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case imp == "testing":
				t.Errorf("%s imports \"testing\" outside its tests: move the testing.TB code into a _test.go file or a package named ...test", p.ImportPath)
			case helpers[imp]:
				t.Errorf("%s imports the test helper %s outside its tests", p.ImportPath, imp)
			}
		}
	}
}

func isTestHelper(p listedPackage) bool { return strings.HasSuffix(p.Name, "test") }
