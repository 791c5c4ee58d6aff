package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"chessapi/deploy"
)

// TestDataTableGuard: the guard holds each function to template.yaml's
// grants on the data table: its actions on its partitions pass, another
// partition, an action it lacks, a Scan or an index query are refused as
// AWS would refuse them, and callers that are not functions, or requests
// to other tables, pass unchecked.
func TestDataTableGuard(t *testing.T) {
	tmpl, err := deploy.LoadTemplate(repoTemplate)
	if err != nil {
		t.Fatal(err)
	}
	var passed int
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if len(body) == 0 {
			t.Error("the guard ate the request body")
		}
		passed++
		w.WriteHeader(200)
	})
	counts := newCounters(func() map[string]int { return nil })
	g := &dataTableGuard{next: next, table: "data", grants: dataTableGrants(tmpl), counts: counts, log: io.Discard}
	send := func(fn, op, body string) int {
		t.Helper()
		req := httptest.NewRequest("POST", "/", strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+fn+"/20261201/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x")
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if rec.Code != 200 && (rec.Header().Get("X-Amzn-ErrorType") != "AccessDeniedException" || !strings.Contains(rec.Body.String(), "AccessDeniedException")) {
			t.Errorf("%s %s: refused without DynamoDB's AccessDeniedException: %d %s", fn, op, rec.Code, rec.Body)
		}
		return rec.Code
	}
	key := func(pk string) string { return `{"TableName":"data","Key":{"pk":{"S":"` + pk + `"},"sk":{"S":"x"}}}` }
	for _, tt := range []struct {
		fn, op, body string
		want         int
	}{
		{"MoveFunction", "GetItem", key("player#p1"), 200},
		{"MoveFunction", "UpdateItem", key("hit#linkfail#1.2.3.4#60000000000#0"), 200},
		{"MoveFunction", "GetItem", key("apikey#k1"), 400},
		{"MoveFunction", "PutItem", `{"TableName":"data","Item":{"pk":{"S":"apikey#k1"},"sk":{"S":"apikey"}}}`, 400},
		{"AiFunction", "PutItem", `{"TableName":"data","Item":{"pk":{"S":"lease#apikey-inflight#k1"},"sk":{"S":"lease"}}}`, 200},
		{"AiFunction", "DeleteItem", key("lease#apikey-inflight#k1"), 400}, // not granted: releases are UpdateItem
		{"AiFunction", "GetItem", key("player#p1"), 400},
		{"StreamFunction", "Query", `{"TableName":"data","KeyConditionExpression":"pk = :pk AND begins_with(sk, :sub)","ExpressionAttributeValues":{":pk":{"S":"conn#c1"},":sub":{"S":"sub#"}}}`, 200},
		{"FanoutFunction", "Query", `{"TableName":"data","KeyConditionExpression":"#pk = :pk","ExpressionAttributeNames":{"#pk":"pk"},"ExpressionAttributeValues":{":pk":{"S":"sub#g1"}}}`, 200},
		{"FanoutFunction", "Query", `{"TableName":"data","IndexName":"gsi1","KeyConditionExpression":"gsi1pk = :pk","ExpressionAttributeValues":{":pk":{"S":"apikeys"}}}`, 400},
		{"FanoutFunction", "Scan", `{"TableName":"data"}`, 400},
		{"AiSeatFunction", "GetItem", key("player#p1"), 400},
		{"MoveFunction", "GetItem", `{"TableName":"games","Key":{"gameId":{"S":"g1"}}}`, 200}, // not the data table
		{"emulator", "GetItem", key("apikey#k1"), 200},                                        // not a function
	} {
		if got := send(tt.fn, tt.op, tt.body); got != tt.want {
			t.Errorf("%s %s %s: %d; want %d", tt.fn, tt.op, tt.body, got, tt.want)
		}
	}
	if n := counts.take(false).Platform["iam:DataTableDenied"]; n != 7 {
		t.Errorf("%d refusals counted; want 7", n)
	}
}
