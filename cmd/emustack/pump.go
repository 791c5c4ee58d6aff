package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// changeReader is the games table's change stream
// (*emulator.ChangeStream): every record written since the last call.
type changeReader interface {
	Next(ctx context.Context) (events.DynamoDBEvent, error)
}

// streamPump is Lambda's event source mappings on the games table's
// stream, as the template configures them (streamSource): it polls the
// stream and hands every record to each mapping, which delivers them to
// its function in batches of at most BatchSize, in order, and on a
// failure retries from the first failed record (ReportBatchItemFailures),
// halving the batch on a function error (BisectBatchOnFunctionError),
// until MaximumRetryAttempts or MaximumRecordAgeInSeconds give up on the
// record: its description (shard, sequence range) then goes to the
// on-failure destination and the mapping moves on.
//
// Each mapping runs on its own (run), as Lambda's do: one retrying a
// failed batch holds back only its own function's records. One batch at
// a time per mapping: records of one game stay in order, as Lambda keeps
// them per shard (ParallelizationFactor only spreads different keys).
type streamPump struct {
	changes  changeReader
	mappings []*mapping
	counts   *counters
	interval time.Duration // how often the stream is polled (Lambda: 4 times a second)
	log      io.Writer

	kick chan chan int // a settle request: read now, answer the record count
}

// mapping is one event source mapping.
type mapping struct {
	fn         invoker
	src        streamSource
	counts     *counters
	log        io.Writer
	retryDelay time.Duration
	// onFailure sends the description of a record given up on to the
	// mapping's on-failure destination (nil: none).
	onFailure func(ctx context.Context, body []byte) error

	mu      sync.Mutex
	inbox   []pendingRecord // read, not yet taken by the mapping's loop
	working bool            // the loop is delivering
	wake    chan struct{}   // capacity 1

	pending []pendingRecord // the loop's own: records being delivered
}

type pendingRecord struct {
	rec      events.DynamoDBEventRecord
	read     time.Time
	attempts int
}

func newStreamPump(changes changeReader, counts *counters, log io.Writer, interval time.Duration, mappings ...*mapping) *streamPump {
	return &streamPump{changes: changes, mappings: mappings, counts: counts, log: log, interval: interval, kick: make(chan chan int)}
}

func newMapping(fn invoker, src streamSource, counts *counters, log io.Writer, retryDelay time.Duration, onFailure func(context.Context, []byte) error) *mapping {
	return &mapping{fn: fn, src: src, counts: counts, log: log, retryDelay: retryDelay, onFailure: onFailure, wake: make(chan struct{}, 1)}
}

// run polls until ctx ends, each mapping delivering on its own.
func (p *streamPump) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, m := range p.mappings {
		wg.Go(func() { m.run(ctx) })
	}
	defer wg.Wait()
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	for {
		var reply chan int
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case reply = <-p.kick:
		}
		n := p.read(ctx)
		if reply != nil {
			reply <- n
		}
	}
}

// now reads the stream at once and returns how many records it read (0:
// nothing new).
func (p *streamPump) now(ctx context.Context) (int, error) {
	reply := make(chan int, 1)
	select {
	case p.kick <- reply:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	select {
	case n := <-reply:
		return n, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// idle reports whether every mapping has delivered everything it read.
func (p *streamPump) idle() bool {
	for _, m := range p.mappings {
		m.mu.Lock()
		busy := m.working || len(m.inbox) > 0
		m.mu.Unlock()
		if busy {
			return false
		}
	}
	return true
}

// read takes what is new on the stream and hands it to every mapping.
func (p *streamPump) read(ctx context.Context) int {
	ev, err := p.changes.Next(ctx)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(p.log, "emustack: reading the games table's stream: %v\n", err)
		}
		return 0
	}
	if len(ev.Records) == 0 {
		return 0
	}
	now := time.Now()
	for _, r := range ev.Records {
		p.measure(r)
	}
	p.counts.event("dynamodb-streams:Records", int64(len(ev.Records)))
	for _, m := range p.mappings {
		m.mu.Lock()
		for _, r := range ev.Records {
			m.inbox = append(m.inbox, pendingRecord{rec: r, read: now})
		}
		m.mu.Unlock()
		select {
		case m.wake <- struct{}{}:
		default:
		}
	}
	return len(ev.Records)
}

// cycle reads the stream and lets every mapping deliver all it has, in
// turn (tests drive the pump so, one step at a time).
func (p *streamPump) cycle(ctx context.Context) int {
	n := p.read(ctx)
	for _, m := range p.mappings {
		m.drain(ctx)
	}
	return n
}

// run delivers what the pump hands the mapping until ctx ends.
func (m *mapping) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.wake:
		}
		m.drain(ctx)
	}
}

