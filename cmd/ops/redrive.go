package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"chessapi/shared/lambdafn"
)

// redrive replays the stream consumers' dead-letter queue (the records a
// consumer gave up on, whole) through the functions that wrote them
// (lambdafn.Redrive): a record done is deleted, one that fails again is
// left and said to, as is a message of another kind (the event source
// mappings' description of a batch Lambda gave up on: its shard and
// sequence range are printed).
func (c cli) redrive(ctx context.Context, args []string) error {
	fs := newFlags("redrive")
	queue := fs.String("queue", "", "the dead-letter queue's URL (default $STREAM_DLQ_URL; the stack's output FanoutDeadLetterQueueUrl)")
	function := fs.String("function", "", "the function to replay a message through when it names none")
	maxMessages := fs.Int("max", 0, "messages at most (0: until the queue is empty)")
	dryRun := fs.Bool("dry-run", false, "list what would be replayed, change nothing (the messages are hidden for -visibility)")
	visibility := fs.Duration("visibility", time.Minute, "how long a message read is hidden from other readers")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	url := c.setting(*queue, lambdafn.EnvStreamDLQ)
	switch {
	case url == "":
		return usagef("redrive: name the queue: -queue or %s (the stack's output FanoutDeadLetterQueueUrl)", lambdafn.EnvStreamDLQ)
	case !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "http://"):
		return usagef("redrive: -queue %q is not a queue URL", url)
	case *maxMessages < 0:
		return usagef("redrive: -max %d is negative", *maxMessages)
	case *visibility < time.Second || *visibility > 12*time.Hour:
		return usagef("redrive: -visibility %s is not between 1s and 12h (SQS's visibility timeout)", *visibility)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		return usagef("redrive: no AWS region: set AWS_REGION or a profile's region")
	}
	st, err := lambdafn.Redrive(ctx, lambdafn.RedriveOptions{
		Queue:  lambdafn.SQSQueue{Client: sqs.NewFromConfig(awsCfg), URL: url},
		Lambda: lambda.NewFromConfig(awsCfg), Function: *function, Max: *maxMessages,
		DryRun: *dryRun, Visibility: *visibility, Log: c.stderr,
	})
	fmt.Fprintf(c.stdout, "redrive: %d messages read: %d replayed, %d failed again, %d of another kind\n", st.Read, st.Replayed, st.Failed, st.Other)
	if err != nil {
		return err
	}
	if st.Failed > 0 || st.Other > 0 {
		return fmt.Errorf("redrive: %d messages left in the queue (listed above); fix the cause and run redrive again: it is safe to repeat", st.Failed+st.Other)
	}
	return nil
}
