package obs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

func newTestMetrics(w *bytes.Buffer, dims map[string]string) *Metrics {
	m := NewMetrics(w, Namespace, dims)
	m.now = fixedClock
	return m
}

// TestEMFGolden pins the exact bytes of the documents (fixed clock
// 2026-01-02T03:04:05.678Z = 1767323045678 ms).
func TestEMFGolden(t *testing.T) {
	fn := map[string]string{DimFunctionName: "chessapi-move"}
	tests := []struct {
		name string
		dims map[string]string
		emit func(m *Metrics)
		want string
	}{
		{
			name: "count",
			dims: fn,
			emit: func(m *Metrics) { m.Count(MetricMoves, 1) },
			want: `{"_aws":{"Timestamp":1767323045678,"CloudWatchMetrics":[{"Namespace":"ChessAPI","Dimensions":[["FunctionName"]],"Metrics":[{"Name":"Moves","Unit":"Count"}]}]},"FunctionName":"chessapi-move","Moves":1}`,
		},
		{
			name: "duration keeps fractions of a millisecond",
			dims: fn,
			emit: func(m *Metrics) { m.Duration(MetricAIThinkMs, 1234567*time.Microsecond) },
			want: `{"_aws":{"Timestamp":1767323045678,"CloudWatchMetrics":[{"Namespace":"ChessAPI","Dimensions":[["FunctionName"]],"Metrics":[{"Name":"AIThinkMs","Unit":"Milliseconds"}]}]},"FunctionName":"chessapi-move","AIThinkMs":1234.567}`,
		},
		{
			name: "value with extra dimension: two dimension sets",
			dims: fn,
			emit: func(m *Metrics) { m.Value(MetricAINodes, 2.5e6, UnitCount, Dim{"Level", "max"}) },
			want: `{"_aws":{"Timestamp":1767323045678,"CloudWatchMetrics":[{"Namespace":"ChessAPI","Dimensions":[["FunctionName"],["FunctionName","Level"]],"Metrics":[{"Name":"AINodes","Unit":"Count"}]}]},"FunctionName":"chessapi-move","Level":"max","AINodes":2500000}`,
		},
		{
			name: "several points in one document, dimensions sorted by name",
			dims: map[string]string{"Stage": "prod", DimFunctionName: "chessapi-ai"},
			emit: func(m *Metrics) {
				m.Emit(nil, Point{MetricRequests, 1, UnitCount}, Point{MetricRequests5xx, 0, UnitCount}, Point{MetricRequestMs, 0.25, UnitMilliseconds})
			},
			want: `{"_aws":{"Timestamp":1767323045678,"CloudWatchMetrics":[{"Namespace":"ChessAPI","Dimensions":[["FunctionName","Stage"]],"Metrics":[{"Name":"Requests","Unit":"Count"},{"Name":"Requests5xx","Unit":"Count"},{"Name":"RequestMs","Unit":"Milliseconds"}]}]},"FunctionName":"chessapi-ai","Stage":"prod","Requests":1,"Requests5xx":0,"RequestMs":0.25}`,
		},
		{
			name: "no dimensions: one empty dimension set",
			dims: nil,
			emit: func(m *Metrics) { m.Count(MetricMoves, 3) },
			want: `{"_aws":{"Timestamp":1767323045678,"CloudWatchMetrics":[{"Namespace":"ChessAPI","Dimensions":[[]],"Metrics":[{"Name":"Moves","Unit":"Count"}]}]},"Moves":3}`,
		},
		{
			name: "empty dimension values are left out",
			dims: map[string]string{DimFunctionName: "", "Stage": "dev"},
			emit: func(m *Metrics) { m.Count(MetricConflicts, 1, Dim{"Route", ""}) },
			want: `{"_aws":{"Timestamp":1767323045678,"CloudWatchMetrics":[{"Namespace":"ChessAPI","Dimensions":[["Stage"]],"Metrics":[{"Name":"Conflicts","Unit":"Count"}]}]},"Stage":"dev","Conflicts":1}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tt.emit(newTestMetrics(&buf, tt.dims))
			if got := buf.String(); got != tt.want+"\n" {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
			checkEMF(t, buf.String())
		})
	}
}

func TestEMFTimestampIsTheClock(t *testing.T) {
	var buf bytes.Buffer
	newTestMetrics(&buf, nil).Count(MetricMoves, 1)
	if doc := checkEMF(t, buf.String()); doc.Timestamp != fixedClock().UnixMilli() || doc.Timestamp != 1767323045678 {
		t.Errorf("Timestamp %d, want %d", doc.Timestamp, fixedClock().UnixMilli())
	}
}

// TestEMFDropsWhatCloudWatchRejects: a document CloudWatch cannot extract
// would lose every metric in it, so bad points and dimensions are left out
// and the rest is still published.
func TestEMFDropsWhatCloudWatchRejects(t *testing.T) {
	tests := []struct {
		name        string
		extra       []Dim
		points      []Point
		wantMetrics []string // in the document; none: no line at all
		wantDims    [][]string
	}{
		{"NaN and Inf", nil, []Point{{"A", math.NaN(), UnitCount}, {"B", math.Inf(1), UnitCount}, {"C", 1, UnitCount}}, []string{"C"}, [][]string{{"FunctionName"}}},
		{"only bad points: nothing written", nil, []Point{{"A", math.NaN(), UnitCount}}, nil, nil},
		{"empty name", nil, []Point{{"", 1, UnitCount}, {"C", 1, UnitCount}}, []string{"C"}, [][]string{{"FunctionName"}}},
		{"duplicate name keeps the first", nil, []Point{{"C", 1, UnitCount}, {"C", 2, UnitCount}}, []string{"C"}, [][]string{{"FunctionName"}}},
		{"name of a dimension", []Dim{{"Level", "x"}}, []Point{{"FunctionName", 1, UnitCount}, {"Level", 1, UnitCount}, {"C", 1, UnitCount}}, []string{"C"}, [][]string{{"FunctionName"}, {"FunctionName", "Level"}}},
		{"_aws", nil, []Point{{"_aws", 1, UnitCount}, {"C", 1, UnitCount}}, []string{"C"}, [][]string{{"FunctionName"}}},
		{"too long a name", nil, []Point{{strings.Repeat("n", 256), 1, UnitCount}, {"C", 1, UnitCount}}, []string{"C"}, [][]string{{"FunctionName"}}},
		{"extra dimension repeating a base one", []Dim{{"FunctionName", "other"}}, []Point{{"C", 1, UnitCount}}, []string{"C"}, [][]string{{"FunctionName"}}},
		{"extra dimension twice", []Dim{{"Level", "a"}, {"Level", "b"}}, []Point{{"C", 1, UnitCount}}, []string{"C"}, [][]string{{"FunctionName"}, {"FunctionName", "Level"}}},
		{"no unit is allowed", nil, []Point{{"C", 1, ""}}, []string{"C"}, [][]string{{"FunctionName"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			m := newTestMetrics(&buf, map[string]string{DimFunctionName: "f"})
			m.Emit(tt.extra, tt.points...)
			if tt.wantMetrics == nil {
				if buf.Len() != 0 {
					t.Fatalf("wrote %q", buf.String())
				}
				return
			}
			doc := checkEMF(t, buf.String())
			if len(doc.Metrics) != len(tt.wantMetrics) {
				t.Errorf("metrics %v, want %v", doc.Metrics, tt.wantMetrics)
			}
			for _, n := range tt.wantMetrics {
				if _, ok := doc.Metrics[n]; !ok {
					t.Errorf("metric %s missing: %s", n, buf.String())
				}
			}
			if fmt.Sprint(doc.DimSets) != fmt.Sprint(tt.wantDims) {
				t.Errorf("dimension sets %v, want %v", doc.DimSets, tt.wantDims)
			}
		})
	}
}

func TestEMFLimits(t *testing.T) {
	var buf bytes.Buffer
	m := newTestMetrics(&buf, map[string]string{DimFunctionName: "f"})
	var points []Point
	for i := range 150 {
		points = append(points, Point{fmt.Sprintf("M%03d", i), float64(i), UnitCount})
	}
	var extra []Dim
	for i := range 40 {
		extra = append(extra, Dim{fmt.Sprintf("D%02d", i), "v"})
	}
	m.Emit(extra, points...)
	doc := checkEMF(t, buf.String())
	if len(doc.Metrics) != 100 {
		t.Errorf("%d metrics in one document, want the first 100", len(doc.Metrics))
	}
	if n := len(doc.DimSets[len(doc.DimSets)-1]); n != 30 {
		t.Errorf("widest dimension set has %d keys, want 30", n)
	}
}

// TestEMFStrings: dimension values and names of any content come out as
// valid JSON, dimension values as printable ASCII of at most 1024 bytes.
func TestEMFStrings(t *testing.T) {
	values := []string{
		`quote " backslash \ slash /`,
		"newline\n tab\t cr\r nul\x00 bell\x07",
		"한국어 route",
		"invalid utf-8 \xff\xfe",
		"line sep \u2028 para sep \u2029",
		"<html>&amp;",
		strings.Repeat("x", 2000),
	}
	for _, v := range values {
		var buf bytes.Buffer
		m := newTestMetrics(&buf, map[string]string{"D": v})
		m.Count("name \"quoted\" \n", 1, Dim{"E", v})
		doc := checkEMF(t, buf.String())
		if len(doc.DimVals["D"]) > 1024 {
			t.Errorf("dimension value of %d bytes", len(doc.DimVals["D"]))
		}
		if _, ok := doc.Metrics["name \"quoted\" \n"]; !ok {
			t.Errorf("metric name lost: %s", buf.String())
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", `"\`, "\x00\x1f\x7f", "é漢字🙂", "\xff", "a\u2028b\u2029c", "<>&"} {
		got := appendString(nil, s)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("%q encoded as invalid JSON %s: %v", s, got, err)
		}
		want, _ := json.Marshal(s)
		var wantBack string
		_ = json.Unmarshal(want, &wantBack)
		if back != wantBack {
			t.Errorf("%q: decodes to %q, encoding/json's to %q", s, back, wantBack)
		}
	}
}

func TestAppendNumber(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-3, "-3"}, {1234.567, "1234.567"}, {0.001, "0.001"},
		{1e15, "1e+15"}, {123456789012345, "123456789012345"}, {1e-7, "1e-07"}, {math.Copysign(0, -1), "0"},
	} {
		got := string(appendNumber(nil, tt.v))
		if got != tt.want {
			t.Errorf("%v: %s, want %s", tt.v, got, tt.want)
		}
		var back float64
		if err := json.Unmarshal([]byte(got), &back); err != nil || back != tt.v {
			t.Errorf("%v: %s reads back as %v (%v)", tt.v, got, back, err)
		}
	}
}

func TestNilMetricsIsANoOp(t *testing.T) {
	var m *Metrics
	m.Count(MetricMoves, 1)
	m.Duration(MetricAIThinkMs, time.Second)
	m.Value(MetricAINodes, 1, UnitCount)
	m.Emit(nil, Point{MetricMoves, 1, UnitCount})
	if NewMetrics(nil, Namespace, nil) != nil {
		t.Error("NewMetrics with no writer is not the nil Metrics")
	}
	if Discard() != nil {
		t.Error("Discard() is not the nil Metrics")
	}
	Discard().Count(MetricMoves, 1)
}

// TestMetricsConcurrent: from many goroutines, every document is written
// whole, once, on its own line (run with -race).
func TestMetricsConcurrent(t *testing.T) {
	var buf syncBuffer
	m := NewMetrics(&buf, Namespace, map[string]string{DimFunctionName: "f"})
	const goroutines, each = 16, 200
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				switch i % 3 {
				case 0:
					m.Count(MetricMoves, 1)
				case 1:
					m.Duration(MetricAIThinkMs, time.Duration(g)*time.Millisecond)
				default:
					m.Emit([]Dim{{"G", fmt.Sprint(g)}}, Point{MetricRequests, 1, UnitCount}, Point{MetricRequests5xx, 0, UnitCount})
				}
			}
		})
	}
	wg.Wait()
	lines := buf.lines()
	if len(lines) != goroutines*each {
		t.Fatalf("%d lines, want %d", len(lines), goroutines*each)
	}
	moves := 0.0
	for _, l := range lines {
		doc := checkEMF(t, l)
		moves += doc.MetricVals[MetricMoves]
	}
	if want := float64(goroutines * ((each + 2) / 3)); moves != want {
		t.Errorf("Moves sum %v, want %v", moves, want)
	}
}

func TestRecorder(t *testing.T) {
	rec := NewRecorderWithDims(map[string]string{DimFunctionName: "f"})
	m := rec.Metrics()
	m.Count(MetricScheduleFailures, 1)
	m.Count(MetricScheduleFailures, 2, Dim{"Kind", "cancel"})
	m.Duration(MetricAIThinkMs, 1500*time.Microsecond)
	m.Emit(nil, Point{MetricRequests, 1, UnitCount}, Point{MetricRequests4xx, 0, UnitCount}, Point{"", 1, UnitCount})

	if got := rec.Count(MetricScheduleFailures); got != 3 {
		t.Errorf("Count(ScheduleFailures) = %v, want 3", got)
	}
	if got := rec.Count(MetricPushFailures); got != 0 {
		t.Errorf("Count(PushFailures) = %v, want 0", got)
	}
	want := map[string]float64{MetricScheduleFailures: 3, MetricAIThinkMs: 1.5, MetricRequests: 1, MetricRequests4xx: 0}
	if got := rec.Counts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Counts() = %v, want %v", got, want)
	}
	s := rec.Samples(MetricScheduleFailures)
	if len(s) != 2 || fmt.Sprint(s[1].Dims) != "[{FunctionName f} {Kind cancel}]" || s[0].Unit != UnitCount {
		t.Errorf("Samples = %+v", s)
	}
	if s := rec.Samples(MetricAIThinkMs); len(s) != 1 || s[0].Unit != UnitMilliseconds {
		t.Errorf("AIThinkMs samples = %+v", s)
	}
	if n := len(rec.Samples("")); n != 5 {
		t.Errorf("%d samples in all, want 5", n)
	}
	rec.Reset()
	if n := len(rec.Samples("")); n != 0 {
		t.Errorf("%d samples after Reset", n)
	}
}

func TestRecorderConcurrent(t *testing.T) {
	rec := NewRecorder()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				rec.Metrics().Count(MetricMoves, 1)
				_ = rec.Count(MetricMoves)
			}
		})
	}
	wg.Wait()
	if got := rec.Count(MetricMoves); got != 4000 {
		t.Errorf("Count = %v, want 4000", got)
	}
}

// TestMetricsRequest: the per-request metrics for answers made outside
// the middleware are the middleware's.
func TestMetricsRequest(t *testing.T) {
	rec := NewRecorder()
	for _, status := range []int{200, 400, 429, 500, 503} {
		rec.Metrics().Request(status, 1500*time.Microsecond)
	}
	want := map[string]float64{MetricRequests: 5, MetricRequests4xx: 2, MetricRequests5xx: 2, MetricRateLimited: 1, MetricRequestMs: 7.5}
	if got := rec.Counts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Counts() = %v, want %v", got, want)
	}
	Discard().Request(500, time.Second) // no-op
}
