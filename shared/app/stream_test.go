package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"chessapi/shared/api"
	"chessapi/shared/app"
	"chessapi/shared/service"
	"chessapi/shared/store/boltstore"
)

// smallSendBuffers makes every accepted connection's kernel send buffer
// tiny, so a client that does not read stalls the server's writes at once
// (with the default buffers it takes megabytes).
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(2048)
	}
	return c, err
}

// TestStreamSlowClientDropped: a client that never reads is disconnected
// once its bounded buffer is full, while another subscriber of the same
// game keeps getting every change at once.
func TestStreamSlowClientDropped(t *testing.T) {
	store, err := boltstore.Open(filepath.Join(t.TempDir(), "games.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	wired, err := app.New(app.Config{Config: service.Config{Store: store}, Stream: true, StreamOptions: api.StreamOptions{SendBuffer: 4, WriteTimeout: 500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	defer wired.Service.Close(time.Second)
	srv := httptest.NewUnstartedServer(wired.Handler)
	srv.Listener = smallSendBuffers{srv.Listener}
	srv.Start()
	defer srv.Close()
	defer wired.Stream.Close()

	post := func(path, token string, body any) map[string]any {
		data, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", srv.URL+path, bytes.NewReader(data))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		return out
	}
	created := post("/v1/games", "", map[string]any{"options": map[string]any{"colorAssignment": "hostWhite"}})
	id, token := created["gameId"].(string), created["token"].(string)
	post("/v1/games/"+id+"/join", "", nil)

	dialer := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 2048) })
	}}
	wsURL := "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/stream"
	subscribe := []byte(`{"action":"subscribe","gameId":"` + id + `"}`)
	slow, _, err := websocket.Dial(context.Background(), wsURL, &websocket.DialOptions{HTTPClient: &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}})
	if err != nil {
		t.Fatal(err)
	}
	defer slow.CloseNow()
	slow.Write(context.Background(), websocket.MessageText, subscribe)

	fast, _, err := websocket.Dial(context.Background(), wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fast.CloseNow()
	fast.Write(context.Background(), websocket.MessageText, subscribe)
	read := func() map[string]any {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, data, err := fast.Read(ctx)
		if err != nil {
			t.Fatalf("fast subscriber: %v", err)
		}
		var m map[string]any
		json.Unmarshal(data, &m)
		return m
	}
	last := int64(read()["version"].(float64)) // subscribed
	for i := 0; i < 300; i++ {
		start := time.Now()
		post("/v1/games/"+id+"/presence", token, map[string]any{"connected": i%2 == 1})
		m := read()
		if v := int64(m["version"].(float64)); v != last+1 {
			t.Fatalf("fast subscriber got version %d after %d", v, last)
		}
		last++
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("change %d took %v to reach the fast subscriber", i, d)
		}
	}
	if n := wired.Stream.Connections(); n != 1 {
		t.Errorf("open connections = %d; want 1 (the slow client dropped)", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		if _, _, err := slow.Read(ctx); err != nil {
			// The server's close frame, when its buffer had room for it;
			// otherwise the connection simply ends (a client whose socket
			// is full cannot be sent a frame). Not a timeout: the server
			// must have let go.
			s := websocket.CloseStatus(err)
			closed := s == websocket.StatusPolicyViolation || s == websocket.StatusGoingAway ||
				errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
			if !closed || ctx.Err() != nil {
				t.Errorf("slow client ended with %v; want the server to have closed it", err)
			}
			break
		}
	}
}