// drain delivers everything in the inbox, with the mapping's retries.
func (m *mapping) drain(ctx context.Context) {
	m.mu.Lock()
	m.pending = append(m.pending, m.inbox...)
	m.inbox = nil
	m.working = len(m.pending) > 0
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.working = false
		m.mu.Unlock()
	}()
	// segments are the sizes of the next batches when a failed batch was
	// split (bisected): each half is delivered on its own, then the
	// stream goes on in full batches.
	var segments []int
	for ctx.Err() == nil {
		if len(m.pending) == 0 {
			m.mu.Lock()
			m.pending, m.inbox = m.inbox, nil
			more := len(m.pending) > 0
			m.mu.Unlock()
			if !more {
				return
			}
		}
		size := min(m.src.BatchSize, len(m.pending))
		if len(segments) > 0 {
			size = min(segments[0], len(m.pending))
		} else {
			segments = []int{size}
		}
		done, functionError := m.deliver(ctx, m.pending[:size])
		m.pending = m.pending[done:]
		if done == size {
			segments = segments[1:]
			continue
		}
		// Splitting a batch on a function error costs no retry (the
		// Lambda developer guide, "Retaining discarded records for a
		// DynamoDB event source"); a batch of one can only be retried.
		if functionError && m.src.Bisect && size > 1 {
			half := size / 2
			segments = append([]int{half, size - half}, segments[1:]...)
			m.counts.event("lambda:StreamBisects", 1)
			continue
		}
		failed := &m.pending[0]
		failed.attempts++
		tooOld := m.src.MaxAge >= 0 && time.Since(failed.read) > m.src.MaxAge
		if (m.src.MaxRetries >= 0 && failed.attempts > m.src.MaxRetries) || tooOld {
			m.discard(ctx, *failed, tooOld)
			m.pending = m.pending[1:]
			if segments[0] = size - done - 1; segments[0] == 0 {
				segments = segments[1:]
			}
			continue
		}
		segments[0] = size - done // retried from the failed record
		m.counts.event("lambda:StreamRetries", 1)
		select {
		case <-time.After(m.retryDelay):
		case <-ctx.Done():
		}
	}
}

// measure counts what the write behind a record cost: the game item's
// size and the write request units of its put (the larger of the item
// before and after, per started KB), what one strongly consistent read of
// the new item costs, and the write units of the global secondary indexes
// the write changed (indexWriteUnits).
func (p *streamPump) measure(r events.DynamoDBEventRecord) {
	newSize, oldSize := itemSize(r.Change.NewImage), itemSize(r.Change.OldImage)
	if r.EventName == "REMOVE" {
		return
	}
	p.counts.event("dynamodb:GamesItemBytes", int64(newSize))
	p.counts.maxEvent("dynamodb:GamesItemBytesMax", int64(newSize))
	p.counts.event("dynamodb:GamesPutWriteUnits", int64(writeUnits(oldSize, newSize)))
	p.counts.event("dynamodb:GamesGetReadUnits", int64(readUnits(newSize)))
	p.counts.event("dynamodb:GamesIndexWriteUnits", int64(indexWriteUnits(r.Change.OldImage, r.Change.NewImage)))
}

