package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"chessapi/deploy"
	"chessapi/infra/emulator"
	"chessapi/infra/rie"
	"chessapi/shared/lambdafn"
)

// defaultStreamRetrySeconds is template.yaml's StreamRetrySeconds default
// (TestEnvironmentFromTemplate holds the two together).
const defaultStreamRetrySeconds = 60

// config is one emulated stack.
type config struct {
	// Root is the module root (template.yaml, the functions' packages).
	Root string
	// Template is template.yaml's path.
	Template  string
	StackName string
	// Addr is the HTTP front's listen address (127.0.0.1:0 picks a port).
	Addr string
	// Instances caps each function's concurrent instances (processes), by
	// logical ID; functions not named get defaultInstances.
	Instances map[string]int
	// LogLevel is every function's LOG_LEVEL.
	LogLevel string
	// AIAPIKeys is the AiApiKeys parameter (required or off); AIAPIKey an
	// optional bootstrap key (AI_API_KEY) for the public AI function.
	AIAPIKeys string
	AIAPIKey  string
	// How often the games table's stream is polled and the schedules are
	// checked; how long asynchronous and stream retries wait.
	StreamPoll, SchedulePoll          time.Duration
	AsyncRetryDelay, StreamRetryDelay time.Duration
	// The WebSocket API's idle timeout and connection duration limit.
	WSIdle, WSMax time.Duration
	// StreamRetrySeconds is the StreamRetrySeconds parameter (the stream
	// consumers' retry window); 0 takes the template's default.
	StreamRetrySeconds int
	// FunctionLogs receives every line the functions and the emulator
	// print (nil: dropped). Log receives emustack's own messages.
	FunctionLogs io.Writer
	Log          io.Writer
	// Bootstraps builds (or has built) the functions' binaries; nil: the
	// stack builds its own and removes them on Close. Tests hand it the
	// one their process shares.
	Bootstraps *rie.Bootstraps
}

// defaultInstances caps the instances of a function -instances does not
// name. Instances start only when needed (every one busy), so a generous
// cap costs nothing until a run needs it.
var defaultInstances = map[string]int{
	"MoveFunction":    4,
	"ViewFunction":    4,
	"PollFunction":    16, // each long poll holds one for up to 20 s
	"TimeoutFunction": 2,
	"AiFunction":      2,
	"AiSeatFunction":  2,
	"StreamFunction":  4,
	"FanoutFunction":  1, // one batch at a time keeps each game's records in order
	"EffectsFunction": 1, // the same, for the second consumer
}

// stack is the emulated stack, running.
type stack struct {
	cfg    config
	spec   *stackSpec
	counts *counters

	// URL is the HTTP front (http://127.0.0.1:port): the HTTP API's
	// routes, the WebSocket API at /v1/stream, the counts at /_counts.
	URL string
	// awsURL serves Lambda's Invoke API and @connections (awsapis.go).
	awsURL string

	gamesTable, dataTable, group string
	// deadLetters is the stream consumers' dead-letter queue (moto's SQS).
	deadLetters lambdafn.SQSQueue
	// deadlines is the deadline queue (moto's SQS), with its redrive
	// policy's dead-letter queue; queue feeds it to the deadline function.
	deadlines, deadlineDLQ lambdafn.SQSQueue
	queue                  *queuePoller
	// originSecret is ORIGIN_VERIFY_SECRET: the front adds it to every
	// request, as the edge does (template.yaml's Edge=on), so the
	// functions' check runs on every emulated request.
	originSecret string

	pools     map[string]*pool
	async     *asyncInvoker
	pump      *streamPump
	ws        *wsAPI
	front     *http.Server
	awsServer *http.Server
	apis      *awsAPIs
	guard     *http.Server // the data table's IAM guard (iam.go)
	faults    *faults      // in front of the guard: injected failures, schedules by game
	cancel    context.CancelFunc
	done      chan struct{} // the background loops have stopped

	moto  *emulator.Server
	calls *emulator.CallCounter
	// push are the SNS platform applications (push.go).
	push          pushApplications
	ownBootstraps bool // cfg.Bootstraps was made here: Close removes them
}

