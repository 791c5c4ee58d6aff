// Command fanout is the first consumer of the games table's DynamoDB
// Stream: every committed version is pushed to the game's stream
// subscribers, even when the process that wrote it died right after the
// write. The version's after-write effects are the effects function's (the
// other consumer), so a push that fails holds back no timer and no AI
// turn. Failed records are reported back (ReportBatchItemFailures) and
// delivered again; one given up on is written whole to the dead-letter
// queue (cmd/ops redrive replays it).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"chessapi/shared/lambdafn"
)

func main() {
	app, err := lambdafn.FromEnv(context.Background(), lambdafn.Fanout, os.Getenv)
	if err != nil {
		lambdafn.StartupFailure(lambdafn.Fanout, err)
		os.Exit(1)
	}
	lambda.Start(app.Handler())
}
