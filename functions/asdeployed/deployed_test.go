package asdeployed

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"chessapi/deploy"
	"chessapi/infra/emulator"
	"chessapi/infra/emulator/emulatortest"
	"chessapi/infra/rie"
	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/schedule/eventbridge"
	"chessapi/shared/service"
	"chessapi/shared/store/dynamostore"
)

// apiAnswer is the part of the API's answers the test reads.
type apiAnswer struct {
	GameID string `json:"gameId"`
	Token  string `json:"token"`
	Game   *struct {
		Version int64  `json:"version"`
		Phase   string `json:"phase"`
		Variant string `json:"variant"`
	} `json:"game"`
	Error *struct {
		Code string `json:"code"`
	} `json:"error"`
	BestMove string `json:"bestMove"`
	SAN      string `json:"san"`
	Score    struct {
		Mate *int `json:"mate"`
	} `json:"score"`
}

func decodeAnswer(t testing.TB, what, body string) apiAnswer {
	t.Helper()
	var a apiAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("%s: body %q: %v", what, body, err)
	}
	return a
}

// TestAsDeployed runs the function binaries under the Runtime Interface
// Emulator against moto and walks a game through them with the events/
// files: create games, play a move (whose record on the games table's
// change stream the fan-out turns into the deadline's schedule in moto and
// the AI seat's trigger, a recorded async invoke), the AI seat's reply, a
// timeout after the deadline, the third-party AI route, and the failures the
// functions must report. It checks the answers, the table and the
// schedules.
func TestAsDeployed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	s := newStack(t)
	move := start(t, moveSpec, s.env(moveSpec))
	timeout := start(t, timeoutSpec, s.env(timeoutSpec))
	ai := start(t, aiSpec, s.env(aiSpec))
	fanout := startConsumers(t, s)
	ctx := context.Background()
	inits := map[string]time.Duration{}
	noteInit := func(fn string, res rie.Result) {
		if res.InitDuration > 0 {
			inits[fn] = res.InitDuration
		}
	}

	t.Run("health, cold start", func(t *testing.T) {
		resp, res := invokeHTTP(t, move, "health", evs["move/health.json"].Raw)
		if resp.StatusCode != 200 {
			t.Fatalf("health: %d %s; want 200", resp.StatusCode, resp.Body)
		}
		if res.InitDuration <= 0 {
			t.Errorf("health was the first invoke but reported no init duration")
		}
		noteInit("move", res)
		// The function logs JSON lines (slog) tagged with its name.
		if !slices.ContainsFunc(res.Logs, func(l string) bool {
			return strings.HasPrefix(l, "{") && strings.Contains(l, `"function":"move"`)
		}) {
			t.Errorf("cold start logs = %q; want the function's JSON log lines", res.Logs)
		}
	})

	t.Run("create games", func(t *testing.T) {
		resp, _ := invokeHTTP(t, move, "create-human", evs["move/create-human.json"].Raw)
		a := decodeAnswer(t, "create-human", resp.Body)
		if resp.StatusCode != 201 || a.GameID == "" || a.Token == "" {
			t.Fatalf("create-human: %d %s; want 201 with a game id and token", resp.StatusCode, resp.Body)
		}
		if rec, st := s.game(t, a.GameID); rec.Version != 1 || st.Phase != game.PhaseWaiting {
			t.Errorf("table item of %s: version %d phase %q; want 1, waiting", a.GameID, rec.Version, st.Phase)
		}
		if n := s.pump(t, fanout); n != 1 {
			t.Errorf("change stream records after a create = %d; want 1", n)
		}

		resp, _ = invokeHTTP(t, move, "create-ai", evs["move/create-ai.json"].Raw)
		a = decodeAnswer(t, "create-ai", resp.Body)
		if resp.StatusCode != 201 || a.Game == nil || a.Game.Variant != "chess960" || a.Game.Phase != "playing" {
			t.Fatalf("create-ai: %d %s; want 201, a chess960 game being played", resp.StatusCode, resp.Body)
		}
		rec, st := s.game(t, a.GameID)
		if _, aiTurn := st.AITurn(); rec.Version != 1 || aiTurn || rec.Deadline.IsZero() {
			t.Fatalf("table item of %s: version %d, AI to move %v, deadline %v; want 1, the human to move, a deadline", a.GameID, rec.Version, aiTurn, rec.Deadline)
		}
		// The move function only wrote; the fan-out, fed by the change
		// stream, scheduled the first-move deadline in moto.
		if list, sent := listSchedules(t, s, a.GameID), s.timers.sentFor(a.GameID); len(list) != 0 || len(sent) != 0 {
			t.Errorf("schedules before the fan-out: %q, queued timers %+v; want none (the writer leaves them to the fan-out)", list, sent)
		}
		s.pump(t, fanout)
		checkSchedule(t, s, service.TimeoutTask{GameID: a.GameID, Version: 1, Deadline: rec.Deadline})
		if calls := s.invokes.take(); len(calls) != 0 {
			t.Errorf("AI invoked with the human to move: %+v", calls)
		}

		// The created game's seat plays through the same event file.
		resp, _ = invokeHTTP(t, move, "e4 in the created game", withGame(t, evs["move/action-move-from-to.json"], a.GameID, a.Token))
		if resp.StatusCode != 200 {
			t.Fatalf("e2e4 in the created chess960 game: %d %s; want 200", resp.StatusCode, resp.Body)
		}
		rec, _ = s.game(t, a.GameID)
		s.pump(t, fanout)
		if calls := s.invokes.take(); rec.Version != 2 || len(calls) != 1 || !strings.Contains(string(calls[0].Payload), a.GameID) {
			t.Errorf("after the human's move: version %d, AI invokes %+v; want 2 and one invoke for %s", rec.Version, calls, a.GameID)
		}
	})

	t.Run("move triggers the AI seat", func(t *testing.T) {
		s.put(t, sampleGame(t, "easy", time.Now()))
		s.pump(t, fanout)
		resp, _ := invokeHTTP(t, move, "e4", evs["move/action-move-from-to.json"].Raw)
		if resp.StatusCode != 200 {
			t.Fatalf("e4: %d %s; want 200", resp.StatusCode, resp.Body)
		}
		if rec, _ := s.game(t, deploy.SampleGameID); rec.Version != 2 {
			t.Fatalf("table version after e4 = %d; want 2", rec.Version)
		}
		s.pump(t, fanout)
		calls := s.invokes.take()
		if len(calls) != 1 {
			t.Fatalf("AI invokes after e4 = %+v; want one", calls)
		}
		c := calls[0]
		var task service.AITask
		if err := json.Unmarshal(c.Payload, &task); err != nil || task != *evs["ai/trigger.json"].AITask {
			t.Fatalf("AI invoke payload %s (%v); want events/ai/trigger.json's %+v", c.Payload, err, *evs["ai/trigger.json"].AITask)
		}
		if c.Function != aiFunction || c.InvocationType != "Event" {
			t.Errorf("AI invoke of %q as %q; want %q asynchronously (Event)", c.Function, c.InvocationType, aiFunction)
		}

		// Lambda would now run the AI function with that payload.
		res := invoke(t, ai, "AI trigger", c.Payload)
		noteInit("ai", res)
		if string(res.Payload) != "null" {
			t.Errorf("AI trigger result = %s; want null", res.Payload)
		}
		rec, st := s.game(t, deploy.SampleGameID)
		if rec.Version != 3 || len(st.Moves) != 2 || st.Moves[1].Color != chess.Black {
			t.Fatalf("table after the AI trigger: version %d, moves %+v; want 3 with black's reply", rec.Version, st.Moves)
		}
		pos := chess.StartingPosition()
		e4, _ := pos.ParseUCI("e2e4")
		pos.Play(e4)
		if _, err := pos.ParseUCI(st.Moves[1].UCI); err != nil {
			t.Errorf("AI reply %q after 1. e4: %v", st.Moves[1].UCI, err)
		}
		// The AI's move on the change stream: white's deadline comes after
		// the timer the record claims (lazy timers), whose schedule is
		// there; the AI's reply armed nothing.
		s.calls.Take()
		s.pump(t, fanout)
		rec, _ = s.game(t, deploy.SampleGameID)
		if rec.ArmedAt.IsZero() || rec.ArmedAt.After(rec.Deadline) {
			t.Errorf("after the AI's reply: armed %v, deadline %v; want armed at or before the deadline", rec.ArmedAt, rec.Deadline)
		}
		checkSchedule(t, s, service.TimeoutTask{GameID: deploy.SampleGameID, Deadline: rec.ArmedAt})
		if calls := s.calls.Take(); calls["scheduler:CreateSchedule"] != 0 {
			t.Errorf("the AI's reply: %v; want no schedule (its deadline is later than the armed one)", calls)
		}

		// The trigger file itself, now stale, is a no-op.
		invoke(t, ai, "stale trigger.json", evs["ai/trigger.json"].Raw)
		if rec, _ := s.game(t, deploy.SampleGameID); rec.Version != 3 {
			t.Errorf("table version after a stale trigger = %d; want 3", rec.Version)
		}
	})

	t.Run("timeout after the deadline", func(t *testing.T) {
		// The game as it would be had white played e4 (20 s after the
		// start) nearly three minutes ago: black's first-move timer (30 s)
		// ran out long ago. Written to the table directly, because waiting
		// for a real deadline is slow.
		created := time.Now().Add(-3 * time.Minute)
		st := sampleGame(t, "", created)
		action := game.Action{Type: game.ActionMove, Move: game.MoveInput{UCI: "e2e4"}}
		st, _, err := game.Reduce(st, game.Act{By: chess.White, Action: action}, created.Add(20*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		s.put(t, st)
		s.pump(t, fanout)
		rec, _ := s.game(t, deploy.SampleGameID)
		task := *evs["timeout/deadline.json"].Timeout
		if rec.Version != task.Version || !rec.Deadline.Before(time.Now()) {
			t.Fatalf("seeded game: version %d deadline %v; want the file's version %d and a past deadline", rec.Version, rec.Deadline, task.Version)
		}
		task.Deadline = rec.Deadline // as the scheduler would have sent it
		payload, _ := json.Marshal(task)

		res := invoke(t, timeout, "deadline.json", payload)
		noteInit("timeout", res)
		rec, st = s.game(t, deploy.SampleGameID)
		if rec.Version != 4 || st.Phase != game.PhaseFinished || st.Result == nil {
			t.Fatalf("table after the timeout: version %d phase %q result %v; want 4, finished", rec.Version, st.Phase, st.Result)
		}
		// A finished game carries the TTL attribute, read raw from the table.
		item, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
			Key: map[string]dbtypes.AttributeValue{dynamostore.KeyAttribute: &dbtypes.AttributeValueMemberS{Value: deploy.SampleGameID}},
		})
		if err != nil || item.Item[dynamostore.TTLAttribute] == nil {
			t.Errorf("finished item: %v, attribute %s = %v; want the TTL set", err, dynamostore.TTLAttribute, item.Item[dynamostore.TTLAttribute])
		}
		if !slices.ContainsFunc(res.Logs, func(l string) bool { return strings.Contains(l, `"msg":"timeout task handled"`) }) {
			t.Errorf("timeout logs = %q; want what it did", res.Logs)
		}
		// The finished game's record: no scheduler call (a leftover
		// schedule fires once into a no-op, and deletes itself).
		s.calls.Take()
		s.pump(t, fanout)
		for op, n := range s.calls.Take() {
			if strings.HasPrefix(op, "scheduler:") {
				t.Errorf("the finished game's record made %d %s; want no scheduler call", n, op)
			}
		}

		// At-least-once delivery: the same task again changes nothing.
		invoke(t, timeout, "deadline.json again", payload)
		if rec, _ := s.game(t, deploy.SampleGameID); rec.Version != 4 {
			t.Errorf("table version after a repeated delivery = %d; want 4", rec.Version)
		}
	})

	t.Run("third-party AI route", func(t *testing.T) {
		resp, res := invokeHTTP(t, ai, "move-mate-in-one", evs["ai/move-mate-in-one.json"].Raw)
		noteInit("ai", res)
		a := decodeAnswer(t, "move-mate-in-one", resp.Body)
		if resp.StatusCode != 200 || a.BestMove != "a1a8" || a.SAN != "Ra8#" || a.Score.Mate == nil || *a.Score.Mate != 1 {
			t.Errorf("move-mate-in-one: %d %s; want 200, a1a8 Ra8# mate 1", resp.StatusCode, resp.Body)
		}
		resp, _ = invokeHTTP(t, ai, "move-without-key", evs["ai/move-without-key.json"].Raw)
		if a := decodeAnswer(t, "move-without-key", resp.Body); resp.StatusCode != 401 || a.Error == nil || a.Error.Code != "invalid_api_key" {
			t.Errorf("move-without-key with AI_API_KEY set: %d %s; want 401 invalid_api_key", resp.StatusCode, resp.Body)
		}
	})

	t.Run("failures", func(t *testing.T) {
		// The timeout function reports work it could not do as a Lambda
		// error, so EventBridge Scheduler delivers again.
		env := s.env(timeoutSpec)
		env["GAMES_TABLE"] = "no-such-table"
		broken := start(t, timeoutSpec, env)
		res, err := broken.Invoke(ctx, evs["timeout/deadline.json"].Raw)
		if err != nil || res.FunctionError == nil {
			t.Errorf("timeout with a missing table: %v, function error %v (payload %s); want a function error", err, res.FunctionError, res.Payload)
		}

		// Missing configuration fails the start, with one line naming it.
		env = s.env(moveSpec)
		delete(env, "GAMES_TABLE")
		unconfigured := start(t, moveSpec, env)
		res, err = unconfigured.Invoke(ctx, evs["move/health.json"].Raw)
		if err != nil && !errors.Is(err, rie.ErrExited) {
			t.Fatalf("move without GAMES_TABLE: %v", err)
		}
		// The emulator answers a failed init with 502 and no payload
		// (Lambda: Runtime.ExitError); either way, no HTTP answer.
		if err == nil && res.FunctionError == nil && res.StatusCode == 200 {
			t.Errorf("move without GAMES_TABLE answered %d %s; want a failed init", res.StatusCode, res.Payload)
		}
		// The function's line and the emulator's 502 come through different
		// pipes: wait for the line, then count.
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, err := unconfigured.AwaitLog(waitCtx, func(l string) bool { return strings.Contains(l, "GAMES_TABLE") }); err != nil {
			t.Error(err)
		}
		var lines []string
		for _, l := range unconfigured.Logs() {
			if strings.Contains(l, "GAMES_TABLE") {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], "start-up failed") {
			t.Errorf("log lines naming GAMES_TABLE = %q; want one start-up failure line", lines)
		}
	})

	t.Run("DynamoDB on dynalite", func(t *testing.T) {
		// The same binary on the other DynamoDB emulator (scheduler still on
		// moto): create a game and play a move.
		dynalite := emulatortest.StartDynalite(t)
		table := emulatortest.NewGamesTable(t, dynalite)
		env := s.env(moveSpec)
		env["AWS_ENDPOINT_URL_DYNAMODB"] = dynalite
		env["GAMES_TABLE"] = table
		onDynalite := start(t, moveSpec, env)
		store, err := dynamostore.New(dynamodb.NewFromConfig(emulator.Config(dynalite)), table)
		if err != nil {
			t.Fatal(err)
		}

		resp, _ := invokeHTTP(t, onDynalite, "create-human", evs["move/create-human.json"].Raw)
		a := decodeAnswer(t, "create-human", resp.Body)
		if resp.StatusCode != 201 {
			t.Fatalf("create-human on dynalite: %d %s; want 201", resp.StatusCode, resp.Body)
		}
		if rec, err := store.Get(ctx, a.GameID); err != nil || rec.Version != 1 {
			t.Fatalf("dynalite item %s: %+v, %v; want version 1", a.GameID, rec, err)
		}
		join, _ := invokeHTTP(t, onDynalite, "join", withGame(t, evs["move/join.json"], a.GameID, ""))
		j := decodeAnswer(t, "join", join.Body)
		if join.StatusCode != 200 {
			t.Fatalf("join on dynalite: %d %s; want 200", join.StatusCode, join.Body)
		}
		// Whoever holds white moves e4.
		var played bool
		for _, token := range []string{a.Token, j.Token} {
			resp, _ := invokeHTTP(t, onDynalite, "e4", withGame(t, evs["move/action-move-from-to.json"], a.GameID, token))
			if resp.StatusCode == 200 {
				played = true
				break
			}
		}
		if rec, err := store.Get(ctx, a.GameID); !played || err != nil || rec.Version != 3 {
			t.Errorf("dynalite item after e4: %+v, %v (played %v); want version 3", rec, err, played)
		}
	})

	for fn, d := range inits {
		t.Logf("init duration of %s: %v", fn, d)
	}
}

