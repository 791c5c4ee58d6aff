package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"chessapi/shared/apikey"
)

// The deploy fixes of issue 22: a stack that deploys in a fresh account,
// keeps deploying route changes, bounds every function the public or a
// schedule can drive, can be pointed at restored tables, and observes at
// a known price.

// TestTemplateStreamStageDeploysEveryChange: the WebSocket stage deploys
// the API by itself on every change (AutoDeploy); with a fixed deployment
// a route added by a later update never reaches the stage.
func TestTemplateStreamStageDeploysEveryChange(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	stages := tmpl.ResourcesOfType("AWS::ApiGatewayV2::Stage")
	if len(stages) != 1 {
		t.Fatalf("stages %v; want the stream's one", stages)
	}
	p := tmpl.Properties(stages[0])
	if p["AutoDeploy"] != true {
		t.Errorf("%s AutoDeploy = %v; want true", stages[0], p["AutoDeploy"])
	}
	if _, fixed := p["DeploymentId"]; fixed {
		t.Errorf("%s names a DeploymentId: the stage would serve that deployment's routes only", stages[0])
	}
	if d := tmpl.ResourcesOfType("AWS::ApiGatewayV2::Deployment"); len(d) != 0 {
		t.Errorf("deployments %v next to an auto-deploying stage (two writers of the stage's deployment)", d)
	}
}

// TestTemplateApiGatewayLogsRole: the WebSocket stage's access log needs
// API Gateway's account-level CloudWatch Logs role: by default the stack
// creates it (kept on delete, so the account setting never names a
// deleted role) and the stage waits for the setting; with
// ApiGatewayLogsRole=existing neither is made and the stage still deploys.
func TestTemplateApiGatewayLogsRole(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	def := deployedWith(t, tmpl, nil)
	accounts := tmpl.ResourcesOfType("AWS::ApiGateway::Account")
	if len(accounts) != 1 {
		t.Fatalf("AWS::ApiGateway::Account resources %v; want one", accounts)
	}
	account := accounts[0]
	if _, ok := def.resources[account]; !ok {
		t.Fatalf("by default the stack sets no CloudWatch Logs role (%s left out)", account)
	}
	roleRef, _ := def.props(account)["CloudWatchRoleArn"].(map[string]any)
	ga, _ := roleRef["Fn::GetAtt"].([]any)
	if len(ga) != 2 || tmpl.Resources[fmt.Sprint(ga[0])]["Type"] != "AWS::IAM::Role" || ga[1] != "Arn" {
		t.Fatalf("%s CloudWatchRoleArn = %v; want a role of the stack", account, roleRef)
	}
	role := fmt.Sprint(ga[0])
	if tmpl.Resources[role]["DeletionPolicy"] != "Retain" {
		t.Errorf("%s DeletionPolicy = %v; want Retain (the account setting outlives the stack)", role, tmpl.Resources[role]["DeletionPolicy"])
	}
	rp := tmpl.Properties(role)
	if trust := fmt.Sprint(rp["AssumeRolePolicyDocument"]); !strings.Contains(trust, "apigateway.amazonaws.com") {
		t.Errorf("%s trusts %s; want apigateway.amazonaws.com", role, trust)
	}
	if managed := fmt.Sprint(rp["ManagedPolicyArns"]); !strings.Contains(managed, "AmazonAPIGatewayPushToCloudWatchLogs") {
		t.Errorf("%s policies %s; want AmazonAPIGatewayPushToCloudWatchLogs", role, managed)
	}
	// Every stage with an access log waits for the setting.
	for _, stage := range tmpl.ResourcesOfType("AWS::ApiGatewayV2::Stage") {
		if _, logs := tmpl.Properties(stage)["AccessLogSettings"]; !logs {
			continue
		}
		if !dependsOn(tmpl, def, stage, account, map[string]bool{}) {
			t.Errorf("%s has an access log but is not made after %s", stage, account)
		}
	}
	existing := deployedWith(t, tmpl, map[string]string{"ApiGatewayLogsRole": "existing"})
	if _, ok := existing.resources[account]; ok {
		t.Errorf("ApiGatewayLogsRole=existing still sets the account's role")
	}
	if _, ok := existing.resources[role]; ok {
		t.Errorf("ApiGatewayLogsRole=existing still creates %s", role)
	}
	for _, stage := range tmpl.ResourcesOfType("AWS::ApiGatewayV2::Stage") {
		for _, d := range asList(tmpl.Resources[stage]["DependsOn"]) {
			if _, ok := existing.resources[fmt.Sprint(d)]; !ok {
				t.Errorf("with ApiGatewayLogsRole=existing %s depends on %v, which is not made", stage, d)
			}
		}
	}
}