// startStack builds the functions, starts moto and everything around it,
// and serves the front on cfg.Addr. Close stops it all.
func startStack(ctx context.Context, cfg config) (st *stack, err error) {
	if _, err := exec.LookPath("moto_server"); err != nil {
		return nil, errors.New("moto_server is not on PATH: install it with pip install 'moto[server]'")
	}
	spec, err := loadSpec(cfg.Template, cfg.StackName)
	if err != nil {
		return nil, err
	}
	for id := range cfg.Instances {
		if _, ok := spec.Functions[id]; !ok {
			return nil, fmt.Errorf("-instances: %q is not a function of %s (they are %s)", id, cfg.Template, strings.Join(slices.Sorted(maps.Keys(spec.Functions)), ", "))
		}
	}
	st = &stack{cfg: cfg, spec: spec, pools: map[string]*pool{}, done: make(chan struct{}), originSecret: "emustack-edge-" + newID() + newID()}
	if st.cfg.Bootstraps == nil {
		st.cfg.Bootstraps, st.ownBootstraps = rie.NewBootstraps(cfg.Root, ""), true
	}
	defer func() {
		if err != nil {
			st.Close()
			st = nil
		}
	}()

	emu, err := rie.EnsureEmulator(ctx, cfg.Root)
	if err != nil {
		return st, err
	}
	bootstraps, err := st.build(ctx)
	if err != nil {
		return st, err
	}

	// moto, the tables, the games table's stream, the schedule group, and
	// the counting proxy the functions reach moto through.
	st.gamesTable, st.dataTable = cfg.StackName+"-GamesTable", cfg.StackName+"-DataTable"
	if st.group, err = substitute(spec.GroupName, cfg.StackName); err != nil || st.group == "" {
		return st, fmt.Errorf("template: the DeadlineScheduleGroup's Name: %v", err)
	}
	if st.moto, err = emulator.Start(ctx, emulator.Moto); err != nil {
		return st, err
	}
	moto := st.moto.URL
	if err := emulator.CreateGamesTable(ctx, moto, st.gamesTable); err != nil {
		return st, err
	}
	changes, err := emulator.EnableChangeStream(ctx, moto, st.gamesTable)
	if err != nil {
		return st, err
	}
	if st.calls, err = emulator.CountCalls(moto); err != nil {
		return st, err
	}
	calls := st.calls
	if err := emulator.CreateDataTable(ctx, moto, st.dataTable); err != nil {
		return st, err
	}
	awsCfg := emulator.Config(moto)
	queue, err := sqs.NewFromConfig(awsCfg).CreateQueue(ctx, &sqs.CreateQueueInput{
		QueueName:  aws.String(cfg.StackName + "-fanout-dlq"),
		Attributes: map[string]string{"MaximumMessageSize": "1048576"},
	})
	if err != nil {
		return st, fmt.Errorf("CreateQueue: %w", err)
	}
	st.deadLetters = lambdafn.SQSQueue{Client: sqs.NewFromConfig(awsCfg), URL: aws.ToString(queue.QueueUrl)}
	if st.deadlines, st.deadlineDLQ, err = createDeadlineQueue(ctx, sqs.NewFromConfig(awsCfg), spec.Deadlines, cfg.StackName); err != nil {
		return st, err
	}
	sched := scheduler.NewFromConfig(awsCfg)
	if _, err := sched.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(st.group)}); err != nil {
		return st, fmt.Errorf("CreateScheduleGroup %s: %w", st.group, err)
	}
	if st.push, err = createPushApplications(ctx, sns.NewFromConfig(awsCfg), cfg.StackName); err != nil {
		return st, err
	}
	st.counts = newCounters(calls.Take)
	// The functions reach moto through the data table's IAM guard, then
	// the counting proxy.
	tmpl, err := deploy.LoadTemplate(cfg.Template)
	if err != nil {
		return st, err
	}
	counted, err := url.Parse(calls.URL)
	if err != nil {
		return st, err
	}
	guardLog := cfg.Log
	if guardLog == nil {
		guardLog = io.Discard
	}
	guardLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return st, err
	}
	st.faults = &faults{deadlineQueue: st.deadlines.URL, next: &dataTableGuard{
		next: httputil.NewSingleHostReverseProxy(counted), table: st.dataTable,
		grants: dataTableGrants(tmpl), counts: st.counts, log: guardLog,
	}, counts: st.counts}
	st.guard = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: st.faults}
	go st.guard.Serve(guardLn)
	guardURL := "http://" + guardLn.Addr().String()

	// The listeners first: the functions' environment names them.
	frontLn, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return st, fmt.Errorf("-addr %s: %w", cfg.Addr, err)
	}
	awsLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		frontLn.Close()
		return st, err
	}
	st.URL = "http://" + frontLn.Addr().String()
	awsURL := "http://" + awsLn.Addr().String()
	st.awsURL = awsURL

	for _, id := range slices.Sorted(maps.Keys(spec.Functions)) {
		fn := spec.Functions[id]
		env, err := st.environment(fn, guardURL, awsURL)
		if err != nil {
			frontLn.Close()
			awsLn.Close()
			return st, err
		}
		limit := defaultInstances[id]
		if n, ok := cfg.Instances[id]; ok {
			limit = n
		}
		limit = max(limit, 1)
		opts := rie.Options{
			Emulator: emu, Bootstrap: bootstraps[fn.Package], FunctionName: fn.Name,
			Timeout: fn.Timeout, MemoryMB: fn.MemoryMB, Env: env, Log: st.functionLog(id),
		}
		st.pools[id] = newPool(fn, opts, limit, st.counts.function(id, fn.MemoryMB))
	}

	runCtx, cancel := context.WithCancel(context.Background())
	st.cancel = cancel
	invokers := map[string]invoker{}
	for id, p := range st.pools {
		invokers[id] = p
	}
	st.async = newAsyncInvoker(runCtx, invokers, st.counts, cfg.Log, cfg.AsyncRetryDelay)
	var mappings []*mapping
	for _, src := range spec.Sources {
		var onFailure func(context.Context, []byte) error
		if src.OnFailure == "FanoutDeadLetterQueue" {
			onFailure = st.deadLetters.Send
		}
		mappings = append(mappings, newMapping(st.pools[src.Function], src, st.counts, cfg.Log, cfg.StreamRetryDelay, onFailure))
	}
	st.pump = newStreamPump(changes, st.counts, cfg.Log, cfg.StreamPoll, mappings...)
	runner := newScheduleRunner(sched, st.group, spec, st.async, st.counts, cfg.Log, cfg.SchedulePoll)
	deadlineName, _ := substitute(spec.Deadlines.QueueName, cfg.StackName)
	st.queue = newQueuePoller(sqs.NewFromConfig(awsCfg), st.deadlines.URL, fmt.Sprintf("arn:%s:sqs:%s:%s:%s", partition, region, accountID, deadlineName),
		spec.Deadlines, st.pools[spec.Deadlines.Function], st.counts, cfg.Log, cfg.SchedulePoll)
	if st.ws, err = newWSAPI(spec, st.pools, st.counts, cfg.Log, cfg.WSIdle, cfg.WSMax); err != nil {
		frontLn.Close()
		awsLn.Close()
		return st, err
	}
	st.apis = &awsAPIs{spec: spec, async: st.async, pools: st.pools, ws: st.ws, counts: st.counts}
	httpFront := &httpAPI{routes: newRouteTable(spec), pools: st.pools, counts: st.counts, log: cfg.Log, originSecret: st.originSecret}
	st.ws.originSecret = st.originSecret

	mux := http.NewServeMux()
	mux.HandleFunc("/_counts", st.serveCounts)
	mux.HandleFunc("/v1/stream", func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			gatewayError(w, http.StatusUpgradeRequired, "the stream is a WebSocket: connect with ws://")
			return
		}
		st.ws.ServeHTTP(w, r)
	})
	mux.Handle("/", httpFront)
	st.front = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	st.awsServer = &http.Server{Handler: st.apis, ReadHeaderTimeout: 10 * time.Second}
	go st.front.Serve(frontLn)
	go st.awsServer.Serve(awsLn)
	go func() {
		defer close(st.done)
		loops := make(chan struct{}, 3)
		go func() { st.pump.run(runCtx); loops <- struct{}{} }()
		go func() { runner.run(runCtx); loops <- struct{}{} }()
		go func() { st.queue.run(runCtx); loops <- struct{}{} }()
		for range 3 {
			<-loops
		}
	}()
	return st, nil
}

