package lambdafn

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"chessapi/shared/game"
	"chessapi/shared/obs"
	"chessapi/shared/retry"
	"chessapi/shared/store/dynamostore"
)

// The games table's change stream has two consumers (SPEC §16.4): two
// event source mappings on the one stream, each feeding a function of its
// own, both running HandleStreamRecords in the role their entry of the
// wiring table names:
//
//   - Fanout pushes each new version to the game's subscribers;
//   - Effects runs each version's after-write effects: the armed instant
//     of the game's timer backed (service.ArmTimer), the AI turn started,
//     a rated result applied (service.Committed).
//
// Neither waits for the other: a throttled @connections API holds back
// pushes, never a timer or an AI turn, and a throttled scheduler holds
// back effects, never a push. DynamoDB Streams allows two readers of a
// shard (the DynamoDB Streams API's LimitExceededException: "more than 2
// processes are reading from the same streams shard at the same time"), so
// later after-write effects (issue 24's notifications) join the Effects
// role rather than adding a third.
//
// Within a batch the records are grouped by game: games are handled
// concurrently (at most fanoutGames at once), a game's records in order.
// A record that fails stops its game's later records of the batch; every
// record not done is reported back (ReportBatchItemFailures) — Lambda
// retries from the lowest reported sequence number — and so are the
// records not reached before the function's deadline less a margin, so an
// answer always comes back in time and nothing is dropped unsaid. Records
// done in an earlier delivery of the same batch are remembered (a bounded
// set per instance) and not done again.
//
// A record is given up on when its failure is permanent (an image that
// does not decode, a request the service refuses as invalid) or when it
// has been failing for longer than the retry window: it is then written,
// whole (both images), to the dead-letter queue (deadletter.go), and
// counted as done, so one game's poisoned record holds its shard for at
// most the window — a permanent one not at all. `cmd/ops redrive` replays
// it through the same function.

const (
	// fanoutGames bounds the games of one batch handled at once.
	fanoutGames = 32
	// fanoutMargin is kept back from the function's deadline for the
	// answer (and any dead-letter write in flight); at most a fifth of the
	// time there is.
	fanoutMargin = 3 * time.Second
	// DefaultStreamRetryWindow is how long a failing record is left on its
	// shard before it is given up on (STREAM_RETRY_SECONDS).
	DefaultStreamRetryWindow = time.Minute
	// maxStreamRetrySeconds keeps the window well under the event source
	// mapping's MaximumRecordAgeInSeconds (3600 in template.yaml), so the
	// consumer gives up (writing the whole record) before Lambda does
	// (writing only the batch's description).
	maxStreamRetrySeconds = 1800
	// doneRecords bounds the remembered done records of an instance.
	doneRecords = 4096
)

// streamRecord is one change stream record, decoded once.
type streamRecord struct {
	raw        events.DynamoDBEventRecord
	prev, next *game.State // prev nil for a new game
	// prevArmed and nextArmed are the records' armed instants.
	prevArmed, nextArmed time.Time
}

// newVersion reports whether the record is a new version of the game (not
// a write of the armed instant alone).
func (r streamRecord) newVersion() bool { return r.prev == nil || r.prev.Version != r.next.Version }

// recordOutcome is what became of one record of a batch.
type recordOutcome uint8

const (
	notReached   recordOutcome = iota // not tried: the deadline came first, or an earlier record of its game failed
	recordDone                        // done (or nothing to do, or done before)
	recordFailed                      // tried and failed: delivered again
	deadLettered                      // given up on, written whole to the dead-letter queue
)

// HandleStreamRecords is both stream consumers (the function's role: see
// the wiring table): it handles a batch as described above and answers
// the records to deliver again. An error is returned only when the role
// cannot run at all (no transport).
func (a *App) HandleStreamRecords(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	work, err := a.consumerWork()
	if err != nil {
		return resp, err
	}
	start := time.Now()
	outcomes := a.handleBatch(ctx, ev.Records, work)
	var failed, given, skipped int
	for i, o := range outcomes {
		switch o {
		case recordFailed, notReached:
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: ev.Records[i].Change.SequenceNumber})
			if o == recordFailed {
				failed++
			} else {
				skipped++
			}
		case deadLettered:
			given++
		}
	}
	if len(resp.BatchItemFailures) > 0 || given > 0 {
		// Only a batch with something to say publishes (its alarms treat
		// missing data as fine): a zero on every batch of both consumers
		// would be two EMF lines a batch, about 0.66 KB of logs a move.
		a.metrics.Emit(nil,
			obs.Point{Name: obs.MetricStreamRecordsRetried, Value: float64(len(resp.BatchItemFailures)), Unit: obs.UnitCount},
			obs.Point{Name: obs.MetricStreamRecordsDeadLettered, Value: float64(given), Unit: obs.UnitCount})
		a.log.Warn("stream batch handled in part", "role", string(a.fn), "records", len(ev.Records),
			"failed", failed, "notReached", skipped, "deadLettered", given, "ms", time.Since(start).Milliseconds())
	}
	return resp, nil
}