// dependsOn reports whether resource from is made after to in stack s:
// through DependsOn or a reference in its properties or metadata.
func dependsOn(tmpl *Template, s *stackFor, from, to string, seen map[string]bool) bool {
	if seen[from] {
		return false
	}
	seen[from] = true
	r := s.resources[from]
	next := references(r["Properties"])
	next = append(next, references(s.resolve(r["Metadata"]))...)
	for _, d := range asList(r["DependsOn"]) {
		next = append(next, fmt.Sprint(d))
	}
	for _, n := range next {
		if n == to || (s.resources[n] != nil && dependsOn(tmpl, s, n, to, seen)) {
			return true
		}
	}
	return false
}

// streamBound are the functions whose concurrency their event source
// bounds (the games table's stream: shards × ParallelizationFactor), which
// need no reservation of their own.
var streamBound = []string{"FanoutFunction"}

// TestTemplateReservedConcurrency: every function that is not
// stream-bounded runs on reserved concurrency of its own, from a
// parameter that -1 turns off; the defaults leave the 100 unreserved
// instances Lambda requires of a 1,000-instance account.
func TestTemplateReservedConcurrency(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	def := deployedWith(t, tmpl, nil)
	raw := loadRawTemplate(t)
	params, _ := raw["Parameters"].(map[string]any)
	var reserved int
	used := map[string]string{}
	for _, fn := range tmpl.Functions {
		if slices.Contains(streamBound, fn.LogicalID) {
			for _, e := range eventsOf(tmpl, fn.LogicalID) {
				if e != "DynamoDB" {
					t.Errorf("%s counts as stream-bounded but has a %s event", fn.LogicalID, e)
				}
			}
			continue
		}
		rc, ok := tmpl.Properties(fn.LogicalID)["ReservedConcurrentExecutions"]
		if !ok {
			t.Errorf("%s has no reserved concurrency", fn.LogicalID)
			continue
		}
		ifArgs, _ := rc.(map[string]any)["Fn::If"].([]any)
		if len(ifArgs) != 3 {
			t.Errorf("%s ReservedConcurrentExecutions = %v; want !If [Reserve…, !Ref …Concurrency, !Ref AWS::NoValue]", fn.LogicalID, rc)
			continue
		}
		param := refOf(ifArgs[1])
		if other, dup := used[param]; dup {
			t.Errorf("%s and %s share the parameter %s: one's load would take the other's instances", fn.LogicalID, other, param)
		}
		used[param] = fn.LogicalID
		p, _ := params[param].(map[string]any)
		n, _ := p["Default"].(int)
		if n < 1 || !def.conds[fmt.Sprint(ifArgs[0])] || refOf(ifArgs[2]) != "AWS::NoValue" {
			t.Errorf("%s: reserved by %s (default %v, condition %v); want a positive default that reserves", fn.LogicalID, param, p["Default"], ifArgs[0])
		}
		off := deployedWith(t, tmpl, map[string]string{param: "-1"})
		if refOf(off.props(fn.LogicalID)["ReservedConcurrentExecutions"]) != "AWS::NoValue" {
			t.Errorf("%s=-1 still reserves %s", param, fn.LogicalID)
		}
		reserved += n
	}
	const accountDefault, unreserved = 1000, 100
	if reserved+unreserved > accountDefault {
		t.Errorf("the defaults reserve %d: more than a %d-instance account allows (%d stay unreserved)", reserved, accountDefault, unreserved)
	}
}

func eventsOf(tmpl *Template, fn string) []string {
	var out []string
	evs, _ := mapAt(tmpl.Properties(fn), "Events")
	for _, e := range evs {
		m, _ := e.(map[string]any)
		out = append(out, fmt.Sprint(m["Type"]))
	}
	return out
}

