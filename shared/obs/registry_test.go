package obs

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// validUnits are the units CloudWatch accepts (MetricDatum.Unit).
var validUnits = []Unit{
	"Seconds", "Microseconds", "Milliseconds", "Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits", "Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
	"Count/Second", "None",
}

var metricName = regexp.MustCompile(`^[A-Z][A-Za-z0-9]{0,254}$`)

func TestRegistry(t *testing.T) {
	names := Names()
	if len(names) == 0 || len(names) != len(Registry()) {
		t.Fatalf("Names() %d, Registry() %d", len(names), len(Registry()))
	}
	seen := map[string]bool{}
	for _, s := range Registry() {
		if !metricName.MatchString(s.Name) {
			t.Errorf("metric name %q is not CamelCase ASCII", s.Name)
		}
		if seen[s.Name] {
			t.Errorf("metric %q registered twice", s.Name)
		}
		seen[s.Name] = true
		if !slices.Contains(validUnits, s.Unit) {
			t.Errorf("metric %s: unit %q is not a CloudWatch unit", s.Name, s.Unit)
		}
		if strings.HasSuffix(s.Name, "Ms") != (s.Unit == UnitMilliseconds) {
			t.Errorf("metric %s: unit %s (names ending in Ms are Milliseconds, and only they)", s.Name, s.Unit)
		}
		if s.Help == "" {
			t.Errorf("metric %s has no description", s.Name)
		}
		if got, ok := Lookup(s.Name); !ok || got != s {
			t.Errorf("Lookup(%q) = %+v, %v", s.Name, got, ok)
		}
		if s.Name == DimFunctionName {
			t.Errorf("metric %q is also a dimension name", s.Name)
		}
	}
	if _, ok := Lookup("NoSuchMetric"); ok {
		t.Error("Lookup of an unknown name succeeded")
	}
	// Registry returns a copy.
	r := Registry()
	r[0].Name = "Changed"
	if Names()[0] == "Changed" {
		t.Error("Registry() exposes the registry")
	}
}

// TestRegistryHasTheConstants: every Metric* constant is registered (the
// brief's list and the ones the middleware emits).
func TestRegistryHasTheConstants(t *testing.T) {
	for _, n := range []string{
		MetricRequests, MetricRequests4xx, MetricRequests5xx, MetricRateLimited, MetricRequestMs, MetricPanics,
		MetricMoves, MetricConflicts, MetricAIThinkMs, MetricAINodes, MetricAIRetriggers,
		MetricScheduleFailures, MetricAITriggerFailures, MetricPushFailures, MetricStaleConnections,
		MetricEffectRetries, MetricTimeoutLateMs,
	} {
		if _, ok := Lookup(n); !ok {
			t.Errorf("%s is not registered", n)
		}
	}
}

// TestDocListsEveryMetric: the metric table of docs/observability.md
// (between the metrics:begin and metrics:end comments) has a row
// "| `Name` | Unit | ..." for every registered metric, in registry order,
// and no other.
func TestDocListsEveryMetric(t *testing.T) {
	doc, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "<!-- metrics:begin -->")
	table, _, ok2 := strings.Cut(table, "<!-- metrics:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/observability.md has no <!-- metrics:begin --> ... <!-- metrics:end --> table")
	}
	row := regexp.MustCompile("(?m)^\\| `([A-Za-z0-9]+)` \\| ([A-Za-z/]+) \\|")
	var got []MetricSpec
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		got = append(got, MetricSpec{Name: m[1], Unit: Unit(m[2])})
	}
	var want []MetricSpec
	for _, s := range Registry() {
		want = append(want, MetricSpec{Name: s.Name, Unit: s.Unit})
	}
	if !slices.Equal(got, want) {
		t.Errorf("metric table in docs/observability.md:\n got %v\nwant %v", got, want)
	}
}
