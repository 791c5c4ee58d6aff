package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
)

// pushApplications are the SNS platform applications of the emulated
// stack, one per platform, made on moto as an operator makes them before
// a deploy (CloudFormation has no resource for them) and handed to the
// functions as the stack's parameters would be (docs/notifications.md).
type pushApplications struct {
	APNs, APNsSandbox, FCM string
}

// createPushApplications makes the three applications on moto.
func createPushApplications(ctx context.Context, client *sns.Client, stackName string) (pushApplications, error) {
	var apps pushApplications
	for _, a := range []struct {
		platform string
		arn      *string
	}{{"APNS", &apps.APNs}, {"APNS_SANDBOX", &apps.APNsSandbox}, {"GCM", &apps.FCM}} {
		out, err := client.CreatePlatformApplication(ctx, &sns.CreatePlatformApplicationInput{
			Name: aws.String(stackName + "-" + a.platform), Platform: aws.String(a.platform),
			Attributes: map[string]string{"PlatformCredential": "emulated"},
		})
		if err != nil {
			return apps, fmt.Errorf("CreatePlatformApplication %s: %w", a.platform, err)
		}
		*a.arn = aws.ToString(out.PlatformApplicationArn)
	}
	return apps, nil
}

// environment are the functions' variables of the applications.
func (p pushApplications) environment() map[string]string {
	return map[string]string{
		"APNS_PLATFORM_APPLICATION_ARN":         p.APNs,
		"APNS_SANDBOX_PLATFORM_APPLICATION_ARN": p.APNsSandbox,
		"FCM_PLATFORM_APPLICATION_ARN":          p.FCM,
	}
}
