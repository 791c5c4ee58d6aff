package deploy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Mobile notifications in the template (docs/notifications.md): the SNS
// platform applications are parameters, each may be empty, and the grants
// follow them: endpoints are made only in the given applications, and
// published to, read and deleted only among their endpoints.

// pushParameters are the applications' parameters, each with an ARN of
// its platform and one of another.
var pushParameters = []struct {
	name, env, arn, other string
}{
	{"ApnsPlatformApplicationArn", "APNS_PLATFORM_APPLICATION_ARN", "arn:aws:sns:eu-central-1:123456789012:app/APNS/chess-apns", "arn:aws:sns:eu-central-1:123456789012:app/GCM/chess-fcm"},
	{"ApnsSandboxPlatformApplicationArn", "APNS_SANDBOX_PLATFORM_APPLICATION_ARN", "arn:aws:sns:eu-central-1:123456789012:app/APNS_SANDBOX/chess-dev", "arn:aws:sns:eu-central-1:123456789012:app/APNS/chess-apns"},
	{"FcmPlatformApplicationArn", "FCM_PLATFORM_APPLICATION_ARN", "arn:aws:sns:eu-central-1:123456789012:app/GCM/chess-fcm", "arn:aws:sns:eu-central-1:123456789012:app/APNS_SANDBOX/chess-dev"},
}

// pushFunctions are the functions that read the applications: the one
// that registers devices (move), the ones that send (the after-write
// effects, the reminders of the timeout function).
var pushFunctions = []string{"MoveFunction", "EffectsFunction", "TimeoutFunction"}

// pushActions are the SNS actions each may hold.
var pushActions = map[string][]string{
	"MoveFunction":    {"sns:CreatePlatformEndpoint", "sns:DeleteEndpoint", "sns:GetEndpointAttributes"},
	"EffectsFunction": {"sns:Publish", "sns:DeleteEndpoint"},
	"TimeoutFunction": {"sns:Publish", "sns:DeleteEndpoint"},
}

func TestTemplatePushParameters(t *testing.T) {
	raw := loadRawTemplate(t)
	params, _ := raw["Parameters"].(map[string]any)
	for _, p := range pushParameters {
		m, _ := params[p.name].(map[string]any)
		if m == nil {
			t.Errorf("no parameter %s", p.name)
			continue
		}
		if m["Default"] != "" || m["Type"] != "String" {
			t.Errorf("%s: Type %v, Default %q; want a String that may stay empty", p.name, m["Type"], m["Default"])
		}
		re, err := regexp.Compile(fmt.Sprint(m["AllowedPattern"]))
		if err != nil {
			t.Errorf("%s: AllowedPattern: %v", p.name, err)
			continue
		}
		for value, want := range map[string]bool{"": true, p.arn: true, p.other: false, "chess-apns": false,
			"arn:aws:sns:eu-central-1:123456789012:chess-topic": false} {
			if re.MatchString(value) != want {
				t.Errorf("%s: AllowedPattern accepts %q = %v; want %v", p.name, value, !want, want)
			}
		}
	}
	for _, id := range pushFunctions {
		fn, ok := loadRepoTemplate(t).Function(id)
		if !ok {
			t.Fatalf("no function %s", id)
		}
		for _, p := range pushParameters {
			if !slices.Contains(fn.EnvKeys, p.env) {
				t.Errorf("%s does not get %s", id, p.env)
			}
		}
	}
}

func TestTemplatePushGrants(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	for _, set := range [][]int{{}, {0}, {1, 2}, {0, 1, 2}} {
		params := map[string]string{}
		var apps, endpoints []string
		for _, i := range set {
			p := pushParameters[i]
			params[p.name] = p.arn
			apps = append(apps, p.arn)
			endpoints = append(endpoints, strings.Replace(p.arn, ":app/", ":endpoint/", 1)+"/*")
		}
		slices.Sort(apps)
		slices.Sort(endpoints)
		s := deployedWith(t, tmpl, params)
		for _, fn := range tmpl.Functions {
			for _, st := range snsStatements(t, s, fn.LogicalID) {
				where := fmt.Sprintf("%v, %s %v", set, fn.LogicalID, st.sid)
				if len(set) == 0 {
					t.Errorf("%s: an SNS grant (%v) without any application", where, st.actions)
				}
				allowed := pushActions[fn.LogicalID]
				for _, a := range st.actions {
					if !slices.Contains(allowed, a) {
						t.Errorf("%s: %s; the function may hold only %v", where, a, allowed)
					}
				}
				want := endpoints
				if slices.Contains(st.actions, "sns:CreatePlatformEndpoint") {
					if len(st.actions) != 1 {
						t.Errorf("%s: CreatePlatformEndpoint shares a statement with %v", where, st.actions)
					}
					want = apps
				}
				if !slices.Equal(st.resources, want) {
					t.Errorf("%s: %v on %q; want %q", where, st.actions, st.resources, want)
				}
			}
		}
	}
}

// snsStatement is an SNS statement of a deployed function's policies.
type snsStatement struct {
	sid       string
	actions   []string
	resources []string
}

// snsStatements are fn's statements with an SNS action, as deployed by s
// (conditions resolved, AWS::NoValue dropped, Join/Select/Split of
// parameters evaluated).
func snsStatements(t *testing.T, s *stackFor, fn string) []snsStatement {
	t.Helper()
	var out []snsStatement
	policies, _ := s.props(fn)["Policies"].([]any)
	for _, pol := range policies {
		doc, _ := pol.(map[string]any)
		for _, st := range asList(doc["Statement"]) {
			m, ok := st.(map[string]any)
			if !ok || isNoValue(m) {
				continue
			}
			var actions []string
			for _, a := range asList(m["Action"]) {
				if strings.HasPrefix(fmt.Sprint(a), "sns:") {
					actions = append(actions, fmt.Sprint(a))
				}
			}
			if len(actions) == 0 {
				continue
			}
			var resources []string
			for _, r := range asList(m["Resource"]) {
				if isNoValue(r) {
					continue
				}
				resources = append(resources, s.evalString(t, r))
			}
			slices.Sort(actions)
			slices.Sort(resources)
			out = append(out, snsStatement{sid: fmt.Sprint(m["Sid"]), actions: actions, resources: resources})
		}
	}
	return out
}

func isNoValue(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 1 && m["Ref"] == "AWS::NoValue"
}

// evalString evaluates a string built of parameters: Ref, Fn::Join,
// Fn::Select of Fn::Split.
func (s *stackFor) evalString(t *testing.T, v any) string {
	t.Helper()
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if ref, ok := v["Ref"].(string); ok {
			if val, ok := s.params[ref]; ok {
				return val
			}
		}
		if args, ok := v["Fn::Join"].([]any); ok && len(args) == 2 {
			var parts []string
			for _, p := range asList(args[1]) {
				parts = append(parts, s.evalString(t, p))
			}
			return strings.Join(parts, fmt.Sprint(args[0]))
		}
		if args, ok := v["Fn::Select"].([]any); ok && len(args) == 2 {
			split, _ := args[1].(map[string]any)
			sargs, _ := split["Fn::Split"].([]any)
			i, _ := args[0].(int)
			if len(sargs) == 2 {
				parts := strings.Split(s.evalString(t, sargs[1]), fmt.Sprint(sargs[0]))
				if i < 0 || i >= len(parts) {
					t.Fatalf("Fn::Select %d of %q: out of range (the deploy would fail)", i, parts)
				}
				return parts[i]
			}
		}
	}
	t.Fatalf("cannot evaluate %v", v)
	return ""
}
