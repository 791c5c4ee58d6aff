package lambdafn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/shared/obs"
	"chessapi/shared/service"
)

// ErrBadTask is wrapped by the error for a task input that is not a valid
// service.TimeoutTask or service.AITask. Only our own scheduler and trigger
// send these, so a bad one is a bug: it fails loudly (a Lambda error, seen
// in the function's Errors metric) rather than being dropped in silence.
var ErrBadTask = errors.New("invalid task")

// ErrUnknownEvent is returned by HandleAI for input that is neither an API
// Gateway request nor an AI task.
var ErrUnknownEvent = errors.New("event is neither an HTTP API request nor an AI task")

// HandleTimeout runs a deadline schedule's delivery. Deliveries are at least
// once and may be early or stale; the service decides from the stored game
// (a no-op then). An error is returned whenever the work could not be done,
// so EventBridge Scheduler delivers again.
func (a *App) HandleTimeout(ctx context.Context, task service.TimeoutTask) error {
	if err := checkTimeoutTask(task); err != nil {
		a.log.Error("timeout task rejected", "task", task, "err", err)
		return err
	}
	start := time.Now()
	ctx = a.withRequest(ctx, "", "timeout", task.GameID)
	log := a.log.With("version", task.Version, "deadline", task.Deadline)
	if err := a.service.HandleTimeout(ctx, task); err != nil {
		log.ErrorContext(ctx, "timeout task failed; Lambda retries it, then it goes to the dead-letter queue", "err", err, "ms", time.Since(start).Milliseconds())
		return fmt.Errorf("timeout of game %s version %d: %w", task.GameID, task.Version, err)
	}
	// late is how long after the deadline the schedule fired (negative:
	// early, and nothing was due).
	late := start.Sub(task.Deadline)
	if late >= 0 {
		a.metrics.Duration(obs.MetricTimeoutLateMs, late)
	}
	log.InfoContext(ctx, "timeout task handled", "lateMs", late.Milliseconds(), "ms", time.Since(start).Milliseconds())
	return nil
}

func checkTimeoutTask(task service.TimeoutTask) error {
	if task.GameID == "" || task.Version < 1 || task.Deadline.IsZero() {
		return fmt.Errorf("%w: timeout task needs gameId, version >= 1 and deadline (got %+v)", ErrBadTask, task)
	}
	return nil
}

// HandleAI serves the ai function's two inputs, told apart by their shape:
// an API Gateway HTTP API request (POST /v1/ai/move, answered like
// HandleHTTP) or the asynchronous AI-seat trigger, a service.AITask. For a
// task the result is null; its error makes Lambda retry the invocation.
func (a *App) HandleAI(ctx context.Context, raw json.RawMessage) (any, error) {
	switch kindOf(raw) {
	case kindHTTP:
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			// The shape said HTTP but a field has the wrong type: a broken
			// integration, not a client (API Gateway builds this JSON).
			a.log.Error("undecodable API Gateway event", "err", err)
			return nil, fmt.Errorf("lambdafn: API Gateway event: %w", err)
		}
		return a.HandleHTTP(ctx, ev)
	case kindAITask:
		task, err := decodeAITask(raw)
		if err != nil {
			a.log.Error("AI task rejected", "err", err)
			return nil, err
		}
		return nil, a.playAITurn(ctx, task)
	}
	a.log.Error("unrecognised event", "bytes", len(raw))
	return nil, ErrUnknownEvent
}

func (a *App) playAITurn(ctx context.Context, task service.AITask) error {
	start := time.Now()
	ctx = a.withRequest(ctx, "", "ai-task", task.GameID)
	log := a.log.With("version", task.Version, "ply", task.Ply)
	if err := a.service.PlayAITurn(ctx, task); err != nil {
		log.ErrorContext(ctx, "AI turn failed", "err", err, "ms", time.Since(start).Milliseconds())
		return fmt.Errorf("AI turn of game %s version %d: %w", task.GameID, task.Version, err)
	}
	log.InfoContext(ctx, "AI task handled", "ms", time.Since(start).Milliseconds())
	return nil
}

type eventKind int

const (
	kindUnknown eventKind = iota
	kindHTTP
	kindAITask
)

