package asdeployed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"chessapi/deploy"
	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/infra/rie"
	"chessapi/infra/rie/rietest"
	"chessapi/internal/apispec"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/lambdafn"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// The functions' names and ARNs as the template makes them for a stack
// named "chessapi" (the ARNs only need to look right: moto stores them and
// the invokes go to the recorder).
const (
	stackName       = "chessapi"
	scheduleGroup   = stackName + "-deadlines"
	schedulerRole   = "arn:aws:iam::123456789012:role/chessapi-SchedulerInvokeRole"
	timeoutFunction = "arn:aws:lambda:us-east-1:123456789012:function:chessapi-timeout"
	aiFunction      = stackName + "-ai-seat" // AI_FUNCTION_NAME: the AI seats' function
)

// functionSpec is how the template configures one function.
type functionSpec struct {
	name     string // package under ./functions
	memoryMB int
	timeout  time.Duration
}

var (
	moveSpec    = functionSpec{"move", 512, 28 * time.Second}
	timeoutSpec = functionSpec{"timeout", 256, 10 * time.Second}
	aiSpec      = functionSpec{"ai", 1769, 15 * time.Second}
	streamSpec  = functionSpec{"stream", 256, 10 * time.Second}
	fanoutSpec  = functionSpec{"fanout", 512, 30 * time.Second}
	effectsSpec = functionSpec{"effects", 256, 30 * time.Second}
)

// The bootstraps are built once per test binary (building is the slow
// part), or taken from make's build-native output; see rietest.
func TestMain(m *testing.M) { rietest.Main(m) }

// stack is the deployed service, locally: moto for DynamoDB (with the games
// table's change stream) and the scheduler, behind a proxy that counts the
// functions' calls; recorders standing in for Lambda's Invoke API and the
// WebSocket API's @connections endpoint; and the functions under the
// emulator.
type stack struct {
	moto      string
	calls     *emulator.CallCounter // the functions reach moto through it
	table     string
	dataTable string
	db        *dynamodb.Client
	sched     *scheduler.Client
	store     *dynamostore.Store
	data      *dynamostore.Data
	changes   *emulator.ChangeStream
	invokes   *invokeRecorder
	conns     *connectionsRecorder
	// deadLetters is the stream consumers' dead-letter queue (moto's
	// SQS).
	deadLetters lambdafn.SQSQueue
	// timers records the effects function's sends to the deadline queue
	// (the functions reach SQS through it).
	timers *timerQueue
	// push are the SNS platform applications' variables (empty: none, as
	// the template's defaults), set by withPushApplications.
	push map[string]string
}

func newStack(t testing.TB) *stack {
	t.Helper()
	s := &stack{moto: emulatortest.StartMoto(t), invokes: &invokeRecorder{}, conns: newConnectionsRecorder()}
	s.calls = emulatortest.CountCalls(t, s.moto)
	s.table = emulatortest.NewGamesTable(t, s.moto)
	s.changes = emulatortest.EnableChangeStream(t, s.moto, s.table)
	s.dataTable = emulatortest.NewDataTable(t, s.moto)
	cfg := emulator.Config(s.moto)
	s.db = dynamodb.NewFromConfig(cfg)
	s.sched = scheduler.NewFromConfig(cfg)
	ctx := context.Background()
	if _, err := s.sched.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(scheduleGroup)}); err != nil {
		t.Fatalf("CreateScheduleGroup: %v", err)
	}
	store, err := dynamostore.New(s.db, s.table)
	if err != nil {
		t.Fatal(err)
	}
	s.store = store
	if s.data, err = dynamostore.NewData(s.db, s.dataTable); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.invokes)
	t.Cleanup(srv.Close)
	s.invokes.url = srv.URL
	conns := httptest.NewServer(s.conns)
	t.Cleanup(conns.Close)
	s.conns.url = conns.URL
	q, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(stackName + "-fanout-dlq")})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	s.deadLetters = lambdafn.SQSQueue{Client: sqs.NewFromConfig(cfg), URL: aws.ToString(q.QueueUrl)}
	dq, err := sqs.NewFromConfig(cfg).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(stackName + "-deadlines")})
	if err != nil {
		t.Fatalf("CreateQueue: %v", err)
	}
	counted, err := url.Parse(s.calls.URL)
	if err != nil {
		t.Fatal(err)
	}
	s.timers = &timerQueue{queueURL: aws.ToString(dq.QueueUrl), next: httputil.NewSingleHostReverseProxy(counted)}
	tq := httptest.NewServer(s.timers)
	t.Cleanup(tq.Close)
	s.timers.url = tq.URL
	return s
}

