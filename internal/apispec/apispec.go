// Package apispec holds the API's contract, openapi.yaml, to its word in
// tests: it loads the file with kin-openapi, validates requests and
// responses against it (openapi3filter), including the two answers that
// belong to no operation (404 not_found for an unknown path, 405 for a known
// path with another method), and lints the file itself.
//
// Handler tests validate every response they get (shared/api's test helper
// does it for them), the Lambda adapter tests every response to an events/
// file, and the as-deployed test every response of the functions under the
// Runtime Interface Emulator. It is for tests only.
package apispec

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// FileName is the contract's file at the module root.
const FileName = "openapi.yaml"

// The responses of openapi.yaml that belong to no operation.
const (
	RouteNotFound    = "RouteNotFound"    // 404 not_found: a path that is no route
	MethodNotAllowed = "MethodNotAllowed" // 405: a route's path with another method
)

// Spec is openapi.yaml, loaded and validated, with a router over its paths.
type Spec struct {
	Doc    *openapi3.T
	Path   string // the file it was read from
	source []byte // its text, for the lint rules about the YAML itself
	router routers.Router
}

var (
	loadOnce sync.Once
	loaded   *Spec
	loadErr  error
)

// Load reads openapi.yaml once per process (later calls share it; the
// validators do not modify it).
func Load() (*Spec, error) {
	loadOnce.Do(func() { loaded, loadErr = LoadFile(File()) })
	return loaded, loadErr
}

// MustLoad is Load for tests: it stops the test when the file cannot be
// loaded.
func MustLoad(tb interface {
	Helper()
	Fatalf(string, ...any)
}) *Spec {
	tb.Helper()
	s, err := Load()
	if err != nil {
		tb.Fatalf("apispec: %v", err)
	}
	return s
}

// File returns the path of openapi.yaml: at the root of the module that
// holds the working directory (tests run in their package's directory),
// else next to this package's source.
func File() string {
	if dir, err := os.Getwd(); err == nil {
		for d := dir; ; d = filepath.Dir(d) {
			if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(bytes.TrimSpace(data), []byte("module chessapi")) {
				return filepath.Join(d, FileName)
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	_, src, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(src), "..", "..", FileName)
}

// LoadFile loads and validates an OpenAPI file (no external references).
func LoadFile(path string) (*Spec, error) {
	source, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromDataWithPath(source, &url.URL{Path: path})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	if err := doc.Validate(loader.Context, openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("%s is not a valid OpenAPI document: %w", path, err)
	}
	// Route on paths alone: the servers name hosts that requests in tests
	// (httptest's example.com, API Gateway events) do not carry.
	routed := *doc
	routed.Servers = nil
	router, err := legacy.NewRouter(&routed)
	if err != nil {
		return nil, fmt.Errorf("%s: router: %w", path, err)
	}
	return &Spec{Doc: doc, Path: path, source: source, router: router}, nil
}

func init() {
	// PGN is text; kin-openapi decodes only the media types it knows.
	openapi3filter.RegisterBodyDecoder("application/x-chess-pgn", func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	})
}

// Exchange is one request and the response it got, as the validators take
// them. The request's body is Body (req.Body is not read).
type Exchange struct {
	Request *http.Request
	Body    []byte // the request body
	Status  int
	Header  http.Header // the response headers
	Answer  []byte      // the response body
}

// options are the validators' settings: undocumented statuses fail, and a
// security requirement is not checked (the handler does that; the tests
// check what it answers).
func options() *openapi3filter.Options {
	return &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            false,
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
}

// requestCopy is a fresh request with ex's method, URL, headers and body.
func (ex Exchange) requestCopy() *http.Request {
	r := ex.Request
	req, err := http.NewRequest(r.Method, "/", bytes.NewReader(ex.Body))
	if err != nil { // a method net/http refuses
		req = httptest.NewRequest(http.MethodGet, "/", bytes.NewReader(ex.Body))
		req.Method = r.Method
	}
	u := *r.URL
	req.URL, req.Host = &u, r.Host
	req.Header = r.Header.Clone()
	if len(ex.Body) == 0 {
		req.Body = http.NoBody
	}
	return req
}

// route finds the operation of a request: ok false with err nil when the
// path is no route (notFound) or the method is not served there.
func (s *Spec) route(req *http.Request) (route *routers.Route, params map[string]string, special string, err error) {
	route, params, err = s.router.FindRoute(req)
	switch {
	case err == nil:
		return route, params, "", nil
	case errors.Is(err, routers.ErrMethodNotAllowed) || err.Error() == routers.ErrMethodNotAllowed.Error():
		return nil, nil, MethodNotAllowed, nil
	case errors.Is(err, routers.ErrPathNotFound) || err.Error() == routers.ErrPathNotFound.Error():
		// The router tells a wrong method only on literal paths: try the
		// path with the methods the document uses.
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if m == req.Method {
				continue
			}
			other := req.Clone(req.Context())
			other.Method = m
			if _, _, err := s.router.FindRoute(other); err == nil {
				return nil, nil, MethodNotAllowed, nil
			}
		}
		return nil, nil, RouteNotFound, nil
	}
	return nil, nil, "", err
}

