// Command stream is the WebSocket API's Lambda function: $connect,
// $disconnect and the client messages (subscribe, unsubscribe, ping) of the
// stream (SPEC §11), answered by posts to the connection.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"chessapi/shared/lambdafn"
)

func main() {
	app, err := lambdafn.FromEnv(context.Background(), lambdafn.Stream, os.Getenv)
	if err != nil {
		lambdafn.StartupFailure(lambdafn.Stream, err)
		os.Exit(1)
	}
	lambda.Start(app.Handler())
}
