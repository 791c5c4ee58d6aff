package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/shared/service"
)

// The fixed identities every file in events/ uses, so that a test can seed
// one game and replay the files against it (events/README.md tells the
// order and the expected outcomes).
const (
	SampleGameID     = "Qm7vR2xKp9LwT4nZ8cHbYd"
	SampleWhiteToken = "st_P1tE2NH9e3f6bwxiuLCdgx6UKnn6D4qyg3T_FxgvwqU"
	SampleBlackToken = "st_7XWVxe9mJD0Ll6MD7vKpFCFGKstsG_VpeMbefMABhlE"
	// SamplePlayerToken is the player token of the player routes' events.
	SamplePlayerToken = "pt_Xq3LmV8rT2nBw9ZkC4hJ7pYs1dF6gUe0aRiOtNvM5cQ"
	// SampleAIAPIKey is the x-api-key of the ai/move-* events; configure
	// AI_API_KEY with it to have them accepted.
	SampleAIAPIKey = "sample-partner-key-5f2c9e1a7b3d"
	// SampleDeviceID is the {id} of the device route's event.
	SampleDeviceID = "dev_Qm3xTz8LwV2nK9pR"
	// SampleNotificationID is the upTo of the read mark's event.
	SampleNotificationID = "1a2272d2600-3f2a9c0d1e4b"
	// SamplePlayerID is the player of SamplePlayerToken (its public
	// profile, its recovery); SampleOpponentID another registered player
	// (blocked and unblocked); SampleSecondSessionID a second session of
	// the sample player (revoked). SPEC §16.2.
	SamplePlayerID        = "pl_SamplePlayerOfEvents01"
	SampleOpponentID      = "pl_SampleOpponentOfEvent1"
	SampleSecondSessionID = "se_SecondSessionOfEvents1"
	// SampleRecoveryCode is the sample player's recovery code in
	// player-recover.json (typed in lower case, as people type it).
	SampleRecoveryCode = "K7M2-QX9P-H4KX-7MZQ-2PRT-8WNE"
)

// ErrInvalidEvent is wrapped by every error about an event file's content.
var ErrInvalidEvent = errors.New("deploy: invalid event")

// EventKind tells which input type an event file holds.
type EventKind int

// Event kinds. Append only.
const (
	// HTTPEvent is an API Gateway HTTP API request, payload format 2.0.
	HTTPEvent EventKind = iota + 1
	// TimeoutEvent is the EventBridge Scheduler input of the timeout
	// function: service.TimeoutTask.
	TimeoutEvent
	// AITaskEvent is the asynchronous AI-seat trigger: service.AITask.
	AITaskEvent
	// WebSocketEvent is an API Gateway WebSocket API route event
	// ($connect, $disconnect, a client message).
	WebSocketEvent
	// StreamRecordsEvent is a batch of the games table's change stream, as
	// the event source mapping delivers it.
	StreamRecordsEvent
)

func (k EventKind) String() string {
	switch k {
	case HTTPEvent:
		return "http"
	case TimeoutEvent:
		return "timeout"
	case AITaskEvent:
		return "aiTask"
	case WebSocketEvent:
		return "webSocket"
	case StreamRecordsEvent:
		return "streamRecords"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}

// Event is one sample event file, decoded into its handler's input type.
type Event struct {
	Name     string // slash path below the events directory: "move/join.json"
	Function string // logical ID of the function it is for
	// Functions are all the functions running the same binary that may
	// receive it (Function first): the move binary serves MoveFunction,
	// ViewFunction and PollFunction, the ai binary AiFunction and
	// AiSeatFunction.
	Functions []string
	Kind      EventKind
	Raw       []byte
	HTTP      *events.APIGatewayV2HTTPRequest         // for HTTPEvent
	Timeout   *service.TimeoutTask                    // for TimeoutEvent
	AITask    *service.AITask                         // for AITaskEvent
	WebSocket *events.APIGatewayWebsocketProxyRequest // for WebSocketEvent
	Records   *events.DynamoDBEvent                   // for StreamRecordsEvent
}

// EventDirs maps each directory of events/ (one per function binary) to the
// functions its files are sent to (`sam local invoke <function> -e
// events/<dir>/<file>`), the binary's main function first.
var EventDirs = map[string][]string{
	"move":    {"MoveFunction", "ViewFunction", "PollFunction"},
	"timeout": {"TimeoutFunction"},
	"ai":      {"AiFunction", "AiSeatFunction"},
	"stream":  {"StreamFunction"},
	"fanout":  {"FanoutFunction"},
}

// StreamRouteKeys are the WebSocket API's routes (SPEC §11).
var StreamRouteKeys = []string{"$connect", "$default", "$disconnect", "ping", "subscribe", "unsubscribe"}

// LoadEventsByName is LoadEvents keyed by each event's Name.
func LoadEventsByName(dir string) (map[string]Event, error) {
	evs, err := LoadEvents(dir)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]Event, len(evs))
	for _, ev := range evs {
		byName[ev.Name] = ev
	}
	return byName, nil
}

