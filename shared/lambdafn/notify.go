package lambdafn

import (
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"chessapi/shared/notify"
	"chessapi/shared/notify/snspush"
)

// Mobile notifications on AWS (SPEC §16.3, docs/notifications.md): the SNS
// platform applications of the stack's parameters, one variable each
// (empty: that platform is refused), and the SNS sender built on them.

// The platform applications' variables.
const (
	EnvAPNsApplication        = "APNS_PLATFORM_APPLICATION_ARN"
	EnvAPNsSandboxApplication = "APNS_SANDBOX_PLATFORM_APPLICATION_ARN"
	EnvFCMApplication         = "FCM_PLATFORM_APPLICATION_ARN"
)

// PushApplications are the SNS platform application ARNs of a function
// ("" for a platform without one).
type PushApplications struct {
	APNs, APNsSandbox, FCM string
}

// byPlatform is the sender's form of the applications.
func (p PushApplications) byPlatform() snspush.Applications {
	return snspush.Applications{notify.APNs: p.APNs, notify.APNsSandbox: p.APNsSandbox, notify.FCM: p.FCM}
}

// pushApplication reads one platform application's ARN into Config.Push.
func pushApplication(name string, field func(*PushApplications) *string) *envVar {
	return &envVar{name, func(c *Config, v string) error {
		arn := strings.TrimSpace(v)
		if arn != "" && !strings.HasPrefix(arn, "arn:") {
			return fmt.Errorf("= %q is not an ARN", arn)
		}
		*field(&c.Push) = arn
		return nil
	}}
}

var (
	envAPNsApplication        = pushApplication(EnvAPNsApplication, func(p *PushApplications) *string { return &p.APNs })
	envAPNsSandboxApplication = pushApplication(EnvAPNsSandboxApplication, func(p *PushApplications) *string { return &p.APNsSandbox })
	envFCMApplication         = pushApplication(EnvFCMApplication, func(p *PushApplications) *string { return &p.FCM })
)

// pushEnv are the variables of a function that uses notifications.
var pushEnv = []need{{envAPNsApplication, optional}, {envAPNsSandboxApplication, optional}, {envFCMApplication, optional}}

// newPushSender is the SNS sender of the configured applications (none
// configured: every platform is refused).
func newPushSender(awsCfg aws.Config, cfg Config) (notify.Sender, error) {
	s, err := snspush.New(sns.NewFromConfig(awsCfg), cfg.Push.byPlatform())
	if err != nil {
		return nil, err
	}
	return s, nil
}
