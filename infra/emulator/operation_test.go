package emulator

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestOperationNamesEachProtocol(t *testing.T) {
	sns := httptest.NewRequest("POST", "/", strings.NewReader("Action=Publish&Message=hi&Version=2010-03-31"))
	sns.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	sns.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=k/20261201/us-east-1/sns/aws4_request, SignedHeaders=host, Signature=x")
	dynamo := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
	dynamo.Header.Set("X-Amz-Target", "DynamoDB_20120810.GetItem")
	unsigned := httptest.NewRequest("POST", "/", strings.NewReader("Action=Publish"))
	unsigned.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, tt := range []struct {
		r    *http.Request
		want string
	}{
		{sns, "sns:Publish"},
		{dynamo, "dynamodb:GetItem"},
		{httptest.NewRequest("POST", "/schedules/g-1", nil), "scheduler:CreateSchedule"},
		{unsigned, "POST /"},
	} {
		if got := Operation(tt.r); got != tt.want {
			t.Errorf("Operation(%s %s) = %q; want %q", tt.r.Method, tt.r.URL, got, tt.want)
		}
	}
	// The body is still there for the emulator.
	if body, _ := io.ReadAll(sns.Body); string(body) != "Action=Publish&Message=hi&Version=2010-03-31" {
		t.Errorf("body after Operation = %q", body)
	}
}