// createDeadlineQueue makes the deadline queue and its dead-letter queue
// in moto as the template declares them (names, visibility timeout, the
// redrive policy's receives).
func createDeadlineQueue(ctx context.Context, client *sqs.Client, src queueSource, stackName string) (queue, dlq lambdafn.SQSQueue, err error) {
	name, err := substitute(src.QueueName, stackName)
	if err != nil || name == "" {
		return queue, dlq, fmt.Errorf("template: %s's QueueName: %v", src.Queue, err)
	}
	dlqName, err := substitute(src.DeadLetterName, stackName)
	if err != nil || dlqName == "" {
		return queue, dlq, fmt.Errorf("template: %s's dead-letter queue's QueueName: %v", src.Queue, err)
	}
	made, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(dlqName)})
	if err != nil {
		return queue, dlq, fmt.Errorf("CreateQueue %s: %w", dlqName, err)
	}
	dlq = lambdafn.SQSQueue{Client: client, URL: aws.ToString(made.QueueUrl)}
	redrive, _ := json.Marshal(map[string]string{
		"deadLetterTargetArn": fmt.Sprintf("arn:%s:sqs:%s:%s:%s", partition, region, accountID, dlqName),
		"maxReceiveCount":     strconv.Itoa(src.MaxReceives),
	})
	made, err = client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: map[string]string{
		"VisibilityTimeout": strconv.Itoa(int(src.Visibility / time.Second)),
		"RedrivePolicy":     string(redrive),
	}})
	if err != nil {
		return queue, dlq, fmt.Errorf("CreateQueue %s: %w", name, err)
	}
	return lambdafn.SQSQueue{Client: client, URL: aws.ToString(made.QueueUrl)}, dlq, nil
}

