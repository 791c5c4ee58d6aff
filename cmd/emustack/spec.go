package main

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"chessapi/deploy"
)

// The account, region and partition the emulated stack pretends to live
// in: moto accepts any, and the ARNs only have to look like the deployed
// ones (the functions check that their ARN variables start with "arn:").
const (
	accountID = "123456789012"
	region    = "us-east-1"
	partition = "aws"
)

// functionPackages is the Makefile's build-<LogicalId> recipes: which main
// package each function of template.yaml runs (the view and poll
// functions run the move binary, the AI seats the ai binary). TestFunctionPackagesMatchMakefile
// holds the two together.
var functionPackages = map[string]string{
	"MoveFunction":    "./functions/move",
	"ViewFunction":    "./functions/move",
	"PollFunction":    "./functions/move",
	"TimeoutFunction": "./functions/timeout",
	"AiFunction":      "./functions/ai",
	"AiSeatFunction":  "./functions/ai",
	"StreamFunction":  "./functions/stream",
	"FanoutFunction":  "./functions/fanout",
	"EffectsFunction": "./functions/effects",
}

// Lambda's defaults for asynchronous invocations, used where the template
// sets no EventInvokeConfig (the AWS Lambda developer guide, "Configuring
// error handling for asynchronous invocation").
const (
	defaultAsyncRetries = 2
	defaultAsyncMaxAge  = 6 * time.Hour
)

// fnSpec is one AWS::Serverless::Function of the template as emustack runs
// it.
type fnSpec struct {
	LogicalID string
	Package   string // main package, from functionPackages
	Name      string // FunctionName with ${AWS::StackName} substituted
	MemoryMB  int
	Timeout   time.Duration
	// Env is the function's environment variables as the template writes
	// them (intrinsic functions decoded to their long forms).
	Env map[string]any
	// Asynchronous invocations (EventInvokeConfig): how often Lambda
	// retries a failed one, how old one may get, and the queue (logical
	// ID) that receives what still failed.
	AsyncRetries  int
	AsyncMaxAge   time.Duration
	AsyncFailures string
}

// streamSource is one DynamoDB event source mapping on the games table's
// stream (the template has two: the fan-out's and the effects').
type streamSource struct {
	Function   string // logical ID
	BatchSize  int
	MaxRetries int           // MaximumRetryAttempts (-1: until the record expires)
	MaxAge     time.Duration // MaximumRecordAgeInSeconds
	Bisect     bool          // BisectBatchOnFunctionError
	OnFailure  string        // logical ID of the destination queue
}

// queueSource is the SQS event source mapping of the deadline function
// on the deadline queue, and the queue as the template declares it.
type queueSource struct {
	Function string // logical ID
	Queue    string // logical ID of the queue
	// QueueName and DeadLetterName are the queue's and its redrive
	// target's QueueName (an !Sub of the stack name), as written.
	QueueName, DeadLetterName any
	BatchSize                 int
	Visibility                time.Duration // the queue's VisibilityTimeout
	MaxReceives               int           // the redrive policy's maxReceiveCount
}

// stackSpec is what emustack reads from template.yaml.
type stackSpec struct {
	StackName    string
	Routes       []deploy.Route
	StreamRoutes []deploy.StreamRoute
	Functions    map[string]fnSpec // by logical ID
	// Sources are the event source mappings on the games table's stream,
	// by function logical ID order.
	Sources []streamSource
	// Timeouts are the integration timeouts of the HTTP routes
	// (TimeoutInMillis), by route pattern.
	Timeouts map[string]time.Duration
	// GroupName is the deadline schedule group's Name as the template
	// writes it (an !Sub of the stack name).
	GroupName any
	// Deadlines is the deadline queue's event source mapping.
	Deadlines queueSource
}

