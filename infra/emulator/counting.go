package emulator

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
)

// CallCounter is a reverse proxy in front of an AWS emulator that counts
// the API calls made through it, by operation ("dynamodb:GetItem",
// "scheduler:CreateSchedule"). Pointing a function's endpoint variables at
// it measures the requests a step costs (docs/operations.md takes its
// figures from these counts).
type CallCounter struct {
	// URL is the proxy's endpoint.
	URL    string
	mu     sync.Mutex
	counts map[string]int
	// failing is the number of calls of an operation still to fail
	// (negative: all of them), for fault injection.
	failing map[string]int
	srv     *httptest.Server
}

// Fail makes the next n calls of an operation ("scheduler:CreateSchedule")
// fail with a 500 InternalServerException, as a service outage would (n < 0:
// every call until Fail(op, 0)). Failed calls are counted like the others.
func (c *CallCounter) Fail(op string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failing[op] = n
}

// CountCalls starts a counting proxy to the emulator at target, on a
// free loopback port, until Close.
func CountCalls(target string) (*CallCounter, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("emulator: %w", err)
	}
	c := &CallCounter{counts: map[string]int{}, failing: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(u)
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := Operation(r)
		c.mu.Lock()
		c.counts[op]++
		fail := c.failing[op] != 0
		if c.failing[op] > 0 {
			c.failing[op]--
		}
		c.mu.Unlock()
		if fail {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Amzn-ErrorType", "InternalServerException")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"__type":"InternalServerException","message":"injected failure"}`))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	c.URL = c.srv.URL
	return c, nil
}

// Close stops the proxy.
func (c *CallCounter) Close() { c.srv.Close() }

// Take returns the counts since the last Take and starts again from zero.
func (c *CallCounter) Take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.counts)
	clear(c.counts)
	return out
}

// Operation names the AWS API operation of a request: JSON-protocol
// services (DynamoDB) name it in X-Amz-Target; query-protocol services
// (SNS) in the form body's Action, the service in the signature's
// credential scope (the body is read and put back); EventBridge Scheduler
// is a REST API whose operation follows from the method and the path.
func Operation(r *http.Request) string {
	if op, ok := queryOperation(r); ok {
		return op
	}
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		service, op, _ := strings.Cut(target, ".")
		if strings.HasPrefix(service, "DynamoDB") {
			service = "dynamodb"
		}
		return service + ":" + op
	}
	path := strings.Trim(r.URL.Path, "/")
	parts := strings.Split(path, "/")
	if parts[0] == "schedules" {
		switch {
		case len(parts) == 1 && r.Method == http.MethodGet:
			return "scheduler:ListSchedules"
		case len(parts) == 2 && r.Method == http.MethodPost:
			return "scheduler:CreateSchedule"
		case len(parts) == 2 && r.Method == http.MethodPut:
			return "scheduler:UpdateSchedule"
		case len(parts) == 2 && r.Method == http.MethodDelete:
			return "scheduler:DeleteSchedule"
		case len(parts) == 2 && r.Method == http.MethodGet:
			return "scheduler:GetSchedule"
		}
	}
	return r.Method + " /" + path
}

// queryOperation names a query-protocol request ("sns:Publish").
// ReadBody reads r's body and puts the bytes back for the next handler:
// a proxy in front of an emulator looks at a request without taking it.
func ReadBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, err
}

func queryOperation(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") || r.Body == nil {
		return "", false
	}
	// Credential=<key>/<date>/<region>/<service>/aws4_request
	_, cred, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	scope := strings.Split(strings.SplitN(cred, ",", 2)[0], "/")
	if !ok || len(scope) != 5 {
		return "", false
	}
	body, err := ReadBody(r)
	if err != nil {
		return "", false
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("Action") == "" {
		return "", false
	}
	return scope[3] + ":" + form.Get("Action"), true
}
