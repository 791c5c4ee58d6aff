package deploy

import (
	"fmt"
	"slices"
	"testing"
)

// The optional edge (template.yaml's Edge parameter; docs/operations.md
// §5.7): CloudFront in front of both APIs with a web ACL, the functions
// requiring the header only CloudFront adds, and the execute-api
// endpoints disabled only behind custom domains.

// edgeOn is Edge=on with the secret, in us-east-1 (where the stack can
// make a CloudFront web ACL).
var edgeOn = map[string]string{"Edge": "on", "OriginVerifySecret": "s3cret-s3cret-s3cret-s3cret-s3cret-42"}

// edgeWithDomains adds the custom domains.
var edgeWithDomains = map[string]string{"Edge": "on", "OriginVerifySecret": edgeOn["OriginVerifySecret"],
	"HttpApiDomainName": "api-origin.chess.example", "StreamApiDomainName": "stream-origin.chess.example",
	"ApiDomainCertificateArn": "arn:aws:acm:us-east-1:123456789012:certificate/abc"}

// edgeResources are the resources only the edge makes.
var edgeResources = []string{"HttpEdgeDistribution", "StreamEdgeDistribution", "EdgeWebAcl", "HttpApiDomain", "HttpApiMapping", "StreamApiDomain", "StreamApiMapping"}

// httpFunctions are the functions that answer clients (and so check the
// edge's header).
var httpFunctions = []string{"MoveFunction", "ViewFunction", "PollFunction", "AiFunction", "StreamFunction"}

func TestTemplateEdgeOffByDefault(t *testing.T) {
	def := deployedWith(t, loadRepoTemplate(t), nil)
	for _, id := range edgeResources {
		if _, ok := def.resources[id]; ok {
			t.Errorf("%s exists with the defaults; want the edge off", id)
		}
	}
	for _, api := range []string{"ChessHttpApi", "StreamApi"} {
		if v := def.props(api)["DisableExecuteApiEndpoint"]; v != false {
			t.Errorf("%s DisableExecuteApiEndpoint = %v with the defaults; want false", api, v)
		}
	}
	for _, fn := range httpFunctions {
		vars, _ := mapAt(def.props(fn), "Environment", "Variables")
		if v, ok := vars["ORIGIN_VERIFY_SECRET"]; !ok || v != "" {
			t.Errorf("%s ORIGIN_VERIFY_SECRET = %v with the edge off; want empty (nothing checked)", fn, v)
		}
	}
}

