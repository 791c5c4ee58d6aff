package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/internal/fakeclock"
	"chessapi/shared/aiplayer"
	"chessapi/shared/game"
	"chessapi/shared/schedule/eventbridge"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

const (
	testGroup     = "chessapi-deadlines"
	testRole      = "arn:aws:iam::123456789012:role/chessapi-scheduler"
	testTimeout   = "arn:aws:lambda:us-east-1:123456789012:function:chessapi-timeout"
	testAIFuncion = "chessapi-ai-seat"
)

// aiRecorder stands in for Lambda's Invoke API (the AI seats' asynchronous
// invokes): it answers 202 and keeps the tasks.
type aiRecorder struct {
	mu    sync.Mutex
	tasks []service.AITask
}

var invokePath = regexp.MustCompile(`^/2015-03-31/functions/[^/]+/invocations$`)

func (r *aiRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var task service.AITask
	if req.Method != http.MethodPost || !invokePath.MatchString(req.URL.EscapedPath()) || json.Unmarshal(body, &task) != nil {
		http.Error(w, `{"message":"not an Invoke of an AI task"}`, http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.tasks = append(r.tasks, task)
	r.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (r *aiRecorder) TriggerAI(_ context.Context, task service.AITask) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tasks = append(r.tasks, task)
	return nil
}

func (r *aiRecorder) take() []service.AITask {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.tasks
	r.tasks = nil
	return out
}

// recoveryStack is moto with the stack's tables and schedule group.
type recoveryStack struct {
	moto              string
	db                *dynamodb.Client
	sched             *scheduler.Client
	games, data       string
	lambda            *aiRecorder
	schedCfg          eventbridge.Config
	clock             *fakeclock.Clock
	env               map[string]string
	restoredSuffix    string
	restoredStreamARN string
}

func newRecoveryStack(t *testing.T) *recoveryStack {
	t.Helper()
	s := &recoveryStack{moto: emulatortest.StartMoto(t), lambda: &aiRecorder{}, restoredSuffix: "-r1"}
	cfg := emulator.Config(s.moto)
	s.db, s.sched = dynamodb.NewFromConfig(cfg), scheduler.NewFromConfig(cfg)
	s.games, s.data = emulatortest.NewGamesTable(t, s.moto), emulatortest.NewDataTable(t, s.moto)
	ctx := t.Context()
	// The stack's tables have their stream and point-in-time recovery.
	if _, err := dynamostore.EnableStream(ctx, s.db, s.games); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{s.games, s.data} {
		if _, err := s.db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
			TableName:                        aws.String(table),
			PointInTimeRecoverySpecification: &dtypes.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.sched.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(testGroup)}); err != nil {
		t.Fatal(err)
	}
	s.schedCfg = eventbridge.Config{Group: testGroup, RoleARN: testRole, TargetARN: testTimeout}
	lambdaSrv := httptest.NewServer(s.lambda)
	t.Cleanup(lambdaSrv.Close)
	// The games' clock runs an hour ahead of the machine's, so that no
	// deadline of the test is ever within the scheduler's minimum lead of
	// real time (however slow the machine), and it moves only when the
	// test says.
	s.clock = fakeclock.New(time.Now().Add(time.Hour).Truncate(time.Second))
	// ops reads its AWS endpoints from the SDK's environment variables.
	for k, v := range map[string]string{
		"AWS_REGION": emulator.Region, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
		"AWS_ENDPOINT_URL_DYNAMODB": s.moto, "AWS_ENDPOINT_URL_SCHEDULER": s.moto, "AWS_ENDPOINT_URL_LAMBDA": lambdaSrv.URL,
	} {
		t.Setenv(k, v)
	}
	s.env = map[string]string{
		"GAMES_TABLE": s.games, "DATA_TABLE": s.data,
		"SCHEDULE_GROUP": testGroup, "SCHEDULER_ROLE_ARN": testRole, "TIMEOUT_FUNCTION_ARN": testTimeout,
		"AI_FUNCTION_NAME": testAIFuncion,
	}
	return s
}

// service is the game service on the given tables as the functions run
// it, with the stack's scheduler, AI seats recorded, on the test's clock;
// effects run inline (the stream consumers' work, done by the writer).
func (s *recoveryStack) service(t *testing.T, games, data string, trigger service.AITrigger, engine service.Engine) *service.Service {
	t.Helper()
	store, err := dynamostore.New(s.db, games)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamostore.NewData(s.db, data)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := eventbridge.New(s.sched, s.schedCfg)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.New(service.Config{Store: store, Players: d, Lister: store, Scheduler: sched, AITrigger: trigger, Engine: engine, Now: s.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close(5 * time.Second) })
	return svc
}

// schedules lists the group's schedules: name → (fire time, task).
func (s *recoveryStack) schedules(t *testing.T) map[string]scheduled {
	t.Helper()
	out := map[string]scheduled{}
	p := scheduler.NewListSchedulesPaginator(s.sched, &scheduler.ListSchedulesInput{GroupName: aws.String(testGroup)})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range page.Schedules {
			name := aws.ToString(sc.Name)
			got, err := s.sched.GetSchedule(t.Context(), &scheduler.GetScheduleInput{Name: sc.Name, GroupName: aws.String(testGroup)})
			if err != nil {
				t.Fatal(err)
			}
			at, err := time.Parse("at(2006-01-02T15:04:05)", aws.ToString(got.ScheduleExpression))
			if err != nil {
				t.Fatalf("schedule %s: %q is not an at() expression: %v", name, aws.ToString(got.ScheduleExpression), err)
			}
			var task service.TimeoutTask
			if err := json.Unmarshal([]byte(aws.ToString(got.Target.Input)), &task); err != nil {
				t.Fatalf("schedule %s input: %v", name, err)
			}
			if aws.ToString(got.Target.Arn) != testTimeout || aws.ToString(got.Target.RoleArn) != testRole {
				t.Errorf("schedule %s targets %s as %s; want the timeout function as the scheduler's role", name, aws.ToString(got.Target.Arn), aws.ToString(got.Target.RoleArn))
			}
			out[name] = scheduled{at: at, task: task}
		}
	}
	return out
}