// build returns the bootstrap of each function package (built once, by
// cfg.Bootstraps: the Makefile's flags, this machine's architecture).
func (st *stack) build(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	for _, fn := range st.spec.Functions {
		if _, ok := out[fn.Package]; ok {
			continue
		}
		bin, err := st.cfg.Bootstraps.Path(ctx, fn.Package)
		if err != nil {
			return nil, err
		}
		out[fn.Package] = bin
	}
	return out, nil
}

// functionLog tags a function's lines for cfg.FunctionLogs.
func (st *stack) functionLog(id string) func(string) {
	if st.cfg.FunctionLogs == nil {
		return nil
	}
	w := st.cfg.FunctionLogs
	return func(line string) { fmt.Fprintf(w, "%s: %s\n", id, line) }
}

// environment is what a function's process gets: the template's variables
// with local values, and the SDK's endpoint overrides and dummy
// credentials (Lambda supplies real ones through the same variables).
//
// A value that is a !Ref to a function is that function's name; an !Sub of
// pseudo parameters only (the timeout function's ARN) is substituted;
// anything else (tables, the group, the role, queues, the stream's
// endpoint, parameters) is by the variable's name, and a variable emustack
// does not know is an error, so the emulated stack never runs a function
// with less configuration than the template gives it.
func (st *stack) environment(fn fnSpec, dataEndpoint, awsURL string) (map[string]string, error) {
	byName := map[string]string{
		"GAMES_TABLE":        st.gamesTable,
		"DATA_TABLE":         st.dataTable,
		"LOG_LEVEL":          st.cfg.LogLevel,
		"SCHEDULE_GROUP":     st.group,
		"SCHEDULER_ROLE_ARN": fmt.Sprintf("arn:%s:iam::%s:role/%s-SchedulerInvokeRole", partition, accountID, st.cfg.StackName),
		"SCHEDULE_DLQ_ARN":   fmt.Sprintf("arn:%s:sqs:%s:%s:%s-schedule-dlq", partition, region, accountID, st.cfg.StackName),
		"STREAM_ENDPOINT":    awsURL + "/" + streamStage,
		"AI_API_KEYS":        st.cfg.AIAPIKeys,
		"STREAM_DLQ_URL":     st.deadLetters.URL,
		"DEADLINE_QUEUE_URL": st.deadlines.URL,
		// The edge's secret (the OriginVerifySecret parameter): the front
		// adds it to every request as CloudFront does.
		"ORIGIN_VERIFY_SECRET": st.originSecret,
		// The StreamRetrySeconds parameter: the template's default unless
		// the run sets its own.
		"STREAM_RETRY_SECONDS": strconv.Itoa(cmp.Or(st.cfg.StreamRetrySeconds, defaultStreamRetrySeconds)),
	}
	maps.Copy(byName, st.push.environment())
	env := map[string]string{}
	for k, raw := range fn.Env {
		if ref, ok := raw.(map[string]any); ok {
			if id, ok := ref["Ref"].(string); ok && len(ref) == 1 {
				if target, ok := st.spec.Functions[id]; ok {
					env[k] = target.Name
					continue
				}
			}
		}
		if v, err := substitute(raw, st.cfg.StackName); err == nil && v != "" {
			env[k] = v
			continue
		}
		v, ok := byName[k]
		if !ok {
			return nil, fmt.Errorf("template: %s's variable %s = %v: emustack does not know its local value (add it to stack.environment)", fn.LogicalID, k, raw)
		}
		env[k] = v
	}
	if _, ok := fn.Env["AI_API_KEYS"]; ok && st.cfg.AIAPIKey != "" {
		env["AI_API_KEY"] = st.cfg.AIAPIKey
	}
	maps.Copy(env, map[string]string{
		"AWS_REGION":                 region,
		"AWS_ACCESS_KEY_ID":          fn.LogicalID, // who the IAM guard holds to the function's grants
		"AWS_SECRET_ACCESS_KEY":      "emulator",
		"AWS_ENDPOINT_URL_DYNAMODB":  dataEndpoint,
		"AWS_ENDPOINT_URL_SCHEDULER": dataEndpoint,
		"AWS_ENDPOINT_URL_SQS":       dataEndpoint,
		"AWS_ENDPOINT_URL_SNS":       dataEndpoint,
		"AWS_ENDPOINT_URL_LAMBDA":    awsURL,
	})
	return env, nil
}