// TestTemplateViewsApartFromTheLongPoll: the views and the long poll are
// different functions on different routes (HTTP API routes cannot tell a
// query string apart), each on its own reservation, and the poll's
// function outlives its 20 s wait within the integration's 29 s.
func TestTemplateViewsApartFromTheLongPoll(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	want := map[string]string{
		"GET /v1/games/{id}":        "ViewFunction",
		"GET /v1/games/{id}/events": "ViewFunction",
		"GET /v1/games/{id}/poll":   "PollFunction",
	}
	for _, r := range tmpl.Routes {
		if fn, ok := want[r.Pattern()]; ok && fn != r.Function {
			t.Errorf("%s → %s; want %s", r.Pattern(), r.Function, fn)
		}
		if r.Function == "PollFunction" && r.Pattern() != "GET /v1/games/{id}/poll" {
			t.Errorf("the long poll's function also serves %s", r.Pattern())
		}
	}
	poll, _ := tmpl.Properties("PollFunction")["Timeout"].(int)
	view, _ := tmpl.Properties("ViewFunction")["Timeout"].(int)
	if poll <= 20 || poll >= 29 || view < 1 || view >= poll {
		t.Errorf("timeouts: poll %d s, view %d s; want the poll between its 20 s wait and the 29 s integration, the view shorter", poll, view)
	}
}

// TestTemplateTableParameters: by default the stack makes its tables;
// with GamesTableStreamArn and DataTableName (restored tables) it makes
// neither and every function, grant and stream mapping names the given
// ones, and nothing refers to a table the stack does not make.
func TestTemplateTableParameters(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	const (
		streamARN = "arn:aws:dynamodb:us-east-1:123456789012:table/chess-games-restored/stream/2026-12-01T10:00:00.000"
		tableARN  = "arn:aws:dynamodb:us-east-1:123456789012:table/chess-games-restored"
		dataName  = "chess-data-restored"
	)
	own := deployedWith(t, tmpl, nil)
	restored := deployedWith(t, tmpl, map[string]string{"GamesTableStreamArn": streamARN, "DataTableName": dataName})
	for table, ownOK := range map[string]bool{"GamesTable": true, "DataTable": true} {
		if _, ok := own.resources[table]; ok != ownOK {
			t.Errorf("default stack makes %s: %v", table, ok)
		}
		if _, ok := restored.resources[table]; ok {
			t.Errorf("a stack pointed at restored tables still makes %s", table)
		}
	}
	for id, r := range restored.resources {
		for _, ref := range references(r) {
			if ref == "GamesTable" || ref == "DataTable" {
				t.Errorf("%s refers to %s, which the stack pointed at restored tables does not make", id, ref)
			}
		}
	}
	globals, _ := mapAt(loadRawTemplate(t), "Globals", "Function", "Environment", "Variables")
	gamesEnv := restored.resolve(globals["GAMES_TABLE"])
	if got := evalNameOf(t, gamesEnv, restored, streamARN); got != "chess-games-restored" {
		t.Errorf("GAMES_TABLE = %v → %q; want the restored table's name", gamesEnv, got)
	}
	if got := fmt.Sprint(own.resolve(globals["GAMES_TABLE"])); got != "map[Ref:GamesTable]" {
		t.Errorf("default GAMES_TABLE = %s; want the stack's table", got)
	}
	for _, fn := range tmpl.Functions {
		vars, _ := mapAt(restored.props(fn.LogicalID), "Environment", "Variables")
		if v, ok := vars["DATA_TABLE"]; ok && refOf(v) != "DataTableName" {
			t.Errorf("%s DATA_TABLE = %v; want the DataTableName parameter", fn.LogicalID, v)
		}
		for _, st := range resolvedStatements(restored, fn.LogicalID) {
			for _, r := range st.resources {
				if strings.Contains(r, "dynamodb") && r != tableARN && r != tableARN+"/index/*" && !strings.HasSuffix(r, "table/"+dataName) {
					t.Errorf("%s grants %v on %s; want the restored tables only", fn.LogicalID, st.actions, r)
				}
			}
		}
	}
	evs, _ := mapAt(restored.props("FanoutFunction"), "Events")
	for name, e := range evs {
		m, _ := e.(map[string]any)
		if m["Type"] != "DynamoDB" {
			continue
		}
		p, _ := m["Properties"].(map[string]any)
		if refOf(p["Stream"]) != "GamesTableStreamArn" {
			t.Errorf("%s reads %v; want the restored table's stream", name, p["Stream"])
		}
	}
}

