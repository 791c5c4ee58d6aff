package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// changeReader is the games table's change stream
// (*emulator.ChangeStream): every record written since the last call.
type changeReader interface {
	Next(ctx context.Context) (events.DynamoDBEvent, error)
}

// streamPump is Lambda's event source mapping on the games table's stream,
// as the template configures it (streamSource): it polls the stream, hands
// the records to the fan-out function in batches of at most BatchSize, in
// order, and on a failure retries from the first failed record
// (ReportBatchItemFailures), halving the batch on a function error
// (BisectBatchOnFunctionError), until MaximumRetryAttempts or
// MaximumRecordAgeInSeconds give up on the record: it then goes to the
// on-failure destination (a count and a log line) and the stream moves on.
//
// One batch at a time: records of one game stay in order, as Lambda keeps
// them per shard (ParallelizationFactor only spreads different keys).
type streamPump struct {
	changes    changeReader
	fanout     invoker
	src        streamSource
	counts     *counters
	log        io.Writer
	interval   time.Duration // how often the stream is polled (Lambda: 4 times a second)
	retryDelay time.Duration

	pending []pendingRecord
	kick    chan chan int // a settle request: run a cycle now, answer its record count
}

type pendingRecord struct {
	rec      events.DynamoDBEventRecord
	read     time.Time
	attempts int
}

func newStreamPump(changes changeReader, fanout invoker, src streamSource, counts *counters, log io.Writer, interval, retryDelay time.Duration) *streamPump {
	return &streamPump{changes: changes, fanout: fanout, src: src, counts: counts, log: log,
		interval: interval, retryDelay: retryDelay, kick: make(chan chan int)}
}

// run polls until ctx ends.
func (p *streamPump) run(ctx context.Context) {
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
		n := p.cycle(ctx)
		if reply != nil {
			reply <- n
		}
	}
}

// now runs one cycle at once and returns how many records it read and
// delivered (0: the stream had nothing new).
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

// cycle reads what is new and delivers everything pending.
func (p *streamPump) cycle(ctx context.Context) int {
	ev, err := p.changes.Next(ctx)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(p.log, "emustack: reading the games table's stream: %v\n", err)
		}
		return 0
	}
	now := time.Now()
	for _, r := range ev.Records {
		p.pending = append(p.pending, pendingRecord{rec: r, read: now})
		p.measure(r)
	}
	if len(ev.Records) > 0 {
		p.counts.event("dynamodb-streams:Records", int64(len(ev.Records)))
	}
	n := len(p.pending)
	// segments are the sizes of the next batches when a failed batch was
	// split (bisected): each half is delivered on its own, then the
	// stream goes on in full batches.
	var segments []int
	for len(p.pending) > 0 && ctx.Err() == nil {
		size := min(p.src.BatchSize, len(p.pending))
		if len(segments) > 0 {
			size = segments[0]
		} else {
			segments = []int{size}
		}
		done, functionError := p.deliver(ctx, p.pending[:size])
		p.pending = p.pending[done:]
		if done == size {
			segments = segments[1:]
			continue
		}
		// Splitting a batch on a function error costs no retry (the
		// Lambda developer guide, "Retaining discarded records for a
		// DynamoDB event source"); a batch of one can only be retried.
		if functionError && p.src.Bisect && size > 1 {
			half := size / 2
			segments = append([]int{half, size - half}, segments[1:]...)
			p.counts.event("lambda:StreamBisects", 1)
			continue
		}
		failed := &p.pending[0]
		failed.attempts++
		tooOld := p.src.MaxAge >= 0 && time.Since(failed.read) > p.src.MaxAge
		if (p.src.MaxRetries >= 0 && failed.attempts > p.src.MaxRetries) || tooOld {
			p.discard(*failed)
			p.pending = p.pending[1:]
			if segments[0] = size - done - 1; segments[0] == 0 {
				segments = segments[1:]
			}
			continue
		}
		segments[0] = size - done // retried from the failed record
		p.counts.event("lambda:StreamRetries", 1)
		select {
		case <-time.After(p.retryDelay):
		case <-ctx.Done():
		}
	}
	return n
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

// deliver invokes the fan-out with a batch and returns how many records
// from the front are done, and whether the whole batch failed by a
// function error (rather than by reported item failures).
func (p *streamPump) deliver(ctx context.Context, batch []pendingRecord) (done int, functionError bool) {
	ev := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, len(batch))}
	for i, r := range batch {
		ev.Records[i] = r.rec
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		fmt.Fprintf(p.log, "emustack: encoding a stream batch: %v\n", err)
		return 0, true
	}
	res, err := p.fanout.invoke(ctx, payload)
	if err != nil || res.FunctionError != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(p.log, "emustack: %s on a batch of %d: %v %v\n", p.src.Function, len(batch), err, res.FunctionError)
		}
		return 0, true
	}
	var resp events.DynamoDBEventResponse
	if err := json.Unmarshal(res.Payload, &resp); err != nil {
		// Lambda treats an answer it cannot read as a failure of the batch.
		fmt.Fprintf(p.log, "emustack: %s answered %s: %v\n", p.src.Function, res.Payload, err)
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

// discard gives up on a record: its description goes to the on-failure
// destination (here a count and a log line).
func (p *streamPump) discard(r pendingRecord) {
	p.counts.event("lambda:StreamRecordsDiscarded", 1)
	dest := "dropped (no on-failure destination)"
	if p.src.OnFailure != "" {
		p.counts.event("sqs:SendMessage:"+p.src.OnFailure, 1)
		dest = "described in " + p.src.OnFailure
	}
	fmt.Fprintf(p.log, "emustack: stream record %s (%s of %v) failed %d times: %s\n",
		r.rec.Change.SequenceNumber, r.rec.EventName, r.rec.Change.Keys, r.attempts, dest)
}
