package lambdafn

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"runtime/debug"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"chessapi/shared/api"
	"chessapi/shared/obs"
)

// withRequest binds a request's ids to ctx for the log lines and the
// access line: the event's request id, Lambda's, the route and the game
// (when known).
func (a *App) withRequest(ctx context.Context, requestID, route, gameID string) context.Context {
	info := obs.RequestInfo{RequestID: requestID, Route: route, GameID: gameID}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		info.LambdaRequestID = lc.AwsRequestID
	}
	return obs.WithLogger(obs.WithRequest(ctx, info), a.log)
}

// defaultStage is the HTTP API stage whose URLs carry no stage prefix.
const defaultStage = "$default"

// HandleHTTP answers one API Gateway HTTP API (payload 2.0) request through
// the API handler. It always answers HTTP: the error result is always nil,
// because a Lambda error would reach the client as API Gateway's bare 500
// "Internal Server Error" instead of the API's JSON error. A request the
// adapter cannot turn into an http.Request is the caller's fault (400); a
// response it cannot build is ours (500), or 503 when the function ran out
// of time.
func (a *App) HandleHTTP(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (resp events.APIGatewayV2HTTPResponse, _ error) {
	// The request's ids (API Gateway's, which a client cannot forge, and
	// Lambda's) on every log line of the request (shared/obs).
	ctx = a.withRequest(ctx, ev.RequestContext.RequestID, ev.RouteKey, "")
	start := time.Now()
	// fail answers without the handler; its middleware never sees these
	// answers, so they are counted in the request metrics here.
	fail := func(err error) events.APIGatewayV2HTTPResponse {
		r := errorResponse(ev, err)
		a.metrics.Request(r.StatusCode, time.Since(start))
		return r
	}
	if a.httpProxy == nil {
		a.log.ErrorContext(ctx, "HTTP event sent to a function that serves no HTTP", "routeKey", ev.RouteKey)
		return fail(api.ErrInternal), nil
	}
	defer func() {
		// The API handler recovers its own panics; this catches the
		// adapter's, so even those become an HTTP answer.
		if v := recover(); v != nil {
			a.log.ErrorContext(ctx, "panic in the API Gateway adapter", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			resp = fail(api.ErrInternal)
		}
	}()
	if !a.fromTheEdge(ev.Headers) {
		a.log.WarnContext(ctx, "request refused: it did not come through the edge", "routeKey", ev.RouteKey, "sourceIp", ev.RequestContext.HTTP.SourceIP)
		r := edgeRefusal(ev)
		a.metrics.Request(r.StatusCode, time.Since(start))
		return r, nil
	}
	ev = StripStage(ev)
	if err := checkRequest(ev); err != nil {
		a.log.InfoContext(ctx, "malformed API Gateway request", "routeKey", ev.RouteKey, "path", ev.RawPath, "err", err)
		return fail(err), nil
	}
	resp, err := a.httpProxy.ProxyWithContext(ctx, ev)
	if err != nil {
		// The handler wrote nothing: it stops answering only when the
		// request's context is done (here: the function's deadline).
		if ctx.Err() != nil {
			a.log.WarnContext(ctx, "request ran out of time", "routeKey", ev.RouteKey, "err", ctx.Err())
			return fail(api.ErrUnavailable), nil
		}
		a.log.ErrorContext(ctx, "API Gateway adapter failed", "routeKey", ev.RouteKey, "err", err)
		return fail(api.ErrInternal), nil
	}
	return resp, nil
}

// StripStage removes a named stage from the front of the request's path: an
// HTTP API's rawPath carries it ("/prod/v1/health" on stage "prod") while the
// routes do not. The $default stage has no prefix. Only a whole leading
// segment is removed ("/production/..." keeps its path on stage "prod").
func StripStage(ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPRequest {
	stage := ev.RequestContext.Stage
	if stage == "" || stage == defaultStage {
		return ev
	}
	prefix := "/" + stage
	strip := func(p string) string {
		if p == prefix {
			return "/"
		}
		if rest, ok := strings.CutPrefix(p, prefix+"/"); ok {
			return "/" + rest
		}
		return p
	}
	ev.RawPath = strip(ev.RawPath)
	ev.RequestContext.HTTP.Path = strip(ev.RequestContext.HTTP.Path)
	return ev
}

// checkRequest finds what would make the adapter fail to build the
// http.Request from the client's input: a body that is not the base64 it
// claims to be, or a path and query that are not a valid request URI.
func checkRequest(ev events.APIGatewayV2HTTPRequest) error {
	if ev.IsBase64Encoded {
		if _, err := base64.StdEncoding.DecodeString(ev.Body); err != nil {
			return api.ErrBadBody
		}
	}
	path := ev.RawPath
	if path == "" {
		path = ev.RequestContext.HTTP.Path
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	uri := path
	if ev.RawQueryString != "" {
		uri += "?" + ev.RawQueryString
	}
	if _, err := url.ParseRequestURI(uri); err != nil {
		return api.ErrBadPath
	}
	return nil
}

// errorResponse is the API's JSON error for err, worded in the request's
// language by the edge's one error table.
func errorResponse(ev events.APIGatewayV2HTTPRequest, err error) events.APIGatewayV2HTTPResponse {
	status, body, lang := api.ErrorJSON(err, header(ev.Headers, "accept-language"))
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store", "Content-Language": lang},
		Body:       string(body),
	}
}