// settle waits until the stack has nothing left to do: the games table's
// stream has no new record and no asynchronous invocation is queued or
// running (retries waiting for their time do not count). It gives up when
// ctx ends.
func (st *stack) settle(ctx context.Context) error {
	quiet := 0
	for quiet < 2 { // twice in a row: an AI move made during the first cycle writes again
		n, err := st.pump.now(ctx)
		if err != nil {
			return err
		}
		if n == 0 && st.pump.idle() && st.async.idle() && st.queue.idle() {
			quiet++
		} else {
			quiet = 0
		}
		if quiet < 2 {
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return nil
}

// serveCounts is GET /_counts: the counts as JSON (?format=text: as
// emustack prints them at exit); ?settle=1 waits for the stack to settle
// first, ?reset=1 starts the counts again after reading them.
func (st *stack) serveCounts(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		gatewayError(w, http.StatusMethodNotAllowed, "GET /_counts")
		return
	}
	q := r.URL.Query()
	for k := range q {
		if k != "settle" && k != "reset" && k != "format" {
			gatewayError(w, http.StatusBadRequest, fmt.Sprintf("unknown parameter %q (settle, reset, format)", k))
			return
		}
	}
	if q.Get("settle") == "1" {
		ctx, cancel := context.WithTimeout(r.Context(), 60*time.Second)
		defer cancel()
		if err := st.settle(ctx); err != nil {
			gatewayError(w, http.StatusServiceUnavailable, "the stack did not settle: "+err.Error())
			return
		}
	}
	c := st.counts.take(q.Get("reset") == "1")
	switch q.Get("format") {
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		c.write(w)
	case "", "json":
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.Encode(c)
	default:
		gatewayError(w, http.StatusBadRequest, "format: json or text")
	}
}

// Close stops the front, closes the WebSocket connections (their
// $disconnect runs), lets the last effects finish, and stops every
// process. It is safe on a partly started stack.
func (st *stack) Close() {
	if st.front != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st.front.Shutdown(ctx)
		cancel()
	}
	if st.ws != nil {
		st.ws.closeAll()
	}
	if st.pump != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		st.settle(ctx)
		cancel()
	}
	if st.cancel != nil {
		st.cancel()
		<-st.done
		st.async.wait()
	}
	for _, p := range st.pools {
		p.close()
	}
	if st.guard != nil {
		st.guard.Close()
	}
	if st.awsServer != nil {
		st.awsServer.Close()
	}
	if st.calls != nil {
		st.calls.Close()
	}
	if st.moto != nil {
		if err := st.moto.Close(); err != nil && st.cfg.Log != nil {
			fmt.Fprintf(st.cfg.Log, "emustack: %v\n", err)
		}
	}
	if st.ownBootstraps {
		st.cfg.Bootstraps.Close()
	}
}
