// Command fanout consumes the games table's DynamoDB Stream: every committed
// version is pushed to the game's stream subscribers and its effects (the
// game's timer, an AI turn) are carried out, even when the process that
// wrote it died right after the write. Failed records are reported back
// (ReportBatchItemFailures) and delivered again.
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