// ValidateResponse checks that ex's response is one openapi.yaml allows for
// its request: a documented status of the operation, with the documented
// headers and a body of the documented media type and schema. A request to
// no operation must get the RouteNotFound or MethodNotAllowed response.
func (s *Spec) ValidateResponse(ex Exchange) error {
	req := ex.requestCopy()
	route, params, special, err := s.route(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	if special != "" {
		return s.validateSpecial(special, ex)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: options()},
		Status:                 ex.Status,
		Header:                 ex.Header,
		Options:                options(),
	}
	answer, err := Decoded(ex.Header, ex.Answer)
	if err != nil {
		return fmt.Errorf("%s %s → %d: %w", req.Method, req.URL.RequestURI(), ex.Status, err)
	}
	in.SetBodyBytes(answer)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s → %d (operation %s): %w\nbody: %s", req.Method, req.URL.RequestURI(), ex.Status, route.Operation.OperationID, err, clip(answer))
	}
	return nil
}

// Decoded is an answer's body without its Content-Encoding (gzip: SPEC
// §16.1 compresses answers of 1 KB or more for clients that accept it).
func Decoded(header http.Header, body []byte) ([]byte, error) {
	switch enc := header.Get("Content-Encoding"); enc {
	case "":
		return body, nil
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("gzip answer: %w", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("gzip answer: %w", err)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("answer with Content-Encoding %q", enc)
	}
}

// APIGatewayBody is the body of a function's answer as the client gets it
// decoded: base64 undone (API Gateway sends the bytes), then gzip.
func APIGatewayBody(resp events.APIGatewayV2HTTPResponse) ([]byte, error) {
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return nil, fmt.Errorf("response body: %w", err)
		}
	}
	header := http.Header{}
	for k, v := range resp.Headers {
		header.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			header.Add(k, v)
		}
	}
	return Decoded(header, body)
}

// validateSpecial checks an answer to a request that matches no operation
// against the named response of components.
func (s *Spec) validateSpecial(name string, ex Exchange) error {
	want := map[string]int{RouteNotFound: http.StatusNotFound, MethodNotAllowed: http.StatusMethodNotAllowed}[name]
	req := ex.Request
	if ex.Status != want {
		return fmt.Errorf("%s %s matches no operation of %s: status %d; want %d (components.responses.%s)\nbody: %s",
			req.Method, req.URL.Path, FileName, ex.Status, want, name, clip(ex.Answer))
	}
	ref := s.Doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("%s has no components.responses.%s", FileName, name)
	}
	// Validate through a synthetic operation that answers only this.
	responses := openapi3.NewResponses()
	responses.Delete("default")
	responses.Set(fmt.Sprint(want), ref)
	op := &openapi3.Operation{OperationID: name, Responses: responses}
	route := &routers.Route{Spec: s.Doc, Path: req.URL.Path, Method: req.Method, Operation: op, PathItem: &openapi3.PathItem{}}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: ex.requestCopy(), Route: route, Options: options()},
		Status:                 ex.Status,
		Header:                 ex.Header,
		Options:                options(),
	}
	in.SetBodyBytes(ex.Answer)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s → %d (components.responses.%s): %w\nbody: %s", req.Method, req.URL.Path, ex.Status, name, err, clip(ex.Answer))
	}
	return nil
}

