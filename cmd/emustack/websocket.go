package main

import (
	"chessapi/shared/lambdafn"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/coder/websocket"
)

// API Gateway WebSocket API limits emustack applies, as AWS does (the
// figures are in docs/operations.md with their sources).
const (
	// maxWSMessage is the largest message either way: 128 KB. A bigger
	// client message closes the connection (1009); a bigger
	// PostToConnection is refused (413 PayloadTooLargeException).
	maxWSMessage = 128 << 10
	// wsBillingUnit: messages are billed in 32 KB increments.
	wsBillingUnit = 32 << 10
)

// wsAPI is the WebSocket API of the template (StreamApi): each client
// message is routed by its "action" (RouteSelectionExpression
// $request.body.action) to the route's function; $connect decides whether
// the connection opens; $disconnect is told when it closes. The functions
// talk back through @connections (connectionsAPI).
type wsAPI struct {
	routes      map[string]*pool // route key → function
	counts      *counters
	log         io.Writer
	idleTimeout time.Duration
	maxDuration time.Duration
	// originSecret is added to every $connect as the edge adds it
	// (lambdafn.OriginVerifyHeader; "" adds nothing).
	originSecret string

	mu    sync.Mutex
	conns map[string]*wsConn
	wg    sync.WaitGroup // connections being served
}

// wsConn is one open connection.
type wsConn struct {
	id          string
	ws          *websocket.Conn
	sourceIP    string
	userAgent   string
	connectedAt time.Time
	lastActive  atomic.Int64 // unix ms
	idle        *time.Timer
	idleTimeout time.Duration
}

func newWSAPI(spec *stackSpec, pools map[string]*pool, counts *counters, log io.Writer, idle, maxDuration time.Duration) (*wsAPI, error) {
	a := &wsAPI{routes: map[string]*pool{}, counts: counts, log: log, idleTimeout: idle, maxDuration: maxDuration, conns: map[string]*wsConn{}}
	for _, r := range spec.StreamRoutes {
		a.routes[r.RouteKey] = pools[r.Function]
	}
	for _, key := range []string{"$connect", "$disconnect", "$default"} {
		if a.routes[key] == nil {
			return nil, fmt.Errorf("template: the WebSocket API has no %s route", key)
		}
	}
	return a, nil
}

// routeKey applies the route selection expression $request.body.action: a
// JSON object's string "action" that names a route, else $default (not
// JSON, no action, an action without a route; the $ routes cannot be
// selected by a message).
func (a *wsAPI) routeKey(body []byte) string {
	var msg struct {
		Action json.RawMessage `json:"action"`
	}
	if json.Unmarshal(body, &msg) != nil {
		return "$default"
	}
	var action string
	if json.Unmarshal(msg.Action, &action) != nil || action == "" || action[0] == '$' {
		return "$default"
	}
	if _, ok := a.routes[action]; !ok {
		return "$default"
	}
	return action
}

func (a *wsAPI) event(c *wsConn, routeKey, eventType string, now time.Time) events.APIGatewayWebsocketProxyRequest {
	return events.APIGatewayWebsocketProxyRequest{
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{
			RouteKey: routeKey, EventType: eventType, MessageDirection: "IN", Stage: streamStage,
			ConnectedAt: c.connectedAt.UnixMilli(), ConnectionID: c.id, APIID: "emustack", DomainName: "127.0.0.1",
			RequestID: newID(), ExtendedRequestID: newID(), RequestTime: now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			RequestTimeEpoch: now.UnixMilli(),
			Identity:         events.APIGatewayRequestIdentity{SourceIP: c.sourceIP, UserAgent: c.userAgent},
		},
	}
}

// invoke runs a route's function and returns its answer's status code (a
// function error or failure is 500, as API Gateway treats it).
func (a *wsAPI) invoke(ctx context.Context, routeKey string, ev events.APIGatewayWebsocketProxyRequest) int {
	payload, err := json.Marshal(ev)
	if err != nil {
		return http.StatusInternalServerError
	}
	res, err := a.routes[routeKey].invoke(ctx, payload)
	if err != nil || res.FunctionError != nil {
		fmt.Fprintf(a.log, "emustack: stream route %s of %s: %v %v\n", routeKey, ev.RequestContext.ConnectionID, err, res.FunctionError)
		return http.StatusInternalServerError
	}
	var resp events.APIGatewayProxyResponse
	if json.Unmarshal(res.Payload, &resp) != nil || resp.StatusCode == 0 {
		return http.StatusOK // a result without a status: API Gateway treats the route as answered
	}
	return resp.StatusCode
}