// listSchedules names the game's schedules in moto.
func listSchedules(t *testing.T, s *stack, gameID string) []string {
	t.Helper()
	list, err := s.sched.ListSchedules(context.Background(), &scheduler.ListSchedulesInput{
		GroupName: aws.String(scheduleGroup), NamePrefix: aws.String(eventbridge.NamePrefix(gameID)),
	})
	if err != nil {
		t.Fatalf("ListSchedules(%s): %v", gameID, err)
	}
	var names []string
	for _, sc := range list.Schedules {
		names = append(names, aws.ToString(sc.Name))
	}
	return names
}

// checkSchedule finds the game's timer for the task's instant: a message
// sent to the deadline queue with the task (a timer due within 15
// minutes), or the schedule in moto (lazy timers: superseded ones may
// still be there, to fire once) that invokes the timeout function with
// the task (its version too, unless task.Version is 0).
func checkSchedule(t *testing.T, s *stack, task service.TimeoutTask) {
	t.Helper()
	if slices.ContainsFunc(s.timers.sentFor(task.GameID), func(got service.TimeoutTask) bool {
		return got.Deadline.Equal(task.Deadline) && (task.Version == 0 || got.Version == task.Version)
	}) {
		return
	}
	names := listSchedules(t, s, task.GameID)
	name := eventbridge.ScheduleName(task.GameID, eventbridge.FireTime(task.Deadline, task.Deadline.Add(-time.Hour)))
	if !slices.Contains(names, name) {
		t.Fatalf("schedules of game %s: %q; want %s (for %v)", task.GameID, names, name, task.Deadline)
	}
	out, err := s.sched.GetSchedule(context.Background(), &scheduler.GetScheduleInput{Name: aws.String(name), GroupName: aws.String(scheduleGroup)})
	if err != nil {
		t.Fatalf("GetSchedule(%s): %v", name, err)
	}
	var input service.TimeoutTask
	if out.Target == nil || json.Unmarshal([]byte(aws.ToString(out.Target.Input)), &input) != nil {
		t.Fatalf("schedule %s target = %+v; want the task as input", name, out.Target)
	}
	if aws.ToString(out.Target.Arn) != timeoutFunction || aws.ToString(out.Target.RoleArn) != schedulerRole ||
		input.GameID != task.GameID || (task.Version != 0 && input.Version != task.Version) || !input.Deadline.Equal(task.Deadline) ||
		out.ActionAfterCompletion != schedtypes.ActionAfterCompletionDelete {
		t.Errorf("schedule %s: target %s role %s input %+v after %q; want %s, %s, %+v, DELETE",
			name, aws.ToString(out.Target.Arn), aws.ToString(out.Target.RoleArn), input, out.ActionAfterCompletion,
			timeoutFunction, schedulerRole, task)
	}
}
