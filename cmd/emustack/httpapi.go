package main

import (
	"chessapi/shared/lambdafn"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/deploy"
	"chessapi/infra/rie"
)

// route is one HTTP API route, split for matching.
type route struct {
	deploy.Route
	segments []string // "v1", "games", "{id}"
	timeout  time.Duration
}

// routeTable matches requests to the template's routes the way API
// Gateway's HTTP API does for these routes: exact literal segments, a
// {name} segment matches one non-empty segment, and a literal route wins
// over a parameterised one of the same shape. A path no route has is 404;
// so is a method the path has no route for (the HTTP API has no 405).
type routeTable []route

func newRouteTable(spec *stackSpec) routeTable {
	var t routeTable
	for _, r := range spec.Routes {
		t = append(t, route{Route: r, segments: strings.Split(strings.Trim(r.Path, "/"), "/"), timeout: spec.Timeouts[r.Pattern()]})
	}
	return t
}

// match finds the route of method and path (decoded, starting with "/")
// and its path parameters.
func (t routeTable) match(method, path string) (route, map[string]string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	var best route
	var bestParams map[string]string
	bestLiterals := -1
	for _, r := range t {
		if r.Method != method || len(r.segments) != len(segs) {
			continue
		}
		params := map[string]string{}
		literals := 0
		ok := true
		for i, s := range r.segments {
			if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
				if segs[i] == "" {
					ok = false
					break
				}
				params[s[1:len(s)-1]] = segs[i]
				continue
			}
			if s != segs[i] {
				ok = false
				break
			}
			literals++
		}
		if ok && literals > bestLiterals {
			best, bestParams, bestLiterals = r, params, literals
		}
	}
	if bestLiterals < 0 {
		return route{}, nil, false
	}
	if len(bestParams) == 0 {
		bestParams = nil
	}
	return best, bestParams, true
}

// maxRequestBody is the HTTP API's payload limit (10 MB); Lambda's
// synchronous invoke payload limit (6 MB) is the tighter one and gives 413
// below.
const (
	maxRequestBody = 10 << 20
	maxInvokeBody  = 6 << 20
)

// httpEvent is the API Gateway HTTP API payload 2.0 event of a request
// matched to rt. As API Gateway does: header names lower case, repeated
// headers joined with commas, cookies apart, repeated query parameters
// joined with commas, a body that is not UTF-8 text base64-encoded.
func httpEvent(r *http.Request, rt route, params map[string]string, body []byte, requestID string, now time.Time) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	var cookies []string
	for name, values := range r.Header {
		lower := strings.ToLower(name)
		if lower == "cookie" {
			for _, v := range values {
				for c := range strings.SplitSeq(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		headers[lower] = strings.Join(values, ",")
	}
	sourceIP := r.RemoteAddr
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		sourceIP = host
	}
	headers["host"] = r.Host
	headers["x-forwarded-for"] = sourceIP
	headers["x-forwarded-proto"] = "http"
	if len(body) > 0 { // the length as sent on (a chunked body arrives whole)
		headers["content-length"] = fmt.Sprint(len(body))
	}
	var query map[string]string
	if q := r.URL.Query(); len(q) > 0 {
		query = map[string]string{}
		for k, vs := range q {
			query[k] = strings.Join(vs, ",")
		}
	}
	ev := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              rt.Pattern(),
		RawPath:               r.URL.EscapedPath(),
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:     rt.Pattern(),
			AccountID:    accountID,
			Stage:        "$default",
			RequestID:    requestID,
			APIID:        "emustack",
			DomainName:   r.Host,
			DomainPrefix: strings.Split(r.Host, ".")[0],
			Time:         now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch:    now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: r.URL.Path, Protocol: r.Proto, SourceIP: sourceIP, UserAgent: r.UserAgent(),
			},
		},
	}
	if len(body) > 0 {
		if utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev
}

// errNotHTTPResponse: the function's result is neither a payload 2.0
// response nor JSON API Gateway can wrap.
var errNotHTTPResponse = errors.New("the function's result is not an HTTP API response")

