package obs

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lines returns the non-empty lines written so far.
func (s *syncBuffer) lines() []string {
	var out []string
	for l := range strings.SplitSeq(s.String(), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// fixedClock is 2026-01-02T03:04:05.678Z.
func fixedClock() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 678e6, time.UTC) }

// decodeLine decodes one JSON log line, failing the test when it is not a
// single JSON object.
func decodeLine(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, line)
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on a line: %s", line)
	}
	return m
}

// emfDoc is an EMF document as the specification defines it.
type emfDoc struct {
	Timestamp  int64
	Namespace  string
	DimSets    [][]string
	Metrics    map[string]string // name -> unit
	Root       map[string]any
	MetricVals map[string]float64
	DimVals    map[string]string
}

// checkEMF validates line against the rules of the CloudWatch embedded
// metric format specification that this package relies on, and returns
// the document: "_aws" with a numeric Timestamp and one MetricDirective
// (Namespace, Dimensions: arrays of dimension names, at most 30 each,
// Metrics: at most 100 {Name, Unit}); every referenced dimension is a
// string member of the root, every metric a numeric member; no other
// member of _aws or the directive.
func checkEMF(t *testing.T, line string) emfDoc {
	t.Helper()
	root := decodeLine(t, line)
	aws, ok := root["_aws"].(map[string]any)
	if !ok {
		t.Fatalf("no _aws object: %s", line)
	}
	for k := range aws {
		if k != "Timestamp" && k != "CloudWatchMetrics" {
			t.Errorf("_aws has an unknown member %q", k)
		}
	}
	ts, err := aws["Timestamp"].(json.Number).Int64()
	if err != nil {
		t.Fatalf("Timestamp is not an integer: %v", aws["Timestamp"])
	}
	dirs, ok := aws["CloudWatchMetrics"].([]any)
	if !ok || len(dirs) != 1 {
		t.Fatalf("CloudWatchMetrics is not one directive: %v", aws["CloudWatchMetrics"])
	}
	dir := dirs[0].(map[string]any)
	for k := range dir {
		if k != "Namespace" && k != "Dimensions" && k != "Metrics" {
			t.Errorf("directive has an unknown member %q", k)
		}
	}
	doc := emfDoc{Timestamp: ts, Root: root, Metrics: map[string]string{}, MetricVals: map[string]float64{}, DimVals: map[string]string{}}
	doc.Namespace, _ = dir["Namespace"].(string)
	if doc.Namespace == "" {
		t.Errorf("no Namespace: %s", line)
	}
	sets, ok := dir["Dimensions"].([]any)
	if !ok || len(sets) == 0 {
		t.Fatalf("Dimensions is not a non-empty array: %s", line)
	}
	for _, set := range sets {
		names, ok := set.([]any)
		if !ok || len(names) > 30 {
			t.Fatalf("bad dimension set %v", set)
		}
		var ds []string
		for _, n := range names {
			name, ok := n.(string)
			if !ok {
				t.Fatalf("dimension name %v is not a string", n)
			}
			v, ok := root[name].(string)
			if !ok || v == "" {
				t.Errorf("dimension %q has no string value in the root", name)
			}
			for i := 0; i < len(v); i++ {
				if v[i] >= 0x80 || v[i] < 0x20 {
					t.Errorf("dimension %q value %q is not printable ASCII", name, v)
					break
				}
			}
			doc.DimVals[name] = v
			ds = append(ds, name)
		}
		doc.DimSets = append(doc.DimSets, ds)
	}
	metrics, ok := dir["Metrics"].([]any)
	if !ok || len(metrics) == 0 || len(metrics) > 100 {
		t.Fatalf("Metrics is not 1..100 definitions: %s", line)
	}
	for _, md := range metrics {
		def := md.(map[string]any)
		name, _ := def["Name"].(string)
		unit, _ := def["Unit"].(string)
		if name == "" {
			t.Fatalf("metric definition without Name: %v", def)
		}
		if _, dup := doc.Metrics[name]; dup {
			t.Errorf("metric %q defined twice", name)
		}
		doc.Metrics[name] = unit
		num, ok := root[name].(json.Number)
		if !ok {
			t.Fatalf("metric %q has no numeric value in the root: %v", name, root[name])
		}
		f, err := num.Float64()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			t.Fatalf("metric %q value %v", name, num)
		}
		doc.MetricVals[name] = f
	}
	return doc
}
