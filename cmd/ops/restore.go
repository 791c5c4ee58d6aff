package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"chessapi/shared/store/dynamostore"
)

// A point-in-time restore makes a new table with the source's items,
// indexes, capacity and encryption, but "you must manually set up ... on
// the restored table: auto scaling policies, IAM policies, CloudWatch
// metrics and alarms, tags, stream settings, Time to Live (TTL) settings,
// point in time recovery settings" (DynamoDB API reference,
// RestoreTableToPointInTime). Of those the stack needs three: the games
// table's stream (its fan-out reads it), TTL on expiresAt (finished games,
// counters and connections expire) and point-in-time recovery (the next
// restore); the IAM policies and alarms follow the stack's parameters.

const (
	defaultRestoreWait = 4 * time.Hour // restores of large tables take hours
	// restorePoll is how often a restore's progress is looked at and
	// printed.
	restorePoll = 15 * time.Second
)

// restoreAPI is the part of *dynamodb.Client restore uses.
type restoreAPI interface {
	RestoreTableToPointInTime(ctx context.Context, in *dynamodb.RestoreTableToPointInTimeInput, optFns ...func(*dynamodb.Options)) (*dynamodb.RestoreTableToPointInTimeOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTable(ctx context.Context, in *dynamodb.UpdateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTableOutput, error)
	DescribeTimeToLive(ctx context.Context, in *dynamodb.DescribeTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTimeToLiveOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
	UpdateContinuousBackups(ctx context.Context, in *dynamodb.UpdateContinuousBackupsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateContinuousBackupsOutput, error)
}

// restorePlan is what restore does: the two tables, to one point in time.
type restorePlan struct {
	gamesSource, gamesTarget string
	dataSource, dataTarget   string
	at                       time.Time // zero: the latest restorable time
	wait                     time.Duration
}

func (c cli) restore(ctx context.Context, args []string) error {
	fs := newFlags("restore")
	to := fs.String("to", "", `the point in time: RFC 3339 ("2026-12-01T09:58:00Z") or "latest"`)
	suffix := fs.String("suffix", "", "appended to each table's name to name its restored copy")
	gamesFlag := fs.String("games-table", "", "the games table (default $GAMES_TABLE)")
	dataFlag := fs.String("data-table", "", "the data table (default $DATA_TABLE)")
	wait := fs.Duration("wait", defaultRestoreWait, "how long to wait for the restores")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	plan := restorePlan{gamesSource: c.setting(*gamesFlag, "GAMES_TABLE"), dataSource: c.setting(*dataFlag, "DATA_TABLE"), wait: *wait}
	switch *to {
	case "":
		return usagef(`restore: -to is required: a time (RFC 3339) or "latest"`)
	case "latest":
	default:
		t, err := time.Parse(time.RFC3339, *to)
		if err != nil {
			return usagef("restore: -to %q is not an RFC 3339 time (2026-12-01T09:58:00Z) or \"latest\"", *to)
		}
		plan.at = t
	}
	if plan.gamesSource == "" || plan.dataSource == "" {
		return usagef("restore: name the tables: -games-table and -data-table, or GAMES_TABLE and DATA_TABLE")
	}
	if !validSuffix(*suffix) {
		return usagef("restore: -suffix %q: give 1-40 of a-z A-Z 0-9 _ . - (the restored tables are named <table><suffix>)", *suffix)
	}
	plan.gamesTarget, plan.dataTarget = plan.gamesSource+*suffix, plan.dataSource+*suffix
	if len(plan.gamesTarget) > 255 || len(plan.dataTarget) > 255 {
		return usagef("restore: -suffix %q makes a table name over 255 characters", *suffix)
	}
	if *wait <= 0 {
		return usagef("restore: -wait %s is not positive", *wait)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return fmt.Errorf("AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		return usagef("restore: no AWS region: set AWS_REGION or a profile's region")
	}
	streamARN, err := c.runRestore(ctx, dynamodb.NewFromConfig(awsCfg), plan)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "GamesTableStreamArn=%s\nDataTableName=%s\n", streamARN, plan.dataTarget)
	fmt.Fprintf(c.stderr, "restore: done. Point the stack at the restored tables, then re-arm the games:\n"+
		"  sam deploy --parameter-overrides GamesTableStreamArn=%s DataTableName=%s\n"+
		"  GAMES_TABLE=%s DATA_TABLE=%s go run ./cmd/ops rearm\n", streamARN, plan.dataTarget, plan.gamesTarget, plan.dataTarget)
	return nil
}

func validSuffix(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.-", r)) {
			return false
		}
	}
	return true
}