// httpResponse turns a function's result into the response API Gateway
// sends, following the payload 2.0 format: a JSON object with statusCode is
// the response; any other valid JSON is a 200 application/json response
// whose body is that JSON (API Gateway's inference for functions that
// return only data).
func httpResponse(payload []byte) (status int, header http.Header, body []byte, err error) {
	header = http.Header{}
	var probe map[string]json.RawMessage
	if json.Unmarshal(payload, &probe) == nil {
		if _, ok := probe["statusCode"]; ok {
			var resp events.APIGatewayV2HTTPResponse
			if err := json.Unmarshal(payload, &resp); err != nil {
				return 0, nil, nil, fmt.Errorf("%w: %w", errNotHTTPResponse, err)
			}
			if resp.StatusCode < 100 || resp.StatusCode > 599 {
				return 0, nil, nil, fmt.Errorf("%w: statusCode %d", errNotHTTPResponse, resp.StatusCode)
			}
			for k, v := range resp.Headers {
				header.Set(k, v)
			}
			for k, vs := range resp.MultiValueHeaders {
				header.Del(k)
				for _, v := range vs {
					header.Add(k, v)
				}
			}
			for _, c := range resp.Cookies {
				header.Add("Set-Cookie", c)
			}
			body = []byte(resp.Body)
			if resp.IsBase64Encoded {
				if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
					return 0, nil, nil, fmt.Errorf("%w: isBase64Encoded body: %w", errNotHTTPResponse, err)
				}
			}
			return resp.StatusCode, header, body, nil
		}
	}
	if !json.Valid(payload) {
		return 0, nil, nil, errNotHTTPResponse
	}
	header.Set("Content-Type", "application/json")
	return http.StatusOK, header, payload, nil
}

// gatewayError is the body API Gateway itself answers errors with.
func gatewayError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	data, _ := json.Marshal(map[string]string{"message": message})
	w.Write(data)
}

// httpAPI serves the template's HTTP API routes from the functions' pools.
type httpAPI struct {
	routes routeTable
	pools  map[string]*pool // by logical ID
	counts *counters
	log    io.Writer
	// originSecret is added to every request as the edge adds it
	// (lambdafn.OriginVerifyHeader; "" adds nothing).
	originSecret string
}

func (h *httpAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.counts.event("apigw-http:Requests", 1)
	rt, params, ok := h.routes.match(r.Method, r.URL.Path)
	if !ok {
		h.counts.event("apigw-http:NoRoute", 1)
		gatewayError(w, http.StatusNotFound, "Not Found")
		return
	}
	h.counts.event("apigw-http:"+rt.Pattern(), 1)
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBody))
	if err != nil {
		gatewayError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	requestID := newID()
	w.Header().Set("Apigw-Requestid", requestID)
	ev := httpEvent(r, rt, params, body, requestID, time.Now())
	if h.originSecret != "" {
		ev.Headers[lambdafn.OriginVerifyHeader] = h.originSecret
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		gatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	if len(payload) > maxInvokeBody {
		gatewayError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	timeout := rt.timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	// API Gateway answers 503 at the integration timeout; the function
	// runs on regardless (until its own timeout), holding its instance.
	type outcome struct {
		res rie.Result
		err error
	}
	// ctx also ends the wait for a free instance (pool.invoke), so a
	// request given up on never starts an invocation later.
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		res, err := h.pools[rt.Function].invoke(ctx, payload)
		done <- outcome{res, err}
	}()
	var res rie.Result
	select {
	case o := <-done:
		res, err = o.res, o.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			h.counts.event("apigw-http:IntegrationTimeouts", 1)
			gatewayError(w, http.StatusServiceUnavailable, "Service Unavailable")
		}
		return // else the client hung up: nobody to answer
	}
	switch {
	case err != nil:
		fmt.Fprintf(h.log, "emustack: %s %s: %v\n", r.Method, r.URL.Path, err)
		gatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	case res.FunctionError != nil:
		fmt.Fprintf(h.log, "emustack: %s %s: %v\n", r.Method, r.URL.Path, res.FunctionError)
		gatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	status, header, out, err := httpResponse(res.Payload)
	if err != nil {
		fmt.Fprintf(h.log, "emustack: %s %s: %v\n", r.Method, r.URL.Path, err)
		gatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	for k, vs := range header {
		w.Header()[k] = vs
	}
	// Data transferred out is billed; a big answer is also what the
	// WebSocket's 128 KB limit would refuse as a post.
	h.counts.event("apigw-http:ResponseBytes", int64(len(out)))
	h.counts.maxEvent("apigw-http:ResponseBytesMax", int64(len(out)))
	w.Header().Set("Content-Length", fmt.Sprint(len(out)))
	w.WriteHeader(status)
	w.Write(out)
}

// newID is a random request or connection id in API Gateway's style
// (URL-safe base64).
func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return strings.TrimRight(base64.URLEncoding.EncodeToString(b[:]), "=")
}
