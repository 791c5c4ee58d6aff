// Command ai is the AI Lambda function: POST /v1/ai/move for third parties
// (API Gateway HTTP API requests) and the asynchronous AI-seat trigger
// (service.AITask), told apart by the event's shape.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"chessapi/shared/lambdafn"
)

func main() {
	app, err := lambdafn.FromEnv(context.Background(), lambdafn.AI, os.Getenv)
	if err != nil {
		lambdafn.StartupFailure(lambdafn.AI, err)
		os.Exit(1)
	}
	lambda.Start(app.Handler())
}
