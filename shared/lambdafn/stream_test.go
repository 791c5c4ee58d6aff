package lambdafn

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"chessapi/deploy"
	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/shared/chess"
	"chessapi/shared/push"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// recordingPoster stands in for the @connections API: it keeps what was
// posted to each connection; connections in gone answer 410, those in
// failing a server error.
type recordingPoster struct {
	mu        sync.Mutex
	endpoints []string
	posts     map[string][]postedMessage
	gone      map[string]bool
	failing   map[string]bool
}

type postedMessage struct {
	Type    string      `json:"type"`
	GameID  string      `json:"gameId"`
	Version int64       `json:"version"`
	Events  []eventJSON `json:"events"`
	Game    *viewJSON   `json:"game"`
	Missed  []struct {
		Version int64 `json:"version"`
	} `json:"missed"`
	Delta *struct {
		Move *struct {
			UCI string `json:"uci"`
		} `json:"move"`
	} `json:"delta"`
	Code    string          `json:"code"`
	Message string          `json:"message"`
	Raw     json.RawMessage `json:"-"`
}

func newRecordingPoster() *recordingPoster {
	return &recordingPoster{posts: map[string][]postedMessage{}, gone: map[string]bool{}, failing: map[string]bool{}}
}

func (p *recordingPoster) poster(endpoint string) (push.Poster, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endpoints = append(p.endpoints, endpoint)
	return p, nil
}

func (p *recordingPoster) Post(_ context.Context, connID string, data []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gone[connID] {
		return push.ErrGone
	}
	if p.failing[connID] {
		return errors.New("500 internal error")
	}
	var m postedMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	m.Raw = data
	p.posts[connID] = append(p.posts[connID], m)
	return nil
}

// take returns and forgets what was posted to conn.
func (p *recordingPoster) take(conn string) []postedMessage {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.posts[conn]
	delete(p.posts, conn)
	return out
}

// streamFixture is the stream and fan-out functions wired on the fixture's
// games store, a data table on moto and a recording poster.
type streamFixture struct {
	*fixture
	data   push.Connections // the data table's, as the functions see it
	poster *recordingPoster
	stream *App
	fanout *App
}

func newStreamFixture(t *testing.T) *streamFixture {
	t.Helper()
	if testing.Short() {
		t.Skip("the data table runs on moto; skipped with -short")
	}
	moto := emulatortest.StartMoto(t)
	data, err := dynamostore.NewData(dynamodb.NewFromConfig(emulator.Config(moto)), emulatortest.NewDataTable(t, moto))
	if err != nil {
		t.Fatal(err)
	}
	f := &streamFixture{fixture: newFixture(t, ""), data: StreamConnections(data), poster: newRecordingPoster()}
	deps := Deps{Config: service.Config{Store: f.store, Now: f.clock.Now}, Connections: f.data, NewPoster: f.poster.poster}
	if f.stream, err = NewApp(Config{Function: Stream}, deps); err != nil {
		t.Fatal(err)
	}
	deps.Scheduler, deps.AITrigger = f.sched, f.trigger
	if f.fanout, err = NewApp(Config{Function: Fanout, StreamEndpoint: "https://stand-in.example/v1"}, deps); err != nil {
		t.Fatal(err)
	}
	return f
}

// ws sends a stream event file to the stream function.
func (f *streamFixture) ws(t *testing.T, ev deploy.Event) events.APIGatewayProxyResponse {
	t.Helper()
	if ev.Name == "" {
		t.Fatal("no such event file")
	}
	sentMu.Lock()
	sentFiles[ev.Name] = true
	sentMu.Unlock()
	var req events.APIGatewayWebsocketProxyRequest
	if err := json.Unmarshal(ev.Raw, &req); err != nil {
		t.Fatal(err)
	}
	resp, err := f.stream.HandleWebSocket(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", ev.Name, err)
	}
	return resp
}

// connOf is the connection id of a stream event file.
func connOf(ev deploy.Event) string { return ev.WebSocket.RequestContext.ConnectionID }

