package obs

import "slices"

// Namespace is the CloudWatch namespace the functions publish their
// metrics in (NewMetrics takes it as an argument so tests can use another).
const Namespace = "ChessAPI"

// DimFunctionName is the base dimension of every metric: the Lambda
// function's name (AWS_LAMBDA_FUNCTION_NAME, "<stack>-move"), which carries
// the stack name, so two stacks in one account never mix. There are no
// per-route or per-game dimensions: each distinct dimension value is a
// billed custom metric; the request log lines have the route for Logs
// Insights.
const DimFunctionName = "FunctionName"

// Metric names: the one list of every metric the code publishes. Alarms in
// template.yaml refer to these names; a test there checks every alarm's
// MetricName against Names().
const (
	// The HTTP edge: Middleware, one EMF line per request.
	MetricRequests    = "Requests"
	MetricRequests4xx = "Requests4xx"
	MetricRequests5xx = "Requests5xx"
	MetricRateLimited = "RateLimited"
	MetricRequestMs   = "RequestMs"
	MetricPanics      = "Panics"
	// Games and the AI (the service).
	MetricMoves        = "Moves"
	MetricConflicts    = "Conflicts"
	MetricAIThinkMs    = "AIThinkMs"
	MetricAINodes      = "AINodes"
	MetricAIRetriggers = "AIRetriggers"
	// Work after a commit (service effects) and its failure paths.
	MetricScheduleFailures  = "ScheduleFailures"
	MetricAITriggerFailures = "AITriggerFailures"
	MetricPushFailures      = "PushFailures"
	MetricStaleConnections  = "StaleConnections"
	MetricEffectRetries     = "EffectRetries"
	// MetricNotificationFailures: delivering a commit's notifications
	// (the inbox, the devices) failed after its bounded retries.
	MetricNotificationFailures = "NotificationFailures"
	// The games table's stream consumers (lambdafn fanout.go).
	MetricStreamRecordsRetried      = "StreamRecordsRetried"
	MetricStreamRecordsDeadLettered = "StreamRecordsDeadLettered"
	// Deadlines.
	MetricTimeoutLateMs = "TimeoutLateMs"
)

// MetricSpec describes one registered metric.
type MetricSpec struct {
	Name string
	Unit Unit
	// Help says what one data point means and who emits it.
	Help string
}

// registry is in documentation order (docs/observability.md has the same
// table; a test checks the two agree).
var registry = []MetricSpec{
	{MetricRequests, UnitCount, "1 per HTTP request answered (Middleware); the denominator of error rates"},
	{MetricRequests4xx, UnitCount, "1 if the answer was 4xx, else 0, on every request (Average = client error rate)"},
	{MetricRequests5xx, UnitCount, "1 if the answer was 5xx, else 0, on every request (Average = server error rate)"},
	{MetricRateLimited, UnitCount, "1 if the answer was 429, else 0, on every request (abuse, quotas)"},
	{MetricRequestMs, UnitMilliseconds, "time from the request reaching Middleware to the handler's return"},
	{MetricPanics, UnitCount, "a panic while serving: recovered by the api handler, or seen by Middleware"},
	{MetricMoves, UnitCount, "a move committed (human or AI seat)"},
	{MetricConflicts, UnitCount, "a conditional write lost to a concurrent writer (retried or answered 409)"},
	{MetricAIThinkMs, UnitMilliseconds, "engine search time of one AI move (AI seat or POST /v1/ai/move)"},
	{MetricAINodes, UnitCount, "nodes searched for one AI move"},
	{MetricAIRetriggers, UnitCount, "an unanswered AI turn started again by the watchdog timer"},
	{MetricScheduleFailures, UnitCount, "arming a game's timer (a schedule) failed after its bounded retries"},
	{MetricAITriggerFailures, UnitCount, "starting an AI turn (async invoke) failed after its bounded retries"},
	{MetricPushFailures, UnitCount, "a push to a live connection failed (other than the connection being gone)"},
	{MetricNotificationFailures, UnitCount, "delivering a commit's notifications (inbox, devices) failed after its bounded retries"},
	{MetricStaleConnections, UnitCount, "a push found its connection gone (410); the connection was dropped"},
	{MetricEffectRetries, UnitCount, "one failed attempt of an effect that will be tried again"},
	{MetricStreamRecordsRetried, UnitCount, "a stream record a consumer answered to be delivered again (failed, or not reached before the deadline)"},
	{MetricStreamRecordsDeadLettered, UnitCount, "a stream record a consumer gave up on and wrote whole to the dead-letter queue"},
	{MetricTimeoutLateMs, UnitMilliseconds, "how long after its deadline a timeout task was handled"},
}

// Names returns every registered metric name, in registry order.
func Names() []string {
	out := make([]string, len(registry))
	for i, s := range registry {
		out[i] = s.Name
	}
	return out
}

// Registry returns every registered metric with its unit and meaning.
func Registry() []MetricSpec { return slices.Clone(registry) }

// Lookup returns the registered metric called name.
func Lookup(name string) (MetricSpec, bool) {
	for _, s := range registry {
		if s.Name == name {
			return s, true
		}
	}
	return MetricSpec{}, false
}