// ServeHTTP is the WebSocket upgrade: $connect first, the connection only
// if it answers 2xx (else the handshake gets its status, as on AWS).
func (a *wsAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.wg.Add(1)
	defer a.wg.Done()
	now := time.Now()
	c := &wsConn{id: newID() + "=", connectedAt: now, userAgent: r.UserAgent(), idleTimeout: a.idleTimeout}
	c.sourceIP = r.RemoteAddr
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		c.sourceIP = host
	}
	ev := a.event(c, "$connect", "CONNECT", now)
	ev.Headers, ev.MultiValueHeaders = map[string]string{"Host": r.Host}, map[string][]string{"Host": {r.Host}}
	for k, vs := range r.Header {
		ev.Headers[k] = vs[len(vs)-1]
		ev.MultiValueHeaders[k] = vs
	}
	if a.originSecret != "" {
		ev.Headers[lambdafn.OriginVerifyHeader] = a.originSecret
		ev.MultiValueHeaders[lambdafn.OriginVerifyHeader] = []string{a.originSecret}
	}
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters, ev.MultiValueQueryStringParameters = map[string]string{}, map[string][]string{}
		for k, vs := range q {
			ev.QueryStringParameters[k] = vs[len(vs)-1]
			ev.MultiValueQueryStringParameters[k] = vs
		}
	}
	a.counts.event("apigw-ws:ConnectRequests", 1)
	if status := a.invoke(r.Context(), "$connect", ev); status < 200 || status > 299 {
		a.counts.event("apigw-ws:ConnectsRefused", 1)
		http.Error(w, http.StatusText(status), status)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// API Gateway checks no Origin; browsers' CSRF concerns do not
		// apply to a token-authenticated API.
		InsecureSkipVerify: true,
	})
	if err != nil {
		a.disconnect(c, websocket.StatusAbnormalClosure, "handshake failed")
		return
	}
	ws.SetReadLimit(maxWSMessage)
	c.ws = ws
	c.lastActive.Store(now.UnixMilli())
	// The connection's life: at most maxDuration, and it ends after
	// idleTimeout without a message either way. The timer exists before
	// the connection is published: posts reset it.
	ctx, cancel := context.WithTimeout(context.Background(), a.maxDuration)
	defer cancel()
	c.idle = time.AfterFunc(a.idleTimeout, func() {
		a.counts.event("apigw-ws:IdleClosed", 1)
		ws.Close(websocket.StatusGoingAway, "idle timeout")
		cancel()
	})
	defer c.idle.Stop()
	a.mu.Lock()
	a.conns[c.id] = c
	a.mu.Unlock()
	a.counts.event("apigw-ws:Connections", 1)

	status, reason := websocket.StatusNormalClosure, "Client closed"
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			switch {
			case websocket.CloseStatus(err) != -1:
				status, reason = websocket.CloseStatus(err), "Client closed"
			case errors.Is(ctx.Err(), context.DeadlineExceeded):
				status, reason = websocket.StatusGoingAway, "Going away"
				a.counts.event("apigw-ws:MaxDurationClosed", 1)
				ws.Close(status, "connection duration limit")
			default:
				status, reason = websocket.StatusAbnormalClosure, err.Error()
			}
			break
		}
		c.active()
		a.counts.event("apigw-ws:MessagesIn", 1)
		a.counts.event("apigw-ws:BilledMessages", int64(billedWSMessages(len(data))))
		key := a.routeKey(data)
		mev := a.event(c, key, "MESSAGE", time.Now())
		mev.RequestContext.MessageID = newID()
		mev.Body = string(data)
		a.invoke(ctx, key, mev)
	}
	a.disconnect(c, status, reason)
}

// disconnect forgets a connection and tells $disconnect, as API Gateway
// does (best effort: its answer changes nothing).
func (a *wsAPI) disconnect(c *wsConn, status websocket.StatusCode, reason string) {
	a.mu.Lock()
	_, open := a.conns[c.id]
	delete(a.conns, c.id)
	a.mu.Unlock()
	if open {
		a.counts.event("apigw-ws:ConnectionMs", time.Since(c.connectedAt).Milliseconds())
	}
	ev := a.event(c, "$disconnect", "DISCONNECT", time.Now())
	ev.RequestContext.DisconnectStatusCode = int64(status)
	ev.RequestContext.DisconnectReason = &reason
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a.invoke(ctx, "$disconnect", ev)
}

func (c *wsConn) active() {
	c.lastActive.Store(time.Now().UnixMilli())
	if c.idle != nil {
		c.idle.Reset(c.idleTimeout)
	}
}

// connection returns an open connection.
func (a *wsAPI) connection(id string) (*wsConn, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.conns[id]
	return c, ok
}

// closeAll closes every connection (shutdown) and waits for their
// $disconnect.
func (a *wsAPI) closeAll() {
	a.mu.Lock()
	conns := make([]*wsConn, 0, len(a.conns))
	for _, c := range a.conns {
		conns = append(conns, c)
	}
	a.mu.Unlock()
	for _, c := range conns {
		c.ws.Close(websocket.StatusGoingAway, "server shutting down")
	}
	a.wg.Wait()
}

// billedWSMessages is how many messages API Gateway bills for one of n
// bytes: one per started 32 KB.
func billedWSMessages(n int) int {
	return max(1, (n+wsBillingUnit-1)/wsBillingUnit)
}

// streamStage is the WebSocket API's stage (template.yaml's StreamStage).
const streamStage = "v1"
