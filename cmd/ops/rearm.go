package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/aitrigger/lambdainvoke"
	"chessapi/shared/schedule/eventbridge"
	"chessapi/shared/schedule/sqsdelay"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// Defaults of rearm's flags. A game costs a strongly consistent read, at
// most one conditional write (a due timeout, or the armed instant) and one
// CreateSchedule (EventBridge Scheduler allows thousands a second in the
// primary Regions, 250 elsewhere: docs/operations.md §4), so 100 a second
// stays far under every quota while re-arming 100,000 games in 17 min.
const (
	defaultRearmRate     = 100
	defaultRearmWorkers  = 16
	defaultRearmProgress = 5 * time.Second
	// rearmAttempts bounds the handler calls for one game; between them
	// the pause doubles from rearmBackoff (a throttled scheduler or table
	// recovers in seconds).
	rearmAttempts = 3
	rearmBackoff  = time.Second
)

// timeoutHandler re-arms a game whose record's armed instant cannot be
// trusted (service.Service.RearmTimer): it decides from the stored game
// alone, applies a due timeout, restarts an overdue AI turn and gives the
// scheduler the game's timer itself — a restored record claims a schedule
// that no longer exists, so a delivery's "already armed" would be wrong.
type timeoutHandler interface {
	RearmTimer(ctx context.Context, task service.TimeoutTask) error
}

// gameSource lists the games table's records.
type gameSource interface {
	// ApproxItems is the table's item count as DynamoDB last measured it
	// (every six hours or so): for the progress lines only.
	ApproxItems(ctx context.Context) (int64, error)
	// Scan calls visit for every item, with its record or why it could
	// not be decoded.
	Scan(ctx context.Context, visit func(rec service.GameRecord, err error) error) error
}

type rearmOptions struct {
	rate     float64
	workers  int
	progress time.Duration
	dryRun   bool
}

func (c cli) rearm(ctx context.Context, args []string) error {
	c.stderr = &syncWriter{w: c.stderr} // the progress lines and the service's log
	fs := newFlags("rearm")
	rate := fs.Float64("rate", defaultRearmRate, "games a second at most")
	workers := fs.Int("workers", defaultRearmWorkers, "games re-armed at once")
	progress := fs.Duration("progress", defaultRearmProgress, "how often to print progress")
	dryRun := fs.Bool("dry-run", false, "list what would be re-armed, change nothing")
	gamesFlag := fs.String("games-table", "", "the games table (default $GAMES_TABLE)")
	dataFlag := fs.String("data-table", "", "the data table (default $DATA_TABLE)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *rate <= 0 || *rate > 10_000:
		return usagef("rearm: -rate %v is not between 0 and 10000 games a second", *rate)
	case *workers < 1 || *workers > 256:
		return usagef("rearm: -workers %d is not between 1 and 256", *workers)
	case *progress < 100*time.Millisecond:
		return usagef("rearm: -progress %s is under 100ms", *progress)
	}
	gamesTable, dataTable := c.setting(*gamesFlag, "GAMES_TABLE"), c.setting(*dataFlag, "DATA_TABLE")
	if gamesTable == "" || dataTable == "" {
		return usagef("rearm: name the tables: -games-table and -data-table, or GAMES_TABLE and DATA_TABLE (the stack's outputs GamesTableName, DataTableName)")
	}
	schedCfg, err := eventbridge.ConfigFromEnv(c.getenv)
	if err != nil {
		return usagef("rearm: %v (the stack's outputs ScheduleGroupName, SchedulerRoleArn, TimeoutFunctionArn, ScheduleDeadLetterQueueArn)", err)
	}
	aiFunction := c.setting("", lambdainvoke.EnvFunctionName)
	if aiFunction == "" {
		return usagef("rearm: %s is not set (the stack's output AiSeatFunctionName)", lambdainvoke.EnvFunctionName)
	}

	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		return usagef("rearm: no AWS region: set AWS_REGION or a profile's region")
	}
	client := dynamodb.NewFromConfig(awsCfg)
	svc, err := c.newService(awsCfg, client, gamesTable, dataTable, schedCfg, aiFunction)
	if err != nil {
		return err
	}
	defer svc.Close(10 * time.Second)
	src := tableSource{client: client, table: gamesTable}
	opts := rearmOptions{rate: *rate, workers: *workers, progress: *progress, dryRun: *dryRun}
	stats, err := c.runRearm(ctx, src, svc, opts)
	if err != nil {
		return err
	}
	if n := len(stats.failed); n > 0 {
		return fmt.Errorf("rearm: %d of %d live games not re-armed (listed above); run rearm again: it is safe to repeat", n, stats.live)
	}
	return nil
}

