package repocheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fuzzCommand is one documented `go test -fuzz` command, or one name of an
// "(also ...)" list beside it (run as the same command with that name).
type fuzzCommand struct {
	where   string // file:line
	pattern string // the -fuzz argument (a regular expression)
	dir     string // the package's directory, relative to the module root
	problem string // why the command cannot run as written, if it cannot
}

var (
	// -fuzz X, -fuzz=X, -fuzz 'X', -fuzz="X"; not -fuzztime and the like.
	fuzzFlagRE = regexp.MustCompile(`-fuzz(?:=|\s+)(?:'([^']*)'|"([^"]*)"|([^\s'"]+))`)
	cdRE       = regexp.MustCompile(`\bcd\s+(\S+)\s*&&`)
	codeSpanRE = regexp.MustCompile("`([^`]+)`")
	alsoRE     = regexp.MustCompile(`^\s*\(also ([^)]*)\)`)
	fuzzNameRE = regexp.MustCompile(`^Fuzz[A-Z0-9_]\w*$`)
)

// parseFuzzCommands finds the fuzzing commands of one markdown document:
// whole lines in fenced code blocks, code spans elsewhere.
func parseFuzzCommands(name, text string) []fuzzCommand {
	var out []fuzzCommand
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		where := fmt.Sprintf("%s:%d", name, n)
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if inFence {
			if c, ok := fuzzCommandOf(where, line); ok {
				out = append(out, c)
			}
			continue
		}
		for _, span := range codeSpanRE.FindAllStringSubmatchIndex(line, -1) {
			c, ok := fuzzCommandOf(where, line[span[2]:span[3]])
			if !ok {
				continue
			}
			out = append(out, c)
			// "(also `FuzzA`, `FuzzB`)" right after the command: the same
			// command with each of those names.
			if m := alsoRE.FindStringSubmatch(line[span[1]:]); m != nil {
				for _, alt := range codeSpanRE.FindAllStringSubmatch(m[1], -1) {
					also := c
					also.pattern = alt[1]
					out = append(out, also)
				}
			}
		}
	}
	return out
}

// fuzzCommandOf reads a shell command line; ok is false when it is not a
// `go test` with -fuzz.
func fuzzCommandOf(where, cmd string) (fuzzCommand, bool) {
	goTest := strings.Index(cmd, "go test")
	m := fuzzFlagRE.FindStringSubmatch(cmd)
	if goTest < 0 || m == nil {
		return fuzzCommand{}, false
	}
	c := fuzzCommand{where: where, pattern: m[1] + m[2] + m[3]}
	base := "."
	if cd := cdRE.FindStringSubmatch(cmd[:goTest]); cd != nil {
		base = cd[1]
	}
	var pkgs []string
	for _, f := range strings.Fields(cmd[goTest:]) {
		if f == "." || strings.HasPrefix(f, "./") {
			pkgs = append(pkgs, f)
		}
	}
	switch {
	case len(pkgs) != 1:
		c.problem = fmt.Sprintf("-fuzz needs exactly one package (./path); the command names %d: %q", len(pkgs), cmd)
	case strings.Contains(pkgs[0], "..."):
		c.problem = fmt.Sprintf("-fuzz cannot run on a package pattern (%s): %q", pkgs[0], cmd)
	default:
		c.dir = filepath.Clean(filepath.Join(base, pkgs[0]))
	}
	return c, true
}

