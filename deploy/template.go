// Package deploy reads the deployment description of the service: the SAM
// template (which routes reach which function, how each function is built
// and configured) and the sample events in events/. Tests use it to hold the
// template, the Makefile, the events and the HTTP handler to one another.
package deploy

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ErrInvalidTemplate is wrapped by every error about the template's content
// (as opposed to reading the file).
var ErrInvalidTemplate = errors.New("deploy: invalid template")

// Route is one HTTP API route and the function it invokes.
type Route struct {
	Method   string // upper case: GET, POST
	Path     string // with {name} parameters: /v1/games/{id}
	Function string // logical ID of the function
}

// Pattern is the route as a Go 1.22 net/http ServeMux pattern, which uses
// the same {name} syntax as API Gateway: "POST /v1/games/{id}/join".
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// Function is one AWS::Serverless::Function, with Globals applied.
type Function struct {
	LogicalID     string
	CodeURI       string
	BuildMethod   string   // Metadata.BuildMethod, e.g. "makefile"
	Runtime       string   // e.g. "provided.al2023"
	Handler       string   // e.g. "bootstrap"
	Architectures []string // e.g. [arm64]
	EnvKeys       []string // environment variable names, sorted
}

// BuildTarget is the Makefile target `sam build` runs for a function built
// with BuildMethod makefile; empty for other build methods.
func (f Function) BuildTarget() string {
	if f.BuildMethod != "makefile" {
		return ""
	}
	return "build-" + f.LogicalID
}

// StreamRoute is one route of the WebSocket API and the function its
// integration invokes.
type StreamRoute struct {
	API      string // logical ID of the AWS::ApiGatewayV2::Api
	RouteKey string // $connect, $disconnect, $default or an action
	Function string // logical ID of the function
}

// Template is what the service's tests need to know of template.yaml.
type Template struct {
	Routes       []Route       // sorted by path, then method
	StreamRoutes []StreamRoute // sorted by route key
	Functions    []Function    // sorted by logical ID
	// Resources are all the resources as decoded (short-form tags in their
	// long forms), by logical ID, for checks of particular properties.
	Resources map[string]map[string]any
}

// Properties returns the Properties of a resource (nil if it has none or
// there is no such resource).
func (t *Template) Properties(logicalID string) map[string]any {
	props, _ := t.Resources[logicalID]["Properties"].(map[string]any)
	return props
}

// ResourcesOfType lists the logical IDs of the resources of a type, sorted.
func (t *Template) ResourcesOfType(typ string) []string {
	var ids []string
	for id, r := range t.Resources {
		if r["Type"] == typ {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Function returns the function with the given logical ID.
func (t *Template) Function(logicalID string) (Function, bool) {
	i := slices.IndexFunc(t.Functions, func(f Function) bool { return f.LogicalID == logicalID })
	if i < 0 {
		return Function{}, false
	}
	return t.Functions[i], true
}

// LoadTemplate reads and parses the SAM template at path.
func LoadTemplate(path string) (*Template, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	t, err := ParseTemplate(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// ParseTemplate parses a SAM template. CloudFormation's short-form tags
// (!Ref, !Sub, !GetAtt, ...) are read as their long forms.
func ParseTemplate(data []byte) (*Template, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTemplate, err)
	}
	v, err := decodeNode(&doc)
	if err != nil {
		return nil, err
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%w: the document is not a mapping", ErrInvalidTemplate)
	}
	return extract(root)
}

// extract walks the decoded template.
func extract(root map[string]any) (*Template, error) {
	resources, err := mapAt(root, "Resources")
	if err != nil {
		return nil, err
	}
	if resources == nil {
		return nil, fmt.Errorf("%w: no Resources", ErrInvalidTemplate)
	}
	globals, err := mapAt(root, "Globals", "Function")
	if err != nil {
		return nil, err
	}

	t := &Template{Resources: map[string]map[string]any{}}
	for id, r := range resources {
		res, ok := r.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: resource %s is not a mapping", ErrInvalidTemplate, id)
		}
		t.Resources[id] = res
	}
	for id, res := range t.Resources {
		if res["Type"] != "AWS::Serverless::Function" {
			continue
		}
		fn, routes, err := extractFunction(id, res, globals)
		if err != nil {
			return nil, err
		}
		t.Functions = append(t.Functions, fn)
		t.Routes = append(t.Routes, routes...)
	}
	slices.SortFunc(t.Functions, func(a, b Function) int { return strings.Compare(a.LogicalID, b.LogicalID) })
	slices.SortFunc(t.Routes, func(a, b Route) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Method, b.Method)
	})
	streamRoutes, err := extractStreamRoutes(t.Resources)
	if err != nil {
		return nil, err
	}
	t.StreamRoutes = streamRoutes
	for i := 1; i < len(t.Routes); i++ {
		if t.Routes[i].Pattern() == t.Routes[i-1].Pattern() {
			return nil, fmt.Errorf("%w: route %q is declared twice (%s, %s)", ErrInvalidTemplate,
				t.Routes[i].Pattern(), t.Routes[i-1].Function, t.Routes[i].Function)
		}
	}
	return t, nil
}

