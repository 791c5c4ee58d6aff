package obs

import (
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Unit is a CloudWatch metric unit (the EMF MetricDefinition's Unit).
type Unit string

// The units the registry uses (CloudWatch accepts more; Value takes any).
const (
	UnitCount        Unit = "Count"
	UnitMilliseconds Unit = "Milliseconds"
	UnitBytes        Unit = "Bytes"
	UnitPercent      Unit = "Percent"
	UnitNone         Unit = "None"
)

// Dim is one extra dimension of a data point: a name and its value.
type Dim struct{ Name, Value string }

// Point is one metric value.
type Point struct {
	Name  string
	Value float64
	Unit  Unit
}

// Limits of one EMF document (CloudWatch embedded metric format
// specification): at most 100 metrics in a directive and 30 dimension keys
// in a dimension set; dimension values are ASCII, 1 to 1024 characters.
const (
	maxPoints      = 100
	maxDims        = 30
	maxDimValueLen = 1024
	maxNameLen     = 255
)

// Metrics writes CloudWatch embedded metric format (EMF) documents, one
// JSON line per call, to a writer: in Lambda, stdout, from which CloudWatch
// Logs extracts the metrics. Nothing is batched (a Lambda instance may be
// frozen or stopped right after an invocation; a written line is already
// delivered). It is safe for concurrent use; each document is written
// with a single Write call.
//
// A nil *Metrics discards everything, so code can hold one unconditionally
// (tests and local runs where metrics are off: Discard()).
type Metrics struct {
	namespace string
	base      []Dim // sorted by name, non-empty values
	now       func() time.Time
	rec       *Recorder // when set, points go here instead of w

	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// NewMetrics returns a Metrics writing EMF lines to w in namespace, every
// point carrying dims (e.g. {"FunctionName": "chessapi-move"}). Dimensions
// with an empty name or value are left out. A nil w gives the nil Metrics
// (metrics off).
func NewMetrics(w io.Writer, namespace string, dims map[string]string) *Metrics {
	if w == nil {
		return nil
	}
	return &Metrics{namespace: namespace, base: baseDims(dims), now: time.Now, w: w}
}

// Discard returns the Metrics that records nothing (a nil *Metrics).
func Discard() *Metrics { return nil }

func baseDims(dims map[string]string) []Dim {
	var out []Dim
	for _, name := range slices.Sorted(maps.Keys(dims)) {
		if d, ok := cleanDim(Dim{name, dims[name]}); ok && len(out) < maxDims {
			out = append(out, d)
		}
	}
	return out
}

// cleanDim makes d acceptable to CloudWatch: a non-empty name and value,
// the value ASCII (other bytes become '?') and at most 1024 characters.
func cleanDim(d Dim) (Dim, bool) {
	if d.Name == "" || d.Value == "" || d.Name == "_aws" || len(d.Name) > maxNameLen {
		return d, false
	}
	if len(d.Value) > maxDimValueLen {
		d.Value = d.Value[:maxDimValueLen]
	}
	for i := 0; i < len(d.Value); i++ {
		if c := d.Value[i]; c >= utf8.RuneSelf || c < 0x20 {
			b := []byte(d.Value)
			for j := i; j < len(b); j++ {
				if b[j] >= utf8.RuneSelf || b[j] < 0x20 {
					b[j] = '?'
				}
			}
			d.Value = string(b)
			break
		}
	}
	return d, true
}

// Count adds n to the metric name (unit Count), with optional extra
// dimensions (see Emit).
func (m *Metrics) Count(name string, n int, extraDims ...Dim) {
	if m == nil {
		return
	}
	m.Emit(extraDims, Point{Name: name, Value: float64(n), Unit: UnitCount})
}

// Duration records d in milliseconds (fractions kept) under name.
func (m *Metrics) Duration(name string, d time.Duration, extraDims ...Dim) {
	if m == nil {
		return
	}
	m.Emit(extraDims, Point{Name: name, Value: float64(d) / float64(time.Millisecond), Unit: UnitMilliseconds})
}

// Value records v with unit under name.
func (m *Metrics) Value(name string, v float64, unit Unit, extraDims ...Dim) {
	if m == nil {
		return
	}
	m.Emit(extraDims, Point{Name: name, Value: v, Unit: unit})
}

// Emit writes one EMF document holding points. Every point is published
// under the base dimension set (NewMetrics' dims) and, when extraDims are
// given, also under the base plus extraDims: alarms watch the base set,
// dashboards may split by the extra ones. Points that cannot be published
// are left out: an empty, duplicate or over-long name, a name equal to a
// dimension's, NaN or ±Inf, and any beyond the 100th.
func (m *Metrics) Emit(extraDims []Dim, points ...Point) {
	if m == nil || len(points) == 0 {
		return
	}
	extra := m.extraDims(extraDims)
	if m.rec != nil {
		m.rec.add(m.base, extra, m.keep(points, extra))
		return
	}
	keep := m.keep(points, extra)
	if len(keep) == 0 {
		return
	}
	ts := m.now().UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.encode(m.buf[:0], ts, extra, keep)
	m.buf = b
	_, _ = m.w.Write(b)
	if cap(m.buf) > 64<<10 {
		m.buf = nil // one huge document does not pin its buffer
	}
}

// extraDims cleans the extra dimensions: dropped when unusable or when
// they repeat a base dimension, bounded so that a set has 30 keys at most.
func (m *Metrics) extraDims(extra []Dim) []Dim {
	if len(extra) == 0 {
		return nil
	}
	out := make([]Dim, 0, len(extra))
	for _, d := range extra {
		d, ok := cleanDim(d)
		if !ok || len(m.base)+len(out) >= maxDims || hasDim(m.base, d.Name) || hasDim(out, d.Name) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func hasDim(dims []Dim, name string) bool {
	for _, d := range dims {
		if d.Name == name {
			return true
		}
	}
	return false
}

// keep returns the points that can be published.
func (m *Metrics) keep(points []Point, extra []Dim) []Point {
	ok := func(i int) bool {
		p := points[i]
		if p.Name == "" || p.Name == "_aws" || len(p.Name) > maxNameLen || math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			return false
		}
		if hasDim(m.base, p.Name) || hasDim(extra, p.Name) {
			return false
		}
		for _, q := range points[:i] {
			if q.Name == p.Name {
				return false
			}
		}
		return true
	}
	all := true
	for i := range points {
		if !ok(i) {
			all = false
			break
		}
	}
	if all && len(points) <= maxPoints {
		return points
	}
	out := make([]Point, 0, len(points))
	for i := range points {
		if ok(i) && len(out) < maxPoints {
			out = append(out, points[i])
		}
	}
	return out
}

// encode appends the EMF document:
//
//	{"_aws":{"Timestamp":T,"CloudWatchMetrics":[{"Namespace":N,
//	  "Dimensions":[[base...],[base...,extra...]],
//	  "Metrics":[{"Name":n,"Unit":u},...]}]},
//	 "<dim>":"<value>",...,"<metric>":<value>,...}
func (m *Metrics) encode(b []byte, ts int64, extra []Dim, points []Point) []byte {
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, ts, 10)
	b = append(b, `,"CloudWatchMetrics":[{"Namespace":`...)
	b = appendString(b, m.namespace)
	b = append(b, `,"Dimensions":[`...)
	b = appendDimSet(b, m.base, nil)
	if len(extra) > 0 {
		b = append(b, ',')
		b = appendDimSet(b, m.base, extra)
	}
	b = append(b, `],"Metrics":[`...)
	for i, p := range points {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Name":`...)
		b = appendString(b, p.Name)
		if p.Unit != "" {
			b = append(b, `,"Unit":`...)
			b = appendString(b, string(p.Unit))
		}
		b = append(b, '}')
	}
	b = append(b, "]}]}"...)
	for _, dims := range [2][]Dim{m.base, extra} {
		for _, d := range dims {
			b = append(b, ',')
			b = appendString(b, d.Name)
			b = append(b, ':')
			b = appendString(b, d.Value)
		}
	}
	for _, p := range points {
		b = append(b, ',')
		b = appendString(b, p.Name)
		b = append(b, ':')
		b = appendNumber(b, p.Value)
	}
	return append(b, "}\n"...)
}

func appendDimSet(b []byte, base, extra []Dim) []byte {
	b = append(b, '[')
	n := 0
	for _, dims := range [2][]Dim{base, extra} {
		for _, d := range dims {
			if n > 0 {
				b = append(b, ',')
			}
			b = appendString(b, d.Name)
			n++
		}
	}
	return append(b, ']')
}

// appendNumber appends v as a JSON number: integers without a fraction or
// exponent, others in the shortest form that reads back as v.
func appendNumber(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other control characters
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Sample is one data point a Recorder kept.
type Sample struct {
	Point
	// Dims are the point's dimensions: the base ones, then the extra ones.
	Dims []Dim
}

// Recorder keeps data points in memory, for tests that assert what was
// measured ("a schedule failure was counted"). It is safe for concurrent
// use.
type Recorder struct {
	mu      sync.Mutex
	samples []Sample
	metrics *Metrics
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	r := &Recorder{}
	r.metrics = &Metrics{now: time.Now, rec: r}
	return r
}

// NewRecorderWithDims returns an empty Recorder whose Metrics carry dims
// as base dimensions (as NewMetrics' would).
func NewRecorderWithDims(dims map[string]string) *Recorder {
	r := NewRecorder()
	r.metrics.base = baseDims(dims)
	return r
}

// Metrics returns the Metrics that records into r.
func (r *Recorder) Metrics() *Metrics { return r.metrics }

func (r *Recorder) add(base, extra []Dim, points []Point) {
	dims := slices.Concat(base, extra)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range points {
		r.samples = append(r.samples, Sample{Point: p, Dims: dims})
	}
}

// Count returns the sum of the values recorded under name: for a Count
// metric, how many were counted.
func (r *Recorder) Count(name string) float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum float64
	for _, s := range r.samples {
		if s.Name == name {
			sum += s.Value
		}
	}
	return sum
}

// Counts returns the sum of the values recorded under each name.
func (r *Recorder) Counts() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]float64{}
	for _, s := range r.samples {
		out[s.Name] += s.Value
	}
	return out
}

// Samples returns the data points recorded under name, or all of them when
// name is empty, in the order recorded.
func (r *Recorder) Samples(name string) []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Sample
	for _, s := range r.samples {
		if name == "" || s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

// Reset forgets everything recorded.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = nil
}
