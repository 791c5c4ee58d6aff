package deploy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"chessapi/shared/api"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/store/dynamostore"
)

// The stream as deployed (SPEC §11): the WebSocket API, the change stream
// and the fan-out, and the permissions between them.

// streamStage is the WebSocket API's one stage, which STREAM_ENDPOINT and
// the StreamUrl output name.
func streamStage(t *testing.T, tmpl *Template) string {
	t.Helper()
	stages := tmpl.ResourcesOfType("AWS::ApiGatewayV2::Stage")
	if len(stages) != 1 {
		t.Fatalf("WebSocket stages = %q; want one", stages)
	}
	name, _ := tmpl.Properties(stages[0])["StageName"].(string)
	if name == "" {
		t.Fatalf("stage %s has no StageName", stages[0])
	}
	return name
}

func TestTemplateStreamAPI(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	apis := tmpl.ResourcesOfType("AWS::ApiGatewayV2::Api")
	if len(apis) != 1 {
		t.Fatalf("AWS::ApiGatewayV2::Api resources = %q; want the one WebSocket API", apis)
	}
	streamAPI := apis[0]
	p := tmpl.Properties(streamAPI)
	if p["ProtocolType"] != "WEBSOCKET" || p["RouteSelectionExpression"] != "$request.body.action" {
		t.Errorf("%s: protocol %v, route selection %v; want WEBSOCKET on $request.body.action (the message's action is the route)",
			streamAPI, p["ProtocolType"], p["RouteSelectionExpression"])
	}
	var keys []string
	for _, r := range tmpl.StreamRoutes {
		keys = append(keys, r.RouteKey)
		if r.API != streamAPI || r.Function != "StreamFunction" {
			t.Errorf("stream route %s: API %s, function %s; want %s, StreamFunction", r.RouteKey, r.API, r.Function, streamAPI)
		}
	}
	if !slices.Equal(keys, StreamRouteKeys) {
		t.Errorf("stream routes = %q; want %q", keys, StreamRouteKeys)
	}
	// API Gateway may invoke the stream function, from this API only.
	var permitted bool
	for _, id := range tmpl.ResourcesOfType("AWS::Lambda::Permission") {
		p := tmpl.Properties(id)
		if refOf(p["FunctionName"]) == "StreamFunction" {
			permitted = p["Principal"] == "apigateway.amazonaws.com" && strings.Contains(subString(p["SourceArn"]), "${"+streamAPI+"}/")
		}
	}
	if !permitted {
		t.Error("no lambda:InvokeFunction permission for apigateway.amazonaws.com on StreamFunction scoped to the stream API")
	}
	// Where the functions post is the stage clients connect to.
	stage := streamStage(t, tmpl)
	wantEndpoint := "https://${" + streamAPI + "}.execute-api.${AWS::Region}.${AWS::URLSuffix}/" + stage
	for _, fn := range []string{"StreamFunction", "FanoutFunction", "MoveFunction"} {
		vars, _ := mapAt(tmpl.Properties(fn), "Environment", "Variables")
		if got := subString(vars["STREAM_ENDPOINT"]); got != wantEndpoint {
			t.Errorf("%s STREAM_ENDPOINT = %q; want %q", fn, got, wantEndpoint)
		}
	}
}

// TestTemplateManageConnectionsIsScoped: only the functions that post hold
// execute-api:ManageConnections to post, and only on this API's stage; the
// move function, which ends sessions, may only close connections (DELETE).
func TestTemplateManageConnectionsIsScoped(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	stage := streamStage(t, tmpl)
	method := map[string]string{"FanoutFunction": "POST", "StreamFunction": "POST", "MoveFunction": "DELETE"}
	var holders []string
	for _, fn := range tmpl.Functions {
		for _, st := range policyStatements(tmpl, fn.LogicalID) {
			if !slices.Contains(st.actions, "execute-api:ManageConnections") {
				continue
			}
			holders = append(holders, fn.LogicalID)
			for _, r := range st.resources {
				if want := ":${StreamApi}/" + stage + "/" + method[fn.LogicalID] + "/@connections/"; method[fn.LogicalID] == "" || !strings.Contains(r, want) {
					t.Errorf("%s: ManageConnections on %q; want this API's %s stage, %s @connections only", fn.LogicalID, r, stage, method[fn.LogicalID])
				}
			}
		}
	}
	slices.Sort(holders)
	if !slices.Equal(holders, []string{"FanoutFunction", "MoveFunction", "StreamFunction"}) {
		t.Errorf("functions allowed to manage connections = %q; want FanoutFunction, MoveFunction (DELETE), StreamFunction", holders)
	}
}

