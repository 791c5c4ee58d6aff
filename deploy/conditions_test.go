package deploy

import (
	"fmt"
	"strconv"
	"testing"
)

// The template's conditions, evaluated for a set of parameter values, so
// that a test can look at the stack a deploy with those values would
// make: Fn::If resolved to its branch, resources whose Condition is false
// left out.

// stackFor is the template as deployed with params (the others at their
// defaults): every resource that exists, with its properties resolved.
type stackFor struct {
	conds     map[string]bool
	params    map[string]string
	resources map[string]map[string]any
}

func deployedWith(t *testing.T, tmpl *Template, params map[string]string) *stackFor {
	t.Helper()
	raw := loadRawTemplate(t)
	values := map[string]string{}
	declared, _ := raw["Parameters"].(map[string]any)
	for name, p := range declared {
		m, _ := p.(map[string]any)
		if d, ok := m["Default"]; ok {
			values[name] = fmt.Sprint(d)
		}
	}
	for k, v := range params {
		if _, ok := declared[k]; !ok {
			t.Fatalf("template.yaml has no parameter %s", k)
		}
		values[k] = v
	}
	s := &stackFor{conds: map[string]bool{}, params: values, resources: map[string]map[string]any{}}
	defs, _ := raw["Conditions"].(map[string]any)
	for name := range defs {
		s.conds[name] = s.evalCondition(t, defs, name, 0)
	}
	for id, r := range tmpl.Resources {
		if c, ok := r["Condition"].(string); ok && !s.conds[c] {
			continue
		}
		res, _ := s.resolve(r).(map[string]any)
		s.resources[id] = res
	}
	return s
}

func (s *stackFor) evalCondition(t *testing.T, defs map[string]any, name string, depth int) bool {
	t.Helper()
	if depth > 16 {
		t.Fatalf("condition %s nests too deep", name)
	}
	def, ok := defs[name]
	if !ok {
		t.Fatalf("no condition %s", name)
	}
	return s.eval(t, defs, def, depth)
}

func (s *stackFor) eval(t *testing.T, defs map[string]any, v any, depth int) bool {
	t.Helper()
	m, _ := v.(map[string]any)
	args, _ := firstValue(m).([]any)
	switch {
	case m["Fn::Equals"] != nil:
		return s.scalar(t, args[0]) == s.scalar(t, args[1])
	case m["Fn::Not"] != nil:
		return !s.eval(t, defs, args[0], depth+1)
	case m["Fn::And"] != nil, m["Fn::Or"] != nil:
		and := m["Fn::And"] != nil
		for _, a := range args {
			if s.eval(t, defs, a, depth+1) != and {
				return !and
			}
		}
		return and
	case m["Condition"] != nil:
		return s.evalCondition(t, defs, fmt.Sprint(m["Condition"]), depth+1)
	}
	t.Fatalf("condition %v: not an Fn::Equals/Not/And/Or/Condition", v)
	return false
}

func firstValue(m map[string]any) any {
	for _, v := range m {
		return v
	}
	return nil
}

// scalar is a condition argument's value: a literal or a parameter's.
func (s *stackFor) scalar(t *testing.T, v any) string {
	t.Helper()
	switch v := v.(type) {
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case map[string]any:
		if ref, ok := v["Ref"].(string); ok {
			if val, ok := s.params[ref]; ok {
				return val
			}
		}
	}
	t.Fatalf("condition argument %v is not a literal or a parameter", v)
	return ""
}

// resolve replaces every Fn::If by the branch its condition picks.
func (s *stackFor) resolve(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if args, ok := v["Fn::If"].([]any); ok && len(v) == 1 && len(args) == 3 {
			if s.conds[fmt.Sprint(args[0])] {
				return s.resolve(args[1])
			}
			return s.resolve(args[2])
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = s.resolve(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = s.resolve(x)
		}
		return out
	}
	return v
}

func (s *stackFor) props(id string) map[string]any {
	p, _ := s.resources[id]["Properties"].(map[string]any)
	return p
}

// references lists the logical IDs v refers to (Ref, Fn::GetAtt,
// ${...} in Fn::Sub).
func references(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["Ref"].(string); ok {
				out = append(out, r)
			}
			if ga, ok := v["Fn::GetAtt"].([]any); ok && len(ga) > 0 {
				out = append(out, fmt.Sprint(ga[0]))
			}
			switch sub := v["Fn::Sub"].(type) {
			case string:
				for _, m := range subRefs.FindAllStringSubmatch(sub, -1) {
					out = append(out, m[1])
				}
			case []any:
				if str, ok := sub[0].(string); ok {
					for _, m := range subRefs.FindAllStringSubmatch(str, -1) {
						out = append(out, m[1])
					}
				}
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}