// consumerWork is what the function's role does with one record.
func (a *App) consumerWork() (func(ctx context.Context, r streamRecord) error, error) {
	if a.fn == Effects {
		return func(ctx context.Context, r streamRecord) error {
			// The timer first: a claim the record makes is backed even
			// when the AI or the ratings fail; the record is delivered
			// again for whichever failed (both are idempotent).
			errTimer := a.service.ArmTimer(ctx, r.next, r.prevArmed, r.nextArmed)
			var errState error
			if r.newVersion() {
				errState = a.service.Committed(ctx, r.prev, r.next)
			}
			return errors.Join(errTimer, errState)
		}, nil
	}
	gs, err := a.gatewayStream(events.APIGatewayWebsocketProxyRequestContext{})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, r streamRecord) error {
		if !r.newVersion() {
			return nil // the armed instant alone: nothing new to show
		}
		return a.pushRecord(ctx, gs, r.prev, r.next)
	}, nil
}

// handleBatch handles records as the package doc says and returns each
// record's outcome.
func (a *App) handleBatch(ctx context.Context, records []events.DynamoDBEventRecord, work func(context.Context, streamRecord) error) []recordOutcome {
	outcomes := make([]recordOutcome, len(records))
	guarded, cancel := guardDeadline(ctx)
	defer cancel()
	var order []string
	byGame := map[string][]int{}
	for i, r := range records {
		key := recordGame(r)
		if _, ok := byGame[key]; !ok {
			order = append(order, key)
		}
		byGame[key] = append(byGame[key], i)
	}
	slots := make(chan struct{}, fanoutGames)
	var wg sync.WaitGroup
	for _, key := range order {
		wg.Go(func() {
			select {
			case slots <- struct{}{}:
			case <-guarded.Done():
				return // not reached
			}
			defer func() { <-slots }()
			for _, i := range byGame[key] {
				if guarded.Err() != nil {
					return
				}
				outcomes[i] = a.handleRecord(ctx, guarded, records[i], work)
				if outcomes[i] == recordFailed {
					return // the game's later records wait for this one
				}
			}
		})
	}
	wg.Wait()
	return outcomes
}

// guardDeadline is ctx with its deadline brought forward by the margin.
func guardDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := min(fanoutMargin, time.Until(deadline)/5)
	return context.WithDeadline(ctx, deadline.Add(-margin))
}

// recordGame is the game a record is of (its key); a record without one
// is a game of its own (it fails to decode, alone).
func recordGame(r events.DynamoDBEventRecord) string {
	if k, ok := r.Change.Keys[dynamostore.KeyAttribute]; ok && k.DataType() == events.DataTypeString {
		return k.String()
	}
	return "\x00" + r.EventID
}

// handleRecord does one record: decoded once, worked on under the
// deadline guard, given up on (written whole to the dead-letter queue,
// under the function's own context so that the write is not cut short by
// the guard) when its failure is permanent or it has been failing for
// longer than the retry window.
func (a *App) handleRecord(ctx, guarded context.Context, raw events.DynamoDBEventRecord, work func(context.Context, streamRecord) error) recordOutcome {
	if raw.EventName != "INSERT" && raw.EventName != "MODIFY" {
		return recordDone // REMOVE: a TTL deletion of a finished game
	}
	redriven := raw.EventSource == RedriveEventSource
	if !redriven && a.doneRecords.has(raw.EventID) {
		// Done (or dead-lettered) in an earlier delivery of this batch;
		// a redrive asks for the record again, whatever this instance
		// remembers of it.
		return recordDone
	}
	r, err := a.decodeRecord(raw)
	if err == nil {
		rctx := a.withRequest(guarded, raw.EventID, string(a.fn), r.next.GameID)
		start := time.Now()
		if err = safely(rctx, r, work); err == nil {
			a.doneRecords.add(raw.EventID)
			obs.Logger(rctx).DebugContext(rctx, "stream record done", "version", r.next.Version, "ms", time.Since(start).Milliseconds())
			return recordDone
		}
		if a.fn == Fanout {
			a.metrics.Count(obs.MetricPushFailures, 1)
		}
		err = fmt.Errorf("%s v%d: %w", r.next.GameID, r.next.Version, err)
	}
	if guarded.Err() != nil && ctx.Err() == nil && !permanentRecordError(err) {
		// Cut short by the guard, not failed on its own: delivered again.
		return recordFailed
	}
	age := recordAge(raw, time.Now())
	log := a.log.With("role", string(a.fn), "eventId", raw.EventID, "seq", raw.Change.SequenceNumber, "ageSec", int(age.Seconds()), "err", err)
	if redriven || (!permanentRecordError(err) && (age == 0 || age < a.retryWindow)) {
		log.Error("stream record failed; the stream delivers it again")
		return recordFailed
	}
	if err := a.deadLetter(ctx, raw, err); err != nil {
		log.Error("stream record failed and could not be dead-lettered; the stream delivers it again", "dlqErr", err)
		return recordFailed
	}
	a.doneRecords.add(raw.EventID)
	log.Error("stream record given up on: written whole to the dead-letter queue (cmd/ops redrive replays it)", "permanent", permanentRecordError(err))
	return deadLettered
}

