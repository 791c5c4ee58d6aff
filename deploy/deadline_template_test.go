package deploy

import (
	"fmt"
	"slices"
	"testing"
)

// The deadline queue (shared/schedule/sqsdelay): the timers due within
// SQS's 15-minute delay, read by the deadline function through an event
// source mapping.

// TestTemplateDeadlineQueue: the queue is encrypted, keeps a message
// longer than its longest delay and all its receives, hides a received
// batch for at least six times the deadline function's timeout (Lambda's
// rule for a queue it polls,
// https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html),
// and moves a timer that failed every receive to a dead-letter queue of
// its own that outlives it.
func TestTemplateDeadlineQueue(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	q := tmpl.Properties("DeadlineQueue")
	if q == nil {
		t.Fatal("template.yaml has no DeadlineQueue")
	}
	num := func(m map[string]any, k string) int { n, _ := m[k].(int); return n }
	timeout := num(tmpl.Properties("TimeoutFunction"), "Timeout")
	visibility, retention := num(q, "VisibilityTimeout"), num(q, "MessageRetentionPeriod")
	if timeout < 1 || visibility < 6*timeout {
		t.Errorf("DeadlineQueue VisibilityTimeout %d s; want at least 6 × the deadline function's %d s", visibility, timeout)
	}
	if q["SqsManagedSseEnabled"] != true {
		t.Error("DeadlineQueue is not encrypted (SqsManagedSseEnabled)")
	}
	redrive, _ := mapAt(q, "RedrivePolicy")
	receives := num(redrive, "maxReceiveCount")
	if fmt.Sprint(redrive["deadLetterTargetArn"]) != "map[Fn::GetAtt:[DeadlineDeadLetterQueue Arn]]" || receives < 2 || receives > 10 {
		t.Errorf("DeadlineQueue RedrivePolicy %v; want DeadlineDeadLetterQueue after 2 to 10 receives", redrive)
	}
	const maxDelay = 900
	if retention <= maxDelay+receives*visibility {
		t.Errorf("DeadlineQueue keeps a message %d s; want longer than the 900 s delay and %d receives of %d s", retention, receives, visibility)
	}
	dlq := tmpl.Properties("DeadlineDeadLetterQueue")
	if num(dlq, "MessageRetentionPeriod") <= retention || dlq["SqsManagedSseEnabled"] != true {
		// A standard queue's message keeps its first enqueue time in the
		// dead-letter queue: the dead-letter queue must keep it longer.
		t.Errorf("DeadlineDeadLetterQueue %v; want encrypted, kept longer than the queue's %d s", dlq, retention)
	}
}

// TestTemplateDeadlineQueueMapping: the deadline function reads the queue
// in batches it can run at once, without a batching window, answering the
// records that failed; capped at its reserved concurrency when it has one
// the mapping accepts (2 to 1000), uncapped otherwise.
func TestTemplateDeadlineQueueMapping(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	var mappings []string
	for _, id := range tmpl.ResourcesOfType("AWS::Lambda::EventSourceMapping") {
		if fmt.Sprint(tmpl.Properties(id)["EventSourceArn"]) == "map[Fn::GetAtt:[DeadlineQueue Arn]]" {
			mappings = append(mappings, id)
		}
	}
	if len(mappings) != 1 {
		t.Fatalf("event source mappings of DeadlineQueue: %v; want one", mappings)
	}
	m := tmpl.Properties(mappings[0])
	batch, _ := m["BatchSize"].(int)
	window, hasWindow := m["MaximumBatchingWindowInSeconds"].(int)
	types, _ := m["FunctionResponseTypes"].([]any)
	if refOf(m["FunctionName"]) != "TimeoutFunction" || batch < 1 || batch > 10 || !hasWindow || window != 0 ||
		!slices.Contains(types, any("ReportBatchItemFailures")) {
		t.Errorf("%s: %v; want TimeoutFunction, batches of 1 to 10 (lambdafn runs 10 at once), no window, ReportBatchItemFailures", mappings[0], m)
	}
	for params, want := range map[string]string{
		"":                        "map[MaximumConcurrency:map[Ref:TimeoutConcurrency]]",
		"TimeoutConcurrency=-1":   "<nil>",
		"TimeoutConcurrency=1":    "<nil>",
		"TimeoutConcurrency=1000": "map[MaximumConcurrency:map[Ref:TimeoutConcurrency]]",
	} {
		set := map[string]string{}
		if params != "" {
			set["TimeoutConcurrency"] = params[len("TimeoutConcurrency="):]
		}
		s := deployedWith(t, tmpl, set)
		got := s.props(mappings[0])["ScalingConfig"]
		if refOf(got) == "AWS::NoValue" {
			got = nil
		}
		if fmt.Sprint(got) != want {
			t.Errorf("with %q: ScalingConfig %v; want %s", params, got, want)
		}
	}
}

// TestTemplateDeadlineQueueGrants: the function that arms timers (the one
// that may create schedules) may send to the queue and is told its URL;
// the deadline function may receive and delete from it, nothing more; no
// other function touches it.
func TestTemplateDeadlineQueueGrants(t *testing.T) {
	tmpl := loadRepoTemplate(t)
	const queue = "GetAtt:DeadlineQueue.Arn"
	want := map[string][]string{
		"EffectsFunction": {"sqs:SendMessage"},
		"TimeoutFunction": {"sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ReceiveMessage"},
	}
	for _, fn := range tmpl.Functions {
		var onQueue []string
		var schedules bool
		for _, st := range policyStatements(tmpl, fn.LogicalID) {
			if slices.Contains(st.actions, "scheduler:CreateSchedule") {
				schedules = true
			}
			if slices.Contains(st.resources, queue) {
				onQueue = append(onQueue, st.actions...)
			}
		}
		slices.Sort(onQueue)
		if !slices.Equal(onQueue, want[fn.LogicalID]) {
			t.Errorf("%s may %v on the deadline queue; want %v", fn.LogicalID, onQueue, want[fn.LogicalID])
		}
		vars, _ := mapAt(tmpl.Properties(fn.LogicalID), "Environment", "Variables")
		url := refOf(vars["DEADLINE_QUEUE_URL"])
		if schedules != (url == "DeadlineQueue") || schedules != slices.Contains(onQueue, "sqs:SendMessage") {
			t.Errorf("%s: creates schedules %v, DEADLINE_QUEUE_URL %v, sends to the queue %v; a function that arms timers needs all three, another none",
				fn.LogicalID, schedules, vars["DEADLINE_QUEUE_URL"], slices.Contains(onQueue, "sqs:SendMessage"))
		}
	}
}
