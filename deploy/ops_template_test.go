package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"chessapi/shared/obs"
)

// Operating the stack (SPEC §13): every failure path has a destination
// and an alarm, the alarms watch metrics the code emits, and the abuse
// bounds are in place.

// TestTemplateAlarmsWatchEmittedMetrics: an alarm on the service's own
// namespace names a metric of shared/obs's registry (a renamed metric
// would leave the alarm watching nothing), and every alarm notifies the
// alarm topic.
func TestTemplateAlarmsWatchEmittedMetrics(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	alarms := tmpl.ResourcesOfType("AWS::CloudWatch::Alarm")
	if len(alarms) == 0 {
		t.Fatal("template.yaml has no alarms")
	}
	watched := map[string]bool{}
	for _, id := range alarms {
		p := tmpl.Properties(id)
		ns, _ := p["Namespace"].(string)
		metric, _ := p["MetricName"].(string)
		if ns == obs.Namespace {
			if _, ok := obs.Lookup(metric); !ok {
				t.Errorf("alarm %s watches %s/%s, which shared/obs never emits (registry: %v)", id, ns, metric, obs.Names())
			}
			for _, d := range asList(p["Dimensions"]) {
				if m, _ := d.(map[string]any); m["Name"] != obs.DimFunctionName {
					t.Errorf("alarm %s: dimension %v; the service's metrics have only %s", id, m["Name"], obs.DimFunctionName)
				}
			}
		}
		watched[ns+"/"+metric] = true
		if acts := asList(p["AlarmActions"]); len(acts) != 1 || refOf(acts[0]) != "AlarmTopic" {
			t.Errorf("alarm %s notifies %v; want the AlarmTopic", id, p["AlarmActions"])
		}
	}
	for _, want := range []string{
		"AWS/Lambda/Errors", "AWS/Lambda/Throttles", "AWS/Lambda/AsyncEventsDropped", "AWS/Lambda/IteratorAge",
		"AWS/SQS/ApproximateNumberOfMessagesVisible", "AWS/ApiGateway/5xx",
		obs.Namespace + "/" + obs.MetricRequests5xx, obs.Namespace + "/" + obs.MetricScheduleFailures,
		obs.Namespace + "/" + obs.MetricAITriggerFailures, obs.Namespace + "/" + obs.MetricPushFailures,
	} {
		if !watched[want] {
			t.Errorf("no alarm watches %s", want)
		}
	}
	// Every function's errors and throttles are watched, every queue's depth.
	for _, fn := range tmpl.Functions {
		for _, metric := range []string{"Errors", "Throttles"} {
			if !slices.ContainsFunc(alarms, func(id string) bool { return alarmOn(tmpl, id, "AWS/Lambda", metric, fn.LogicalID) }) {
				t.Errorf("no alarm on %s of %s", metric, fn.LogicalID)
			}
		}
	}
	for _, q := range tmpl.ResourcesOfType("AWS::SQS::Queue") {
		if !slices.ContainsFunc(alarms, func(id string) bool { return alarmOn(tmpl, id, "AWS/SQS", "ApproximateNumberOfMessagesVisible", q) }) {
			t.Errorf("no alarm on the depth of %s", q)
		}
	}
	if len(tmpl.ResourcesOfType("AWS::CloudWatch::Dashboard")) != 1 {
		t.Error("template.yaml has no dashboard")
	}
}

// alarmOn reports whether alarm id watches metric of the resource named by
// its dimension (a !Ref or !GetAtt of that logical id).
func alarmOn(tmpl *Template, id, ns, metric, resource string) bool {
	p := tmpl.Properties(id)
	if p["Namespace"] != ns || p["MetricName"] != metric {
		return false
	}
	for _, d := range asList(p["Dimensions"]) {
		m, _ := d.(map[string]any)
		if strings.Contains(fmt.Sprint(m["Value"]), resource) {
			return true
		}
	}
	return false
}

