package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// awsAPIs are the AWS endpoints the functions call that moto does not
// stand in for here: Lambda's Invoke API (the AI trigger, asynchronous;
// AWS_ENDPOINT_URL_LAMBDA points here) and the WebSocket API's
// @connections management API (STREAM_ENDPOINT points here). Each call is
// counted with the AWS calls the proxy in front of moto counts.
type awsAPIs struct {
	spec   *stackSpec
	async  *asyncInvoker
	pools  map[string]*pool
	ws     *wsAPI
	counts *counters
	// throttled refuses every post with 429 (faults.go).
	throttled atomic.Bool
}

var (
	invokePath      = regexp.MustCompile(`^/2015-03-31/functions/([^/]+)/invocations$`)
	connectionsPath = regexp.MustCompile(`^/` + streamStage + `/@connections/([^/]+)$`)
)

func (a *awsAPIs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.EscapedPath()
	if m := invokePath.FindStringSubmatch(path); m != nil && r.Method == http.MethodPost {
		a.invoke(w, r, m[1])
		return
	}
	if m := connectionsPath.FindStringSubmatch(path); m != nil {
		a.connections(w, r, m[1])
		return
	}
	awsError(w, http.StatusNotFound, "UnknownOperationException", "emustack serves Lambda's Invoke and the WebSocket API's @connections here, not "+r.Method+" "+path)
}

// awsError answers as the AWS REST APIs do: an error type header and a
// JSON message.
func awsError(w http.ResponseWriter, status int, errType, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", errType)
	w.WriteHeader(status)
	data, _ := json.Marshal(map[string]string{"Type": "User", "message": message})
	w.Write(data)
}

// invoke is Lambda's Invoke API: Event queues the payload for the
// function's asynchronous invoker and answers 202; RequestResponse runs it
// and answers its result; DryRun only checks the function exists.
func (a *awsAPIs) invoke(w http.ResponseWriter, r *http.Request, escapedName string) {
	name, err := url.PathUnescape(escapedName)
	if err != nil {
		awsError(w, http.StatusBadRequest, "InvalidParameterValueException", "function name: "+err.Error())
		return
	}
	invocationType := r.Header.Get("X-Amz-Invocation-Type")
	if invocationType == "" {
		invocationType = "RequestResponse"
	}
	a.counts.call("lambda:Invoke(" + invocationType + ")")
	fn, ok := a.spec.functionByName(name)
	if !ok {
		awsError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+name)
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, maxInvokeBody+1))
	if err != nil {
		awsError(w, http.StatusBadRequest, "InvalidRequestContentException", err.Error())
		return
	}
	switch invocationType {
	case "Event":
		// Lambda's asynchronous payload limit is 1 MB (256 KB before
		// 2025); the AI tasks are a few dozen bytes.
		if len(payload) > 1<<20 {
			awsError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", "payload over 1 MB")
			return
		}
		a.async.enqueue(fn, payload, time.Now())
		w.WriteHeader(http.StatusAccepted)
	case "RequestResponse":
		if len(payload) > maxInvokeBody {
			awsError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException", "payload over 6 MB")
			return
		}
		res, err := a.pools[fn.LogicalID].invoke(r.Context(), payload)
		if err != nil {
			awsError(w, http.StatusInternalServerError, "ServiceException", err.Error())
			return
		}
		if res.FunctionError != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(res.Payload)
	case "DryRun":
		w.WriteHeader(http.StatusNoContent)
	default:
		awsError(w, http.StatusBadRequest, "InvalidParameterValueException", "X-Amz-Invocation-Type "+invocationType)
	}
}

// connections is the @connections API: POST sends a message to the
// connection, DELETE closes it, GET describes it. A connection that is not
// open is 410 GoneException, as on AWS. Requests must be SigV4-signed for
// execute-api (the signature itself is not checked: moto's credentials are
// dummies too).
func (a *awsAPIs) connections(w http.ResponseWriter, r *http.Request, escapedID string) {
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || !strings.Contains(auth, "/execute-api/aws4_request") {
		awsError(w, http.StatusForbidden, "ForbiddenException", "Missing Authentication Token")
		return
	}
	id, err := url.PathUnescape(escapedID)
	if err != nil {
		awsError(w, http.StatusBadRequest, "BadRequestException", "connection id: "+err.Error())
		return
	}
	switch r.Method {
	case http.MethodPost:
		a.counts.call("execute-api:PostToConnection")
		if a.throttledPost(w) {
			return
		}
		a.post(w, r, id)
	case http.MethodDelete:
		a.counts.call("execute-api:DeleteConnection")
		c, ok := a.ws.connection(id)
		if !ok {
			awsError(w, http.StatusGone, "GoneException", "connection "+id+" is gone")
			return
		}
		// API Gateway answers at once; the close handshake with the client
		// (up to 5 s) goes on behind.
		go c.ws.Close(websocket.StatusNormalClosure, "closed by the server")
		w.WriteHeader(http.StatusNoContent)
	case http.MethodGet:
		a.counts.call("execute-api:GetConnection")
		c, ok := a.ws.connection(id)
		if !ok {
			awsError(w, http.StatusGone, "GoneException", "connection "+id+" is gone")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"connectedAt":  c.connectedAt.UTC().Format(time.RFC3339),
			"lastActiveAt": time.UnixMilli(c.lastActive.Load()).UTC().Format(time.RFC3339),
			"identity":     map[string]string{"sourceIp": c.sourceIP, "userAgent": c.userAgent},
		})
	default:
		awsError(w, http.StatusMethodNotAllowed, "BadRequestException", r.Method+" on a connection")
	}
}

// postWriteTimeout bounds the write of one message to a client.
const postWriteTimeout = 5 * time.Second

func (a *awsAPIs) post(w http.ResponseWriter, r *http.Request, id string) {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxWSMessage+1))
	if err != nil {
		awsError(w, http.StatusBadRequest, "BadRequestException", err.Error())
		return
	}
	if len(data) > maxWSMessage {
		a.counts.event("apigw-ws:PostsTooLarge", 1)
		awsError(w, http.StatusRequestEntityTooLarge, "PayloadTooLargeException", "Message too long: over 128 KB")
		return
	}
	a.counts.event("apigw-ws:PostBytes", int64(len(data)))
	a.counts.maxEvent("apigw-ws:PostBytesMax", int64(len(data)))
	c, ok := a.ws.connection(id)
	if !ok {
		a.counts.event("apigw-ws:PostsGone", 1)
		awsError(w, http.StatusGone, "GoneException", "connection "+id+" is gone")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), postWriteTimeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, data); err != nil {
		a.counts.event("apigw-ws:PostsGone", 1)
		c.ws.CloseNow()
		awsError(w, http.StatusGone, "GoneException", "connection "+id+" is gone: "+err.Error())
		return
	}
	c.active()
	a.counts.event("apigw-ws:MessagesOut", 1)
	a.counts.event("apigw-ws:BilledMessages", int64(billedWSMessages(len(data))))
	w.WriteHeader(http.StatusOK)
}
