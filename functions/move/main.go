// Command move is the game HTTP API Lambda function (create, join, view,
// actions, pgn, presence, positions, health) behind API Gateway's HTTP API.
// It reads its configuration from the environment (SPEC §10) and serves
// through lambdafn.App.HandleHTTP (the handler the wiring table names).
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"chessapi/shared/lambdafn"
)

func main() {
	app, err := lambdafn.FromEnv(context.Background(), lambdafn.Move, os.Getenv)
	if err != nil {
		lambdafn.StartupFailure(lambdafn.Move, err)
		os.Exit(1)
	}
	lambda.Start(app.Handler())
}