// deliver invokes the mapping's function with a batch and returns how
// many records from the front are done, and whether the whole batch failed
// by a function error (rather than by reported item failures).
func (m *mapping) deliver(ctx context.Context, batch []pendingRecord) (done int, functionError bool) {
	ev := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, len(batch))}
	for i, r := range batch {
		ev.Records[i] = r.rec
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		fmt.Fprintf(m.log, "emustack: encoding a stream batch: %v\n", err)
		return 0, true
	}
	res, err := m.fn.invoke(ctx, payload)
	if err != nil || res.FunctionError != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(m.log, "emustack: %s on a batch of %d: %v %v\n", m.src.Function, len(batch), err, res.FunctionError)
		}
		return 0, true
	}
	var resp events.DynamoDBEventResponse
	if err := json.Unmarshal(res.Payload, &resp); err != nil {
		// Lambda treats an answer it cannot read as a failure of the batch.
		fmt.Fprintf(m.log, "emustack: %s answered %s: %v\n", m.src.Function, res.Payload, err)
		return 0, true
	}
	if len(resp.BatchItemFailures) == 0 {
		return len(batch), false
	}
	// Lambda resumes from the lowest failed sequence number; an identifier
	// that is not in the batch fails the whole batch.
	first := len(batch)
	for _, f := range resp.BatchItemFailures {
		i := -1
		for j, r := range batch {
			if r.rec.Change.SequenceNumber == f.ItemIdentifier {
				i = j
				break
			}
		}
		if i < 0 {
			return 0, false
		}
		first = min(first, i)
	}
	return first, false
}

// discard gives up on a record: its description (not the record: the
// Lambda developer guide, "Retaining discarded records for a DynamoDB
// event source") goes to the on-failure destination.
func (m *mapping) discard(ctx context.Context, r pendingRecord, tooOld bool) {
	m.counts.event("lambda:StreamRecordsDiscarded", 1)
	dest := "dropped (no on-failure destination)"
	if m.src.OnFailure != "" {
		m.counts.event("sqs:SendMessage:"+m.src.OnFailure, 1)
		dest = "described in " + m.src.OnFailure
		if m.onFailure != nil {
			if err := m.onFailure(ctx, batchDescription(m.src, r, tooOld)); err != nil {
				dest += " (could not send: " + err.Error() + ")"
			}
		}
	}
	fmt.Fprintf(m.log, "emustack: %s: stream record %s (%s of %v) failed %d times: %s\n",
		m.src.Function, r.rec.Change.SequenceNumber, r.rec.EventName, r.rec.Change.Keys, r.attempts, dest)
}

// batchDescription is the message Lambda's on-failure destination of a
// stream event source gets for a batch of one: the invocation's
// metadata and the batch's shard and sequence range, no record.
func batchDescription(src streamSource, r pendingRecord, tooOld bool) []byte {
	condition := "RetryAttemptsExhausted"
	if tooOld {
		condition = "RecordAgeExceeded"
	}
	arrival := r.rec.Change.ApproximateCreationDateTime.UTC().Format(time.RFC3339Nano)
	body, _ := json.Marshal(map[string]any{
		"version":   "1.0",
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"requestContext": map[string]any{
			"functionArn": src.Function, "condition": condition, "approximateInvokeCount": r.attempts,
		},
		"DDBStreamBatchInfo": map[string]any{
			"shardId": "shardId-emustack", "startSequenceNumber": r.rec.Change.SequenceNumber, "endSequenceNumber": r.rec.Change.SequenceNumber,
			"approximateArrivalOfFirstRecord": arrival, "approximateArrivalOfLastRecord": arrival,
			"batchSize": 1, "streamArn": r.rec.EventSourceArn,
		},
	})
	return body
}
