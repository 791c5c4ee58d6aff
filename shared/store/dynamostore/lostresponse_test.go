package dynamostore_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// losingClient passes every request to the server but, for the PutItem
// calls it is told to, throws the server's answer away and reports a
// connection error instead: the write happened, the writer did not hear
// of it, and the SDK's retryer sends it again.
type losingClient struct {
	base *http.Client
	lose atomic.Int32 // PutItem answers still to lose
	lost atomic.Int32
}

func (c *losingClient) Do(r *http.Request) (*http.Response, error) {
	resp, err := c.base.Do(r)
	if err != nil || r.Header.Get("X-Amz-Target") != "DynamoDB_20120810.PutItem" || c.lose.Add(-1) < 0 {
		return resp, err
	}
	resp.Body.Close()
	c.lost.Add(1)
	return nil, errors.New("connection reset by peer (test: the answer to an applied PutItem is lost)")
}

// testLostResponse: a Create and an Update whose first attempt is applied
// but whose answer is lost succeed (the SDK's retry fails the condition
// against the writer's own item, and the store recognises it), while a
// stale Update after them is still a conflict.
func testLostResponse(t *testing.T, endpoint string) {
	ctx := context.Background()
	table := emulatortest.NewGamesTable(t, endpoint)
	client := &losingClient{base: &http.Client{}}
	cfg := emulator.Config(endpoint)
	cfg.HTTPClient = client
	s, err := dynamostore.NewFromConfig(cfg, table)
	if err != nil {
		t.Fatal(err)
	}
	rec := service.GameRecord{GameID: "lost1", Version: 1, State: []byte("v1")}
	client.lose.Store(1)
	if err := s.Create(ctx, rec); err != nil {
		t.Fatalf("Create whose answer was lost: %v; want success (the retry met the writer's own item)", err)
	}
	rec.Version, rec.State = 2, []byte("v2")
	client.lose.Store(1)
	if err := s.Update(ctx, rec, 1); err != nil {
		t.Fatalf("Update whose answer was lost: %v; want success", err)
	}
	if n := client.lost.Load(); n != 2 {
		t.Fatalf("%d answers lost; want 2 (the test did not exercise the retry)", n)
	}
	got, err := s.Get(ctx, rec.GameID)
	if err != nil || got.Version != 2 || string(got.State) != "v2" {
		t.Fatalf("Get = v%d %q, %v; want v2 \"v2\"", got.Version, got.State, err)
	}
	// Another writer's version is never taken for one's own.
	rec.Version, rec.State = 2, []byte("v2 again")
	if err := s.Update(ctx, rec, 1); !errors.Is(err, service.ErrVersionConflict) {
		t.Fatalf("stale Update: %v; want ErrVersionConflict", err)
	}
	if err := s.Create(ctx, service.GameRecord{GameID: "lost1", Version: 1, State: []byte("other")}); !errors.Is(err, service.ErrAlreadyExists) {
		t.Fatalf("second Create of the id: %v; want ErrAlreadyExists", err)
	}
}