// newService is the service as the timeout function runs it: the games
// and data tables, EventBridge Scheduler, the AI seats' asynchronous
// invoke, effects of its writes left to the stack's stream consumers.
func (c cli) newService(awsCfg aws.Config, client *dynamodb.Client, gamesTable, dataTable string, schedCfg eventbridge.Config, aiFunction string) (*service.Service, error) {
	store, err := dynamostore.New(client, gamesTable)
	if err != nil {
		return nil, err
	}
	data, err := dynamostore.NewData(client, dataTable)
	if err != nil {
		return nil, err
	}
	var sched service.Scheduler
	if sched, err = eventbridge.NewFromConfig(awsCfg, schedCfg); err != nil {
		return nil, err
	}
	// As the effects function arms them: the timers due within 15 minutes
	// through the deadline queue when it is named (the stack's output
	// DeadlineQueueUrl), else every one a schedule (each still fires, at
	// the Scheduler's minute).
	if url := c.setting("", sqsdelay.EnvQueueURL); url != "" {
		if sched, err = sqsdelay.NewFromConfig(awsCfg, url, sched); err != nil {
			return nil, err
		}
	}
	trigger, err := lambdainvoke.NewFromConfig(awsCfg, aiFunction)
	if err != nil {
		return nil, err
	}
	return service.New(service.Config{
		Store: store, Scheduler: sched, AITrigger: trigger, Players: data, Lister: store,
		Effects: service.EffectsByStream, Now: c.now,
		Logger: slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}

// rearmStats is what a run did.
type rearmStats struct {
	scanned, live, rearmed int
	undecodable            int
	failed                 []string // "<game>: <why>"
}

// runRearm re-arms every live game of src through h: it reads the whole
// table first (a record is a few KB; the tasks kept are ~60 B a game),
// then re-arms the games soonest deadline first, so that the games about
// to time out get their schedules before those with time left, at most
// o.rate a second, o.workers at once, each up to rearmAttempts times.
func (c cli) runRearm(ctx context.Context, src gameSource, h timeoutHandler, o rearmOptions) (rearmStats, error) {
	start := c.now()
	var stats rearmStats
	approx, err := src.ApproxItems(ctx)
	if err != nil {
		return stats, fmt.Errorf("rearm: describe the games table: %w", err)
	}
	lastPrint := start
	var tasks []service.TimeoutTask
	err = src.Scan(ctx, func(rec service.GameRecord, err error) error {
		stats.scanned++
		switch {
		case err != nil:
			stats.undecodable++
			stats.failed = append(stats.failed, fmt.Sprintf("%s: %v", cmp.Or(rec.GameID, "(no game id)"), err))
			fmt.Fprintf(c.stderr, "rearm: item %q cannot be read: %v\n", rec.GameID, err)
		case rec.ExpiresAt.IsZero() && !rec.Deadline.IsZero():
			// Live, with a timer: a human's deadline or an AI turn's
			// watchdog (the record's Deadline is the game's timer).
			// Finished games carry expiresAt; a live game without a
			// deadline (no clock, nobody to move) has no timer to arm.
			tasks = append(tasks, service.TimeoutTask{GameID: rec.GameID, Version: rec.Version, Deadline: rec.Deadline})
		}
		if now := c.now(); now.Sub(lastPrint) >= o.progress {
			lastPrint = now
			fmt.Fprintf(c.stderr, "rearm: %s: scanned %d of about %d items, %d live games\n", now.Sub(start).Round(time.Millisecond), stats.scanned, approx, len(tasks))
		}
		return nil
	})
	if err != nil {
		return stats, fmt.Errorf("rearm: scan the games table: %w", err)
	}
	stats.live = len(tasks)
	slices.SortFunc(tasks, func(a, b service.TimeoutTask) int {
		return cmp.Or(a.Deadline.Compare(b.Deadline), cmp.Compare(a.GameID, b.GameID))
	})
	fmt.Fprintf(c.stderr, "rearm: scanned %d items: %d live games with a timer, soonest deadline first\n", stats.scanned, stats.live)
	if o.dryRun {
		for _, task := range tasks {
			fmt.Fprintf(c.stdout, "would re-arm %s version %d deadline %s\n", task.GameID, task.Version, task.Deadline.UTC().Format(time.RFC3339Nano))
		}
		return stats, nil
	}

	jobs := make(chan service.TimeoutTask)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range o.workers {
		wg.Go(func() {
			for task := range jobs {
				err := c.rearmOne(ctx, h, task)
				mu.Lock()
				if err != nil {
					stats.failed = append(stats.failed, fmt.Sprintf("%s: %v", task.GameID, err))
				} else {
					stats.rearmed++
				}
				mu.Unlock()
			}
		})
	}
	limit := newLimiter(o.rate, c.now, c.sleep)
	report := func(now time.Time, final bool) {
		mu.Lock()
		done, failed := stats.rearmed, len(stats.failed)-stats.undecodable
		mu.Unlock()
		elapsed := now.Sub(start)
		perSec := 0.0
		if elapsed > 0 {
			perSec = float64(done+failed) / elapsed.Seconds()
		}
		w := c.stderr
		if final {
			w = c.stdout
		}
		fmt.Fprintf(w, "rearm: %s: %d of %d live games re-armed, %d failed (%.1f a second)\n", elapsed.Round(time.Millisecond), done, stats.live, failed, perSec)
	}
	var sendErr error
	for _, task := range tasks {
		if sendErr = limit.wait(ctx); sendErr != nil {
			break
		}
		jobs <- task
		if now := c.now(); now.Sub(lastPrint) >= o.progress {
			lastPrint = now
			report(now, false)
		}
	}
	close(jobs)
	wg.Wait()
	report(c.now(), true)
	for _, f := range stats.failed {
		fmt.Fprintln(c.stdout, "rearm: failed", f)
	}
	if sendErr != nil {
		return stats, fmt.Errorf("rearm: stopped: %w (run it again: it is safe to repeat)", sendErr)
	}
	return stats, nil
}

// rearmOne hands one game's timer to the handler, retrying a failure.
func (c cli) rearmOne(ctx context.Context, h timeoutHandler, task service.TimeoutTask) error {
	pause := rearmBackoff
	var err error
	for attempt := range rearmAttempts {
		if attempt > 0 {
			if serr := c.sleep(ctx, pause); serr != nil {
				return errors.Join(err, serr)
			}
			pause *= 2
		}
		if err = h.RearmTimer(ctx, task); err == nil {
			return nil
		}
	}
	return err
}

// limiter spaces calls at most rate a second apart (no bursts: a
// recovery should not spike the scheduler).
type limiter struct {
	interval time.Duration
	next     time.Time
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error
}

func newLimiter(rate float64, now func() time.Time, sleep func(context.Context, time.Duration) error) *limiter {
	return &limiter{interval: time.Duration(float64(time.Second) / rate), now: now, sleep: sleep}
}

func (l *limiter) wait(ctx context.Context) error {
	now := l.now()
	if l.next.After(now) {
		if err := l.sleep(ctx, l.next.Sub(now)); err != nil {
			return err
		}
		now = l.next
	}
	l.next = now.Add(l.interval)
	return ctx.Err()
}

// tableSource reads the games table of DynamoDB.
type tableSource struct {
	client *dynamodb.Client
	table  string
}

func (s tableSource) ApproxItems(ctx context.Context) (int64, error) {
	out, err := s.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.table)})
	if err != nil {
		return 0, err
	}
	return aws.ToInt64(out.Table.ItemCount), nil
}

// Scan reads the table page by page (eventually consistent: the timeout
// handler reads each game again, strongly consistent, before it acts).
func (s tableSource) Scan(ctx context.Context, visit func(service.GameRecord, error) error) error {
	p := dynamodb.NewScanPaginator(s.client, &dynamodb.ScanInput{TableName: aws.String(s.table)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, item := range page.Items {
			rec, err := dynamostore.DecodeItem(item)
			if err != nil {
				rec = service.GameRecord{}
				if v, ok := item["gameId"].(*types.AttributeValueMemberS); ok {
					rec.GameID = v.Value
				}
			}
			if err := visit(rec, err); err != nil {
				return err
			}
		}
	}
	return nil
}

// syncWriter serializes writes (the workers and the progress printer
// share stderr).
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