// evalNameOf evaluates !Select [i, !Split [sep, !Ref GamesTableStreamArn]]
// for the given ARN.
func evalNameOf(t *testing.T, v any, s *stackFor, arn string) string {
	t.Helper()
	sel, _ := v.(map[string]any)["Fn::Select"].([]any)
	if len(sel) != 2 {
		return fmt.Sprint(v)
	}
	i, _ := sel[0].(int)
	split, _ := sel[1].(map[string]any)["Fn::Split"].([]any)
	if len(split) != 2 || refOf(split[1]) != "GamesTableStreamArn" {
		return fmt.Sprint(v)
	}
	parts := strings.Split(arn, fmt.Sprint(split[0]))
	if i >= len(parts) {
		return ""
	}
	return parts[i]
}

// resolvedStatements are a function's policy statements in stack s, with
// resources written out: an ARN built by !Select/!Split of the stream ARN
// becomes the table's ARN, an !Sub of a table name becomes its ARN.
func resolvedStatements(s *stackFor, fn string) []statement {
	var out []statement
	policies, _ := s.props(fn)["Policies"].([]any)
	for _, pol := range policies {
		doc, _ := pol.(map[string]any)
		for _, st := range asList(doc["Statement"]) {
			m, _ := st.(map[string]any)
			var got statement
			for _, a := range asList(m["Action"]) {
				got.actions = append(got.actions, fmt.Sprint(a))
			}
			for _, r := range asList(m["Resource"]) {
				got.resources = append(got.resources, arnText(s, r))
			}
			out = append(out, got)
		}
	}
	return out
}

// arnText writes a Resource out for the test's account and Region.
func arnText(s *stackFor, r any) string {
	sub := func(str string, vars map[string]any) string {
		repl := map[string]string{"${AWS::Partition}": "aws", "${AWS::Region}": "us-east-1", "${AWS::AccountId}": "123456789012"}
		for k, v := range s.params {
			repl["${"+k+"}"] = v
		}
		for k, v := range vars {
			repl["${"+k+"}"] = arnText(s, v)
		}
		for k, v := range repl {
			str = strings.ReplaceAll(str, k, v)
		}
		return str
	}
	switch r := r.(type) {
	case string:
		return r
	case map[string]any:
		if str, ok := r["Fn::Sub"].(string); ok {
			return sub(str, nil)
		}
		if args, ok := r["Fn::Sub"].([]any); ok && len(args) == 2 {
			vars, _ := args[1].(map[string]any)
			return sub(fmt.Sprint(args[0]), vars)
		}
		if sel, ok := r["Fn::Select"].([]any); ok && len(sel) == 2 {
			split, _ := sel[1].(map[string]any)["Fn::Split"].([]any)
			if len(split) == 2 {
				i, _ := sel[0].(int)
				parts := strings.Split(s.params[refOf(split[1])], fmt.Sprint(split[0]))
				if i < len(parts) {
					return parts[i]
				}
			}
		}
		if ga, ok := r["Fn::GetAtt"].([]any); ok {
			return fmt.Sprintf("GetAtt:%v.%v", ga[0], ga[1])
		}
	}
	return fmt.Sprint(r)
}

