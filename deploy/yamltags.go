package deploy

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// shortForms maps CloudFormation's YAML short-form function tags to the key
// of their long (JSON) form: `!Ref X` reads as {"Ref": "X"}.
var shortForms = map[string]string{
	"!Ref":          "Ref",
	"!Condition":    "Condition",
	"!Base64":       "Fn::Base64",
	"!Cidr":         "Fn::Cidr",
	"!FindInMap":    "Fn::FindInMap",
	"!GetAtt":       "Fn::GetAtt",
	"!GetAZs":       "Fn::GetAZs",
	"!ImportValue":  "Fn::ImportValue",
	"!Join":         "Fn::Join",
	"!Length":       "Fn::Length",
	"!Select":       "Fn::Select",
	"!Split":        "Fn::Split",
	"!Sub":          "Fn::Sub",
	"!ToJsonString": "Fn::ToJsonString",
	"!Transform":    "Fn::Transform",
	"!And":          "Fn::And",
	"!Equals":       "Fn::Equals",
	"!If":           "Fn::If",
	"!Not":          "Fn::Not",
	"!Or":           "Fn::Or",
}

// maxDepth stops aliases that refer to themselves from recursing forever.
const maxDepth = 64

// decodeNode turns a YAML tree into maps, slices and scalars, reading
// CloudFormation's short-form tags as their long forms.
func decodeNode(n *yaml.Node) (any, error) {
	return decodeAt(n, 0)
}

func decodeAt(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: line %d: nested deeper than %d levels", ErrInvalidTemplate, n.Line, maxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return decodeAt(n.Content[0], depth+1)
	case yaml.AliasNode:
		return decodeAt(n.Alias, depth+1)
	}

	if strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		long, ok := shortForms[n.Tag]
		if !ok {
			return nil, fmt.Errorf("%w: line %d: unknown tag %s", ErrInvalidTemplate, n.Line, n.Tag)
		}
		untagged := *n
		untagged.Tag = ""
		arg, err := decodeAt(&untagged, depth+1)
		if err != nil {
			return nil, err
		}
		// !GetAtt Resource.Attribute is the one short form whose scalar
		// argument the long form splits (at the first dot).
		if s, isString := arg.(string); isString && long == "Fn::GetAtt" {
			resource, attribute, found := strings.Cut(s, ".")
			if !found || resource == "" || attribute == "" {
				return nil, fmt.Errorf("%w: line %d: !GetAtt %q is not Resource.Attribute", ErrInvalidTemplate, n.Line, s)
			}
			arg = []any{resource, attribute}
		}
		return map[string]any{long: arg}, nil
	}

	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%w: line %d: mapping key is not a scalar", ErrInvalidTemplate, k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("%w: line %d: duplicate key %q", ErrInvalidTemplate, k.Line, k.Value)
			}
			val, err := decodeAt(v, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, err := decodeAt(c, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, val)
		}
		return s, nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: line %d: %w", ErrInvalidTemplate, n.Line, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("%w: line %d: unexpected YAML node kind %d", ErrInvalidTemplate, n.Line, n.Kind)
}