// timerQueue stands in front of SQS (then the counting proxy and moto):
// it records each SendMessage to the deadline queue and passes every
// request on. A delayed message cannot be read back before its delay, so
// the tests look at what was sent.
type timerQueue struct {
	url      string // where the functions reach SQS
	queueURL string // the deadline queue
	next     http.Handler

	mu   sync.Mutex
	sent []service.TimeoutTask
}

func (q *timerQueue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") == "AmazonSQS.SendMessage" {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
		var in struct {
			QueueURL    string `json:"QueueUrl"`
			MessageBody string `json:"MessageBody"`
		}
		var task service.TimeoutTask
		if err == nil && json.Unmarshal(body, &in) == nil && in.QueueURL == q.queueURL && json.Unmarshal([]byte(in.MessageBody), &task) == nil {
			q.mu.Lock()
			q.sent = append(q.sent, task)
			q.mu.Unlock()
		}
	}
	q.next.ServeHTTP(w, r)
}

// sentFor is the timers sent to the deadline queue for the game.
func (q *timerQueue) sentFor(gameID string) []service.TimeoutTask {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []service.TimeoutTask
	for _, t := range q.sent {
		if t.GameID == gameID {
			out = append(out, t)
		}
	}
	return out
}

// env is a function's environment as the template sets it (SPEC §10), with
// the SDK's endpoint overrides pointing at the emulators and dummy
// credentials (Lambda provides real ones through the same variables).
func (s *stack) env(spec functionSpec) map[string]string {
	env := map[string]string{
		"GAMES_TABLE":                s.table,
		"LOG_LEVEL":                  "DEBUG",
		"SCHEDULE_GROUP":             scheduleGroup,
		"SCHEDULER_ROLE_ARN":         schedulerRole,
		"TIMEOUT_FUNCTION_ARN":       timeoutFunction,
		"AWS_REGION":                 emulator.Region,
		"AWS_ACCESS_KEY_ID":          "test",
		"AWS_SECRET_ACCESS_KEY":      "test",
		"AWS_ENDPOINT_URL_DYNAMODB":  s.calls.URL,
		"AWS_ENDPOINT_URL_SCHEDULER": s.calls.URL,
		"AWS_ENDPOINT_URL_SQS":       s.timers.url,
		"AWS_ENDPOINT_URL_LAMBDA":    s.invokes.url,
	}
	switch spec.name {
	case "move", "timeout", "effects":
		// The push applications (SNS through the counting proxy).
		env["AWS_ENDPOINT_URL_SNS"] = s.calls.URL
		for _, k := range []string{"APNS_PLATFORM_APPLICATION_ARN", "APNS_SANDBOX_PLATFORM_APPLICATION_ARN", "FCM_PLATFORM_APPLICATION_ARN"} {
			env[k] = s.push[k]
		}
	}
	switch spec.name {
	case "move":
		env["AI_FUNCTION_NAME"] = aiFunction
		env["DATA_TABLE"] = s.dataTable
		env["STREAM_ENDPOINT"] = s.conns.url + "/" + streamStage
	case "timeout":
		env["AI_FUNCTION_NAME"] = aiFunction
		env["DATA_TABLE"] = s.dataTable
	case "ai":
		// Keys required (the template's default): the ones made in the
		// data table, and the sample events' key as the bootstrap key.
		env["DATA_TABLE"] = s.dataTable
		env["AI_API_KEY"] = deploy.SampleAIAPIKey
	case "stream":
		env["DATA_TABLE"] = s.dataTable
		env["STREAM_ENDPOINT"] = s.conns.url + "/" + streamStage
	case "fanout":
		env["DATA_TABLE"] = s.dataTable
		env["STREAM_ENDPOINT"] = s.conns.url + "/" + streamStage
		env["STREAM_DLQ_URL"] = s.deadLetters.URL
	case "effects":
		env["AI_FUNCTION_NAME"] = aiFunction
		env["DATA_TABLE"] = s.dataTable
		env["STREAM_DLQ_URL"] = s.deadLetters.URL
		env["DEADLINE_QUEUE_URL"] = s.timers.queueURL
	}
	return env
}

// consumers are the games table's stream's two consumers, as deployed:
// the push (fanout) and the after-write effects (effects).
type consumers struct {
	push, effects *rie.Function
}

func startConsumers(t testing.TB, s *stack) *consumers {
	t.Helper()
	return &consumers{push: start(t, fanoutSpec, s.env(fanoutSpec)), effects: start(t, effectsSpec, s.env(effectsSpec))}
}