func TestTemplateEdgeOn(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	def := deployedWith(t, tmpl, edgeOn)
	for _, id := range []string{"HttpEdgeDistribution", "StreamEdgeDistribution", "EdgeWebAcl"} {
		if _, ok := def.resources[id]; !ok {
			t.Fatalf("%s missing with Edge=on in us-east-1", id)
		}
	}
	for _, id := range []string{"HttpApiDomain", "StreamApiDomain"} {
		if _, ok := def.resources[id]; ok {
			t.Errorf("%s exists without the custom domains", id)
		}
	}
	// Both APIs stay reachable at execute-api (the distributions' origins),
	// so the functions refuse whatever lacks the secret.
	for _, api := range []string{"ChessHttpApi", "StreamApi"} {
		if v := def.props(api)["DisableExecuteApiEndpoint"]; v != false {
			t.Errorf("%s DisableExecuteApiEndpoint = %v without custom domains; want false (CloudFront's origin is the execute-api address)", api, v)
		}
	}
	for _, fn := range httpFunctions {
		vars, _ := mapAt(def.props(fn), "Environment", "Variables")
		if got := fmt.Sprint(vars["ORIGIN_VERIFY_SECRET"]); got != "map[Ref:OriginVerifySecret]" {
			t.Errorf("%s ORIGIN_VERIFY_SECRET = %s; want the OriginVerifySecret parameter", fn, got)
		}
	}
	for id, want := range map[string]struct{ origin, path string }{
		"HttpEdgeDistribution":   {"${ChessHttpApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}", ""},
		"StreamEdgeDistribution": {"${StreamApi}.execute-api.${AWS::Region}.${AWS::URLSuffix}", "/v1"},
	} {
		cfg, _ := mapAt(def.props(id), "DistributionConfig")
		origins, _ := cfg["Origins"].([]any)
		if len(origins) != 1 {
			t.Fatalf("%s origins %v; want one", id, origins)
		}
		o, _ := origins[0].(map[string]any)
		if got := subString(o["DomainName"]); got != want.origin {
			t.Errorf("%s origin %q; want %q", id, got, want.origin)
		}
		if got, _ := o["OriginPath"].(string); got != want.path {
			t.Errorf("%s origin path %q; want %q", id, got, want.path)
		}
		headers, _ := o["OriginCustomHeaders"].([]any)
		h, _ := firstOf(headers).(map[string]any)
		if len(headers) != 1 || h["HeaderName"] != "X-Origin-Verify" || fmt.Sprint(h["HeaderValue"]) != "map[Ref:OriginVerifySecret]" {
			t.Errorf("%s origin headers %v; want X-Origin-Verify carrying OriginVerifySecret", id, headers)
		}
		if cp, _ := o["CustomOriginConfig"].(map[string]any); cp["OriginProtocolPolicy"] != "https-only" {
			t.Errorf("%s origin protocol %v; want https-only", id, cp)
		}
		beh, _ := mapAt(cfg, "DefaultCacheBehavior")
		// CachingDisabled and AllViewerExceptHostHeader (CloudFront's
		// managed policies, by their documented IDs).
		if beh["CachePolicyId"] != "4135ea2d-6df8-44a3-9df3-4b5a84be39ad" || beh["OriginRequestPolicyId"] != "b689b0a8-53d0-40ab-baf2-68738e2966ac" || beh["ViewerProtocolPolicy"] != "https-only" {
			t.Errorf("%s behavior %v; want caching off, every viewer header but Host forwarded, HTTPS only", id, beh)
		}
		if got := fmt.Sprint(cfg["WebACLId"]); got != "map[Fn::GetAtt:[EdgeWebAcl Arn]]" {
			t.Errorf("%s WebACLId = %s; want the stack's web ACL", id, got)
		}
	}
	acl := def.props("EdgeWebAcl")
	rules, _ := acl["Rules"].([]any)
	r, _ := firstOf(rules).(map[string]any)
	rate, _ := mapAt(r, "Statement", "RateBasedStatement")
	block, _ := mapAt(r, "Action", "Block", "CustomResponse")
	if acl["Scope"] != "CLOUDFRONT" || len(rules) != 1 || rate["AggregateKeyType"] != "IP" || fmt.Sprint(rate["Limit"]) != "map[Ref:EdgeRateLimit]" || block["ResponseCode"] != 429 {
		t.Errorf("EdgeWebAcl %v; want CLOUDFRONT scope, one rate-based rule per IP at EdgeRateLimit, answered 429", acl)
	}
}

// TestTemplateEdgeWebAclElsewhere: a CloudFront web ACL can only be made
// in us-east-1; elsewhere the stack makes none and takes EdgeWebAclArn.
func TestTemplateEdgeWebAclElsewhere(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	elsewhere := map[string]string{"AWS::Region": "eu-central-1"}
	for k, v := range edgeOn {
		elsewhere[k] = v
	}
	def := deployedWith(t, tmpl, elsewhere)
	if _, ok := def.resources["EdgeWebAcl"]; ok {
		t.Error("EdgeWebAcl made in eu-central-1; a CloudFront web ACL must be made in us-east-1")
	}
	cfg, _ := mapAt(def.props("HttpEdgeDistribution"), "DistributionConfig")
	if v, ok := cfg["WebACLId"]; ok && fmt.Sprint(v) != "map[Ref:AWS::NoValue]" {
		t.Errorf("WebACLId = %v without a web ACL; want none", v)
	}
	arn := "arn:aws:wafv2:us-east-1:123456789012:global/webacl/chess-edge/1234"
	elsewhere["EdgeWebAclArn"] = arn
	def = deployedWith(t, tmpl, elsewhere)
	cfg, _ = mapAt(def.props("StreamEdgeDistribution"), "DistributionConfig")
	if got := fmt.Sprint(cfg["WebACLId"]); got != "map[Ref:EdgeWebAclArn]" {
		t.Errorf("WebACLId = %s; want EdgeWebAclArn", got)
	}
}

