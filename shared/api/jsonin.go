package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"

	"chessapi/shared/game"
)

// The one strict JSON decoder of the API: every request body (and every
// stream message) is read here, so every route refuses the same things the
// same way, naming the offending value by its dotted path:
//
//   - bad JSON, trailing data, or a top level that is not an object:
//     invalid_json;
//   - the same key twice in one object, at any depth: duplicate_field;
//   - a key the request does not have, at any depth: unknown_field;
//   - a value of the wrong JSON type: invalid_field (Want names the type).
//
// A body is parsed once into a tree of nodes; request decoders then take
// the fields they know (object.str, object.integer, ...) and finish each
// object with object.close, which reports the first key nobody took. JSON
// null is the same as an absent key.

// maxJSONDepth bounds nesting, so a hostile body cannot exhaust the stack.
const maxJSONDepth = 32

// jsonKind is the JSON type of a node.
type jsonKind uint8

const (
	kindNull jsonKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

var kindNames = [...]string{kindNull: "null", kindBool: "boolean", kindNumber: "number", kindString: "string", kindArray: "array", kindObject: "object"}

// node is one parsed JSON value.
type node struct {
	kind    jsonKind
	path    string
	str     string      // kindString
	num     json.Number // kindNumber
	boolean bool        // kindBool
	members []member    // kindObject, in order
	items   []*node     // kindArray
}

type member struct {
	key   string
	value *node
}

// syntaxError is a body that is not one JSON object (invalid_json); why
// says what is wrong for people.
type syntaxError struct{ why string }

func (e *syntaxError) Error() string { return "api: invalid JSON: " + e.why }

// JSON syntax problems (the why of a syntaxError), worded at the edge.
const (
	whyEmpty    = "empty"
	whySyntax   = "syntax"
	whyTrailing = "trailing"
	whyNotObj   = "notObject"
	whyTooDeep  = "tooDeep"
)

// parseJSON parses body into a tree. An empty body is an empty object when
// allowEmpty is set. Duplicate keys are reported with their path.
func parseJSON(body []byte, allowEmpty bool) (*node, error) {
	// JSON's whitespace only (bytes.TrimSpace would also take \f, \v,
	// U+0085, U+00A0 away and accept bodies that are not JSON).
	trimmed := bytes.Trim(body, " \t\r\n")
	if len(trimmed) == 0 {
		if allowEmpty {
			return &node{kind: kindObject}, nil
		}
		return nil, &syntaxError{whyEmpty}
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.UseNumber()
	root, err := parseValue(dec, "", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &syntaxError{whyTrailing}
	}
	if root.kind != kindObject {
		return nil, &syntaxError{whyNotObj}
	}
	return root, nil
}

func parseValue(dec *json.Decoder, path string, depth int) (*node, error) {
	if depth > maxJSONDepth {
		return nil, &syntaxError{whyTooDeep}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, &syntaxError{whySyntax}
	}
	n := &node{path: path}
	switch v := tok.(type) {
	case nil:
		n.kind = kindNull
	case bool:
		n.kind, n.boolean = kindBool, v
	case json.Number:
		n.kind, n.num = kindNumber, v
	case string:
		n.kind, n.str = kindString, v
	case json.Delim:
		switch v {
		case '{':
			n.kind = kindObject
			seen := map[string]bool{}
			for dec.More() {
				tok, err := dec.Token()
				if err != nil {
					return nil, &syntaxError{whySyntax}
				}
				key, ok := tok.(string)
				if !ok {
					return nil, &syntaxError{whySyntax}
				}
				childPath := joinPath(path, key)
				if seen[key] {
					return nil, &game.InputError{Field: childPath, Problem: game.ProblemDuplicate}
				}
				seen[key] = true
				child, err := parseValue(dec, childPath, depth+1)
				if err != nil {
					return nil, err
				}
				n.members = append(n.members, member{key, child})
			}
		case '[':
			n.kind = kindArray
			for i := 0; dec.More(); i++ {
				child, err := parseValue(dec, joinPath(path, strconv.Itoa(i)), depth+1)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, child)
			}
		default:
			return nil, &syntaxError{whySyntax}
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, &syntaxError{whySyntax}
		}
	}
	return n, nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// object reads the members of one JSON object field by field and
// remembers the first error (so a decoder reads linearly and checks once).
type object struct {
	n    *node
	used []bool
	err  *error // shared by every object of one request
}

// newRequest returns the root object of a parsed body; err receives the
// first decoding error of the whole request.
func newRequest(root *node, err *error) *object {
	return &object{n: root, used: make([]bool, len(root.members)), err: err}
}

func (o *object) fail(e error) {
	if *o.err == nil {
		*o.err = e
	}
}

func (o *object) failed() bool { return *o.err != nil }

// take returns the member named key (marking it used), or nil when it is
// absent or null.
func (o *object) take(key string) *node {
	if o == nil {
		return nil
	}
	for i, m := range o.n.members {
		if m.key == key {
			o.used[i] = true
			if m.value.kind == kindNull {
				return nil
			}
			return m.value
		}
	}
	return nil
}

// has reports whether key is present (even as null) without taking it.
func (o *object) has(key string) bool {
	if o == nil {
		return false
	}
	for _, m := range o.n.members {
		if m.key == key {
			return true
		}
	}
	return false
}

func (o *object) path(key string) string {
	if o == nil {
		return key
	}
	return joinPath(o.n.path, key)
}

func (o *object) wrongType(n *node, want jsonKind) {
	o.fail(&game.InputError{Field: n.path, Problem: game.ProblemType, Want: kindNames[want]})
}

// str returns the string member key (nil when absent or null).
func (o *object) str(key string) *string {
	n := o.take(key)
	if n == nil {
		return nil
	}
	if n.kind != kindString {
		o.wrongType(n, kindString)
		return nil
	}
	return &n.str
}

// boolean returns the boolean member key.
func (o *object) boolean(key string) *bool {
	n := o.take(key)
	if n == nil {
		return nil
	}
	if n.kind != kindBool {
		o.wrongType(n, kindBool)
		return nil
	}
	return &n.boolean
}

// integer returns the integer member key (a JSON number without a
// fraction, within int64).
func (o *object) integer(key string) *int64 {
	n := o.take(key)
	if n == nil {
		return nil
	}
	v, ok := integerOf(n)
	if !ok {
		o.fail(&game.InputError{Field: n.path, Problem: game.ProblemType, Want: "integer"})
		return nil
	}
	return &v
}

func integerOf(n *node) (int64, bool) {
	if n.kind != kindNumber {
		return 0, false
	}
	if v, err := n.num.Int64(); err == nil {
		return v, true
	}
	// 1e3 and 2.0 are integers written another way.
	f, err := n.num.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

// obj returns the object member key.
func (o *object) obj(key string) *object {
	n := o.take(key)
	if n == nil {
		return nil
	}
	if n.kind != kindObject {
		o.wrongType(n, kindObject)
		return nil
	}
	return &object{n: n, used: make([]bool, len(n.members)), err: o.err}
}

// strings returns the array-of-strings member key.
func (o *object) strings(key string) []string {
	n := o.take(key)
	if n == nil {
		return nil
	}
	if n.kind != kindArray {
		o.wrongType(n, kindArray)
		return nil
	}
	out := make([]string, 0, len(n.items))
	for _, item := range n.items {
		if item.kind != kindString {
			o.wrongType(item, kindString)
			return nil
		}
		out = append(out, item.str)
	}
	return out
}

// raw returns the member key as a node, for values of more than one type.
func (o *object) raw(key string) *node { return o.take(key) }

// close reports the first member nobody took as unknown_field, and closes
// the objects of that member's children too (an object taken but not
// closed is closed here).
func (o *object) close() {
	if o == nil {
		return
	}
	for i, m := range o.n.members {
		if !o.used[i] {
			o.fail(&game.InputError{Field: m.value.path, Problem: game.ProblemUnknown})
			return
		}
	}
}

// require reports a missing field.
func (o *object) require(key string, present bool) {
	if !present && !o.failed() {
		o.fail(game.FieldRequired(o.path(key)))
	}
}