type scheduled struct {
	at   time.Time
	task service.TimeoutTask
}

// wipe deletes every schedule of the group (what a lost account, a
// deleted group or a bad deploy leaves).
func (s *recoveryStack) wipe(t *testing.T) {
	t.Helper()
	for name := range s.schedules(t) {
		if _, err := s.sched.DeleteSchedule(t.Context(), &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(testGroup)}); err != nil {
			t.Fatal(err)
		}
	}
}

func (s *recoveryStack) ops(t *testing.T, env map[string]string, args ...string) (string, string) {
	t.Helper()
	code, out, errOut := runCLI(t, env, s.clock.Now, args...)
	if code != exitOK {
		t.Fatalf("ops %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out, errOut
}

// theGames are the games in progress when the tables are lost, each with
// what it should come to once its deadline falls.
type liveGame struct {
	name, id string
	endsAs   game.Reason
}

// TestRecoveryOnMoto follows docs/operations.md §5.6 on moto: games in
// progress (a game's first move, a Fischer clock, a per-move timer, a
// waiting game, an AI seat's turn, a finished game), the tables restored
// by ops restore (stream, TTL and point-in-time recovery back on), every
// schedule wiped, ops rearm run twice; then the schedules are fired as
// EventBridge Scheduler would, each at its time, into the timeout
// handler on the restored tables: every human game ends at its deadline,
// the waiting game expires at its, the AI turn is started again, and the
// game whose deadline passed during the outage was ended by rearm itself.
func TestRecoveryOnMoto(t *testing.T) {
	if testing.Short() {
		t.Skip("needs moto; skipped with -short")
	}
	s := newRecoveryStack(t)
	ctx := t.Context()
	before := s.service(t, s.games, s.data, s.lambda, nil)
	t0 := s.clock.Now()

	opts := func(tc string) game.Options {
		o := game.DefaultOptions()
		o.ColorAssignment = game.ColorsHostWhite
		parsed, err := game.ParseTimeControl(tc)
		if err != nil {
			t.Fatal(err)
		}
		o.TimeControl = parsed
		return o
	}
	create := func(tc, ai string) service.Seated {
		t.Helper()
		seated, err := before.Create(ctx, service.CreateInput{Options: opts(tc), AILevel: ai, Player: service.PlayerInput{Name: "host"}})
		if err != nil {
			t.Fatal(err)
		}
		return seated
	}
	join := func(id string) service.Seated {
		t.Helper()
		seated, err := before.Join(ctx, id, service.JoinInput{Player: service.PlayerInput{Name: "guest"}})
		if err != nil {
			t.Fatal(err)
		}
		return seated
	}
	move := func(id, token, uci string) {
		t.Helper()
		if _, err := before.Act(ctx, id, service.Caller{Token: token}, service.ActionInput{Action: game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: uci}}}); err != nil {
			t.Fatalf("%s in %s: %v", uci, id, err)
		}
	}

	// t0: a game whose first move is due at t0+30 s (during the outage),
	// a game waiting for its opponent (expires at t0+30 min).
	firstMove := create("5+0", "")
	join(firstMove.GameID)
	waiting := create("5+0", "")
	// t0+20 s: a per-move game (deadline t0+50 s), a Fischer 1+0 game
	// (white's clock: t0+80 s), an AI game on the AI's turn (its watchdog:
	// the level's think time + 30 s), and a finished game.
	s.clock.Advance(20 * time.Second)
	perMove := create("perMove:30", "")
	pmBlack := join(perMove.GameID)
	move(perMove.GameID, perMove.Token, "e2e4")
	move(perMove.GameID, pmBlack.Token, "e7e5")
	fischer := create("1+0", "")
	fBlack := join(fischer.GameID)
	move(fischer.GameID, fischer.Token, "e2e4")
	move(fischer.GameID, fBlack.Token, "e7e5")
	aiGame := create("5+0", "easy")
	move(aiGame.GameID, aiGame.Token, "e2e4")
	if tasks := s.lambda.take(); len(tasks) != 1 || tasks[0].GameID != aiGame.GameID {
		t.Fatalf("AI triggers before the outage: %+v; want the AI game's one (then lost)", tasks)
	}
	finished := create("5+0", "")
	fin2 := join(finished.GameID)
	if _, err := before.Act(ctx, finished.GameID, service.Caller{Token: fin2.Token}, service.ActionInput{Action: game.Action{Type: game.ActionResign}}); err != nil {
		t.Fatal(err)
	}
	live := []liveGame{
		{"perMove", perMove.GameID, game.ReasonTimeLoss},
		{"fischer", fischer.GameID, game.ReasonTimeLoss},
		{"waiting", waiting.GameID, game.ReasonExpired},
		{"aiTurn", aiGame.GameID, game.ReasonTimeLoss}, // the AI moves, then the human's flag falls
	}
	// Lazy timers: a game may have more than one schedule (a superseded
	// one fires once into a no-op, as does the finished game's leftover);
	// every game made has at least one.
	armed := map[string]bool{}
	for name := range s.schedules(t) {
		armed[name[:strings.LastIndex(name, ".")]] = true
	}
	if len(armed) != len(live)+2 {
		t.Fatalf("%d games with schedules before the outage (%v); want every game made (%d)", len(armed), keys(s.schedules(t)), len(live)+2)
	}

	// The outage: the tables are lost (restored from point-in-time
	// recovery, as new tables), every schedule is gone, and time passes:
	// the first move's deadline (t0+30 s) falls meanwhile.
	out, errOut := s.ops(t, s.env, "restore", "-to", "latest", "-suffix", s.restoredSuffix)
	restoredGames, restoredData := s.games+s.restoredSuffix, s.data+s.restoredSuffix
	if !strings.Contains(out, "DataTableName="+restoredData+"\n") || !strings.Contains(errOut, "sam deploy --parameter-overrides GamesTableStreamArn=") {
		t.Errorf("restore printed\n%s\n%s\nwant the stack parameters and the next steps", out, errOut)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if v, ok := strings.CutPrefix(line, "GamesTableStreamArn="); ok {
			s.restoredStreamARN = v
		}
	}
	s.checkRestoredTables(t, restoredGames, restoredData)
	s.wipe(t)
	s.clock.Set(t0.Add(45 * time.Second))

	// The stack now points at the restored tables (GamesTableStreamArn,
	// DataTableName): rearm on them, twice (idempotent).
	env := map[string]string{}
	for k, v := range s.env {
		env[k] = v
	}
	env["GAMES_TABLE"], env["DATA_TABLE"] = restoredGames, restoredData
	out, _ = s.ops(t, env, "rearm", "-rate", "1000")
	if !strings.Contains(out, "5 of 5 live games re-armed, 0 failed") {
		t.Errorf("rearm printed\n%s\nwant the 5 live games re-armed", out)
	}
	first := s.schedules(t)
	s.ops(t, env, "rearm", "-rate", "1000")
	second := s.schedules(t)
	if !equalKeys(first, second) {
		t.Errorf("a second rearm changed the schedules: %v then %v", keys(first), keys(second))
	}
	if tasks := s.lambda.take(); len(tasks) != 0 {
		t.Errorf("rearm triggered the AI %d times; its turn is not overdue yet (the watchdog is armed)", len(tasks))
	}

	// The AI seat's engine answers the turns the watchdog starts again.
	after := s.service(t, restoredGames, restoredData, s.lambda, aiplayer.NewPool(1, 1).WithoutPacing())
	load := func(id string) *game.State {
		t.Helper()
		store, _ := dynamostore.New(s.db, restoredGames)
		rec, err := store.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		st, err := after.Decode(rec)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// The first move's deadline passed during the outage: rearm applied it.
	if st := load(firstMove.GameID); st.Phase != game.PhaseFinished || st.Result.Reason != game.ReasonAborted ||
		st.Result.EndedAt != t0.Add(30*time.Second).UnixMilli() {
		t.Errorf("the game whose first move fell due in the outage: phase %s, result %+v; want aborted at t0+30 s", st.Phase, st.Result)
	}
	// Every other live game has exactly its one schedule, at its deadline.
	deadlines := map[string]time.Time{}
	for _, g := range live {
		st := load(g.id)
		d, ok := game.Deadline(st)
		if _, ai := st.AITurn(); ai {
			var bound time.Duration
			for _, sc := range second {
				if sc.task.GameID == g.id {
					bound = sc.task.Deadline.Sub(time.UnixMilli(st.Clock.TurnStartedAt))
				}
			}
			d, ok = time.UnixMilli(st.Clock.TurnStartedAt).Add(bound), bound > 30*time.Second
		}
		if !ok {
			t.Fatalf("%s has no deadline", g.name)
		}
		deadlines[g.id] = d
		name := eventbridge.ScheduleName(g.id, eventbridge.FireTime(d, time.Now()))
		sc, ok := second[name]
		if !ok {
			t.Errorf("%s: no schedule %s; have %v", g.name, name, keys(second))
			continue
		}
		if sc.task.GameID != g.id || sc.task.Version != st.Version || !sc.task.Deadline.Equal(d) {
			t.Errorf("%s: schedule task %+v; want version %d, deadline %s", g.name, sc.task, st.Version, d)
		}
	}
	if len(second) != len(live) {
		t.Errorf("%d schedules after rearm (%v); want %d, one per live game", len(second), keys(second), len(live))
	}

	// The schedules fire, each at its time, as EventBridge Scheduler
	// delivers them to the timeout function (and deletes them: their
	// ActionAfterCompletion), and the AI seat answers the turns the
	// handler starts, until no game has a timer left. A per-move timer
	// grants one extension before the flag falls (seeds/003), so a game
	// may fire more than once; each ends at the deadline of the delivery
	// that ended it.
	lastDeadline := map[string]time.Time{}
	aiMoves := 0
	for round := 0; ; round++ {
		pending := s.schedules(t)
		if len(pending) == 0 {
			break
		}
		if round > 40 {
			t.Fatalf("still %d schedules after 40 deliveries: %v", len(pending), keys(pending))
		}
		name := slices.MinFunc(keys(pending), func(a, b string) int { return pending[a].at.Compare(pending[b].at) })
		sc := pending[name]
		s.clock.Set(sc.at)
		if _, err := s.sched.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(testGroup)}); err != nil {
			t.Fatal(err)
		}
		if err := after.HandleTimeout(ctx, sc.task); err != nil {
			t.Fatalf("delivery of %+v: %v", sc.task, err)
		}
		lastDeadline[sc.task.GameID] = sc.task.Deadline
		for _, task := range s.lambda.take() {
			if task.GameID != aiGame.GameID {
				t.Errorf("an AI turn started in the human game %s", task.GameID)
			}
			if err := after.PlayAITurn(ctx, task); err != nil {
				t.Fatal(err)
			}
			aiMoves++
		}
	}
	if aiMoves != 1 {
		t.Errorf("the AI seat moved %d times; want once (its turn started again by the watchdog)", aiMoves)
	}
	for _, g := range live {
		st := load(g.id)
		if st.Phase != game.PhaseFinished || st.Result == nil || st.Result.Reason != g.endsAs || st.Result.EndedAt != lastDeadline[g.id].UnixMilli() {
			t.Errorf("%s: phase %s, result %+v; want %s at the deadline of its last delivery, %s", g.name, st.Phase, st.Result, g.endsAs, lastDeadline[g.id])
		}
		// The clock games end at the deadline rearm armed; the per-move
		// game after its extension; the AI game once the AI has moved
		// and the human's clock has run out.
		if extended := g.name == "perMove" || g.name == "aiTurn"; extended != lastDeadline[g.id].After(deadlines[g.id]) ||
			(!extended && !lastDeadline[g.id].Equal(deadlines[g.id])) {
			t.Errorf("%s ended at %s; the deadline rearm armed was %s", g.name, lastDeadline[g.id], deadlines[g.id])
		}
	}
	// The finished game was never re-armed.
	for _, sc := range second {
		if sc.task.GameID == finished.GameID {
			t.Errorf("the finished game got a schedule")
		}
	}
}

