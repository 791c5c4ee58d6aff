// Package lambdainvoke starts AI turns in AWS: an asynchronous invocation
// (InvocationType Event) of the AI function with the service.AITask as its
// payload. Lambda queues the event and returns 202 at once; retries and the
// actual move happen in the AI function.
//
// The endpoint comes from the AWS SDK configuration: AWS_ENDPOINT_URL_LAMBDA
// (honoured by config.LoadDefaultConfig) points it at an emulator.
package lambdainvoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"chessapi/shared/service"
)

// EnvFunctionName names the environment variable holding the AI function's
// name or ARN (SPEC §10).
const EnvFunctionName = "AI_FUNCTION_NAME"

// API is the part of *lambda.Client the trigger uses.
type API interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, optFns ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// Trigger is a service.AITrigger invoking one Lambda function.
type Trigger struct {
	client   API
	function string
}

var _ service.AITrigger = (*Trigger)(nil)

// New returns a Trigger invoking function (a name, partial or full ARN)
// through client.
func New(client API, function string) (*Trigger, error) {
	if client == nil {
		return nil, errors.New("lambdainvoke: nil Lambda client")
	}
	if function == "" {
		return nil, fmt.Errorf("lambdainvoke: empty function name (set %s)", EnvFunctionName)
	}
	return &Trigger{client: client, function: function}, nil
}

// NewFromConfig returns a Trigger with a client made from cfg (as returned
// by config.LoadDefaultConfig, which applies AWS_ENDPOINT_URL_LAMBDA).
func NewFromConfig(cfg aws.Config, function string) (*Trigger, error) {
	return New(lambda.NewFromConfig(cfg), function)
}

// TriggerAI queues one asynchronous invocation with task as the payload and
// returns once Lambda has accepted it.
func (t *Trigger) TriggerAI(ctx context.Context, task service.AITask) error {
	if task.GameID == "" {
		return errors.New("lambdainvoke: AI task has an empty game id")
	}
	payload, err := json.Marshal(task)
	if err != nil {
		return fmt.Errorf("lambdainvoke: encode AI task of game %q: %w", task.GameID, err)
	}
	out, err := t.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(t.function),
		InvocationType: types.InvocationTypeEvent,
		Payload:        payload,
	})
	if err != nil {
		return fmt.Errorf("lambdainvoke: invoke %s for game %q version %d: %w", t.function, task.GameID, task.Version, err)
	}
	// An accepted asynchronous invocation is 202; anything else means the
	// event was not queued.
	if out.StatusCode != http.StatusAccepted {
		return fmt.Errorf("lambdainvoke: invoke %s for game %q version %d: status %d, want %d",
			t.function, task.GameID, task.Version, out.StatusCode, http.StatusAccepted)
	}
	return nil
}