// LoadEvents reads every event file below dir: dir/<function dir>/*.json.
// Each file must decode into its function's input type with no unknown
// fields. A README.md may sit in dir; anything else unexpected is an error,
// so a misplaced file cannot go untested.
func LoadEvents(dir string) ([]Event, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("deploy: %w", err)
	}
	var evs []Event
	for _, e := range entries {
		if !e.IsDir() {
			if e.Name() == "README.md" {
				continue
			}
			return nil, fmt.Errorf("%w: %s: files belong in a function's directory (%s)", ErrInvalidEvent, e.Name(), dirNames())
		}
		functions, ok := EventDirs[e.Name()]
		if !ok {
			return nil, fmt.Errorf("%w: %s: not a function's directory (%s)", ErrInvalidEvent, e.Name(), dirNames())
		}
		files, err := os.ReadDir(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("deploy: %w", err)
		}
		for _, f := range files {
			name := path.Join(e.Name(), f.Name())
			if f.IsDir() || !strings.HasSuffix(f.Name(), ".json") {
				return nil, fmt.Errorf("%w: %s: only .json files belong here", ErrInvalidEvent, name)
			}
			raw, err := os.ReadFile(filepath.Join(dir, e.Name(), f.Name()))
			if err != nil {
				return nil, fmt.Errorf("deploy: %w", err)
			}
			ev, err := DecodeEvent(functions[0], raw)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			ev.Name, ev.Functions = name, functions
			evs = append(evs, ev)
		}
	}
	slices.SortFunc(evs, func(a, b Event) int { return strings.Compare(a.Name, b.Name) })
	return evs, nil
}

func dirNames() string {
	names := make([]string, 0, len(EventDirs))
	for d := range EventDirs {
		names = append(names, d)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// DecodeEvent decodes raw as an input of the function with the given
// logical ID: the move function takes HTTP requests only, the timeout
// function TimeoutTasks only, the AI function HTTP requests (POST
// /v1/ai/move) and AITasks, told apart by the HTTP request's routeKey.
func DecodeEvent(function string, raw []byte) (Event, error) {
	ev := Event{Function: function, Raw: raw}
	var kind EventKind
	switch function {
	case "MoveFunction":
		kind = HTTPEvent
	case "TimeoutFunction":
		kind = TimeoutEvent
	case "AiFunction":
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(raw, &probe); err != nil {
			return ev, fmt.Errorf("%w: %w", ErrInvalidEvent, err)
		}
		kind = AITaskEvent
		if _, ok := probe["routeKey"]; ok {
			kind = HTTPEvent
		}
	case "StreamFunction":
		kind = WebSocketEvent
	case "FanoutFunction":
		kind = StreamRecordsEvent
	default:
		return ev, fmt.Errorf("%w: no function %q", ErrInvalidEvent, function)
	}
	ev.Kind = kind

	switch kind {
	case HTTPEvent:
		var req events.APIGatewayV2HTTPRequest
		if err := decodeStrict(raw, &req); err != nil {
			return ev, err
		}
		if req.Version != "2.0" || req.RouteKey == "" {
			return ev, fmt.Errorf("%w: not an HTTP API payload 2.0 request (version %q, routeKey %q)", ErrInvalidEvent, req.Version, req.RouteKey)
		}
		ev.HTTP = &req
	case TimeoutEvent:
		var task service.TimeoutTask
		if err := decodeStrict(raw, &task); err != nil {
			return ev, err
		}
		if task.GameID == "" || task.Version < 1 || task.Deadline.IsZero() {
			return ev, fmt.Errorf("%w: timeout task needs gameId, version >= 1 and deadline: %+v", ErrInvalidEvent, task)
		}
		ev.Timeout = &task
	case AITaskEvent:
		var task service.AITask
		if err := decodeStrict(raw, &task); err != nil {
			return ev, err
		}
		if task.GameID == "" || task.Version < 1 {
			return ev, fmt.Errorf("%w: AI task needs gameId and version >= 1: %+v", ErrInvalidEvent, task)
		}
		ev.AITask = &task
	case WebSocketEvent:
		var req events.APIGatewayWebsocketProxyRequest
		if err := decodeStrict(raw, &req); err != nil {
			return ev, err
		}
		rc := req.RequestContext
		want := map[string]string{"$connect": "CONNECT", "$disconnect": "DISCONNECT"}[rc.RouteKey]
		if want == "" {
			want = "MESSAGE"
		}
		if !slices.Contains(StreamRouteKeys, rc.RouteKey) || rc.EventType != want || rc.ConnectionID == "" {
			return ev, fmt.Errorf("%w: not a stream route event (routeKey %q, eventType %q, connectionId %q)", ErrInvalidEvent, rc.RouteKey, rc.EventType, rc.ConnectionID)
		}
		ev.WebSocket = &req
	case StreamRecordsEvent:
		var batch events.DynamoDBEvent
		if err := decodeStrict(raw, &batch); err != nil {
			return ev, err
		}
		if len(batch.Records) == 0 {
			return ev, fmt.Errorf("%w: a stream batch has at least one record", ErrInvalidEvent)
		}
		for i, r := range batch.Records {
			if r.EventSource != "aws:dynamodb" || r.Change.SequenceNumber == "" {
				return ev, fmt.Errorf("%w: record %d is not a DynamoDB stream record (eventSource %q, sequence %q)", ErrInvalidEvent, i, r.EventSource, r.Change.SequenceNumber)
			}
		}
		ev.Records = &batch
	}
	return ev, nil
}

// decodeStrict decodes exactly one JSON value with no unknown fields.
func decodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidEvent, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: more than one JSON value", ErrInvalidEvent)
	}
	return nil
}