// TestTemplateEdgeWithDomains: behind custom domains the execute-api
// endpoints are disabled, the distributions' origins are the domains
// (the stream's maps its stage at the root), and the functions post to
// connections through the stream's domain.
func TestTemplateEdgeWithDomains(t *testing.T) {
	def := deployedWith(t, loadRepoTemplate(t), edgeWithDomains)
	for _, api := range []string{"ChessHttpApi", "StreamApi"} {
		if v := def.props(api)["DisableExecuteApiEndpoint"]; v != true {
			t.Errorf("%s DisableExecuteApiEndpoint = %v behind custom domains; want true", api, v)
		}
	}
	for id, domain := range map[string]string{"HttpApiDomain": "HttpApiDomainName", "StreamApiDomain": "StreamApiDomainName"} {
		p := def.props(id)
		confs, _ := p["DomainNameConfigurations"].([]any)
		c, _ := firstOf(confs).(map[string]any)
		if fmt.Sprint(p["DomainName"]) != "map[Ref:"+domain+"]" || c["EndpointType"] != "REGIONAL" || fmt.Sprint(c["CertificateArn"]) != "map[Ref:ApiDomainCertificateArn]" {
			t.Errorf("%s %v; want %s, regional, with ApiDomainCertificateArn", id, p, domain)
		}
	}
	if m := def.props("StreamApiMapping"); fmt.Sprint(m["Stage"]) != "map[Ref:StreamStage]" || fmt.Sprint(m["ApiId"]) != "map[Ref:StreamApi]" {
		t.Errorf("StreamApiMapping %v; want the stream's stage at the domain's root", m)
	}
	for id, want := range map[string]string{"HttpEdgeDistribution": "map[Ref:HttpApiDomainName]", "StreamEdgeDistribution": "map[Ref:StreamApiDomainName]"} {
		cfg, _ := mapAt(def.props(id), "DistributionConfig")
		origins, _ := cfg["Origins"].([]any)
		o, _ := firstOf(origins).(map[string]any)
		if fmt.Sprint(o["DomainName"]) != want || (o["OriginPath"] != nil && o["OriginPath"] != "") {
			t.Errorf("%s origin %v; want %s at its root", id, o, want)
		}
	}
}

// TestTemplateEdgeRules: the template refuses the edge without its
// secret, and custom domains that are partial or not behind the edge.
func TestTemplateEdgeRules(t *testing.T) {
	raw := loadRawTemplate(t)
	rules, _ := raw["Rules"].(map[string]any)
	var names []string
	for name := range rules {
		names = append(names, name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"ApiDomainsAreWholeAndBehindTheEdge", "EdgeNeedsOriginVerifySecret"}) {
		t.Errorf("template rules %v; want the edge's two", names)
	}
	secret, _ := rules["EdgeNeedsOriginVerifySecret"].(map[string]any)
	if got := fmt.Sprint(secret["RuleCondition"]); got != "map[Fn::Equals:[map[Ref:Edge] on]]" {
		t.Errorf("EdgeNeedsOriginVerifySecret applies when %s; want Edge=on", got)
	}
}

func firstOf(v []any) any {
	if len(v) == 0 {
		return nil
	}
	return v[0]
}
