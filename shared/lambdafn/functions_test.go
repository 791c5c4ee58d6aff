package lambdafn

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"chessapi/deploy"
	"chessapi/shared/push"
	"chessapi/shared/service"
)

// templateFunctions is which entry of the wiring table each function of
// template.yaml runs (the view and poll functions run move's code, the AI seats'
// function ai's; deploy's tests hold the template's build targets to the
// packages under functions/).
var templateFunctions = map[string]Function{
	"MoveFunction":    Move,
	"PollFunction":    Move,
	"ViewFunction":    Move,
	"TimeoutFunction": Timeout,
	"AiFunction":      AI,
	"AiSeatFunction":  AI,
	"StreamFunction":  Stream,
	"FanoutFunction":  Fanout,
	"EffectsFunction": Effects,
}

// TestWiringTableMatchesTemplate: every variable a function requires is
// set by template.yaml for each function running it, and the template sets
// nothing the function does not read.
func TestWiringTableMatchesTemplate(t *testing.T) {
	tmpl, err := deploy.LoadTemplate(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl.Functions) != len(templateFunctions) {
		t.Errorf("template has %d functions; the table maps %d", len(tmpl.Functions), len(templateFunctions))
	}
	for _, f := range tmpl.Functions {
		fn, ok := templateFunctions[f.LogicalID]
		if !ok {
			t.Errorf("template function %s runs no entry of the wiring table", f.LogicalID)
			continue
		}
		reads := map[string]bool{}
		for _, n := range functions[fn].env {
			reads[n.v.name] = true
			if n.required && !slices.Contains(f.EnvKeys, n.v.name) {
				t.Errorf("%s (%s): the template does not set %s, which the function requires", f.LogicalID, fn, n.v.name)
			}
		}
		for _, k := range f.EnvKeys {
			if !reads[k] {
				t.Errorf("%s (%s): the template sets %s, which the function does not read", f.LogicalID, fn, k)
			}
		}
	}
}

// TestMainsRunTheirEntry: functions/<name>/main.go starts the entry of its
// own name.
func TestMainsRunTheirEntry(t *testing.T) {
	for fn := range functions {
		src, err := os.ReadFile(filepath.Join("..", "..", "functions", string(fn), "main.go"))
		if err != nil {
			t.Errorf("%s: %v", fn, err)
			continue
		}
		name := strings.ToUpper(string(fn[:1])) + string(fn[1:])
		if fn == AI {
			name = "AI"
		}
		if want := "lambdafn.FromEnv(context.Background(), lambdafn." + name + ", os.Getenv)"; !strings.Contains(string(src), want) {
			t.Errorf("functions/%s/main.go does not call %s", fn, want)
		}
	}
}

// TestLoadConfigReadsTheTable: LoadConfig asks for exactly the variables
// the function's entry lists.
func TestLoadConfigReadsTheTable(t *testing.T) {
	for fn, sp := range functions {
		asked := map[string]bool{}
		env := envWith(dataTable(map[string]string{"STREAM_ENDPOINT": "https://x.example/v1", "AI_API_KEY": ""}))
		if _, err := LoadConfig(fn, func(k string) string { asked[k] = true; return env(k) }); err != nil {
			t.Fatalf("LoadConfig(%s): %v", fn, err)
		}
		var want, got []string
		for _, n := range sp.env {
			want = append(want, n.v.name)
		}
		for k := range asked {
			got = append(got, k)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("LoadConfig(%s) read %v; the table lists %v", fn, got, want)
		}
	}
}

