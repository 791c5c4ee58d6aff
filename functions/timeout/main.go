// Command timeout is the Lambda function EventBridge Scheduler invokes at a
// game's deadline with a service.TimeoutTask. It returns an error when the
// work could not be done, so the scheduler delivers again.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"chessapi/shared/lambdafn"
)

func main() {
	app, err := lambdafn.FromEnv(context.Background(), lambdafn.Timeout, os.Getenv)
	if err != nil {
		lambdafn.StartupFailure(lambdafn.Timeout, err)
		os.Exit(1)
	}
	lambda.Start(app.Handler())
}