// safely runs work, turning a panic into a permanent failure: a record that
// makes the consumer panic would otherwise fail the whole batch (a
// function error) until the record is older than the mapping's maximum
// age, holding its shard all that time.
func safely(ctx context.Context, r streamRecord, work func(context.Context, streamRecord) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = retry.Permanent(fmt.Errorf("panic: %v", p))
		}
	}()
	return work(ctx, r)
}

// recordAge is how long ago the record's change was made (0 when the
// record does not say).
func recordAge(r events.DynamoDBEventRecord, now time.Time) time.Duration {
	at := r.Change.ApproximateCreationDateTime.Time
	if at.IsZero() {
		return 0
	}
	return max(now.Sub(at), time.Nanosecond)
}

// errUndecodable is wrapped by the error of a record whose images are not
// a game: no delivery can make them one.
var errUndecodable = errors.New("undecodable stream record")

// permanentRecordError reports whether no later delivery of the record can
// succeed: its images do not decode, the work marked its error permanent,
// or an AWS service refused the request as invalid (a 4xx other than
// throttling).
func permanentRecordError(err error) bool {
	if errors.Is(err, errUndecodable) || retry.IsPermanent(err) {
		return true
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorFault() != smithy.FaultClient {
		return false
	}
	var resp *smithyhttp.ResponseError
	if errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusTooManyRequests {
		return false
	}
	switch apiErr.ErrorCode() {
	case "ThrottlingException", "Throttling", "TooManyRequestsException", "LimitExceededException",
		"ProvisionedThroughputExceededException", "RequestLimitExceeded", "ServiceQuotaExceededException",
		"RequestThrottled", "SlowDown", "TransactionInProgressException", "ConflictException":
		return false
	}
	return true
}

// decodeRecord reads a record's images into the committed state, the one
// it replaced (nil for a new game) and both records' armed instants.
func (a *App) decodeRecord(r events.DynamoDBEventRecord) (streamRecord, error) {
	out := streamRecord{raw: r}
	image := func(which string, img map[string]events.DynamoDBAttributeValue) (*game.State, time.Time, error) {
		rec, err := dynamostore.DecodeStreamImage(img)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("%w: %s image: %w", errUndecodable, which, err)
		}
		st, err := a.service.Decode(rec)
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("%w: %s image: %w", errUndecodable, which, err)
		}
		return st, rec.ArmedAt, nil
	}
	var err error
	if out.next, out.nextArmed, err = image("new", r.Change.NewImage); err != nil {
		return out, err
	}
	if len(r.Change.OldImage) > 0 {
		if out.prev, out.prevArmed, err = image("old", r.Change.OldImage); err != nil {
			return out, err
		}
		if out.prev.GameID != out.next.GameID {
			return out, fmt.Errorf("%w: old image of game %s, new of %s", errUndecodable, out.prev.GameID, out.next.GameID)
		}
	}
	return out, nil
}

// recordSet remembers the last records done by this instance (by event
// id), so that a batch delivered again is not done twice; it forgets the
// oldest beyond its capacity.
type recordSet struct {
	mu    sync.Mutex
	ids   map[string]struct{}
	order []string
	next  int
}

func (s *recordSet) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.ids[id]
	return ok
}

func (s *recordSet) add(id string) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]struct{}{}
		s.order = make([]string, doneRecords)
	}
	if _, ok := s.ids[id]; ok {
		return
	}
	if old := s.order[s.next]; old != "" {
		delete(s.ids, old)
	}
	s.order[s.next] = id
	s.ids[id] = struct{}{}
	s.next = (s.next + 1) % len(s.order)
}