// checkRestoredTables: the restored tables have what the stack needs that
// a restore does not copy (stream, TTL, point-in-time recovery), and the
// games table its indexes.
func (s *recoveryStack) checkRestoredTables(t *testing.T, games, data string) {
	t.Helper()
	ctx := t.Context()
	g, err := s.db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(games)})
	if err != nil {
		t.Fatal(err)
	}
	if spec := g.Table.StreamSpecification; spec == nil || !aws.ToBool(spec.StreamEnabled) || spec.StreamViewType != dtypes.StreamViewTypeNewAndOldImages ||
		aws.ToString(g.Table.LatestStreamArn) != s.restoredStreamARN || !strings.Contains(s.restoredStreamARN, ":table/"+games+"/stream/") {
		t.Errorf("restored games table stream %+v (%s), printed %s; want new and old images, its ARN printed", spec, aws.ToString(g.Table.LatestStreamArn), s.restoredStreamARN)
	}
	if n := len(g.Table.GlobalSecondaryIndexes); n != len(dynamostore.GamesIndexes()) {
		t.Errorf("restored games table has %d indexes; want %d", n, len(dynamostore.GamesIndexes()))
	}
	for _, table := range []string{games, data} {
		ttl, err := s.db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
		if err != nil || ttl.TimeToLiveDescription.TimeToLiveStatus != dtypes.TimeToLiveStatusEnabled || aws.ToString(ttl.TimeToLiveDescription.AttributeName) != "expiresAt" {
			t.Errorf("%s TTL: %+v, %v; want enabled on expiresAt", table, ttl, err)
		}
		b, err := s.db.DescribeContinuousBackups(ctx, &dynamodb.DescribeContinuousBackupsInput{TableName: aws.String(table)})
		if err != nil || b.ContinuousBackupsDescription.PointInTimeRecoveryDescription.PointInTimeRecoveryStatus != dtypes.PointInTimeRecoveryStatusEnabled {
			t.Errorf("%s point-in-time recovery: %v; want enabled", table, err)
		}
	}
	// Running restore again (a run cut short) finds the tables and
	// changes nothing.
	out, _ := s.ops(t, s.env, "restore", "-to", "latest", "-suffix", s.restoredSuffix)
	if !strings.Contains(out, "GamesTableStreamArn="+s.restoredStreamARN+"\n") {
		t.Errorf("a second restore printed %q; want the same stream", out)
	}
}

func keys(m map[string]scheduled) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func equalKeys(a, b map[string]scheduled) bool { return slices.Equal(keys(a), keys(b)) }
