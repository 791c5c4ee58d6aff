package apispec

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"gopkg.in/yaml.v3"
)

// The rules openapi.yaml keeps beyond being a valid OpenAPI 3.1 document
// whose examples validate (Load checks that):
//
//   - every operation has a unique operationId, a summary, an example of
//     its request body and of every success body;
//   - every operation documents the answers any route can give: 400 (a
//     request the Lambda adapter cannot read), 429 (throttled), 500 and 503;
//   - every 4xx/5xx response is the Error schema narrowed to the codes it
//     can carry (allOf Error, a code enum, unevaluatedProperties false) and
//     says its Content-Language; 429 may also be API Gateway's own message;
//   - no bare object: every object schema names its properties (or is an
//     explicit map, or explicitly empty);
//   - exact shapes: every object a response can contain is closed
//     (additionalProperties false, or unevaluatedProperties false on it or
//     on the schema that composes it);
//   - portable to client generators: no YAML anchors or aliases (some
//     generators convert the YAML piecewise and lose them; ogen fails on
//     them); no plain scalar that YAML 1.1 reads as a boolean (y, n, yes,
//     no, on, off: the knight's letter n in a promotion enum became false);
//     and no security scheme named like a schema (generators make a type of
//     each, and the two collide: ogen refused seatToken beside SeatToken).

const errorSchemaRef = "#/components/schemas/Error"
const gatewaySchemaRef = "#/components/schemas/GatewayMessage"

// Lint returns every rule the document breaks (nil when none).
func (s *Spec) Lint() []error {
	l := &linter{doc: s.Doc}
	l.operations()
	for _, name := range []string{RouteNotFound, MethodNotAllowed} {
		ref := s.Doc.Components.Responses[name]
		if ref == nil || ref.Value == nil {
			l.errorf("components.responses.%s is missing", name)
			continue
		}
		l.errorResponse("components.responses."+name, specialStatus[name], ref.Value)
	}
	for _, name := range sortedKeys(s.Doc.Components.Schemas) {
		l.noBareObjects("components.schemas."+name, s.Doc.Components.Schemas[name], map[*openapi3.Schema]bool{})
	}
	l.portable(s.Path, s.source)
	return l.errs
}

// yaml11Booleans are the plain scalars YAML 1.1 reads as booleans besides
// true and false.
var yaml11Booleans = map[string]bool{"y": true, "n": true, "yes": true, "no": true, "on": true, "off": true}

