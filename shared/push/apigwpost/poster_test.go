package apigwpost

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"chessapi/shared/push"
)

var testConfig = aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")}

// stub answers each post with the next status of its script.
type stub struct {
	mu       sync.Mutex
	statuses []int
	requests []*http.Request
	bodies   []string
}

func (s *stub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r)
	s.bodies = append(s.bodies, string(body))
	status := http.StatusOK
	if len(s.statuses) > 0 {
		status, s.statuses = s.statuses[0], s.statuses[1:]
	}
	w.WriteHeader(status)
}

func newPoster(t *testing.T, statuses ...int) (*Poster, *stub) {
	t.Helper()
	st := &stub{statuses: statuses}
	srv := httptest.NewServer(st)
	t.Cleanup(srv.Close)
	p, err := New(testConfig, srv.URL+"/v1/")
	if err != nil {
		t.Fatal(err)
	}
	return p, st
}

func TestPostSignsAndSends(t *testing.T) {
	p, st := newPoster(t)
	if err := p.Post(context.Background(), "Xc1a/BcD2=", []byte(`{"type":"pong"}`)); err != nil {
		t.Fatal(err)
	}
	if len(st.requests) != 1 {
		t.Fatalf("requests = %d; want 1", len(st.requests))
	}
	r := st.requests[0]
	if r.Method != http.MethodPost || r.URL.EscapedPath() != "/v1/@connections/Xc1a%2FBcD2=" || st.bodies[0] != `{"type":"pong"}` {
		t.Errorf("request %s %s %q; want POST /v1/@connections/{escaped id} with the message", r.Method, r.URL.EscapedPath(), st.bodies[0])
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || !strings.Contains(auth, "/eu-west-1/execute-api/aws4_request") {
		t.Errorf("Authorization = %q; want SigV4 for execute-api in the configured region", auth)
	}
	if r.Header.Get("X-Amz-Content-Sha256") == "" && !strings.Contains(auth, "SignedHeaders=") {
		t.Errorf("request is not signed over its payload: %v", r.Header)
	}
}

func TestPostGoneIsNotRetried(t *testing.T) {
	p, st := newPoster(t, http.StatusGone, http.StatusOK)
	if err := p.Post(context.Background(), "c", []byte(`{}`)); !errors.Is(err, push.ErrGone) {
		t.Errorf("Post to a gone connection = %v; want push.ErrGone", err)
	}
	if len(st.requests) != 1 {
		t.Errorf("requests = %d; want 1 (a gone connection is never retried)", len(st.requests))
	}
}

func TestPostRetriesThrottlingAndServerErrors(t *testing.T) {
	p, st := newPoster(t, http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusOK)
	if err := p.Post(context.Background(), "c", []byte(`{}`)); err != nil {
		t.Errorf("Post after 429 and 500 = %v; want success on the third try", err)
	}
	if len(st.requests) != 3 {
		t.Errorf("requests = %d; want 3", len(st.requests))
	}

	p, st = newPoster(t, 500, 500, 500, 500)
	if err := p.Post(context.Background(), "c", []byte(`{}`)); err == nil || errors.Is(err, push.ErrGone) {
		t.Errorf("Post failing every time = %v; want an error that is not ErrGone", err)
	}
	if len(st.requests) != 3 {
		t.Errorf("requests = %d; want 3 (bounded)", len(st.requests))
	}

	p, st = newPoster(t, http.StatusForbidden)
	if err := p.Post(context.Background(), "c", []byte(`{}`)); err == nil {
		t.Error("Post answered 403 = nil; want an error")
	}
	if len(st.requests) != 1 {
		t.Errorf("requests = %d; want 1 (a client error is not retried)", len(st.requests))
	}
}

// TestCloseDeletesTheConnection: Close is a signed DELETE of the
// connection with no body; a gone one is push.ErrGone, not retried;
// throttling is retried.
func TestCloseDeletesTheConnection(t *testing.T) {
	p, st := newPoster(t, http.StatusNoContent)
	if err := p.Close(context.Background(), "Xc1a/BcD2="); err != nil {
		t.Fatal(err)
	}
	r := st.requests[0]
	if r.Method != http.MethodDelete || r.URL.EscapedPath() != "/v1/@connections/Xc1a%2FBcD2=" || st.bodies[0] != "" {
		t.Errorf("request %s %s %q; want DELETE /v1/@connections/{escaped id} with no body", r.Method, r.URL.EscapedPath(), st.bodies[0])
	}
	if auth := r.Header.Get("Authorization"); !strings.Contains(auth, "/eu-west-1/execute-api/aws4_request") {
		t.Errorf("Authorization = %q; want SigV4 for execute-api", auth)
	}

	p, st = newPoster(t, http.StatusGone, http.StatusNoContent)
	if err := p.Close(context.Background(), "c"); !errors.Is(err, push.ErrGone) || len(st.requests) != 1 {
		t.Errorf("Close of a gone connection = %v after %d requests; want push.ErrGone after 1", err, len(st.requests))
	}
	p, st = newPoster(t, http.StatusTooManyRequests, http.StatusNoContent)
	if err := p.Close(context.Background(), "c"); err != nil || len(st.requests) != 2 {
		t.Errorf("Close after a 429 = %v after %d requests; want success after 2", err, len(st.requests))
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	if _, err := New(testConfig, ""); err == nil {
		t.Error("New without an endpoint = nil error")
	}
	if _, err := New(aws.Config{Region: "eu-west-1"}, "https://x/v1"); err == nil {
		t.Error("New without credentials = nil error")
	}
}