// runRestore starts both restores, waits for both, and sets up what a
// restore does not copy; it returns the restored games table's stream ARN.
// A target that exists already (a restore started by an earlier run) is
// waited for and set up as if this run had started it, so a run cut short
// can simply be run again.
func (c cli) runRestore(ctx context.Context, db restoreAPI, p restorePlan) (string, error) {
	for _, t := range [][2]string{{p.gamesSource, p.gamesTarget}, {p.dataSource, p.dataTarget}} {
		in := &dynamodb.RestoreTableToPointInTimeInput{
			SourceTableName:     aws.String(t[0]),
			TargetTableName:     aws.String(t[1]),
			BillingModeOverride: types.BillingModePayPerRequest,
		}
		if p.at.IsZero() {
			in.UseLatestRestorableTime = aws.Bool(true)
		} else {
			in.RestoreDateTime = aws.Time(p.at)
		}
		_, err := db.RestoreTableToPointInTime(ctx, in)
		var exists *types.TableAlreadyExistsException
		switch {
		case errors.As(err, &exists):
			fmt.Fprintf(c.stderr, "restore: %s exists already (an earlier run's restore): waiting for it and setting it up\n", t[1])
		case err != nil:
			return "", fmt.Errorf("restore %s as %s: %w", t[0], t[1], err)
		default:
			when := "the latest restorable time"
			if !p.at.IsZero() {
				when = p.at.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(c.stderr, "restore: %s → %s, to %s: started\n", t[0], t[1], when)
		}
	}
	deadline := c.now().Add(p.wait)
	for _, target := range []string{p.gamesTarget, p.dataTarget} {
		if _, err := c.waitActive(ctx, db, target, deadline); err != nil {
			return "", err
		}
	}

	// The games table's stream, new and old images, for the fan-out.
	desc, err := c.waitActive(ctx, db, p.gamesTarget, deadline)
	if err != nil {
		return "", err
	}
	streamARN := aws.ToString(desc.LatestStreamArn)
	if s := desc.StreamSpecification; s == nil || !aws.ToBool(s.StreamEnabled) || s.StreamViewType != types.StreamViewTypeNewAndOldImages {
		out, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName:           aws.String(p.gamesTarget),
			StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
		})
		if err != nil {
			return "", fmt.Errorf("restore: stream on %s: %w", p.gamesTarget, err)
		}
		streamARN = aws.ToString(out.TableDescription.LatestStreamArn)
		fmt.Fprintf(c.stderr, "restore: %s: stream on (new and old images)\n", p.gamesTarget)
		if _, err := c.waitActive(ctx, db, p.gamesTarget, deadline); err != nil {
			return "", err
		}
	}
	if streamARN == "" {
		return "", fmt.Errorf("restore: %s has a stream but no stream ARN", p.gamesTarget)
	}
	for _, target := range []string{p.gamesTarget, p.dataTarget} {
		if err := c.enableTTL(ctx, db, target); err != nil {
			return "", err
		}
		if _, err := db.UpdateContinuousBackups(ctx, &dynamodb.UpdateContinuousBackupsInput{
			TableName:                        aws.String(target),
			PointInTimeRecoverySpecification: &types.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: aws.Bool(true)},
		}); err != nil {
			return "", fmt.Errorf("restore: point-in-time recovery on %s: %w", target, err)
		}
		fmt.Fprintf(c.stderr, "restore: %s: TTL on %s, point-in-time recovery on\n", target, dynamostore.DataTableKeys.TTL)
	}
	return streamARN, nil
}

// enableTTL turns on TTL on expiresAt unless it is on already.
func (c cli) enableTTL(ctx context.Context, db restoreAPI, table string) error {
	out, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("restore: TTL of %s: %w", table, err)
	}
	if d := out.TimeToLiveDescription; d != nil && aws.ToString(d.AttributeName) == dynamostore.DataTableKeys.TTL &&
		(d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(dynamostore.DataTableKeys.TTL), Enabled: aws.Bool(true)},
	}); err != nil {
		return fmt.Errorf("restore: TTL on %s: %w", table, err)
	}
	return nil
}

// waitActive waits until table is ACTIVE, printing its status now and
// then, until deadline.
func (c cli) waitActive(ctx context.Context, db restoreAPI, table string, deadline time.Time) (*types.TableDescription, error) {
	start := c.now()
	lastPrint := start
	for {
		out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		var notFound *types.ResourceNotFoundException
		switch {
		case errors.As(err, &notFound):
			// A restore's target appears a moment after the call.
		case err != nil:
			return nil, fmt.Errorf("restore: describe %s: %w", table, err)
		case out.Table.TableStatus == types.TableStatusActive:
			return out.Table, nil
		}
		now := c.now()
		if !now.Before(deadline) {
			return nil, fmt.Errorf("restore: %s is not ACTIVE after the -wait given; run restore again to keep waiting", table)
		}
		if now.Sub(lastPrint) >= time.Minute {
			lastPrint = now
			status := "not there yet"
			if err == nil {
				status = string(out.Table.TableStatus)
			}
			fmt.Fprintf(c.stderr, "restore: %s: %s after %s\n", table, status, now.Sub(start).Round(time.Second))
		}
		if err := c.sleep(ctx, min(restorePoll, deadline.Sub(now))); err != nil {
			return nil, err
		}
	}
}