func extractFunction(id string, res, globals map[string]any) (Function, []Route, error) {
	props, err := mapAt(res, "Properties")
	if err != nil {
		return Function{}, nil, fmt.Errorf("function %s: %w", id, err)
	}
	// A function's own property wins over the Globals one.
	prop := func(name string) any {
		if v, ok := props[name]; ok {
			return v
		}
		return globals[name]
	}
	fn := Function{LogicalID: id}
	var errs []error
	stringProp := func(name string, dst *string, required bool) {
		switch v := prop(name).(type) {
		case string:
			*dst = v
		case nil:
			if required {
				errs = append(errs, fmt.Errorf("%w: function %s has no %s", ErrInvalidTemplate, id, name))
			}
		default:
			errs = append(errs, fmt.Errorf("%w: function %s: %s is %T, not a string", ErrInvalidTemplate, id, name, v))
		}
	}
	stringProp("CodeUri", &fn.CodeURI, true)
	stringProp("Runtime", &fn.Runtime, false)
	stringProp("Handler", &fn.Handler, false)
	if archs, ok := prop("Architectures").([]any); ok {
		for _, a := range archs {
			s, ok := a.(string)
			if !ok {
				errs = append(errs, fmt.Errorf("%w: function %s: architecture %v is not a string", ErrInvalidTemplate, id, a))
				continue
			}
			fn.Architectures = append(fn.Architectures, s)
		}
	}
	if meta, err := mapAt(res, "Metadata"); err != nil {
		errs = append(errs, fmt.Errorf("function %s: %w", id, err))
	} else if bm, ok := meta["BuildMethod"].(string); ok {
		fn.BuildMethod = bm
	}

	// Environment variables merge key by key: Globals, then the function's.
	keys := map[string]bool{}
	for _, src := range []map[string]any{globals, props} {
		vars, err := mapAt(src, "Environment", "Variables")
		if err != nil {
			errs = append(errs, fmt.Errorf("function %s: %w", id, err))
		}
		for k := range vars {
			keys[k] = true
		}
	}
	for k := range keys {
		fn.EnvKeys = append(fn.EnvKeys, k)
	}
	slices.Sort(fn.EnvKeys)

	events, err := mapAt(props, "Events")
	if err != nil {
		errs = append(errs, fmt.Errorf("function %s: %w", id, err))
	}
	var routes []Route
	for name, e := range events {
		ev, ok := e.(map[string]any)
		if !ok {
			errs = append(errs, fmt.Errorf("%w: function %s event %s is not a mapping", ErrInvalidTemplate, id, name))
			continue
		}
		if ev["Type"] != "HttpApi" {
			continue
		}
		p, err := mapAt(ev, "Properties")
		if err != nil {
			errs = append(errs, fmt.Errorf("function %s event %s: %w", id, name, err))
			continue
		}
		method, mok := p["Method"].(string)
		path, pok := p["Path"].(string)
		if !mok || !pok || method == "" || !strings.HasPrefix(path, "/") {
			errs = append(errs, fmt.Errorf("%w: function %s event %s needs a Method and a Path starting with /", ErrInvalidTemplate, id, name))
			continue
		}
		routes = append(routes, Route{Method: strings.ToUpper(method), Path: path, Function: id})
	}
	if len(errs) > 0 {
		return Function{}, nil, errors.Join(errs...)
	}
	return fn, routes, nil
}