// TestStreamEvents replays events/stream and events/fanout: white connects
// with a header token, black with ?token=, a spectator with none; all
// subscribe to the sample game (each seat's subscription connects it: a
// version each); the change stream's record of 1. e4 (a record stored
// before deltas: its delta is made from the record's old image) then
// reaches each with its own delta, and the commit's effects run (black's
// first-move timer). Ping, an unknown action, a malformed token and a
// disconnect (white's seat is then disconnected) follow.
func TestStreamEvents(t *testing.T) {
	f := newStreamFixture(t)
	evs := loadEvents(t)
	sample := seedSample(t, f.fixture, true)
	white, black, spectator := connOf(evs["stream/connect-white.json"]), connOf(evs["stream/connect-query-token-black.json"]), connOf(evs["stream/connect-spectator.json"])

	for _, name := range []string{"connect-white.json", "connect-query-token-black.json", "connect-spectator.json"} {
		if resp := f.ws(t, evs["stream/"+name]); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s; want 200", name, resp.StatusCode, resp.Body)
		}
	}
	if resp := f.ws(t, evs["stream/connect-bad-token.json"]); resp.StatusCode != 401 || !strings.Contains(resp.Body, "invalid_token") {
		t.Errorf("connect-bad-token: %d %s; want 401 invalid_token (the connection is refused)", resp.StatusCode, resp.Body)
	}
	// Answers go to the stage the events came from.
	if got := f.poster.endpoints; len(got) != 1 || got[0] != "https://w7k2q9x4ab.execute-api.us-east-1.amazonaws.com/v1" {
		t.Errorf("poster endpoints = %q; want the events' stage", got)
	}

	for _, tc := range []struct {
		file, conn string
		you        *chess.Color
		version    int64
	}{
		{"subscribe-white.json", white, ptr(chess.White), sample.Version + 1},
		{"subscribe-black.json", black, ptr(chess.Black), sample.Version + 2},
		{"subscribe-spectator-after-version.json", spectator, nil, sample.Version + 2},
	} {
		f.ws(t, evs["stream/"+tc.file])
		got := f.poster.take(tc.conn)
		if len(got) != 1 || got[0].Type != "subscribed" || got[0].Version != tc.version || got[0].Game == nil {
			t.Fatalf("%s: posted %+v; want subscribed at version %d with the view", tc.file, got, tc.version)
		}
		if you := got[0].Game.You; (you == nil) != (tc.you == nil) || you != nil && *you != tc.you.String() {
			t.Errorf("%s: view for %s; want %v", tc.file, deref(you), tc.you)
		}
		if tc.conn == spectator {
			// afterVersion 1: the events of the join (2) and of both
			// seats connecting (3, 4).
			if m := got[0].Missed; len(m) != 3 || m[0].Version != 2 || m[2].Version != 4 {
				t.Errorf("spectator catch-up = %+v; want versions 2 to 4", m)
			}
		}
	}

	// The change stream delivers the record of white's 1. e4 (version 3).
	var batch events.DynamoDBEvent
	if err := json.Unmarshal(sent(evs, "fanout/commit-e4.json").Raw, &batch); err != nil {
		t.Fatal(err)
	}
	resp, err := f.fanout.HandleStreamRecords(context.Background(), batch)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("fan-out of commit-e4.json: %+v, %v; want every record done", resp, err)
	}
	for conn, want := range map[string]struct {
		you   string
		legal bool
	}{white: {"white", false}, black: {"black", true}, spectator: {"<nil>", false}} {
		got := f.poster.take(conn)
		if len(got) != 1 || got[0].Type != "change" || got[0].Version != 3 || got[0].Delta == nil {
			t.Fatalf("posted to %s after the fan-out: %+v; want one change of version 3 with its delta", conn, got)
		}
		m := got[0]
		var raw struct {
			Delta map[string]json.RawMessage `json:"delta"`
		}
		if err := json.Unmarshal(m.Raw, &raw); err != nil {
			t.Fatal(err)
		}
		lm, present := raw.Delta["legalMoves"]
		listed := present && string(lm) != "null"
		if m.Delta.Move == nil || m.Delta.Move.UCI != "e2e4" || listed != want.legal || (want.you == "white") != (present && !listed) {
			t.Errorf("%s: delta %s; want the move e2e4, legal moves only for the side to move (null for the one that moved)", conn, m.Raw)
		}
		if len(m.Events) == 0 || m.Events[0].Type != "moved" || m.Events[0].UCI != "e2e4" {
			t.Errorf("%s: events %+v; want the move's events", conn, m.Events)
		}
	}
	// The commit's effect: black's first-move deadline is scheduled.
	if tasks := f.sched.Tasks(); len(tasks) != 1 || tasks[0].GameID != deploy.SampleGameID || tasks[0].Version != 3 {
		t.Errorf("scheduled after the fan-out: %+v; want the game's timer for version 3", tasks)
	}
	// At-least-once delivery: the same record again posts version 3 again
	// (clients drop versions they have) and schedules nothing new.
	if _, err := f.fanout.HandleStreamRecords(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if got := f.poster.take(white); len(got) != 1 || got[0].Version != 3 {
		t.Errorf("redelivery posted %+v to white; want version 3 once more", got)
	}

	f.ws(t, evs["stream/ping.json"])
	if got := f.poster.take(white); len(got) != 1 || got[0].Type != "pong" {
		t.Errorf("ping: posted %+v; want pong", got)
	}
	f.ws(t, evs["stream/unknown-action.json"])
	if got := f.poster.take(white); len(got) != 1 || got[0].Type != "error" || got[0].Code != "invalid_field" {
		t.Errorf("unknown action: posted %+v; want an invalid_field error", got)
	}
	f.ws(t, evs["stream/unsubscribe-spectator.json"])
	if subs, err := f.data.Subscribers(context.Background(), deploy.SampleGameID); err != nil || len(subs) != 2 {
		t.Errorf("subscribers after the spectator left: %+v, %v; want the two seats", subs, err)
	}

	// White's only connection closes: white's seat is disconnected.
	f.ws(t, evs["stream/disconnect-white.json"])
	st := stored(t, f.store, deploy.SampleGameID)
	if st.Seats[chess.White].Connected {
		t.Errorf("white after its last connection closed: %+v; want disconnected", st.Seats[chess.White])
	}
	if _, err := f.data.Connection(context.Background(), white); !errors.Is(err, push.ErrNoConnection) {
		t.Errorf("white's connection after $disconnect: %v; want it gone", err)
	}
}

