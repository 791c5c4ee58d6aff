// Command effects is the second consumer of the games table's DynamoDB
// Stream: every committed version's after-write effects — the game's timer
// backed when its record claims a new armed instant, an AI turn started, a
// rated result applied — even when the process that wrote it died right
// after the write, and never held back by a push (the fanout function is
// the other consumer). Failed records are reported back
// (ReportBatchItemFailures) and delivered again; one given up on is written
// whole to the dead-letter queue (cmd/ops redrive replays it).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"chessapi/shared/lambdafn"
)

func main() {
	app, err := lambdafn.FromEnv(context.Background(), lambdafn.Effects, os.Getenv)
	if err != nil {
		lambdafn.StartupFailure(lambdafn.Effects, err)
		os.Exit(1)
	}
	lambda.Start(app.Handler())
}