// ValidateRequest checks that ex's request is one openapi.yaml describes: a
// documented operation with valid path and query parameters, headers and
// body. (Security requirements are not checked.)
func (s *Spec) ValidateRequest(ex Exchange) error {
	req := ex.requestCopy()
	route, params, special, err := s.route(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	if special != "" {
		return fmt.Errorf("%s %s is no operation of %s (%s)", req.Method, req.URL.Path, FileName, special)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: options()}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s (operation %s): %w\nbody: %s", req.Method, req.URL.RequestURI(), route.Operation.OperationID, err, clip(ex.Body))
	}
	return nil
}

// Operation returns the operation id a request goes to ("" for none).
func (s *Spec) Operation(req *http.Request) string {
	route, _, _, err := s.route(req)
	if err != nil || route == nil {
		return ""
	}
	return route.Operation.OperationID
}

// HTTPRequest turns an API Gateway HTTP API (payload 2.0) event into the
// request the API handler sees, with its body: what the Lambda adapter
// does, for validating requests and responses of events.
func HTTPRequest(ev events.APIGatewayV2HTTPRequest) (*http.Request, []byte, error) {
	body := []byte(ev.Body)
	if ev.IsBase64Encoded {
		// A body that is not its claimed base64 (the adapter answers
		// invalid_body) stays as written.
		if b, err := base64.StdEncoding.DecodeString(ev.Body); err == nil {
			body = b
		}
	}
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	if stage := ev.RequestContext.Stage; stage != "" && stage != "$default" {
		if rest, ok := strings.CutPrefix(path, "/"+stage); ok && (rest == "" || strings.HasPrefix(rest, "/")) {
			path = "/" + strings.TrimPrefix(rest, "/")
		}
	}
	uri := path
	if ev.RawQueryString != "" {
		uri += "?" + ev.RawQueryString
	}
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		method, _, _ = strings.Cut(ev.RouteKey, " ")
	}
	req, err := http.NewRequest(method, uri, bytes.NewReader(body))
	if err != nil {
		// A path that is no valid URI (the adapter answers invalid_path):
		// route it as written, so its answer is still validated.
		req, err = http.NewRequest(method, "/", bytes.NewReader(body))
		if err != nil {
			return nil, nil, fmt.Errorf("event request %s %s: %w", method, uri, err)
		}
		req.URL = &url.URL{Path: path, RawQuery: ev.RawQueryString}
	}
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	if len(ev.Cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	return req, body, nil
}

// APIGatewayExchange is an event and the function's answer as an Exchange.
func APIGatewayExchange(ev events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse) (Exchange, error) {
	req, body, err := HTTPRequest(ev)
	if err != nil {
		return Exchange{}, err
	}
	header := http.Header{}
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			header.Add(k, v)
		}
	}
	for k, v := range resp.Headers {
		if header.Get(k) == "" {
			header.Set(k, v)
		}
	}
	answer := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if answer, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return Exchange{}, fmt.Errorf("response body: %w", err)
		}
	}
	return Exchange{Request: req, Body: body, Status: resp.StatusCode, Header: header, Answer: answer}, nil
}

// ValidateAPIGateway validates the function's answer to an API Gateway
// event against openapi.yaml.
func (s *Spec) ValidateAPIGateway(ev events.APIGatewayV2HTTPRequest, resp events.APIGatewayV2HTTPResponse) error {
	ex, err := APIGatewayExchange(ev, resp)
	if err != nil {
		return err
	}
	return s.ValidateResponse(ex)
}

// clip shortens a body for an error message.
func clip(b []byte) string {
	const max = 2000
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// ValidateSchema validates a JSON document against a schema of
// components.schemas (the stream's messages, which no HTTP operation
// carries).
func (s *Spec) ValidateSchema(name string, data []byte) error {
	ref := s.Doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("%s has no components.schemas.%s", FileName, name)
	}
	var value any
	if err := json.Unmarshal(data, &value); err != nil {
		return fmt.Errorf("%s: not JSON: %w", name, err)
	}
	if err := ref.Value.VisitJSON(value, openapi3.EnableJSONSchema2020()); err != nil {
		return fmt.Errorf("%s: %w\nmessage: %s", name, err, clip(data))
	}
	return nil
}
