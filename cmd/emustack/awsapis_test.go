package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// testAPIs serves awsAPIs with the repository's template, a recording AI
// seat for asynchronous invokes, and a WebSocket API without functions
// (connections are registered by hand).
func testAPIs(t *testing.T) (*awsAPIs, *recordingFunction, *httptest.Server) {
	t.Helper()
	spec := repoSpec(t)
	counts := newCounters(func() map[string]int { return nil })
	seat := &recordingFunction{}
	async := newAsyncInvoker(context.Background(), map[string]invoker{"AiSeatFunction": seat}, counts, io.Discard, time.Millisecond)
	ws := &wsAPI{routes: map[string]*pool{}, counts: counts, log: io.Discard, idleTimeout: time.Hour, maxDuration: time.Hour, conns: map[string]*wsConn{}}
	apis := &awsAPIs{spec: spec, async: async, pools: map[string]*pool{}, ws: ws, counts: counts}
	srv := httptest.NewServer(apis)
	t.Cleanup(srv.Close)
	return apis, seat, srv
}

func send(t *testing.T, method, url, auth string, header map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(data)
}

func TestInvokeAPI(t *testing.T) {
	apis, seat, srv := testAPIs(t)
	path := "/2015-03-31/functions/chessapi-ai-seat/invocations"
	if code, _ := send(t, "POST", srv.URL+path, "", map[string]string{"X-Amz-Invocation-Type": "Event"}, []byte(`{"gameId":"g","version":2,"ply":1}`)); code != http.StatusAccepted {
		t.Fatalf("asynchronous invoke: %d; want 202", code)
	}
	apis.async.wait()
	if len(seat.payloads) != 1 || seat.payloads[0] != `{"gameId":"g","version":2,"ply":1}` {
		t.Errorf("the AI seat ran %v; want the payload once", seat.payloads)
	}
	if code, _ := send(t, "POST", srv.URL+"/2015-03-31/functions/nobody/invocations", "", map[string]string{"X-Amz-Invocation-Type": "Event"}, nil); code != http.StatusNotFound {
		t.Errorf("unknown function: %d; want 404", code)
	}
	if code, _ := send(t, "POST", srv.URL+path, "", map[string]string{"X-Amz-Invocation-Type": "Sometimes"}, nil); code != http.StatusBadRequest {
		t.Errorf("bad invocation type: %d; want 400", code)
	}
	if code, _ := send(t, "POST", srv.URL+path, "", map[string]string{"X-Amz-Invocation-Type": "DryRun"}, nil); code != http.StatusNoContent {
		t.Errorf("dry run: %d; want 204", code)
	}
	if code, _ := send(t, "GET", srv.URL+"/elsewhere", "", nil, nil); code != http.StatusNotFound {
		t.Errorf("another path: %d; want 404", code)
	}
	if c := apis.counts.take(false); c.AWSCalls["lambda:Invoke(Event)"] != 2 || c.Platform["lambda:AsyncEvents"] != 1 {
		t.Errorf("counts %v %v", c.AWSCalls, c.Platform)
	}
}

// TestConnectionsAPI: posts reach the client; unsigned requests, unknown
// connections and messages over 128 KB are refused as API Gateway does;
// DELETE closes the connection.
func TestConnectionsAPI(t *testing.T) {
	apis, _, srv := testAPIs(t)
	accepted := make(chan *websocket.Conn, 1)
	wsSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		accepted <- ws
		<-r.Context().Done()
	}))
	defer wsSrv.Close()
	ctx := context.Background()
	client, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(wsSrv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.CloseNow()
	client.SetReadLimit(1 << 20)
	server := <-accepted
	c := &wsConn{id: "conn-1=", ws: server, connectedAt: time.Now(), idleTimeout: time.Hour}
	apis.ws.conns[c.id] = c

	signed := "AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/execute-api/aws4_request, SignedHeaders=host, Signature=0"
	url := srv.URL + "/v1/@connections/conn-1%3D"
	// An unsigned request is refused before it is an API call: not counted.
	if code, _ := send(t, "POST", url, "", nil, []byte(`{"type":"pong"}`)); code != http.StatusForbidden {
		t.Errorf("unsigned post: %d; want 403", code)
	}
	if code, _ := send(t, "POST", srv.URL+"/v1/@connections/other", signed, nil, []byte(`{}`)); code != http.StatusGone {
		t.Errorf("post to an unknown connection: %d; want 410", code)
	}
	if code, _ := send(t, "POST", url, signed, nil, bytes.Repeat([]byte("x"), maxWSMessage+1)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("post over 128 KB: %d; want 413", code)
	}
	if code, body := send(t, "POST", url, signed, nil, []byte(`{"type":"pong"}`)); code != http.StatusOK {
		t.Fatalf("post: %d %s; want 200", code, body)
	}
	readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, data, err := client.Read(readCtx); err != nil || string(data) != `{"type":"pong"}` {
		t.Errorf("the client read %q, %v; want the posted message", data, err)
	}
	if code, _ := send(t, "GET", url, signed, nil, nil); code != http.StatusOK {
		t.Errorf("GET connection: %d; want 200", code)
	}
	if code, _ := send(t, "DELETE", url, signed, nil, nil); code != http.StatusNoContent {
		t.Errorf("DELETE connection: %d; want 204", code)
	}
	if _, _, err := client.Read(readCtx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after DELETE the client read %v; want a normal closure", err)
	}
	counts := apis.counts.take(false)
	if counts.AWSCalls["execute-api:PostToConnection"] != 3 || counts.Platform["apigw-ws:MessagesOut"] != 1 ||
		counts.Platform["apigw-ws:PostsTooLarge"] != 1 || counts.Platform["apigw-ws:PostsGone"] != 1 {
		t.Errorf("counts %v %v", counts.AWSCalls, counts.Platform)
	}
}