// fuzzTargets lists the fuzz targets (func FuzzXxx(*testing.F)) of the
// package in dir, from its test files.
func fuzzTargets(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	var names []string
	fset := token.NewFileSet()
	for _, file := range files {
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") && takesTestingF(fn) {
				names = append(names, fn.Name.Name)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

func takesTestingF(fn *ast.FuncDecl) bool {
	params := fn.Type.Params.List
	if len(params) != 1 || len(params[0].Names) > 1 {
		return false
	}
	star, ok := params[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	return ok && sel.Sel.Name == "F"
}

// checkFuzzCommand says why c would not fuzz anything: `go test -fuzz`
// refuses a pattern that matches no fuzz target, or more than one.
func checkFuzzCommand(root string, c fuzzCommand) error {
	if c.problem != "" {
		return fmt.Errorf("%s: %s", c.where, c.problem)
	}
	re, err := regexp.Compile(c.pattern)
	if err != nil {
		return fmt.Errorf("%s: -fuzz %q is not a regular expression: %v", c.where, c.pattern, err)
	}
	dir := filepath.Join(root, c.dir)
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return fmt.Errorf("%s: -fuzz %s ./%s: there is no such package", c.where, c.pattern, filepath.ToSlash(c.dir))
	}
	targets, err := fuzzTargets(dir)
	if err != nil {
		return fmt.Errorf("%s: %v", c.where, err)
	}
	var matched []string
	for _, name := range targets {
		if re.MatchString(name) {
			matched = append(matched, name)
		}
	}
	if len(matched) != 1 {
		return fmt.Errorf("%s: -fuzz %s ./%s matches %d fuzz targets %v (want exactly one); the package has %v",
			c.where, c.pattern, filepath.ToSlash(c.dir), len(matched), matched, targets)
	}
	return nil
}

// TestDocumentedFuzzCommandsFuzzSomething: every fuzzing command in
// README.md, docs/ and the other documents runs exactly one fuzz target.
// A command naming a target that was renamed or moved would otherwise
// "pass" while fuzzing nothing.
func TestDocumentedFuzzCommandsFuzzSomething(t *testing.T) {
	root := moduleRoot(t)
	docs := markdownFiles(t, root)
	var commands []fuzzCommand
	for _, doc := range docs {
		text, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		commands = append(commands, parseFuzzCommands(doc, string(text))...)
	}
	// The README's table alone has a dozen; finding few means the reader
	// above no longer recognises the commands.
	if len(commands) < 10 {
		t.Fatalf("found %d documented fuzzing commands in %d documents; want at least 10 (is the reader broken?)", len(commands), len(docs))
	}
	for _, c := range commands {
		if err := checkFuzzCommand(root, c); err != nil {
			t.Error(err)
		}
	}
}

// TestDocumentedFuzzNamesExist: a `FuzzXxx` named anywhere in a document
// (in prose too) is a fuzz target of some package.
func TestDocumentedFuzzNamesExist(t *testing.T) {
	root := moduleRoot(t)
	all := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if skipDir(root, path, d) {
			return filepath.SkipDir
		}
		names, err := fuzzTargets(path)
		for _, n := range names {
			all[n] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 10 {
		t.Fatalf("found %d fuzz targets in the repository; want at least 10 (is the reader broken?)", len(all))
	}
	for _, doc := range markdownFiles(t, root) {
		text, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		for n, line := range strings.Split(string(text), "\n") {
			for _, span := range codeSpanRE.FindAllStringSubmatch(line, -1) {
				name := strings.TrimSuffix(span[1], "$")
				if fuzzNameRE.MatchString(name) && !all[name] {
					t.Errorf("%s:%d: `%s` is not a fuzz target of any package", doc, n+1, span[1])
				}
			}
		}
	}
}

// TestParseFuzzCommands keeps the document reader honest: each form the
// documents use is recognised, and what cannot run is reported.
func TestParseFuzzCommands(t *testing.T) {
	doc := strings.Join([]string{
		"| `go test -fuzz FuzzParseFEN ./shared/chess` (also `FuzzDecodeSAN`, `FuzzParsePGN`) | rules |",
		"Fuzzing: `go test -run XXX -fuzz=FuzzHandle -fuzztime 5m ./shared/engine/uci`.",
		"| `go test -fuzz 'FuzzApply$' -fuzzminimizetime 5s ./shared/game` | reducer |",
		"`go test -fuzz FuzzA ./...` and `go test -fuzztime 5s ./x` and `go vet ./...`",
		"```sh",
		`cd tools/x && go test -fuzz "^FuzzB$" .`,
		"go test -run XXX -fuzz FuzzC -fuzztime 30s ./shared/store/boltstore",
		"```",
		"`go test -fuzz FuzzD`",
	}, "\n")
	got := parseFuzzCommands("doc.md", doc)
	want := []fuzzCommand{
		{where: "doc.md:1", pattern: "FuzzParseFEN", dir: "shared/chess"},
		{where: "doc.md:1", pattern: "FuzzDecodeSAN", dir: "shared/chess"},
		{where: "doc.md:1", pattern: "FuzzParsePGN", dir: "shared/chess"},
		{where: "doc.md:2", pattern: "FuzzHandle", dir: "shared/engine/uci"},
		{where: "doc.md:3", pattern: "FuzzApply$", dir: "shared/game"},
		{where: "doc.md:4", pattern: "FuzzA", problem: "-fuzz cannot run on a package pattern (./...): \"go test -fuzz FuzzA ./...\""},
		{where: "doc.md:6", pattern: "^FuzzB$", dir: "tools/x"},
		{where: "doc.md:7", pattern: "FuzzC", dir: "shared/store/boltstore"},
		{where: "doc.md:9", pattern: "FuzzD", problem: "-fuzz needs exactly one package (./path); the command names 0: \"go test -fuzz FuzzD\""},
	}
	if !slices.Equal(got, want) {
		t.Errorf("parseFuzzCommands =\n%+v\nwant\n%+v", got, want)
	}

	// Against this repository's packages: a vanished name, a pattern that
	// matches two targets, a missing package.
	root := moduleRoot(t)
	for _, c := range []fuzzCommand{
		{where: "stale", pattern: "FuzzParseOptions", dir: "shared/game"},
		{where: "ambiguous", pattern: "FuzzParse", dir: "shared/chess"},
		{where: "nowhere", pattern: "FuzzX", dir: "shared/nothing"},
	} {
		if err := checkFuzzCommand(root, c); err == nil {
			t.Errorf("checkFuzzCommand(%+v) = nil; want an error", c)
		}
	}
	if err := checkFuzzCommand(root, fuzzCommand{where: "good", pattern: "FuzzParseFEN", dir: "shared/chess"}); err != nil {
		t.Errorf("checkFuzzCommand(FuzzParseFEN ./shared/chess) = %v; want nil", err)
	}
}

// markdownFiles lists the repository's documents (relative paths).
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var docs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if skipDir(root, path, d) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".md") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			docs = append(docs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(docs, "README.md") {
		t.Fatalf("no README.md under %s", root)
	}
	return docs
}

// skipDir leaves out what is not the repository's own: hidden directories
// (.git, .bin), installed packages and build output.
func skipDir(root, path string, d fs.DirEntry) bool {
	if path == root {
		return false
	}
	name := d.Name()
	return strings.HasPrefix(name, ".") || name == "node_modules" || (filepath.Dir(path) == root && name == "bin")
}

// moduleRoot is the directory of the go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}
