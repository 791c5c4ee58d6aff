package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"chessapi/infra/emulator"
)

// faults stands in front of the functions' AWS endpoint (then the data
// table's IAM guard, the counting proxy and moto). It counts each game's
// timers by transport: CreateSchedule calls, by the schedule's name
// ("t-<game>.<second>"), and SendMessage calls to the deadline queue, by
// the task in the message body; so a run's timer calls can be told apart
// by game. And it makes a test's chosen games' timers fail as an outage
// would (500: InternalServerException from the Scheduler, InternalError
// from SQS), so one game's effects fail while every other game's go
// through.
type faults struct {
	next          http.Handler
	counts        *counters
	deadlineQueue string // the deadline queue's URL

	mu        sync.Mutex
	failGames map[string]bool // game ids whose timers are refused
	byGame    map[string]int  // game id → CreateSchedule calls
	sendsBy   map[string]int  // game id → SendMessage calls to the deadline queue
}

func (f *faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if game, ok := f.deadlineSend(r); ok {
		f.counts.call("sqs:SendMessage:DeadlineQueue")
		f.mu.Lock()
		if f.sendsBy == nil {
			f.sendsBy = map[string]int{}
		}
		f.sendsBy[game]++
		refuse := f.failGames[game]
		f.mu.Unlock()
		if refuse {
			f.counts.event("faults:SendMessageRefused", 1)
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"__type":"com.amazonaws.sqs#InternalError","message":"emustack: the test refuses this game's timers"}`))
			return
		}
	}
	if game, ok := scheduleGame(r); ok {
		f.mu.Lock()
		if f.byGame == nil {
			f.byGame = map[string]int{}
		}
		f.byGame[game]++
		refuse := f.failGames[game]
		f.mu.Unlock()
		if refuse {
			f.counts.event("faults:CreateScheduleRefused", 1)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Amzn-ErrorType", "InternalServerException")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"Message":"emustack: the test refuses this game's schedules"}`))
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

// scheduleGame is the game a CreateSchedule request arms (POST
// /schedules/t-<game>.<second>).
func scheduleGame(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost {
		return "", false
	}
	name, ok := strings.CutPrefix(r.URL.EscapedPath(), "/schedules/")
	if !ok {
		return "", false
	}
	name, err := url.PathUnescape(name)
	if err != nil {
		return "", false
	}
	rest, ok := strings.CutPrefix(name, "t-")
	dot := strings.LastIndexByte(rest, '.')
	if !ok || dot <= 0 {
		return "", false
	}
	return rest[:dot], true
}

// deadlineSend is the game a SendMessage to the deadline queue arms (the
// SDK's JSON protocol: X-Amz-Target AmazonSQS.SendMessage, the QueueUrl
// and the service.TimeoutTask body in the JSON body). It reads the body
// and puts it back for the next handler.
func (f *faults) deadlineSend(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "AmazonSQS.SendMessage" || f.deadlineQueue == "" {
		return "", false
	}
	body, err := emulator.ReadBody(r)
	if err != nil {
		return "", false
	}
	var in struct {
		QueueURL    string `json:"QueueUrl"`
		MessageBody string `json:"MessageBody"`
	}
	if json.Unmarshal(body, &in) != nil || in.QueueURL != f.deadlineQueue {
		return "", false
	}
	var task struct {
		GameID string `json:"gameId"`
	}
	if json.Unmarshal([]byte(in.MessageBody), &task) != nil || task.GameID == "" {
		return "", false
	}
	return task.GameID, true
}

// refuseTimers makes the game's CreateSchedule calls and SendMessage calls
// to the deadline queue fail (on) or go through again (off).
func (f *faults) refuseTimers(gameID string, on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failGames == nil {
		f.failGames = map[string]bool{}
	}
	f.failGames[gameID] = on
}

// schedulesOf is how many CreateSchedule calls the game's timers made.
func (f *faults) schedulesOf(gameID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.byGame[gameID]
}

// sendsOf is how many messages the game's timers sent to the deadline
// queue.
func (f *faults) sendsOf(gameID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sendsBy[gameID]
}

// throttle makes the @connections API answer every post 429, as API
// Gateway does over its account throttle, until the returned function
// is called.
func (a *awsAPIs) throttle() (end func()) {
	a.throttled.Store(true)
	return func() { a.throttled.Store(false) }
}

// throttledPost answers a post refused by the throttle.
func (a *awsAPIs) throttledPost(w http.ResponseWriter) bool {
	if !a.throttled.Load() {
		return false
	}
	a.counts.event("apigw-ws:PostsThrottled", 1)
	w.Header().Set("Retry-After", "1")
	awsError(w, http.StatusTooManyRequests, "LimitExceededException", "Rate exceeded at "+time.Now().UTC().Format(time.RFC3339Nano))
	return true
}