// TestTemplateFailureDestinations: what is invoked asynchronously or read
// from a stream ends in a dead-letter queue after its retries, and the
// functions that send there may.
func TestTemplateFailureDestinations(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	for _, fn := range []string{"TimeoutFunction", "AiSeatFunction"} {
		cfg, _ := mapAt(tmpl.Properties(fn), "EventInvokeConfig")
		retries, _ := cfg["MaximumRetryAttempts"].(int)
		if cfg == nil || retries < 0 || retries > 2 {
			t.Errorf("%s: EventInvokeConfig %v; want bounded retries", fn, cfg)
		}
		dest, _ := mapAt(cfg, "DestinationConfig", "OnFailure")
		checkQueue(t, tmpl, fn+" on-failure destination", dest)
	}
	// The schedules' own dead-letter queue: the timeout and fan-out
	// functions name it, and the scheduler's role may send to it.
	for _, fn := range []string{"TimeoutFunction", "FanoutFunction"} {
		vars, _ := mapAt(tmpl.Properties(fn), "Environment", "Variables")
		if got := fmt.Sprint(vars["SCHEDULE_DLQ_ARN"]); got != "map[Fn::GetAtt:[ScheduleDeadLetterQueue Arn]]" {
			t.Errorf("%s SCHEDULE_DLQ_ARN = %s; want the schedule dead-letter queue", fn, got)
		}
	}
	var roleMaySend bool
	pols, _ := tmpl.Properties("SchedulerInvokeRole")["Policies"].([]any)
	for _, p := range pols {
		doc, _ := mapAt(p.(map[string]any), "PolicyDocument")
		for _, st := range asList(doc["Statement"]) {
			m, _ := st.(map[string]any)
			if m["Action"] == "sqs:SendMessage" && fmt.Sprint(m["Resource"]) == "map[Fn::GetAtt:[ScheduleDeadLetterQueue Arn]]" {
				roleMaySend = true
			}
		}
	}
	if !roleMaySend {
		t.Error("the scheduler's role may not send to the schedule dead-letter queue (EventBridge Scheduler sends as the schedule's role)")
	}
}

// TestTemplateAlarmTopicReachable: CloudWatch can publish to an encrypted
// topic only with a customer managed key whose policy lets
// cloudwatch.amazonaws.com use it; the AWS-managed alias/aws/sns key
// would swallow every alarm without an error anywhere.
func TestTemplateAlarmTopicReachable(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	keyRef := tmpl.Properties("AlarmTopic")["KmsMasterKeyId"]
	if keyRef == nil {
		return // an unencrypted topic is reachable
	}
	key := refOf(keyRef)
	if key == "" || !slices.Contains(tmpl.ResourcesOfType("AWS::KMS::Key"), key) {
		t.Fatalf("AlarmTopic is encrypted with %v; want a key of this template (CloudWatch cannot use alias/aws/sns)", keyRef)
	}
	policy, _ := mapAt(tmpl.Properties(key), "KeyPolicy")
	var decrypt, generate bool
	for _, st := range asList(policy["Statement"]) {
		m, _ := st.(map[string]any)
		principal, _ := mapAt(m, "Principal")
		if m["Effect"] != "Allow" || principal["Service"] != "cloudwatch.amazonaws.com" {
			continue
		}
		for _, a := range asList(m["Action"]) {
			decrypt = decrypt || a == "kms:Decrypt"
			generate = generate || a == "kms:GenerateDataKey*"
		}
	}
	if !decrypt || !generate {
		t.Errorf("%s's policy does not let cloudwatch.amazonaws.com Decrypt and GenerateDataKey*: %v", key, policy)
	}
}

// TestTemplateAbuseBounds: the functions the public (or a schedule) can
// reach run on reserved concurrency of their own
// (TestTemplateReservedConcurrency holds every function to it).
func TestTemplateAbuseBounds(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	for _, fn := range []string{"MoveFunction", "ViewFunction", "PollFunction", "AiFunction", "AiSeatFunction", "StreamFunction", "TimeoutFunction"} {
		if _, ok := tmpl.Properties(fn)["ReservedConcurrentExecutions"]; !ok {
			t.Errorf("%s has no reserved concurrency", fn)
		}
	}
}

// loadRawTemplate decodes template.yaml as a whole.
func loadRawTemplate(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	v, err := decodeNode(&doc)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := v.(map[string]any)
	return root
}