func TestTemplateChangeStreamFeedsFanout(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	spec, _ := mapAt(tmpl.Properties("GamesTable"), "StreamSpecification")
	if spec["StreamViewType"] != "NEW_AND_OLD_IMAGES" {
		t.Errorf("GamesTable stream = %v; want NEW_AND_OLD_IMAGES (the fan-out compares the version with the one it replaced)", spec)
	}
	evs, _ := mapAt(deployedWith(t, tmpl, nil).props("FanoutFunction"), "Events")
	var found bool
	for name, e := range evs {
		ev, _ := e.(map[string]any)
		if ev["Type"] != "DynamoDB" {
			continue
		}
		found = true
		p, _ := ev["Properties"].(map[string]any)
		if got := fmt.Sprint(p["Stream"]); got != "map[Fn::GetAtt:[GamesTable StreamArn]]" {
			t.Errorf("%s: Stream = %s; want the games table's", name, got)
		}
		batch, _ := p["BatchSize"].(int)
		retries, _ := p["MaximumRetryAttempts"].(int)
		if batch < 1 || batch > 1000 || p["BisectBatchOnFunctionError"] != true || retries < 1 || retries > 100 {
			t.Errorf("%s: batch %v, bisect %v, retries %v; want a batch size, bisect on error and bounded retries", name, p["BatchSize"], p["BisectBatchOnFunctionError"], p["MaximumRetryAttempts"])
		}
		if types, _ := p["FunctionResponseTypes"].([]any); !slices.Contains(types, any("ReportBatchItemFailures")) {
			t.Errorf("%s: FunctionResponseTypes %v; want ReportBatchItemFailures (HandleStreamRecords reports the failed record)", name, p["FunctionResponseTypes"])
		}
		dest, _ := mapAt(p, "DestinationConfig", "OnFailure")
		checkQueue(t, tmpl, name+" on-failure destination", dest)
	}
	if !found {
		t.Error("FanoutFunction has no DynamoDB stream event")
	}
}

// TestTemplateDataTable: the keys and index the dynamostore adapter uses,
// with the TTL attribute it writes.
func TestTemplateDataTable(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	p := tmpl.Properties("DataTable")
	keys := DataTableKeySchema(p["KeySchema"])
	if want := []string{dynamostore.DataTableKeys.PK + " HASH", dynamostore.DataTableKeys.SK + " RANGE"}; !slices.Equal(keys, want) {
		t.Errorf("DataTable keys = %q; want %q", keys, want)
	}
	idx, _ := p["GlobalSecondaryIndexes"].([]any)
	if len(idx) != 1 {
		t.Fatalf("DataTable indexes = %v; want one", idx)
	}
	gsi, _ := idx[0].(map[string]any)
	if gsi["IndexName"] != dynamostore.IndexGSI1 ||
		!slices.Equal(DataTableKeySchema(gsi["KeySchema"]), []string{dynamostore.DataTableKeys.GSI1PK + " HASH", dynamostore.DataTableKeys.GSI1SK + " RANGE"}) {
		t.Errorf("DataTable index = %v; want %s on %s/%s", gsi, dynamostore.IndexGSI1, dynamostore.DataTableKeys.GSI1PK, dynamostore.DataTableKeys.GSI1SK)
	}
	ttl, _ := mapAt(p, "TimeToLiveSpecification")
	if ttl["AttributeName"] != dynamostore.DataTableKeys.TTL || ttl["Enabled"] != true {
		t.Errorf("DataTable TTL = %v; want %s enabled", ttl, dynamostore.DataTableKeys.TTL)
	}
}

// DataTableKeySchema prints a KeySchema as "name TYPE" lines.
func DataTableKeySchema(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, k := range list {
		m, _ := k.(map[string]any)
		out = append(out, fmt.Sprint(m["AttributeName"], " ", m["KeyType"]))
	}
	return out
}

// checkQueue: dest is an SQS destination on a queue of the template.
func checkQueue(t *testing.T, tmpl *Template, what string, dest map[string]any) {
	t.Helper()
	arn := fmt.Sprint(dest["Destination"])
	var queue string
	if m, ok := dest["Destination"].(map[string]any); ok {
		if ga, ok := m["Fn::GetAtt"].([]any); ok && len(ga) == 2 {
			queue = fmt.Sprint(ga[0])
		}
	}
	if dest["Type"] != "SQS" || tmpl.Resources[queue]["Type"] != "AWS::SQS::Queue" {
		t.Errorf("%s = %v (%s); want an SQS queue of the template", what, dest, arn)
	}
}

