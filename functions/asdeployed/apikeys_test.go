package asdeployed

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"chessapi/deploy"
	"chessapi/infra/rie"
	"chessapi/internal/apispec"
	"chessapi/shared/apikey"
)

// keyedRequest is events/ai/move-mate-in-one.json with another x-api-key
// ("" for none) and a depth-1 search, so a request costs milliseconds.
func keyedRequest(t *testing.T, evs map[string]deploy.Event, key string) []byte {
	t.Helper()
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(evs["ai/move-mate-in-one.json"].Raw, &req); err != nil {
		t.Fatal(err)
	}
	req.Body = `{"fen":"6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1","depth":1}`
	delete(req.Headers, "content-length")
	delete(req.Headers, "x-api-key")
	if key != "" {
		req.Headers["x-api-key"] = key
	}
	payload, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return payload
}

// keyAnswer is one answer of the ai function to a keyed request.
type keyAnswer struct {
	status     int
	code       string
	retryAfter string
	resp       events.APIGatewayV2HTTPResponse
	payload    []byte
	err        error
}

// sendKeyed invokes f with payload; safe to call from goroutines (the
// test's checks run later, on the test's goroutine).
func sendKeyed(f *rie.Function, payload []byte) keyAnswer {
	a := keyAnswer{payload: payload}
	res, err := f.Invoke(context.Background(), payload)
	switch {
	case err != nil:
		a.err = err
		return a
	case res.FunctionError != nil:
		a.err = res.FunctionError
		return a
	}
	if a.err = json.Unmarshal(res.Payload, &a.resp); a.err != nil {
		return a
	}
	a.status = a.resp.StatusCode
	for k, v := range a.resp.Headers {
		if strings.EqualFold(k, "Retry-After") {
			a.retryAfter = v
		}
	}
	var body struct {
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(a.resp.Body), &body) == nil && body.Error != nil {
		a.code = body.Error.Code
	}
	return a
}

// check fails the test on a transport error or an answer outside the
// contract.
func (a keyAnswer) check(t *testing.T) {
	t.Helper()
	if a.err != nil {
		t.Fatalf("invoke: %v", a.err)
	}
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(a.payload, &req); err != nil {
		t.Fatal(err)
	}
	if err := apispec.MustLoad(t).ValidateAPIGateway(req, a.resp); err != nil {
		t.Errorf("the answer breaks openapi.yaml: %v", err)
	}
}

