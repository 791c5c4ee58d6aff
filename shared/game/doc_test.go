package game

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDocNamesExist: every name the package doc's overview lists (the
// capitalised words of its indented block) is one the package exports, so the doc cannot describe
// an API the package no longer has.
func TestDocNamesExist(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	var doc string
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc != nil {
			doc += f.Doc.Text()
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				name := d.Name.Name
				if d.Recv != nil {
					typ := d.Recv.List[0].Type
					if star, ok := typ.(*ast.StarExpr); ok {
						typ = star.X
					}
					if id, ok := typ.(*ast.Ident); ok {
						name = id.Name + "." + name
					}
				}
				exported[name] = true
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						exported[spec.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							exported[n.Name] = true
						}
					}
				}
			}
		}
	}
	ident := regexp.MustCompile(`\b[A-Z][A-Za-z0-9]*(\.[A-Z][A-Za-z0-9]*)?\b`)
	listed := 0
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "\t") {
			continue
		}
		for _, name := range ident.FindAllString(line, -1) {
			if strings.ToUpper(name) == name {
				continue // an acronym of the prose (AI, UCI), not a name
			}
			listed++
			if !exported[name] || !ast.IsExported(name[strings.LastIndex(name, ".")+1:]) {
				t.Errorf("the package doc lists %s, which the package does not export", name)
			}
		}
	}
	if listed < 20 {
		t.Errorf("found %d names in the package doc's overview; is the indented block still there?", listed)
	}
}