// TestFanoutReportsFailedRecords: a record that cannot be done is reported
// with every record after it (a game's versions stay in order), the ones
// before it are not; a connection that is gone is dropped, not retried.
func TestFanoutReportsFailedRecords(t *testing.T) {
	f := newStreamFixture(t)
	evs := loadEvents(t)
	seedSample(t, f.fixture, true)
	for _, name := range []string{"connect-white.json", "subscribe-white.json", "connect-query-token-black.json", "subscribe-black.json"} {
		f.ws(t, evs["stream/"+name])
	}
	white, black := connOf(evs["stream/connect-white.json"]), connOf(evs["stream/connect-query-token-black.json"])
	f.poster.take(white)
	f.poster.take(black)

	var one events.DynamoDBEvent
	if err := json.Unmarshal(evs["fanout/commit-e4.json"].Raw, &one); err != nil {
		t.Fatal(err)
	}
	rec := one.Records[0]
	removed := rec
	removed.EventName, removed.Change.SequenceNumber = "REMOVE", "100"
	broken := rec
	broken.Change.SequenceNumber = "200"
	broken.Change.NewImage = map[string]events.DynamoDBAttributeValue{"gameId": events.NewStringAttribute("x")}
	later := rec
	later.Change.SequenceNumber = "300"
	batch := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{removed, rec, broken, later}}

	resp, err := f.fanout.HandleStreamRecords(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	var failed []string
	for _, it := range resp.BatchItemFailures {
		failed = append(failed, it.ItemIdentifier)
	}
	if !slices.Equal(failed, []string{"200", "300"}) {
		t.Errorf("failed items = %q; want the broken record and the one after it", failed)
	}
	if got := f.poster.take(white); len(got) != 1 {
		t.Errorf("white got %d messages; want the one change before the broken record", len(got))
	}

	// Black's connection is gone (410): dropped at the first post, and its
	// seat disconnected; a failing post fails the record.
	f.poster.mu.Lock()
	f.poster.gone[black] = true
	f.poster.failing[white] = true
	f.poster.mu.Unlock()
	resp, err = f.fanout.HandleStreamRecords(context.Background(), one)
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Errorf("fan-out with a failing post: %+v, %v; want the record reported for retry", resp, err)
	}
	if _, err := f.data.Connection(context.Background(), black); !errors.Is(err, push.ErrNoConnection) {
		t.Errorf("black's gone connection: %v; want it deleted", err)
	}
	if st := stored(t, f.store, deploy.SampleGameID); st.Seats[chess.Black].Connected {
		t.Error("black's seat stayed connected after its only connection was gone")
	}
}

func ptr[T any](v T) *T { return &v }