// functionByName finds the function an Invoke call or a schedule target
// names: its name, its ARN, either with a qualifier (":$LATEST", an alias).
func (s *stackSpec) functionByName(nameOrARN string) (fnSpec, bool) {
	name := nameOrARN
	if rest, ok := strings.CutPrefix(name, "arn:"); ok {
		// arn:partition:lambda:region:account:function:name[:qualifier]
		parts := strings.Split(rest, ":")
		if len(parts) < 6 || parts[1] != "lambda" || parts[4] != "function" {
			return fnSpec{}, false
		}
		name = parts[5]
	} else {
		name, _, _ = strings.Cut(name, ":")
	}
	for _, f := range s.Functions {
		if f.Name == name {
			return f, true
		}
	}
	return fnSpec{}, false
}

// loadSpec reads the template at path for a stack named stackName.
func loadSpec(path, stackName string) (*stackSpec, error) {
	tmpl, err := deploy.LoadTemplate(path)
	if err != nil {
		return nil, err
	}
	return specOf(tmpl, stackName)
}

// specOf extracts the stack's functions, routes and stream source.
func specOf(tmpl *deploy.Template, stackName string) (*stackSpec, error) {
	spec := &stackSpec{
		StackName:    stackName,
		Routes:       tmpl.Routes,
		StreamRoutes: tmpl.StreamRoutes,
		Functions:    map[string]fnSpec{},
		Timeouts:     map[string]time.Duration{},
	}
	var errs []error
	for _, f := range tmpl.Functions {
		fs, err := functionOf(tmpl, f, stackName)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		spec.Functions[f.LogicalID] = fs
	}
	for id := range tmpl.Resources {
		props := tmpl.Properties(id)
		if tmpl.Resources[id]["Type"] != "AWS::Serverless::Function" {
			continue
		}
		evs, _ := props["Events"].(map[string]any)
		for name, e := range evs {
			ev, _ := e.(map[string]any)
			p, _ := ev["Properties"].(map[string]any)
			switch ev["Type"] {
			case "HttpApi":
				method, _ := p["Method"].(string)
				path, _ := p["Path"].(string)
				ms, ok := number(p["TimeoutInMillis"])
				if !ok {
					ms = 30000 // the HTTP API's default (and maximum) integration timeout
				}
				spec.Timeouts[strings.ToUpper(method)+" "+path] = time.Duration(ms) * time.Millisecond
			case "DynamoDB":
				src, err := sourceOf(id, name, p)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				spec.Sources = append(spec.Sources, src)
			}
		}
	}
	var queueMappings []queueSource
	for _, id := range tmpl.ResourcesOfType("AWS::Lambda::EventSourceMapping") {
		src, ok, err := queueSourceOf(tmpl, id)
		if err != nil {
			errs = append(errs, err)
		} else if ok {
			queueMappings = append(queueMappings, src)
		}
	}
	if len(queueMappings) != 1 {
		errs = append(errs, fmt.Errorf("template: %d SQS event source mappings; emustack runs one, the deadline queue's", len(queueMappings)))
	} else {
		spec.Deadlines = queueMappings[0]
	}
	if groups := tmpl.ResourcesOfType("AWS::Scheduler::ScheduleGroup"); len(groups) != 1 {
		errs = append(errs, fmt.Errorf("template: %d schedule groups (%v); emustack runs one", len(groups), groups))
	} else {
		spec.GroupName = tmpl.Properties(groups[0])["Name"]
	}
	slices.SortFunc(spec.Sources, func(a, b streamSource) int { return strings.Compare(a.Function, b.Function) })
	if len(spec.Sources) == 0 {
		errs = append(errs, errors.New("template: no function has the games table's stream (a DynamoDB event)"))
	}
	for i := 1; i < len(spec.Sources); i++ {
		if spec.Sources[i].Function == spec.Sources[i-1].Function {
			errs = append(errs, fmt.Errorf("template: %s has two DynamoDB event sources (emustack feeds one per function)", spec.Sources[i].Function))
		}
	}
	if len(spec.Routes) == 0 {
		errs = append(errs, errors.New("template: no HttpApi routes"))
	}
	for _, r := range spec.StreamRoutes {
		if _, ok := spec.Functions[r.Function]; !ok {
			errs = append(errs, fmt.Errorf("template: stream route %s invokes %s, which is not a function", r.RouteKey, r.Function))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return spec, nil
}

func functionOf(tmpl *deploy.Template, fn deploy.Function, stackName string) (fnSpec, error) {
	id := fn.LogicalID
	props := tmpl.Properties(id)
	pkg, ok := functionPackages[id]
	if !ok {
		return fnSpec{}, fmt.Errorf("template: function %s is not in emustack's functionPackages (add the package its Makefile target builds)", id)
	}
	fs := fnSpec{LogicalID: id, Package: pkg, Env: map[string]any{},
		AsyncRetries: defaultAsyncRetries, AsyncMaxAge: defaultAsyncMaxAge}
	name, err := substitute(props["FunctionName"], stackName)
	if err != nil {
		return fnSpec{}, fmt.Errorf("template: %s FunctionName: %w", id, err)
	}
	if name == "" {
		return fnSpec{}, fmt.Errorf("template: %s has no FunctionName (emustack needs the fixed name the other functions call it by)", id)
	}
	fs.Name = name
	// Globals are not in deploy.Template's resources: the two sizes must
	// be the function's own, so that emustack never runs a function with
	// a default the template does not mean.
	mem, ok := number(props["MemorySize"])
	if !ok {
		return fnSpec{}, fmt.Errorf("template: %s has no MemorySize of its own (emustack does not read Globals for it)", id)
	}
	fs.MemoryMB = mem
	timeout, ok := number(props["Timeout"])
	if !ok {
		return fnSpec{}, fmt.Errorf("template: %s has no Timeout of its own (emustack does not read Globals for it)", id)
	}
	fs.Timeout = time.Duration(timeout) * time.Second
	// Every variable the function gets (Globals merged, by deploy); the
	// value where the function itself sets it, else nil (a Globals value:
	// resolved by its name, see environment).
	for _, k := range fn.EnvKeys {
		fs.Env[k] = nil
	}
	vars, _ := props["Environment"].(map[string]any)
	if v, ok := vars["Variables"].(map[string]any); ok {
		for k, val := range v {
			fs.Env[k] = val
		}
	}
	if cfg, ok := props["EventInvokeConfig"].(map[string]any); ok {
		if n, ok := number(cfg["MaximumRetryAttempts"]); ok {
			fs.AsyncRetries = n
		}
		if n, ok := number(cfg["MaximumEventAgeInSeconds"]); ok {
			fs.AsyncMaxAge = time.Duration(n) * time.Second
		}
		if dest, ok := cfg["DestinationConfig"].(map[string]any); ok {
			fs.AsyncFailures = destinationOf(dest)
		}
	}
	return fs, nil
}

func sourceOf(fn, event string, p map[string]any) (streamSource, error) {
	src := streamSource{Function: fn, BatchSize: 100, MaxRetries: -1, MaxAge: -1}
	if n, ok := number(p["BatchSize"]); ok {
		src.BatchSize = n
	}
	if n, ok := number(p["MaximumRetryAttempts"]); ok {
		src.MaxRetries = n
	}
	if n, ok := number(p["MaximumRecordAgeInSeconds"]); ok && n >= 0 {
		src.MaxAge = time.Duration(n) * time.Second
	}
	src.Bisect, _ = p["BisectBatchOnFunctionError"].(bool)
	if dest, ok := p["DestinationConfig"].(map[string]any); ok {
		src.OnFailure = destinationOf(dest)
	}
	if src.BatchSize < 1 {
		return src, fmt.Errorf("template: %s.%s: BatchSize %d", fn, event, src.BatchSize)
	}
	if types, _ := p["FunctionResponseTypes"].([]any); !slices.Contains(types, any("ReportBatchItemFailures")) {
		return src, fmt.Errorf("template: %s.%s: emustack expects FunctionResponseTypes [ReportBatchItemFailures]", fn, event)
	}
	return src, nil
}

// queueSourceOf reads an AWS::Lambda::EventSourceMapping on an SQS queue
// of the template (ok false for one on something else).
func queueSourceOf(tmpl *deploy.Template, id string) (queueSource, bool, error) {
	p := tmpl.Properties(id)
	queue := getAttArn(p["EventSourceArn"])
	if queue == "" || tmpl.Resources[queue]["Type"] != "AWS::SQS::Queue" {
		return queueSource{}, false, nil
	}
	fn, _ := p["FunctionName"].(map[string]any)
	src := queueSource{Queue: queue, BatchSize: 10}
	src.Function, _ = fn["Ref"].(string)
	if _, ok := functionPackages[src.Function]; !ok {
		return src, false, fmt.Errorf("template: %s: FunctionName %v is not a !Ref to a function", id, p["FunctionName"])
	}
	if n, ok := number(p["BatchSize"]); ok {
		src.BatchSize = n
	}
	if types, _ := p["FunctionResponseTypes"].([]any); !slices.Contains(types, any("ReportBatchItemFailures")) {
		return src, false, fmt.Errorf("template: %s: emustack expects FunctionResponseTypes [ReportBatchItemFailures]", id)
	}
	q := tmpl.Properties(queue)
	src.QueueName = q["QueueName"]
	vis, ok := number(q["VisibilityTimeout"])
	if !ok {
		vis = 30 // SQS's default
	}
	src.Visibility = time.Duration(vis) * time.Second
	redrive, _ := q["RedrivePolicy"].(map[string]any)
	dlq := getAttArn(redrive["deadLetterTargetArn"])
	receives, ok := number(redrive["maxReceiveCount"])
	if dlq == "" || !ok {
		return src, false, fmt.Errorf("template: %s: emustack expects a RedrivePolicy (deadLetterTargetArn: !GetAtt Queue.Arn, maxReceiveCount)", queue)
	}
	src.MaxReceives = receives
	src.DeadLetterName = tmpl.Properties(dlq)["QueueName"]
	if src.BatchSize < 1 || src.BatchSize > 10 {
		return src, false, fmt.Errorf("template: %s: BatchSize %d; emustack receives 1 to 10 at a time (one ReceiveMessage)", id, src.BatchSize)
	}
	return src, true, nil
}

// getAttArn reads !GetAtt Resource.Arn ("" for anything else).
func getAttArn(v any) string {
	m, _ := v.(map[string]any)
	parts, _ := m["Fn::GetAtt"].([]any)
	if len(parts) == 2 && parts[1] == "Arn" {
		id, _ := parts[0].(string)
		return id
	}
	return ""
}

// destinationOf reads OnFailure.Destination: !GetAtt Queue.Arn.
func destinationOf(dest map[string]any) string {
	onFailure, _ := dest["OnFailure"].(map[string]any)
	getAtt, _ := onFailure["Destination"].(map[string]any)
	parts, _ := getAtt["Fn::GetAtt"].([]any)
	if len(parts) == 2 {
		if id, ok := parts[0].(string); ok {
			return id
		}
	}
	return ""
}

// number reads an integer the YAML decoder gave as int or float64.
func number(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

// pseudoParam matches the ${AWS::...} and ${Resource...} references of an
// Fn::Sub string.
var pseudoParam = regexp.MustCompile(`\$\{([A-Za-z0-9:.]+)\}`)

// substitute resolves a plain string or an Fn::Sub that uses only pseudo
// parameters (the stack's name, partition, region, account, URL suffix).
// A reference to a resource or parameter is an error: the caller decides
// what such a value is locally.
func substitute(v any, stackName string) (string, error) {
	var s string
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case map[string]any:
		sub, ok := v["Fn::Sub"].(string)
		if !ok || len(v) != 1 {
			return "", fmt.Errorf("%v is not a string or an !Sub of one", v)
		}
		s = sub
	default:
		return "", fmt.Errorf("%v (%T) is not a string", v, v)
	}
	var bad []string
	out := pseudoParam.ReplaceAllStringFunc(s, func(ref string) string {
		switch name := ref[2 : len(ref)-1]; name {
		case "AWS::StackName":
			return stackName
		case "AWS::Partition":
			return partition
		case "AWS::Region":
			return region
		case "AWS::AccountId":
			return accountID
		case "AWS::URLSuffix":
			return "amazonaws.com"
		default:
			bad = append(bad, name)
			return ref
		}
	})
	if len(bad) > 0 {
		return "", fmt.Errorf("!Sub %q refers to %s, not only to pseudo parameters", s, strings.Join(bad, ", "))
	}
	return out, nil
}
