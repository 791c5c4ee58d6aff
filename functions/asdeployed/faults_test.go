package asdeployed

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/deploy"
	"chessapi/infra/rie"
	"chessapi/shared/chess"
	"chessapi/shared/engine"
	"chessapi/shared/game"
	"chessapi/shared/game/storedgame"
	"chessapi/shared/service"
)

// deliver sends one batch of change-stream records to a stream consumer and
// returns the sequence numbers it reported failed.
func deliver(t *testing.T, fanout *rie.Function, ev events.DynamoDBEvent) []string {
	t.Helper()
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	res := invoke(t, fanout, "fan-out", payload)
	var resp events.DynamoDBEventResponse
	if err := json.Unmarshal(res.Payload, &resp); err != nil {
		t.Fatalf("fan-out answer %s: %v", res.Payload, err)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

// shiftTurn rewrites a game in the table as if its current turn had
// started ago earlier: the test's way to let time pass.
func (s *stack) shiftTurn(t *testing.T, gameID string, ago time.Duration) {
	t.Helper()
	s.rewrite(t, gameID, func(st *game.State) { st.Clock.TurnStartedAt -= ago.Milliseconds() })
}

// rearm makes the game's record claim a timer armed at at, behind the
// service's back (at the same version).
func (s *stack) rearm(t *testing.T, gameID string, at time.Time) {
	t.Helper()
	rec, _ := s.game(t, gameID)
	rec.ArmedAt = at
	if err := s.store.Update(context.Background(), rec, rec.Version); err != nil {
		t.Fatal(err)
	}
}

// rewrite changes a game in the table behind the service's back.
func (s *stack) rewrite(t *testing.T, gameID string, change func(*game.State)) {
	t.Helper()
	// Rewritten at the same version (nothing else writes the game now;
	// the change log stays consistent), as the store allows.
	rec, st := s.game(t, gameID)
	change(st)
	data := storedgame.Encode(st)
	rec.State = data
	if err := s.store.Update(context.Background(), rec, rec.Version); err != nil {
		t.Fatal(err)
	}
}

// TestAsDeployedFaults injects faults after committed writes, with the real
// adapters under the emulator (issue 12): the schedule cannot be created
// (the change stream delivers the record again and the deadline is set),
// the AI seat's invoke fails (the AI watchdog's schedule starts the turn
// again, and the AI moves), and it fails every time (the AI seat forfeits
// after its restarts instead of stalling the game).
func TestAsDeployedFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Lambda bootstraps and runs them under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	s := newStack(t)
	move := start(t, moveSpec, s.env(moveSpec))
	fanout := startConsumers(t, s)
	timeout := start(t, timeoutSpec, s.env(timeoutSpec))
	ai := start(t, aiSpec, s.env(aiSpec))

	t.Run("schedule creation fails after the write", func(t *testing.T) {
		s.calls.Fail("scheduler:CreateSchedule", -1)
		resp, _ := invokeHTTP(t, move, "create-human", evs["move/create-human.json"].Raw)
		gameID := decodeAnswer(t, "create-human", resp.Body).GameID
		ev, err := s.changes.Next(context.Background())
		if err != nil || len(ev.Records) != 1 {
			t.Fatalf("change stream: %d records, %v", len(ev.Records), err)
		}
		if failed := deliver(t, fanout.effects, ev); len(failed) != 1 {
			t.Fatalf("fan-out with the scheduler down reported %v; want the record failed (delivered again)", failed)
		}
		if list, sent := listSchedules(t, s, gameID), s.timers.sentFor(gameID); len(list) != 0 || len(sent) != 0 {
			t.Fatalf("timers while the scheduler is down: %v, %+v", list, sent)
		}
		// The scheduler is back; the mapping delivers the record again.
		s.calls.Fail("scheduler:CreateSchedule", 0)
		if failed := deliver(t, fanout.effects, ev); len(failed) != 0 {
			t.Fatalf("redelivery reported %v; want done", failed)
		}
		rec, _ := s.game(t, gameID)
		checkSchedule(t, s, service.TimeoutTask{GameID: gameID, Version: 1, Deadline: rec.Deadline})
	})

	t.Run("the timeout invocation errors: Lambda's retry still ends the game", func(t *testing.T) {
		resp, _ := invokeHTTP(t, move, "create-human", evs["move/create-human.json"].Raw)
		gameID := decodeAnswer(t, "create-human", resp.Body).GameID
		s.pump(t, fanout)
		// Nobody joins: the waiting game's expiry passes.
		s.rewrite(t, gameID, func(st *game.State) {
			st.CreatedAt -= (time.Duration(st.Options.WaitingExpirySec) * time.Second).Milliseconds()
		})
		s.changes.Next(context.Background()) // the test's own rewrite
		rec, _ := s.game(t, gameID)
		task, _ := json.Marshal(service.TimeoutTask{GameID: gameID, Version: rec.Version, Deadline: rec.Deadline})

		// DynamoDB fails: the invocation is a function error, which Lambda
		// retries (twice, then the on-failure queue: template.yaml).
		s.calls.Fail("dynamodb:GetItem", -1)
		res, err := timeout.Invoke(context.Background(), task)
		s.calls.Fail("dynamodb:GetItem", 0)
		if err != nil || res.FunctionError == nil {
			t.Fatalf("timeout with DynamoDB failing: %v, function error %v (payload %s); want a function error, so that Lambda retries", err, res.FunctionError, res.Payload)
		}
		if _, st := s.game(t, gameID); st.Phase == game.PhaseFinished {
			t.Fatal("the game ended although its timeout failed")
		}
		// Lambda's retry of the same event.
		invoke(t, timeout, "retried timeout", task)
		if _, st := s.game(t, gameID); st.Phase != game.PhaseFinished || st.Result.Reason != game.ReasonExpired {
			t.Errorf("after the retried timeout: %s %+v; want the waiting game expired", st.Phase, st.Result)
		}
		s.pump(t, fanout)
	})

	// A game against the AI with the AI to move. create-ai.json's AI is
	// "hard": the watchdog's bound is its think time + 30 s.
	watchdog := engine.LevelHard.ThinkTime() + 30*time.Second
	resp, _ := invokeHTTP(t, move, "create-ai", evs["move/create-ai.json"].Raw)
	created := decodeAnswer(t, "create-ai", resp.Body)
	s.pump(t, fanout)
	s.invokes.take()

	t.Run("the AI invoke fails, the watchdog starts the turn again", func(t *testing.T) {
		s.invokes.fail(-1)
		resp, _ := invokeHTTP(t, move, "e4", withGame(t, evs["move/action-move-from-to.json"], created.GameID, created.Token))
		if resp.StatusCode != 200 {
			t.Fatalf("e4: %d %s", resp.StatusCode, resp.Body)
		}
		ev, _ := s.changes.Next(context.Background())
		if failed := deliver(t, fanout.effects, ev); len(failed) != 1 {
			t.Fatalf("fan-out with the AI unreachable reported %v; want the record failed", failed)
		}
		// Whatever the stream does next (it gives up after its window),
		// the AI turn has a timer at or before the watchdog's first look:
		// the game's timer on an AI turn is when to start the AI again
		// (lazily, the human's first-move timer, which comes earlier, is
		// kept: it re-arms for the look when it fires).
		rec, st := s.game(t, created.GameID)
		if _, aiTurn := st.AITurn(); !aiTurn {
			t.Fatal("not the AI's turn")
		}
		wantWatchdog := time.UnixMilli(st.Clock.TurnStartedAt).Add(watchdog)
		if !rec.Deadline.Equal(wantWatchdog) || rec.ArmedAt.IsZero() || rec.ArmedAt.After(rec.Deadline) {
			t.Errorf("stored deadline %v armed %v; want the watchdog at turn start + think time + 30 s (%v), armed at or before it", rec.Deadline, rec.ArmedAt, wantWatchdog)
		}
		checkSchedule(t, s, service.TimeoutTask{GameID: created.GameID, Version: 1, Deadline: rec.ArmedAt})
		// The invoke works again; the armed timer fires after the
		// watchdog's look (the turn started longer ago than its bound, in
		// the table).
		s.invokes.fail(0)
		s.shiftTurn(t, created.GameID, watchdog+time.Second)
		s.changes.Next(context.Background()) // the test's own rewrite: not a commit of the service
		rec, _ = s.game(t, created.GameID)
		task, _ := json.Marshal(service.TimeoutTask{GameID: created.GameID, Version: rec.Version, Deadline: rec.ArmedAt})
		res := invoke(t, timeout, "watchdog", task)
		if !strings.Contains(strings.Join(res.Logs, "\n"), "AI turn overdue") {
			t.Errorf("timeout logs = %q; want the AI started again", res.Logs)
		}
		calls := s.invokes.take()
		if len(calls) != 1 {
			t.Fatalf("AI invokes after the watchdog: %+v; want one", calls)
		}
		invoke(t, ai, "AI seat", calls[0].Payload)
		if _, st := s.game(t, created.GameID); len(st.Moves) != 2 {
			t.Errorf("moves after the AI's restarted turn: %d; want its reply", len(st.Moves))
		}
		s.pump(t, fanout)
		s.invokes.take()
	})

	t.Run("the AI never answers: it forfeits after its restarts", func(t *testing.T) {
		s.invokes.fail(-1)
		// White's next move: the first legal one (the game is Chess960).
		_, st := s.game(t, created.GameID)
		pos := st.Position()
		uci := pos.UCI(pos.LegalMoves()[0])
		next := deploy.Event{Raw: moveEvent(t, evs["move/action-move-from-to.json"], created.Token, uci, "fault-2")}
		resp, _ := invokeHTTP(t, move, uci, withGame(t, next, created.GameID, created.Token))
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", uci, resp.StatusCode, resp.Body)
		}
		ev, _ := s.changes.Next(context.Background())
		deliver(t, fanout.effects, ev) // fails: the AI cannot be invoked
		// Four watchdog periods later, the third restart is spent: the
		// timer armed for the fourth look fires (the test lets the time
		// pass by moving the turn's start back, and arms that look, as
		// the three before it would have).
		s.shiftTurn(t, created.GameID, 4*(watchdog+time.Second))
		_, st = s.game(t, created.GameID)
		lastLook := time.UnixMilli(st.Clock.TurnStartedAt).Add(4 * watchdog)
		s.rearm(t, created.GameID, lastLook)
		s.changes.Next(context.Background())
		rec, _ := s.game(t, created.GameID)
		task, _ := json.Marshal(service.TimeoutTask{GameID: created.GameID, Version: rec.Version, Deadline: lastLook})
		invoke(t, timeout, "last watchdog", task)
		_, st = s.game(t, created.GameID)
		if st.Phase != game.PhaseFinished || st.Result.Reason != game.ReasonTimeLoss || st.Result.Winner == nil || *st.Result.Winner != chess.White {
			t.Errorf("after the AI's restarts ran out: %s %+v; want the AI (black) losing on time", st.Phase, st.Result)
		}
		if s.invokes.refusedCount() == 0 {
			t.Error("no AI invoke was attempted")
		}
	})
}