// subRefs are the ${Name} and ${Name.Attr} references of an Fn::Sub string.
var subRefs = regexp.MustCompile(`\$\{([A-Za-z0-9]+)(?:\.[A-Za-z0-9.]+)?\}`)

// extractStreamRoutes follows each AWS::ApiGatewayV2::Route to its
// integration (Target: integrations/${Integration}) and the integration to
// the function it invokes (IntegrationUri: ...${Function.Arn}...).
func extractStreamRoutes(resources map[string]map[string]any) ([]StreamRoute, error) {
	var routes []StreamRoute
	var errs []error
	propsOf := func(id string) map[string]any {
		p, _ := resources[id]["Properties"].(map[string]any)
		return p
	}
	for id, res := range resources {
		if res["Type"] != "AWS::ApiGatewayV2::Route" {
			continue
		}
		p := propsOf(id)
		key, _ := p["RouteKey"].(string)
		api := refOf(p["ApiId"])
		target := subString(p["Target"])
		m := regexp.MustCompile(`^integrations/\$\{([A-Za-z0-9]+)\}$`).FindStringSubmatch(target)
		if key == "" || api == "" || m == nil {
			errs = append(errs, fmt.Errorf("%w: route %s needs a RouteKey, an ApiId !Ref and a Target !Sub integrations/${Integration}", ErrInvalidTemplate, id))
			continue
		}
		integration := m[1]
		if resources[integration]["Type"] != "AWS::ApiGatewayV2::Integration" {
			errs = append(errs, fmt.Errorf("%w: route %s targets %s, which is not an AWS::ApiGatewayV2::Integration", ErrInvalidTemplate, id, integration))
			continue
		}
		var function string
		for _, ref := range subRefs.FindAllStringSubmatch(subString(propsOf(integration)["IntegrationUri"]), -1) {
			if resources[ref[1]]["Type"] == "AWS::Serverless::Function" {
				function = ref[1]
			}
		}
		if function == "" {
			errs = append(errs, fmt.Errorf("%w: integration %s of route %s invokes no function of the template", ErrInvalidTemplate, integration, id))
			continue
		}
		routes = append(routes, StreamRoute{API: api, RouteKey: key, Function: function})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	slices.SortFunc(routes, func(a, b StreamRoute) int { return strings.Compare(a.RouteKey, b.RouteKey) })
	return routes, nil
}

// refOf reads {Ref: X}.
func refOf(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["Ref"].(string)
	return s
}

// subString reads {Fn::Sub: "..."} (or a plain string).
func subString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		s, _ := v["Fn::Sub"].(string)
		return s
	}
	return ""
}

// mapAt follows keys through nested mappings. A missing key gives a nil map
// and no error; a value that is not a mapping is an error.
func mapAt(m map[string]any, keys ...string) (map[string]any, error) {
	cur := m
	for i, k := range keys {
		v, ok := cur[k]
		if !ok || v == nil {
			return nil, nil
		}
		next, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%w: %s is %T, not a mapping", ErrInvalidTemplate, strings.Join(keys[:i+1], "."), v)
		}
		cur = next
	}
	return cur, nil
}