// kindOf tells an API Gateway payload 2.0 request (it always has routeKey
// and requestContext) from an AI task (gameId and version, nothing else).
func kindOf(raw []byte) eventKind {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return kindUnknown
	}
	_, route := probe["routeKey"]
	_, reqCtx := probe["requestContext"]
	_, game := probe["gameId"]
	switch {
	case route || reqCtx:
		return kindHTTP
	case game:
		return kindAITask
	}
	return kindUnknown
}

// decodeAITask decodes a task strictly: an unknown field means the sender
// and this function disagree about the format.
func decodeAITask(raw []byte) (service.AITask, error) {
	var task service.AITask
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&task); err != nil {
		return task, fmt.Errorf("%w: AI task: %w", ErrBadTask, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return task, fmt.Errorf("%w: AI task: more than one JSON value", ErrBadTask)
	}
	if task.GameID == "" || task.Version < 1 {
		return task, fmt.Errorf("%w: AI task needs gameId and version >= 1 (got %+v)", ErrBadTask, task)
	}
	return task, nil
}

// HandleDeadline is the deadline function's handler. Its two event
// sources deliver the same service.TimeoutTask, told apart by shape: an
// EventBridge Scheduler schedule invokes it asynchronously with the task
// itself (the timers due beyond 15 minutes), and the deadline queue's
// event source mapping with an SQS event whose records' bodies are tasks
// (the timers due sooner: shared/schedule/sqsdelay). A task's answer is
// null, its error makes Lambda retry the invocation; an SQS batch's answer
// is a partial batch response naming the records that failed (the event
// source mapping reports them with ReportBatchItemFailures), which the
// queue delivers again after its visibility timeout and, after its
// redrive policy's receives, moves to the dead-letter queue.
func (a *App) HandleDeadline(ctx context.Context, raw json.RawMessage) (any, error) {
	if !isSQSEvent(raw) {
		var task service.TimeoutTask
		if err := json.Unmarshal(raw, &task); err != nil {
			a.log.Error("deadline event is neither a timeout task nor an SQS event", "bytes", len(raw), "err", err)
			return nil, fmt.Errorf("%w: timeout task: %w", ErrBadTask, err)
		}
		return nil, a.HandleTimeout(ctx, task)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		a.log.Error("undecodable SQS event", "err", err)
		return nil, fmt.Errorf("lambdafn: SQS event: %w", err)
	}
	return a.HandleDeadlineQueue(ctx, ev), nil
}

// maxQueuedAtOnce bounds the records of one SQS batch handled at once
// (each is a different game's timer, or a duplicate of one: the store's
// conditional writes keep those apart).
const maxQueuedAtOnce = 10

// deadlineQueueMargin is how long before the function's own deadline a
// batch's records stop: time to answer the partial batch response.
const deadlineQueueMargin = time.Second

// HandleDeadlineQueue runs the timers of one batch from the deadline
// queue, at most maxQueuedAtOnce at a time, and answers the records that
// failed: a body that is not a task (only our own adapter sends here: a
// bug, left to reach the dead-letter queue and its alarm) or a task whose
// work could not be done (delivered again). A duplicate delivery (SQS is
// at least once) is harmless: the service decides from the stored game.
func (a *App) HandleDeadlineQueue(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	// A record still running a second before the function's deadline is
	// answered failed (delivered again), rather than the whole batch
	// timing out with it.
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-deadlineQueueMargin))
		defer cancel()
	}
	failed := make([]bool, len(ev.Records))
	sem := make(chan struct{}, maxQueuedAtOnce)
	var wg sync.WaitGroup
	for i, rec := range ev.Records {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			var task service.TimeoutTask
			if err := json.Unmarshal([]byte(rec.Body), &task); err != nil {
				a.log.Error("deadline queue message is not a timeout task", "messageId", rec.MessageId, "err", err)
				failed[i] = true
				return
			}
			if err := a.HandleTimeout(ctx, task); err != nil {
				failed[i] = true
			}
		})
	}
	wg.Wait()
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for i, f := range failed {
		if f {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	return resp
}

// isSQSEvent reports whether raw is an SQS event source mapping's event
// ({"Records": [{"eventSource": "aws:sqs", ...}]}).
func isSQSEvent(raw []byte) bool {
	var probe struct {
		Records []struct {
			EventSource string `json:"eventSource"`
		} `json:"Records"`
	}
	if json.Unmarshal(raw, &probe) != nil || len(probe.Records) == 0 {
		return false
	}
	for _, r := range probe.Records {
		if r.EventSource != "aws:sqs" {
			return false
		}
	}
	return true
}