// TestTemplateObservabilityAtAKnownPrice: tracing follows one parameter
// (default PassThrough: Lambda's sampling rate is fixed, 1 a second and 5%
// of the rest per function, so "a low rate" is not on offer and Active
// is the operator's choice, priced in docs/operations.md); every function
// logs in Lambda's JSON format with a system log level from a parameter
// (default WARN: no start/end/report records), and no application log
// level: Lambda gives a line without "level" (the embedded-metric-format
// lines) INFO, so a level above INFO would drop the metrics.
func TestTemplateObservabilityAtAKnownPrice(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	raw := loadRawTemplate(t)
	globals, _ := mapAt(raw, "Globals", "Function")
	if refOf(globals["Tracing"]) != "TracingMode" {
		t.Errorf("Globals.Function.Tracing = %v; want !Ref TracingMode", globals["Tracing"])
	}
	params, _ := raw["Parameters"].(map[string]any)
	for name, want := range map[string]string{"TracingMode": "PassThrough", "SystemLogLevel": "WARN"} {
		p, _ := params[name].(map[string]any)
		if p["Default"] != want {
			t.Errorf("%s default %v; want %s", name, p["Default"], want)
		}
	}
	for _, fn := range tmpl.Functions {
		p := tmpl.Properties(fn.LogicalID)
		if _, own := p["Tracing"]; own {
			t.Errorf("%s sets its own Tracing; the parameter governs every function", fn.LogicalID)
		}
		lc, _ := mapAt(p, "LoggingConfig")
		if lc["LogFormat"] != "JSON" || refOf(lc["SystemLogLevel"]) != "SystemLogLevel" || lc["LogGroup"] == nil {
			t.Errorf("%s LoggingConfig = %v; want JSON, !Ref SystemLogLevel and its log group", fn.LogicalID, lc)
		}
		if _, ok := lc["ApplicationLogLevel"]; ok {
			t.Errorf("%s filters application logs: the metric lines (no level, read as INFO) would go with a level above INFO", fn.LogicalID)
		}
	}
}

// TestTemplateLeaseOutlivesTheAIRequest: an API key's in-flight lease
// lasts longer than the AI function can run, so a live request never
// loses its lease to another (the limit would be exceeded).
func TestTemplateLeaseOutlivesTheAIRequest(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	timeout, _ := tmpl.Properties("AiFunction")["Timeout"].(int)
	if d := time.Duration(timeout) * time.Second; timeout < 1 || d >= apikey.DefaultLeaseTTL {
		t.Errorf("AiFunction Timeout %d s; want under the in-flight lease's %s", timeout, apikey.DefaultLeaseTTL)
	}
}

// dataTableActions are the requests a function may make to the data
// table: single items and queries of one partition, each of which carries
// a leading key. A Scan has none, which a ForAllValues condition lets
// through, so it must never be granted.
// BatchGetItem is held to dynamodb:LeadingKeys key by key, as the single-item
// actions are (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html:
// its policy limiting a user to their own items grants it with them).
var dataTableActions = []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:Query", "dynamodb:BatchGetItem"}

// TestTemplateDataTableGrantsHaveLeadingKeys: every grant on the data
// table (its own or a restored one) is held to partition-key prefixes by
// dynamodb:LeadingKeys, and grants only single-item, query and batch-read actions;
// shared/store/dynamostore's TestTemplateGrantsOnlyTheFunctionsPartitions
// checks which prefixes each function gets.
func TestTemplateDataTableGrantsHaveLeadingKeys(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	for _, fn := range tmpl.Functions {
		policies, _ := tmpl.Properties(fn.LogicalID)["Policies"].([]any)
		for _, pol := range policies {
			doc, _ := pol.(map[string]any)
			for _, st := range asList(doc["Statement"]) {
				m, _ := st.(map[string]any)
				if !strings.Contains(fmt.Sprint(m["Resource"]), "DataTable") {
					continue
				}
				for _, a := range asList(m["Action"]) {
					if !slices.Contains(dataTableActions, fmt.Sprint(a)) {
						t.Errorf("%s %v: %v on the data table; want only %v", fn.LogicalID, m["Sid"], a, dataTableActions)
					}
				}
				cond, _ := mapAt(m, "Condition", "ForAllValues:StringLike")
				keys := asList(cond["dynamodb:LeadingKeys"])
				if len(keys) == 0 {
					t.Errorf("%s %v: the data table without a dynamodb:LeadingKeys condition", fn.LogicalID, m["Sid"])
				}
				for _, k := range keys {
					if s := fmt.Sprint(k); !strings.HasSuffix(s, "#*") || strings.Count(s, "*") != 1 {
						t.Errorf("%s %v: leading key pattern %q; want a prefix ending in #*", fn.LogicalID, m["Sid"], s)
					}
				}
				if strings.Contains(fmt.Sprint(m["Resource"]), "/index/") {
					t.Errorf("%s %v: a data table index (no function queries one)", fn.LogicalID, m["Sid"])
				}
			}
		}
	}
}
