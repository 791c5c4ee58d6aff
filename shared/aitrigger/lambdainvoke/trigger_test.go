package lambdainvoke

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"chessapi/shared/service"
)

// fakeLambda plays the Lambda Invoke API: POST
// /2015-03-31/functions/{name}/invocations with the invocation type in
// X-Amz-Invocation-Type.
type fakeLambda struct {
	mu       sync.Mutex
	requests []invokeRequest
	status   int    // answer status; 202 when zero
	errType  string // x-amzn-ErrorType on errors
}

type invokeRequest struct {
	method, path, invocationType, auth string
	body                               []byte
}

func (f *fakeLambda) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, invokeRequest{
		method: r.Method, path: r.URL.EscapedPath(), invocationType: r.Header.Get("X-Amz-Invocation-Type"),
		auth: r.Header.Get("Authorization"), body: body,
	})
	status, errType := f.status, f.errType
	f.mu.Unlock()
	if status == 0 {
		status = http.StatusAccepted
	}
	if errType != "" {
		w.Header().Set("X-Amzn-Errortype", errType)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, `{"Type":"User","message":"Function not found: chess-ai"}`)
		return
	}
	w.WriteHeader(status)
}

func (f *fakeLambda) all() []invokeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]invokeRequest(nil), f.requests...)
}

func testConfig(endpoint string) aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		BaseEndpoint: aws.String(endpoint),
		// One attempt: error tests must see the first answer.
		RetryMaxAttempts: 1,
	}
}

func TestTriggerAIInvokesAsynchronously(t *testing.T) {
	fake := &fakeLambda{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	tr, err := NewFromConfig(testConfig(srv.URL), "chess-ai")
	if err != nil {
		t.Fatal(err)
	}
	task := service.AITask{GameID: "Zk3n_Q-8f2", Version: 17}
	if err := tr.TriggerAI(context.Background(), task); err != nil {
		t.Fatalf("TriggerAI(%+v) = %v; want nil", task, err)
	}
	reqs := fake.all()
	if len(reqs) != 1 {
		t.Fatalf("got %d requests; want 1", len(reqs))
	}
	req := reqs[0]
	if req.method != http.MethodPost || req.path != "/2015-03-31/functions/chess-ai/invocations" {
		t.Errorf("request = %s %s; want POST /2015-03-31/functions/chess-ai/invocations", req.method, req.path)
	}
	if req.invocationType != "Event" {
		t.Errorf("X-Amz-Invocation-Type = %q; want Event", req.invocationType)
	}
	if !strings.HasPrefix(req.auth, "AWS4-HMAC-SHA256 ") || !strings.Contains(req.auth, "/lambda/aws4_request") {
		t.Errorf("Authorization = %q; want a SigV4 signature for lambda", req.auth)
	}
	var got map[string]any
	if err := json.Unmarshal(req.body, &got); err != nil {
		t.Fatalf("payload %q is not JSON: %v", req.body, err)
	}
	want := map[string]any{"gameId": "Zk3n_Q-8f2", "version": float64(17), "ply": float64(0)}
	if len(got) != len(want) || got["gameId"] != want["gameId"] || got["version"] != want["version"] || got["ply"] != want["ply"] {
		t.Errorf("payload = %v; want %v", got, want)
	}
}

func TestTriggerAIFunctionARN(t *testing.T) {
	fake := &fakeLambda{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	arn := "arn:aws:lambda:us-east-1:123456789012:function:chess-ai"
	tr, err := NewFromConfig(testConfig(srv.URL), arn)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "g", Version: 1}); err != nil {
		t.Fatalf("TriggerAI = %v", err)
	}
	// The ARN is one path segment, its colons escaped.
	want := "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A123456789012%3Afunction%3Achess-ai/invocations"
	if got := fake.all()[0].path; got != want {
		t.Errorf("path = %q; want %q", got, want)
	}
}

func TestTriggerAIErrors(t *testing.T) {
	tests := []struct {
		name     string
		fake     *fakeLambda
		wantCode string // API error code, if any
	}{
		{"function not found", &fakeLambda{status: http.StatusNotFound, errType: "ResourceNotFoundException"}, "ResourceNotFoundException"},
		{"synchronous answer", &fakeLambda{status: http.StatusOK}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.fake)
			defer srv.Close()
			tr, err := NewFromConfig(testConfig(srv.URL), "chess-ai")
			if err != nil {
				t.Fatal(err)
			}
			err = tr.TriggerAI(context.Background(), service.AITask{GameID: "g", Version: 3})
			if err == nil {
				t.Fatal("TriggerAI = nil; want an error")
			}
			if !strings.Contains(err.Error(), `game "g" version 3`) || !strings.Contains(err.Error(), "chess-ai") {
				t.Errorf("TriggerAI error %q; want the function and game named", err)
			}
			var apiErr smithy.APIError
			if tt.wantCode != "" && (!errors.As(err, &apiErr) || apiErr.ErrorCode() != tt.wantCode) {
				t.Errorf("TriggerAI error = %v; want API error %s in the chain", err, tt.wantCode)
			}
		})
	}
}

func TestTriggerAIRejectsBadInput(t *testing.T) {
	fake := &fakeLambda{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	tr, err := NewFromConfig(testConfig(srv.URL), "chess-ai")
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.TriggerAI(context.Background(), service.AITask{Version: 1}); err == nil {
		t.Error("TriggerAI with an empty game id = nil; want an error")
	}
	if n := len(fake.all()); n != 0 {
		t.Errorf("invalid task sent %d requests; want 0", n)
	}
	if _, err := New(nil, "chess-ai"); err == nil {
		t.Error("New(nil, name) = nil error; want an error")
	}
	if _, err := NewFromConfig(testConfig(srv.URL), ""); err == nil || !strings.Contains(err.Error(), EnvFunctionName) {
		t.Errorf("NewFromConfig with no function = %v; want an error naming %s", err, EnvFunctionName)
	}
}

// TestEndpointFromEnvironment checks the documented override: the SDK's own
// AWS_ENDPOINT_URL_LAMBDA, read by config.LoadDefaultConfig.
func TestEndpointFromEnvironment(t *testing.T) {
	fake := &fakeLambda{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL_LAMBDA", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewFromConfig(cfg, "chess-ai")
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.TriggerAI(context.Background(), service.AITask{GameID: "g", Version: 1}); err != nil {
		t.Fatalf("TriggerAI through AWS_ENDPOINT_URL_LAMBDA = %v", err)
	}
	if n := len(fake.all()); n != 1 {
		t.Fatalf("fake Lambda got %d requests; want 1", n)
	}
}