// sendBoth sends each payload list through its own function, the two
// concurrently (each function, like a Lambda instance, takes one request
// at a time), and returns every answer.
func sendBoth(t *testing.T, fns [2]*rie.Function, payloads [2][]([]byte)) []keyAnswer {
	t.Helper()
	var mu sync.Mutex
	var out []keyAnswer
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Go(func() {
			for _, p := range payloads[i] {
				a := sendKeyed(f, p)
				mu.Lock()
				out = append(out, a)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for _, a := range out {
		a.check(t)
	}
	return out
}

func repeat(payload []byte, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = payload
	}
	return out
}

// TestAsDeployedAPIKeys runs two ai functions (two Lambda instances, two
// processes) under the emulator on one data table in moto, with keys made
// as cmd/apikeys makes them: missing, wrong, malformed and revoked keys
// are 401; a key's daily quota holds across both instances (exactly N
// requests pass, then 429 with Retry-After to UTC midnight); its rate
// gives 429 with Retry-After 1; and no log line of either function holds
// a key's secret.
func TestAsDeployedAPIKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the ai bootstrap and runs two of it under aws-lambda-rie with moto; skipped with -short")
	}
	evs := loadEvents(t)
	s := newStack(t)
	ctx := context.Background()
	now := time.Now()
	newKey := func(name string, limits apikey.Limits) apikey.Key {
		k, rec, err := apikey.NewRecord(rand.Reader, name, limits, now)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.data.PutAPIKey(ctx, rec); err != nil {
			t.Fatal(err)
		}
		return k
	}
	const quota = 5
	quotaKey := newKey("quota partner", apikey.Limits{PerSecond: apikey.MaxPerSecond, PerDay: quota})
	rateKey := newKey("rate partner", apikey.Limits{PerSecond: 1, PerDay: 1000})
	revokedKey := newKey("former partner", apikey.DefaultLimits)
	if _, _, err := s.data.RevokeAPIKey(ctx, revokedKey.ID, now); err != nil {
		t.Fatal(err)
	}
	unknownKey, _ := apikey.Generate(rand.Reader)
	keys := []apikey.Key{quotaKey, rateKey, revokedKey, unknownKey}

	env := s.env(aiSpec)
	fns := [2]*rie.Function{start(t, aiSpec, env), start(t, aiSpec, env)}

	t.Run("refused keys", func(t *testing.T) {
		for name, key := range map[string]string{
			"missing":      "",
			"malformed":    "not-a-key",
			"unknown":      unknownKey.String(),
			"wrong secret": quotaKey.String()[:len(quotaKey.String())-4] + strings.Repeat("a", 4),
			"revoked":      revokedKey.String(),
		} {
			if key == quotaKey.String() { // the wrong secret happened to be right
				continue
			}
			a := sendKeyed(fns[0], keyedRequest(t, evs, key))
			a.check(t)
			if a.status != 401 || a.code != "invalid_api_key" || a.retryAfter != "" {
				t.Errorf("%s key: %d %s (Retry-After %q); want 401 invalid_api_key", name, a.status, a.resp.Body, a.retryAfter)
			}
		}
		// The sample events' own request, without a key.
		a := sendKeyed(fns[1], evs["ai/move-without-key.json"].Raw)
		a.check(t)
		if a.status != 401 || a.code != "invalid_api_key" {
			t.Errorf("ai/move-without-key.json: %d %s; want 401 invalid_api_key", a.status, a.resp.Body)
		}
	})

	t.Run("daily quota across two instances", func(t *testing.T) {
		payload := keyedRequest(t, evs, quotaKey.String())
		start := time.Now().UTC()
		answers := sendBoth(t, fns, [2][][]byte{repeat(payload, quota+1), repeat(payload, quota+1)})
		end := time.Now().UTC()
		if start.Truncate(24*time.Hour) != end.Truncate(24*time.Hour) {
			t.Skip("the requests straddled UTC midnight, where the quota starts again")
		}
		midnight := start.Truncate(24 * time.Hour).Add(24 * time.Hour)
		latest, earliest := apikey.WaitUntil(start, midnight), apikey.WaitUntil(end, midnight)
		passed := 0
		for _, a := range answers {
			switch {
			case a.status == 200:
				passed++
			case a.status == 429 && a.code == "rate_limited":
				secs, err := strconv.Atoi(a.retryAfter)
				if wait := time.Duration(secs) * time.Second; err != nil || wait < earliest || wait > latest {
					t.Errorf("over the quota: Retry-After %q; want the seconds to UTC midnight, %s to %s", a.retryAfter, earliest, latest)
				}
			default:
				t.Errorf("a request with the quota key: %d %s", a.status, a.resp.Body)
			}
		}
		if passed != quota {
			t.Errorf("%d of %d requests passed through the two instances; want exactly the quota, %d", passed, len(answers), quota)
		}
		// The counter in the table says the same: the admitted requests,
		// and not one refused request more (a refusal writes nothing).
		count, _, err := s.data.Count(ctx, apikey.DailyCounterPrefix+quotaKey.ID, 24*time.Hour, end)
		if err != nil || count != quota {
			t.Errorf("the day's counter = %d, %v; want %d (the quota: refused requests are not counted)", count, err, quota)
		}
	})

	t.Run("rate", func(t *testing.T) {
		payload := keyedRequest(t, evs, rateKey.String())
		start := time.Now()
		answers := sendBoth(t, fns, [2][][]byte{repeat(payload, 3), repeat(payload, 3)})
		end := time.Now()
		// Fixed one-second windows: at most one request passes in each
		// second the burst touched.
		seconds := int(end.Unix()-start.Unix()) + 1
		passed, limited := 0, 0
		for _, a := range answers {
			switch {
			case a.status == 200:
				passed++
			case a.status == 429 && a.code == "rate_limited" && a.retryAfter == "1":
				limited++
			default:
				t.Errorf("a request with the rate key: %d %s (Retry-After %q)", a.status, a.resp.Body, a.retryAfter)
			}
		}
		if passed < 1 || passed > seconds || limited == 0 {
			t.Errorf("%d passed and %d were limited in %d second(s); want 1 to %d passed and some limited with Retry-After 1", passed, limited, seconds, seconds)
		}
	})

	t.Run("no key in the logs", func(t *testing.T) {
		var logs []string
		for _, f := range fns {
			logs = append(logs, f.Logs()...)
		}
		all := strings.Join(logs, "\n")
		if !strings.Contains(all, `"keyId":"`+quotaKey.ID+`"`) {
			t.Errorf("the logs never name the key id %s (are debug logs on?); the scan below would prove nothing", quotaKey.ID)
		}
		for _, k := range keys {
			if secret := k.String()[len("ak_")+apikey.IDLen+1:]; strings.Contains(all, secret) {
				t.Errorf("a log line holds the secret of key %s", k.ID)
			}
		}
		if strings.Contains(all, deploy.SampleAIAPIKey) {
			t.Error("a log line holds the bootstrap key")
		}
	})
}
