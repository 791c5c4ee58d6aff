package retry_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"chessapi/shared/retry"
)

// A post that is throttled twice, then accepted; a gone connection would
// have ended the loop at once.
func ExamplePolicy_Do() {
	errGone := errors.New("connection gone")
	answers := []int{429, 503, 200}
	p := retry.Policy{Attempts: 3, Base: time.Millisecond}
	err := p.Do(context.Background(), func(attempt int) error {
		status := answers[attempt-1]
		fmt.Println("attempt", attempt, "status", status)
		switch {
		case status == 410:
			return retry.Permanent(errGone)
		case status == 429 || status >= 500:
			return fmt.Errorf("status %d", status)
		}
		return nil
	})
	fmt.Println("err:", err)
	// Output:
	// attempt 1 status 429
	// attempt 2 status 503
	// attempt 3 status 200
	// err: <nil>
}
