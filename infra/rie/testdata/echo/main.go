// Command echo is the Lambda function the emulator harness tests run: it
// answers with what it received, the environment variable it was asked
// about and how many invocations this process has served, so a test can see
// the payload, the environment and warm reuse from the outside.
package main

import (
	"context"
	"errors"
	"log"
	"os"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type request struct {
	Message string `json:"message"`
	// EnvKey names an environment variable to report back.
	EnvKey string `json:"envKey,omitempty"`
	// Fail, when set, is returned as the handler's error.
	Fail string `json:"fail,omitempty"`
}

type response struct {
	Message      string `json:"message"`
	EnvValue     string `json:"envValue,omitempty"`
	FunctionName string `json:"functionName"`
	RequestID    string `json:"requestId"`
	Invocations  int64  `json:"invocations"`
}

var invocations atomic.Int64

func handle(ctx context.Context, req request) (response, error) {
	n := invocations.Add(1)
	// Written to stderr, which the emulator forwards: the harness captures it.
	log.Printf("echo invocation %d: %q", n, req.Message)
	if req.Fail != "" {
		return response{}, errors.New(req.Fail)
	}
	resp := response{
		Message:      req.Message,
		FunctionName: lambdacontext.FunctionName,
		Invocations:  n,
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		resp.RequestID = lc.AwsRequestID
	}
	if req.EnvKey != "" {
		resp.EnvValue = os.Getenv(req.EnvKey)
	}
	return resp, nil
}

func main() {
	lambda.Start(handle)
}