// streamStage is the WebSocket API's stage (template.yaml's StreamStage).
const streamStage = "v1"

// pump does what Lambda's two event source mappings do for the games
// table's change stream: every record written since the last pump goes to
// each consumer, as one batch. It returns how many records there were and
// fails the test if a consumer reported any of them as failed.
func (s *stack) pump(t testing.TB, c *consumers) int {
	t.Helper()
	ev, err := s.changes.Next(context.Background())
	if err != nil {
		t.Fatalf("reading the change stream: %v", err)
	}
	if len(ev.Records) == 0 {
		return 0
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range []struct {
		name string
		f    *rie.Function
	}{{"fan-out", c.push}, {"effects", c.effects}} {
		res := invoke(t, fn.f, fn.name, payload)
		var resp events.DynamoDBEventResponse
		if err := json.Unmarshal(res.Payload, &resp); err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("%s of %d records: %s (%v); want every record done\nlog:\n%s", fn.name, len(ev.Records), res.Payload, err, strings.Join(res.Logs, "\n"))
		}
	}
	return len(ev.Records)
}

// start runs a function under the emulator with env; it stops with the test.
func start(t testing.TB, spec functionSpec, env map[string]string) *rie.Function {
	t.Helper()
	ctx, cancel := rietest.Context(t)
	defer cancel()
	f, err := rie.Start(ctx, rie.Options{
		Emulator:     rietest.Emulator(t),
		Bootstrap:    rietest.Bootstrap(t, "./functions/"+spec.name),
		FunctionName: stackName + "-" + spec.name,
		Timeout:      spec.timeout,
		MemoryMB:     spec.memoryMB,
		Env:          env,
	})
	if err != nil {
		t.Fatalf("start %s: %v", spec.name, err)
	}
	t.Cleanup(func() {
		if err := f.Close(); err != nil {
			t.Errorf("stop %s: %v", spec.name, err)
		}
	})
	return f
}

// invoke sends payload and fails the test on a transport error or a
// function error.
func invoke(t testing.TB, f *rie.Function, what string, payload []byte) rie.Result {
	t.Helper()
	res, err := f.Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("invoke %s: %v\nemulator log:\n%s", what, err, strings.Join(f.Logs(), "\n"))
	}
	if res.FunctionError != nil {
		t.Fatalf("invoke %s: function error %v\nlog:\n%s", what, res.FunctionError, strings.Join(res.Logs, "\n"))
	}
	return res
}

// invokeHTTP sends an API Gateway event and decodes the proxy response.
func invokeHTTP(t testing.TB, f *rie.Function, what string, payload []byte) (events.APIGatewayV2HTTPResponse, rie.Result) {
	t.Helper()
	res := invoke(t, f, what, payload)
	var resp events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(res.Payload, &resp); err != nil || resp.StatusCode == 0 {
		t.Fatalf("invoke %s: payload %s is not an HTTP API response (%v)", what, res.Payload, err)
	}
	if _, bench := t.(*testing.B); !bench { // every answer follows openapi.yaml
		var req events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &req); err != nil {
			t.Fatalf("invoke %s: %v", what, err)
		}
		if err := apispec.MustLoad(t).ValidateAPIGateway(req, resp); err != nil {
			t.Errorf("invoke %s: the answer breaks openapi.yaml: %v", what, err)
		}
	}
	// The body as the client reads it (API Gateway undoes the base64 of a
	// gzip answer; the client its gzip): TestAsDeployedGzip reads the
	// answer as the function gave it.
	body, err := apispec.APIGatewayBody(resp)
	if err != nil {
		t.Fatalf("invoke %s: %v", what, err)
	}
	resp.Body, resp.IsBase64Encoded = string(body), false
	delete(resp.Headers, "Content-Encoding")
	return resp, res
}

// recordedInvoke is one Lambda Invoke call the functions made.
type recordedInvoke struct {
	Function       string
	InvocationType string
	Payload        []byte
}

// invokeRecorder stands in for the Lambda Invoke API
// (POST /2015-03-31/functions/{name}/invocations): it records the call and
// accepts it as Lambda accepts an asynchronous invoke (202). The test then
// replays the payload into the AI function, as Lambda would.
type invokeRecorder struct {
	url   string
	mu    sync.Mutex
	calls []recordedInvoke
	// failing is how many invokes still to refuse with Lambda's 500
	// ServiceException (negative: all), for fault injection; refused
	// invokes are counted in refused, not recorded.
	failing, refused int
}

