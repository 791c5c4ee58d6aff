package deploy

import (
	"fmt"
	"slices"
	"testing"

	"chessapi/shared/store/dynamostore"
)

// TestTemplateGamesTableIndexes: the games table declares exactly the
// global secondary indexes the dynamostore adapter queries (the game index
// of SPEC §12), with the attributes they are keyed on, so a query never
// meets a missing or differently keyed index in AWS. CreateTable (local
// servers, tests) builds its table from the same description.
func TestTemplateGamesTableIndexes(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	p := tmpl.Properties("GamesTable")

	var attrs []string
	defs, _ := p["AttributeDefinitions"].([]any)
	for _, d := range defs {
		m, _ := d.(map[string]any)
		if m["AttributeType"] != "S" {
			t.Errorf("GamesTable attribute %v has type %v; want S", m["AttributeName"], m["AttributeType"])
		}
		attrs = append(attrs, fmt.Sprint(m["AttributeName"]))
	}
	wantAttrs := dynamostore.GamesTableAttributes()
	if !slices.Equal(sortedNames(attrs), sortedNames(wantAttrs)) {
		t.Errorf("GamesTable AttributeDefinitions = %q; want %q", attrs, wantAttrs)
	}

	got := map[string]map[string]any{}
	list, _ := p["GlobalSecondaryIndexes"].([]any)
	for _, g := range list {
		m, _ := g.(map[string]any)
		got[fmt.Sprint(m["IndexName"])] = m
	}
	want := dynamostore.GamesIndexes()
	if len(got) != len(want) || len(list) != len(want) {
		t.Errorf("GamesTable has %d indexes %v; want %d", len(list), indexNamesOf(got), len(want))
	}
	for _, w := range want {
		g, ok := got[w.Name]
		if !ok {
			t.Errorf("GamesTable lacks the index %s", w.Name)
			continue
		}
		if keys := DataTableKeySchema(g["KeySchema"]); !slices.Equal(keys, []string{w.PartitionKey + " HASH", w.SortKey + " RANGE"}) {
			t.Errorf("index %s keys = %q; want %s HASH, %s RANGE", w.Name, keys, w.PartitionKey, w.SortKey)
		}
		proj, _ := mapAt(g, "Projection")
		var nonKey []string
		l, _ := proj["NonKeyAttributes"].([]any)
		for _, a := range l {
			nonKey = append(nonKey, fmt.Sprint(a))
		}
		if proj["ProjectionType"] != "INCLUDE" || !slices.Equal(sortedNames(nonKey), sortedNames(w.NonKeyAttributes)) {
			t.Errorf("index %s projection = %v; want INCLUDE of %q (what a list entry needs, never the state)", w.Name, proj, w.NonKeyAttributes)
		}
	}
}

func sortedNames(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func indexNamesOf(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