// TestAWSAdaptersFollowTheTable: each function gets the adapters its entry
// names and no others, with the effects left to the change stream.
// (Building the clients makes no call.)
func TestAWSAdaptersFollowTheTable(t *testing.T) {
	awsCfg := aws.Config{Region: "eu-central-1"}
	for fn, sp := range functions {
		cfg, err := LoadConfig(fn, envWith(dataTable(map[string]string{"STREAM_ENDPOINT": "https://x.example/v1", "AI_API_KEY": ""})))
		if err != nil {
			t.Fatal(err)
		}
		deps, err := awsAdapters(awsCfg, cfg)
		if err != nil {
			t.Fatalf("awsAdapters(%s): %v", fn, err)
		}
		for _, c := range []struct {
			what string
			has  bool
			want adapters
		}{
			{"scheduler", deps.Scheduler != nil, usesScheduler},
			{"AI trigger", deps.AITrigger != nil, usesAITrigger},
			{"players", deps.Players != nil, usesData},
			{"API keys", deps.APIKeys != nil && deps.KeyCounter != nil, usesAPIKeys},
			{"stream connections", deps.Connections != nil && deps.NewPoster != nil, usesStream},
			{"dead-letter queue", deps.DeadLetters != nil, usesDeadLetters},
			{"connections of ended sessions", deps.SessionConnections != nil, usesSessionEnd},
		} {
			want := sp.adapters.has(c.want)
			if c.want == usesStream {
				// STREAM_ENDPOINT is set: the function that ends
				// sessions closes their connections through it.
				want = want || sp.adapters.has(usesSessionEnd)
			}
			if c.has != want {
				t.Errorf("%s: %s = %v; the table says %v", fn, c.what, c.has, want)
			}
		}
		if deps.Store == nil || deps.Effects != service.EffectsByStream {
			t.Errorf("%s: store %v, effects %v; want the games table and effects by the stream", fn, deps.Store, deps.Effects)
		}
	}
	// Without DATA_TABLE (the AI seats' function) no data table adapter.
	cfg, err := LoadConfig(AI, envWith(map[string]string{"AI_API_KEY": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if deps, err := awsAdapters(awsCfg, cfg); err != nil || deps.Players != nil || deps.APIKeys != nil {
		t.Errorf("ai without DATA_TABLE: players %v, keys %v, %v; want none", deps.Players, deps.APIKeys, err)
	}
}

// TestHandlerFollowsTheTable: the handler each main passes to lambda.Start
// takes the event its entry names, and only the HTTP functions serve HTTP.
func TestHandlerFollowsTheTable(t *testing.T) {
	f := newFixture(t, "")
	poster := newRecordingPoster()
	for fn, sp := range functions {
		deps := Deps{Config: service.Config{Store: f.store}, Connections: noConnections{}, NewPoster: poster.poster, DeadLetters: &recordingQueue{}}
		a, err := NewApp(Config{Function: fn, AIKeysOff: true}, deps)
		if err != nil {
			t.Fatalf("NewApp(%s): %v", fn, err)
		}
		var ok bool
		switch h := a.Handler().(type) {
		case func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error):
			ok = sp.handler == handleHTTP
		case func(context.Context, json.RawMessage) (any, error):
			// Two events each, told apart by shape: HTTP or an AI task;
			// a timeout task or the deadline queue's SQS batch.
			ok = sp.handler == handleAI || sp.handler == handleTimeout
		case func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error):
			ok = sp.handler == handleWebSocket
		case func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error):
			ok = sp.handler == handleStreamRecords
		default:
			t.Errorf("%s: handler of type %T", fn, h)
		}
		if !ok {
			t.Errorf("%s: handler %T does not take the table's event (%d)", fn, a.Handler(), sp.handler)
		}
		if (a.httpProxy != nil) != sp.handler.servesHTTP() {
			t.Errorf("%s: serves HTTP = %v; the table says %v", fn, a.httpProxy != nil, sp.handler.servesHTTP())
		}
	}
	if _, err := NewApp(Config{Function: Fanout}, Deps{Config: service.Config{Store: f.store}, DeadLetters: &recordingQueue{}}); err == nil {
		t.Error("NewApp(fanout) without the stream's connections = nil error; want one")
	}
	if _, err := NewApp(Config{Function: Effects}, Deps{Config: service.Config{Store: f.store}}); err == nil {
		t.Error("NewApp(effects) without a dead-letter queue = nil error; want one")
	}
	if _, err := NewApp(Config{Function: "billing"}, Deps{Config: service.Config{Store: f.store}}); err == nil {
		t.Error(`NewApp("billing") = nil error; want one for an unknown function`)
	}
}

// noConnections is a push.Connections that holds nothing: NewApp only
// checks that the stream functions are given one.
type noConnections struct{}

var errNoConnections = errors.New("no connections here")

func (noConnections) PutConnection(context.Context, push.Connection) error { return errNoConnections }
func (noConnections) Connection(context.Context, string) (push.Connection, error) {
	return push.Connection{}, push.ErrNoConnection
}
func (noConnections) DeleteConnection(context.Context, string) ([]push.Subscription, error) {
	return nil, errNoConnections
}
func (noConnections) Subscribe(context.Context, push.Subscription, int) error {
	return errNoConnections
}
func (noConnections) Unsubscribe(context.Context, string, string) (push.Subscription, bool, error) {
	return push.Subscription{}, false, errNoConnections
}
func (noConnections) Subscribers(context.Context, string) ([]push.Subscription, error) {
	return nil, errNoConnections
}