type statement struct{ actions, resources []string }

// policyStatements reads a SAM function's inline policy statements, with
// each Resource as its Fn::Sub text or "GetAtt:X.Y".
func policyStatements(tmpl *Template, fn string) []statement {
	var out []statement
	policies, _ := tmpl.Properties(fn)["Policies"].([]any)
	for _, pol := range policies {
		doc, _ := pol.(map[string]any)
		sts, _ := doc["Statement"].([]any)
		for _, s := range sts {
			m, _ := s.(map[string]any)
			var st statement
			for _, a := range asList(m["Action"]) {
				st.actions = append(st.actions, fmt.Sprint(a))
			}
			for _, r := range asList(m["Resource"]) {
				switch r := r.(type) {
				case string:
					st.resources = append(st.resources, r)
				case map[string]any:
					if s := subString(r); s != "" {
						st.resources = append(st.resources, s)
					} else if ga, ok := r["Fn::GetAtt"].([]any); ok {
						st.resources = append(st.resources, fmt.Sprintf("GetAtt:%v.%v", ga[0], ga[1]))
					}
				}
			}
			out = append(out, st)
		}
	}
	return out
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	if v == nil {
		return nil
	}
	return []any{v}
}

// checkWebSocketEvent holds a stream event to the template (its route, the
// stage) and the protocol (a message route's body is that action).
func checkWebSocketEvent(t *testing.T, ev Event, tmpl *Template) {
	t.Helper()
	rc := ev.WebSocket.RequestContext
	if !slices.ContainsFunc(tmpl.StreamRoutes, func(r StreamRoute) bool { return r.RouteKey == rc.RouteKey }) {
		t.Errorf("routeKey %q is not a route of the stream API", rc.RouteKey)
	}
	if stage := streamStage(t, tmpl); rc.Stage != stage || rc.DomainName == "" || rc.APIID == "" || rc.RequestID == "" ||
		!strings.HasPrefix(rc.DomainName, rc.APIID+".execute-api.") {
		t.Errorf("requestContext stage %q domain %q api %q request %q; want stage %q on the API's execute-api domain", rc.Stage, rc.DomainName, rc.APIID, rc.RequestID, stage)
	}
	if rc.EventType != "MESSAGE" {
		if ev.WebSocket.Body != "" {
			t.Errorf("%s event has a body", rc.EventType)
		}
		return
	}
	var probe struct {
		Action string `json:"action"`
	}
	if err := json.Unmarshal([]byte(ev.WebSocket.Body), &probe); err != nil {
		t.Fatalf("message body %q: %v", ev.WebSocket.Body, err)
	}
	routed := probe.Action
	if !slices.Contains(StreamRouteKeys, routed) || strings.HasPrefix(routed, "$") {
		routed = "$default"
	}
	if routed != rc.RouteKey {
		t.Errorf("body action %q is routed to %q, but the event says %q", probe.Action, routed, rc.RouteKey)
	}
	if _, err := api.DecodeStreamMessage([]byte(ev.WebSocket.Body)); (err == nil) != (rc.RouteKey != "$default") {
		t.Errorf("DecodeStreamMessage(%s) = %v; a routed action must decode, anything else must not", ev.WebSocket.Body, err)
	}
}

// checkStreamRecords: each record is a committed version of the sample
// game, readable as the fan-out reads it.
func checkStreamRecords(t *testing.T, ev Event) {
	t.Helper()
	for i, r := range ev.Records.Records {
		next, err := dynamostore.DecodeStreamImage(r.Change.NewImage)
		if err != nil {
			t.Fatalf("record %d NewImage: %v", i, err)
		}
		st, err := storedgame.Decode(next.State)
		if err != nil || next.GameID != SampleGameID || st.GameID != SampleGameID || st.Version != next.Version {
			t.Errorf("record %d: game %q version %d, state %v (%v); want the sample game", i, next.GameID, next.Version, st, err)
		}
		if r.EventName == "MODIFY" {
			prev, err := dynamostore.DecodeStreamImage(r.Change.OldImage)
			if err != nil || prev.Version != next.Version-1 {
				t.Errorf("record %d OldImage: version %d, %v; want the version before %d", i, prev.Version, err, next.Version)
			}
		}
	}
}