// portable checks what client generators trip over that a valid document
// may still contain.
func (l *linter) portable(path string, source []byte) {
	schemas := map[string]string{}
	for name := range l.doc.Components.Schemas {
		schemas[strings.ToLower(name)] = name
	}
	for name := range l.doc.Components.SecuritySchemes {
		if schema, ok := schemas[strings.ToLower(name)]; ok {
			l.errorf("components.securitySchemes.%s: named like the schema %s (generated types collide)", name, schema)
		}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(source, &root); err != nil {
		l.errorf("%s: %v", path, err)
		return
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch {
		case n.Kind == yaml.AliasNode:
			l.errorf("%s line %d: YAML alias *%s (write the value out: client generators may not resolve it)", path, n.Line, n.Value)
			return
		case n.Anchor != "":
			l.errorf("%s line %d: YAML anchor &%s (write the value out: client generators may not resolve it)", path, n.Line, n.Anchor)
		case n.Kind == yaml.ScalarNode && n.Style == 0 && yaml11Booleans[strings.ToLower(n.Value)]:
			l.errorf("%s line %d: plain %q is a boolean in YAML 1.1 (quote it)", path, n.Line, n.Value)
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
}

type linter struct {
	doc  *openapi3.T
	errs []error
}

// specialStatus is the status of each answer of no operation.
var specialStatus = map[string]int{RouteNotFound: 404, MethodNotAllowed: 405}

// closedKey is a schema as reached, closed by its parent or not.
type closedKey struct {
	s        *openapi3.Schema
	byParent bool
}

func (l *linter) errorf(format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf(format, args...))
}

func (l *linter) operations() {
	ids := map[string]string{}
	paths := l.doc.Paths.Map()
	for _, path := range sortedKeys(paths) {
		ops := paths[path].Operations()
		for _, method := range sortedKeys(ops) {
			op := ops[method]
			where := method + " " + path
			switch {
			case op.OperationID == "":
				l.errorf("%s: no operationId", where)
			case ids[op.OperationID] != "":
				l.errorf("%s: operationId %q is also %s's", where, op.OperationID, ids[op.OperationID])
			default:
				ids[op.OperationID] = where
			}
			if op.Summary == "" {
				l.errorf("%s: no summary", where)
			}
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				for mt, m := range rb.Value.Content {
					if m.Example == nil && len(m.Examples) == 0 {
						l.errorf("%s: request body %s has no example", where, mt)
					}
					l.noBareObjects(where+" request body", m.Schema, map[*openapi3.Schema]bool{})
				}
			}
			responses := op.Responses.Map()
			for _, status := range []string{"400", "429", "500", "503"} {
				if responses[status] == nil {
					l.errorf("%s: no %s response (every route can answer it)", where, status)
				}
			}
			success := false
			for _, status := range sortedKeys(responses) {
				ref := responses[status]
				w := where + " → " + status
				code, err := strconv.Atoi(status)
				if err != nil {
					l.errorf("%s: only numeric statuses are documented", w)
					continue
				}
				if ref.Value == nil {
					l.errorf("%s: unresolved response", w)
					continue
				}
				if code == 204 {
					// No Content: it has no body to describe, and must not.
					success = true
					if len(ref.Value.Content) > 0 {
						l.errorf("%s: a 204 answer with content", w)
					}
					continue
				}
				if code < 400 {
					success = success || code < 300
					l.successResponse(w, ref.Value)
					continue
				}
				l.errorResponse(w, code, ref.Value)
			}
			if !success {
				l.errorf("%s: no success response", where)
			}
		}
	}
}

func (l *linter) successResponse(where string, r *openapi3.Response) {
	if len(r.Content) == 0 {
		l.errorf("%s: no content", where)
	}
	for mt, m := range r.Content {
		if m.Example == nil && len(m.Examples) == 0 {
			l.errorf("%s: %s has no example", where, mt)
		}
		if m.Schema != nil {
			l.closed(where+" "+mt, m.Schema, false, map[closedKey]bool{})
			l.noBareObjects(where+" "+mt, m.Schema, map[*openapi3.Schema]bool{})
		}
	}
	if code := r.Headers["Content-Language"]; code == nil {
		l.errorf("%s: no Content-Language header", where)
	}
}

// errorResponse checks a 4xx/5xx response.
func (l *linter) errorResponse(where string, status int, r *openapi3.Response) {
	if len(r.Content) != 1 || r.Content["application/json"] == nil {
		l.errorf("%s: an error response has exactly one media type, application/json", where)
		return
	}
	m := r.Content["application/json"]
	if m.Example == nil && len(m.Examples) == 0 {
		l.errorf("%s: no example", where)
	}
	if status != 429 && r.Headers["Content-Language"] == nil {
		l.errorf("%s: no Content-Language header", where)
	}
	if m.Schema == nil || m.Schema.Value == nil {
		l.errorf("%s: no schema", where)
		return
	}
	branches := []*openapi3.SchemaRef{m.Schema}
	if one := m.Schema.Value.OneOf; len(one) > 0 && status == 429 {
		branches = one
	}
	errorBased := 0
	for _, b := range branches {
		switch {
		case b.Ref == gatewaySchemaRef && status == 429:
		case isErrorBased(b.Value):
			errorBased++
			if codes := schemaCodes(b.Value); len(codes) == 0 {
				l.errorf("%s: the Error schema is not narrowed to a code enum", where)
			}
			if !isFalse(b.Value.UnevaluatedProperties) {
				l.errorf("%s: an error body is closed (unevaluatedProperties: false)", where)
			}
		default:
			l.errorf("%s: the body is not the Error schema (allOf %s)", where, errorSchemaRef)
		}
	}
	if errorBased == 0 {
		l.errorf("%s: no Error schema", where)
	}
	l.closed(where, m.Schema, false, map[closedKey]bool{})
	l.noBareObjects(where, m.Schema, map[*openapi3.Schema]bool{})
}

func isErrorBased(s *openapi3.Schema) bool {
	return s != nil && slices.ContainsFunc(s.AllOf, func(r *openapi3.SchemaRef) bool { return r.Ref == errorSchemaRef })
}

func isFalse(b openapi3.BoolSchema) bool { return b.Has != nil && !*b.Has }

// isObject reports whether a schema describes an object (a schema without
// a type only narrows others, as the error responses' code enums do).
func isObject(s *openapi3.Schema) bool { return s.Type.Includes("object") }

// noBareObjects reports object schemas that say nothing of their members.
func (l *linter) noBareObjects(where string, ref *openapi3.SchemaRef, seen map[*openapi3.Schema]bool) {
	if ref == nil || ref.Value == nil || seen[ref.Value] {
		return
	}
	s := ref.Value
	seen[s] = true
	if s.Type.Includes("object") && len(s.Properties) == 0 && s.AdditionalProperties.Schema == nil &&
		len(s.PatternProperties) == 0 && len(s.AllOf)+len(s.OneOf)+len(s.AnyOf) == 0 &&
		!(s.MaxProps != nil && *s.MaxProps == 0) {
		l.errorf("%s: a bare object (name its properties)", where)
	}
	for _, name := range sortedKeys(s.Properties) {
		l.noBareObjects(where+"."+name, s.Properties[name], seen)
	}
	for _, sub := range subschemas(s) {
		l.noBareObjects(where, sub, seen)
	}
	if s.Items != nil {
		l.noBareObjects(where+"[]", s.Items, seen)
	}
	if s.AdditionalProperties.Schema != nil {
		l.noBareObjects(where+".*", s.AdditionalProperties.Schema, seen)
	}
}

// closed reports objects of a response that accept members they do not
// name. byParent is set when a composing schema closes this one with
// unevaluatedProperties: false.
func (l *linter) closed(where string, ref *openapi3.SchemaRef, byParent bool, seen map[closedKey]bool) {
	if ref == nil || ref.Value == nil {
		return
	}
	s := ref.Value
	key := closedKey{s, byParent}
	if seen[key] {
		return
	}
	seen[key] = true
	closesOthers := isFalse(s.UnevaluatedProperties)
	if isObject(s) && !byParent && !closesOthers && !isFalse(s.AdditionalProperties) && s.AdditionalProperties.Schema == nil {
		l.errorf("%s: an open object (additionalProperties: false, or unevaluatedProperties: false)", where)
	}
	for _, name := range sortedKeys(s.Properties) {
		l.closed(where+"."+name, s.Properties[name], false, seen)
	}
	for _, sub := range subschemas(s) {
		// The subschemas' own members are evaluated for this schema's
		// unevaluatedProperties; their nested objects are not.
		l.closed(where, sub, byParent || closesOthers, seen)
	}
	if s.Items != nil {
		l.closed(where+"[]", s.Items, false, seen)
	}
}

// subschemas are the schemas that apply to the same instance.
func subschemas(s *openapi3.Schema) []*openapi3.SchemaRef {
	var out []*openapi3.SchemaRef
	out = append(out, s.AllOf...)
	out = append(out, s.OneOf...)
	out = append(out, s.AnyOf...)
	for _, r := range []*openapi3.SchemaRef{s.Then, s.Else} {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

// schemaCodes returns the error codes an error body schema allows: the
// enum of error.code, found through allOf (all must hold: intersected).
func schemaCodes(s *openapi3.Schema) []string {
	var sets [][]string
	var walk func(s *openapi3.Schema, seen map[*openapi3.Schema]bool)
	walk = func(s *openapi3.Schema, seen map[*openapi3.Schema]bool) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		if e := s.Properties["error"]; e != nil && e.Value != nil {
			var inner func(e *openapi3.Schema)
			inner = func(e *openapi3.Schema) {
				if c := e.Properties["code"]; c != nil && c.Value != nil {
					if c.Value.Const != nil {
						sets = append(sets, []string{fmt.Sprint(c.Value.Const)})
					}
					if len(c.Value.Enum) > 0 {
						var codes []string
						for _, v := range c.Value.Enum {
							codes = append(codes, fmt.Sprint(v))
						}
						sets = append(sets, codes)
					}
				}
				for _, a := range e.AllOf {
					if a.Value != nil {
						inner(a.Value)
					}
				}
			}
			inner(e.Value)
		}
		for _, a := range s.AllOf {
			walk(a.Value, seen)
		}
	}
	walk(s, map[*openapi3.Schema]bool{})
	if len(sets) == 0 {
		return nil
	}
	out := slices.Clone(sets[0])
	for _, set := range sets[1:] {
		out = slices.DeleteFunc(out, func(c string) bool { return !slices.Contains(set, c) })
	}
	sort.Strings(out)
	return out
}

// CodeUse is where an error code can be answered.
type CodeUse struct {
	Code   string
	Status int
	// Where is "METHOD /path" or "components.responses.Name" (the answers
	// of no operation).
	Where string
}

// ErrorCodes lists every (code, status, where) the document allows in an
// error response: the operations' 4xx/5xx responses and the two answers of
// no operation.
func (s *Spec) ErrorCodes() []CodeUse {
	var out []CodeUse
	add := func(where string, status int, r *openapi3.Response) {
		if r == nil || r.Content["application/json"] == nil || r.Content["application/json"].Schema == nil {
			return
		}
		sch := r.Content["application/json"].Schema.Value
		branches := []*openapi3.SchemaRef{{Value: sch}}
		if len(sch.OneOf) > 0 {
			branches = sch.OneOf
		}
		for _, b := range branches {
			for _, c := range schemaCodes(b.Value) {
				out = append(out, CodeUse{Code: c, Status: status, Where: where})
			}
		}
	}
	paths := s.Doc.Paths.Map()
	for _, path := range sortedKeys(paths) {
		ops := paths[path].Operations()
		for _, method := range sortedKeys(ops) {
			responses := ops[method].Responses.Map()
			for _, status := range sortedKeys(responses) {
				code, err := strconv.Atoi(status)
				if err != nil || code < 400 {
					continue
				}
				add(strings.ToUpper(method)+" "+path, code, responses[status].Value)
			}
		}
	}
	for _, name := range []string{RouteNotFound, MethodNotAllowed} {
		if r := s.Doc.Components.Responses[name]; r != nil {
			add("components.responses."+name, specialStatus[name], r.Value)
		}
	}
	return out
}

// Routes lists the operations as "METHOD /path".
func (s *Spec) Routes() []string {
	var out []string
	for path, item := range s.Doc.Paths.Map() {
		for method := range item.Operations() {
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// StreamErrorCodes lists the codes of components.schemas.StreamError, the
// error message of the WebSocket stream.
func (s *Spec) StreamErrorCodes() []string {
	ref := s.Doc.Components.Schemas["StreamError"]
	if ref == nil || ref.Value == nil || ref.Value.Properties["code"] == nil {
		return nil
	}
	var out []string
	for _, v := range ref.Value.Properties["code"].Value.Enum {
		out = append(out, fmt.Sprint(v))
	}
	sort.Strings(out)
	return out
}
