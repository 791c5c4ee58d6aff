package dynamostore

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"chessapi/deploy"
	"chessapi/shared/apikey"
)

// TestTemplateGrantsTheKeyItems: the AI function's IAM conditions
// (template.yaml, dynamodb:LeadingKeys) name exactly the partitions this
// package writes for the keys and their counters, so a renamed prefix
// fails here rather than as AccessDenied on AWS (the emulators do not
// enforce IAM).
func TestTemplateGrantsTheKeyItems(t *testing.T) {
	tmpl, err := deploy.LoadTemplate(filepath.Join("..", "..", "..", "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"dynamodb:GetItem":    {apiKeyPrefix + "*"},
		"dynamodb:UpdateItem": {hitPrefix + apikey.RateCounterPrefix + "*", hitPrefix + apikey.DailyCounterPrefix + "*"},
	}
	got := map[string][]string{}
	policies, _ := tmpl.Properties("AiFunction")["Policies"].([]any)
	for _, pol := range policies {
		doc, _ := pol.(map[string]any)
		statements, _ := doc["Statement"].([]any)
		for _, st := range statements {
			m, _ := st.(map[string]any)
			action := fmt.Sprint(m["Action"])
			cond, _ := m["Condition"].(map[string]any)
			like, _ := cond["ForAllValues:StringLike"].(map[string]any)
			keys, _ := like["dynamodb:LeadingKeys"].([]any)
			if len(keys) == 0 {
				t.Errorf("AiFunction: statement %v has no dynamodb:LeadingKeys condition", m["Sid"])
			}
			for _, k := range keys {
				got[action] = append(got[action], fmt.Sprint(k))
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("AiFunction data table actions %v; want exactly %v", got, want)
	}
	for action, prefixes := range want {
		if !slices.Equal(got[action], prefixes) {
			t.Errorf("AiFunction %s on %v; want %v", action, got[action], prefixes)
		}
	}
}

// TestThrottledClassifies: DynamoDB's throughput errors (and the SDK's
// retry quota running out on them) become a ThrottledError that says
// when to retry; anything else stays as it was.
func TestThrottledClassifies(t *testing.T) {
	for _, err := range []error{
		&types.ProvisionedThroughputExceededException{Message: aws.String("exceeded")},
		&types.RequestLimitExceeded{Message: aws.String("account limit")},
		&smithy.GenericAPIError{Code: "ThrottlingException", Message: "rate exceeded"},
		fmt.Errorf("operation error DynamoDB: UpdateItem: %w", &types.ProvisionedThroughputExceededException{}),
		&ratelimit.QuotaExceededError{},
	} {
		got := throttled(err)
		var th *ThrottledError
		if !errors.As(got, &th) || th.RetryAfter() != time.Second || !errors.Is(got, err) {
			t.Errorf("throttled(%v) = %v; want a ThrottledError wrapping it", err, got)
		}
	}
	for _, err := range []error{
		nil,
		errors.New("connection refused"),
		&types.ConditionalCheckFailedException{},
		&smithy.GenericAPIError{Code: "ValidationException"},
	} {
		var th *ThrottledError
		if got := throttled(err); errors.As(got, &th) || got != err {
			t.Errorf("throttled(%v) = %v; want it unchanged", err, got)
		}
	}
}