// fail makes the next n invokes fail (n < 0: all until fail(0)).
func (r *invokeRecorder) fail(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failing = n
}

var invokePath = regexp.MustCompile(`^/2015-03-31/functions/([^/]+)/invocations$`)

func (r *invokeRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	m := invokePath.FindStringSubmatch(req.URL.EscapedPath())
	if req.Method != http.MethodPost || m == nil {
		http.Error(w, `{"message":"not the Invoke API"}`, http.StatusNotFound)
		return
	}
	name, err := url.PathUnescape(m[1])
	body, readErr := io.ReadAll(req.Body)
	if err != nil || readErr != nil {
		http.Error(w, `{"message":"bad request"}`, http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failing != 0 {
		if r.failing > 0 {
			r.failing--
		}
		r.refused++
		w.Header().Set("X-Amzn-ErrorType", "ServiceException")
		http.Error(w, `{"Type":"Service","message":"injected failure"}`, http.StatusInternalServerError)
		return
	}
	r.calls = append(r.calls, recordedInvoke{Function: name, InvocationType: req.Header.Get("X-Amz-Invocation-Type"), Payload: body})
	w.WriteHeader(http.StatusAccepted)
}

// refusedCount is how many invokes were refused by fail.
func (r *invokeRecorder) refusedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused
}

// take returns the calls recorded so far and forgets them.
func (r *invokeRecorder) take() []recordedInvoke {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

// connectionsRecorder stands in for the WebSocket API's management
// endpoint (POST and DELETE /{stage}/@connections/{id}): it records each
// message by connection and each connection closed (then gone), checks
// the request is SigV4-signed for execute-api, and answers 410 for
// connections marked gone, as API Gateway does for a closed connection.
type connectionsRecorder struct {
	url    string
	mu     sync.Mutex
	posts  map[string][]streamMessage
	gone   map[string]bool
	closed []string
	count  int
}

// streamMessage is what the tests read of a posted message (Raw: all of
// it, Bytes: its size as posted).
type streamMessage struct {
	Type    string `json:"type"`
	GameID  string `json:"gameId"`
	Version int64  `json:"version"`
	Events  []struct {
		Type string `json:"type"`
		UCI  string `json:"uci"`
	} `json:"events"`
	Game *struct {
		Version    int64             `json:"version"`
		You        *string           `json:"you"`
		LegalMoves []json.RawMessage `json:"legalMoves"`
		Moves      []struct {
			UCI string `json:"uci"`
		} `json:"moves"`
	} `json:"game"`
	Code  string         `json:"code"`
	Raw   map[string]any `json:"-"`
	Bytes int            `json:"-"`
}

func newConnectionsRecorder() *connectionsRecorder {
	return &connectionsRecorder{posts: map[string][]streamMessage{}, gone: map[string]bool{}}
}

var connectionsPath = regexp.MustCompile(`^/` + streamStage + `/@connections/([^/]+)$`)

func (r *connectionsRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	m := connectionsPath.FindStringSubmatch(req.URL.EscapedPath())
	auth := req.Header.Get("Authorization")
	if req.Method != http.MethodPost && req.Method != http.MethodDelete || m == nil {
		http.Error(w, `{"message":"not the @connections API"}`, http.StatusNotFound)
		return
	}
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || !strings.Contains(auth, "/execute-api/aws4_request") {
		http.Error(w, `{"message":"Missing Authentication Token"}`, http.StatusForbidden)
		return
	}
	id, _ := url.PathUnescape(m[1])
	if req.Method == http.MethodDelete {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.gone[id] {
			http.Error(w, `{"message":"GoneException"}`, http.StatusGone)
			return
		}
		r.closed = append(r.closed, id)
		r.gone[id] = true
		w.WriteHeader(http.StatusNoContent)
		return
	}
	body, err := io.ReadAll(req.Body)
	var msg streamMessage
	if err == nil {
		err = json.Unmarshal(body, &msg)
	}
	if err == nil {
		err = json.Unmarshal(body, &msg.Raw)
		msg.Bytes = len(body)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.count++
	switch {
	case err != nil:
		http.Error(w, `{"message":"bad body"}`, http.StatusBadRequest)
	case r.gone[id]:
		http.Error(w, `{"message":"GoneException"}`, http.StatusGone)
	default:
		r.posts[id] = append(r.posts[id], msg)
		w.WriteHeader(http.StatusOK)
	}
}

// take returns and forgets the messages posted to a connection.
func (r *connectionsRecorder) take(conn string) []streamMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.posts[conn]
	delete(r.posts, conn)
	return out
}

// requests returns how many posts were made since the last call.
func (r *connectionsRecorder) requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.count
	r.count = 0
	return n
}

// takeClosed returns and forgets the connections closed by DELETE.
func (r *connectionsRecorder) takeClosed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.closed
	r.closed = nil
	return out
}

