package main

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// faults stands in front of the functions' AWS endpoint (then the data
// table's IAM guard, the counting proxy and moto). It counts each game's
// CreateSchedule calls, by the schedule's name ("t-<game>.<second>"), so a
// run's scheduler calls can be told apart by game; and it makes a test's
// chosen games' CreateSchedule calls fail as an outage of EventBridge
// Scheduler would (500 InternalServerException), so one game's effects
// fail while every other game's go through.
type faults struct {
	next   http.Handler
	counts *counters

	mu        sync.Mutex
	failGames map[string]bool // game ids whose schedules are refused
	byGame    map[string]int  // game id → CreateSchedule calls
}

func (f *faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
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

// refuseSchedules makes the game's CreateSchedule calls fail (on) or go
// through again (off).
func (f *faults) refuseSchedules(gameID string, on bool) {
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