func (r *connectionsRecorder) setGone(conn string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gone[conn] = true
}

// loadEvents reads events/ (strictly decoded into each handler's input type).
func loadEvents(t testing.TB) map[string]deploy.Event {
	t.Helper()
	evs, err := deploy.LoadEventsByName(filepath.Join("..", "..", "events"))
	if err != nil {
		t.Fatalf("deploy.LoadEventsByName: %v", err)
	}
	return evs
}

// sampleGame builds the events' sample game (deploy.SampleGameID, white's
// seat deploy.SampleWhiteToken) created at `at`: against the AI at aiLevel,
// or, with aiLevel "", human against human with black deploy.SampleBlackToken.
func sampleGame(t testing.TB, aiLevel string, at time.Time) *game.State {
	t.Helper()
	opts := game.DefaultOptions() // 10+5
	opts.DrawMode, opts.ColorAssignment = game.DrawFIDE, game.ColorsHostWhite
	white := game.Player{ID: "sample-white", Name: "White", TokenHash: service.HashToken(deploy.SampleWhiteToken)}
	st, _, err := game.New(game.NewGame{GameID: deploy.SampleGameID, Options: opts, Host: white, AI: aiLevel, Seed: 1}, at)
	if err != nil {
		t.Fatalf("game.New: %v", err)
	}
	if aiLevel == "" {
		black := game.Player{ID: "sample-black", Name: "Black", TokenHash: service.HashToken(deploy.SampleBlackToken)}
		if st, _, err = game.Reduce(st, game.Join{Player: black}, at); err != nil {
			t.Fatalf("game.Join: %v", err)
		}
	}
	return st
}

// put replaces the sample game in the table with st (the tests reuse the
// events' fixed game id for several scenarios).
func (s *stack) put(t testing.TB, st *game.State) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table),
		Key:       map[string]dbtypes.AttributeValue{dynamostore.KeyAttribute: &dbtypes.AttributeValueMemberS{Value: st.GameID}},
	}); err != nil {
		t.Fatalf("DeleteItem(%s): %v", st.GameID, err)
	}
	data := storedgame.Encode(st)
	rec := service.GameRecord{GameID: st.GameID, Version: st.Version, StateVersion: st.StateVersion, State: data}
	if d, ok := game.Deadline(st); ok {
		// As the service's writers do: the record claims the timer its
		// stream record's effects then create (lazy timers).
		rec.Deadline, rec.ArmedAt = d, d
	}
	if err := s.store.Create(ctx, rec); err != nil {
		t.Fatalf("store.Create(%s): %v", st.GameID, err)
	}
}

// game reads a game back from the table through the store adapter.
func (s *stack) game(t testing.TB, gameID string) (service.GameRecord, *game.State) {
	t.Helper()
	rec, err := s.store.Get(context.Background(), gameID)
	if err != nil {
		t.Fatalf("store.Get(%s): %v", gameID, err)
	}
	st, err := storedgame.Decode(rec.State)
	if err != nil {
		t.Fatalf("storedgame.Decode(%s): %v", gameID, err)
	}
	return rec, st
}

// withGame rewrites an HTTP event of the sample game for another game and
// seat token (the create events make games with random ids).
func withGame(t testing.TB, ev deploy.Event, gameID, token string) []byte {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(ev.Raw, &req); err != nil {
		t.Fatal(err)
	}
	req.RawPath = strings.Replace(req.RawPath, deploy.SampleGameID, gameID, 1)
	req.RequestContext.HTTP.Path = strings.Replace(req.RequestContext.HTTP.Path, deploy.SampleGameID, gameID, 1)
	req.PathParameters = map[string]string{"id": gameID}
	if token != "" {
		req.Headers["authorization"] = "Bearer " + token
	}
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// moveEvent is action-move-from-to.json turned into another seat's move.
func moveEvent(t testing.TB, ev deploy.Event, token, uci, requestID string) []byte {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(ev.Raw, &req); err != nil {
		t.Fatal(err)
	}
	req.Body = fmt.Sprintf(`{"type":"move","payload":{"uci":%q},"requestId":%q}`, uci, requestID)
	req.Headers["content-length"] = fmt.Sprint(len(req.Body))
	req.Headers["authorization"] = "Bearer " + token
	out, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
