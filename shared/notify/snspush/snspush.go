// Package snspush sends notifications through Amazon SNS mobile push: one
// platform application per platform (created outside CloudFormation, which
// has no resource for them; the stack takes their ARNs), one platform
// endpoint per device token, and one Publish per device and notification
// with the platform's own JSON payload (payload.go).
//
// What it relies on, from the AWS documentation:
//
//   - CreatePlatformEndpoint "is idempotent, so if the requester already
//     owns an endpoint with the same device token and attributes, that
//     endpoint's ARN is returned without creating a new endpoint"; with the
//     same token but other attributes (a disabled endpoint) it fails with
//     InvalidParameter "Endpoint <arn> already exists with the same Token,
//     but different attributes"
//     (https://docs.aws.amazon.com/sns/latest/api/API_CreatePlatformEndpoint.html;
//     the error's wording: https://aws.amazon.com/blogs/mobile/mobile-token-management-with-amazon-sns/,
//     which, like https://docs.aws.amazon.com/sns/latest/dg/sns-fcm-endpoint-management.html,
//     registers on every app start with create → check → repair).
//   - SNS disables an endpoint (attribute Enabled=false) when the push
//     service reports its token invalid, and then rejects every Publish to
//     it with EndpointDisabled
//     (https://repost.aws/knowledge-center/sns-push-notification-endpoint-deactivated).
//     Such a device is gone: Send answers notify.ErrDeviceGone and the
//     service forgets it (Unregister deletes the endpoint).
//   - A message of MessageStructure "json" carries one string per platform
//     key (APNS, APNS_SANDBOX, GCM) plus "default"
//     (https://docs.aws.amazon.com/sns/latest/api/API_Publish.html,
//     https://docs.aws.amazon.com/sns/latest/dg/sns-send-custom-platform-specific-payloads-mobile-devices.html);
//     the FCM one in the HTTP v1 form under "fcmV1Message"
//     (https://docs.aws.amazon.com/sns/latest/dg/sns-fcm-v1-payloads.html).
//   - APNs request headers come from reserved message attributes:
//     AWS.SNS.MOBILE.APNS.COLLAPSE_ID (apns-collapse-id),
//     AWS.SNS.MOBILE.APNS.PUSH_TYPE, AWS.SNS.MOBILE.APNS.PRIORITY
//     (https://docs.aws.amazon.com/sns/latest/dg/sns-message-attributes.html).
//
// A re-registered token whose endpoint SNS disabled is given a fresh
// endpoint (the old one deleted, a new one created): the app has just
// handed the token over as current.
package snspush

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"chessapi/shared/notify"
)

// API is the part of the SNS client the sender uses (*sns.Client).
type API interface {
	CreatePlatformEndpoint(ctx context.Context, in *sns.CreatePlatformEndpointInput, optFns ...func(*sns.Options)) (*sns.CreatePlatformEndpointOutput, error)
	GetEndpointAttributes(ctx context.Context, in *sns.GetEndpointAttributesInput, optFns ...func(*sns.Options)) (*sns.GetEndpointAttributesOutput, error)
	DeleteEndpoint(ctx context.Context, in *sns.DeleteEndpointInput, optFns ...func(*sns.Options)) (*sns.DeleteEndpointOutput, error)
	Publish(ctx context.Context, in *sns.PublishInput, optFns ...func(*sns.Options)) (*sns.PublishOutput, error)
}

var _ API = (*sns.Client)(nil)

// Applications are the platform application ARNs of a deployment, by
// platform; a platform without one is refused (notify.ErrPlatformUnavailable).
type Applications map[notify.Platform]string

// Sender is the SNS notify.Sender.
type Sender struct {
	api  API
	apps Applications
}

var _ notify.Sender = (*Sender)(nil)

// New returns a sender through api to the given applications. Every ARN
// must be a platform application's (arn:...:app/<PLATFORM>/<name>) of the
// platform it is given for.
func New(api API, apps Applications) (*Sender, error) {
	if api == nil {
		return nil, errors.New("snspush: an SNS client is required")
	}
	kept := Applications{}
	for p, arn := range apps {
		if arn == "" {
			continue
		}
		if !p.Valid() {
			return nil, fmt.Errorf("snspush: unknown platform %q", p)
		}
		if err := checkApplicationARN(p, arn); err != nil {
			return nil, err
		}
		kept[p] = arn
	}
	return &Sender{api: api, apps: kept}, nil
}

// snsPlatformOf is the SNS platform name in a platform application's ARN.
var snsPlatformOf = map[notify.Platform]string{
	notify.APNs:        "APNS",
	notify.APNsSandbox: "APNS_SANDBOX",
	notify.FCM:         "GCM",
}

// checkApplicationARN refuses an ARN that is no platform application of p
// (an APNs application given for FCM would fail every send).
func checkApplicationARN(p notify.Platform, arn string) error {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sns" {
		return fmt.Errorf("snspush: %s application %q is not an SNS ARN", p, arn)
	}
	res := strings.Split(parts[5], "/")
	if len(res) != 3 || res[0] != "app" || res[2] == "" {
		return fmt.Errorf("snspush: %s application %q is not a platform application ARN (…:app/<platform>/<name>)", p, arn)
	}
	if res[1] != snsPlatformOf[p] {
		return fmt.Errorf("snspush: %s application %q is an application of platform %s, not %s", p, arn, res[1], snsPlatformOf[p])
	}
	return nil
}

// Available reports whether the deployment has an application for p.
func (s *Sender) Available(p notify.Platform) bool { return s.apps[p] != "" }

// Register creates (or finds) the device's platform endpoint, enabled.
func (s *Sender) Register(ctx context.Context, d notify.Device) (notify.Device, error) {
	app := s.apps[d.Platform]
	if app == "" {
		return d, notify.ErrPlatformUnavailable
	}
	for attempt := 0; ; attempt++ {
		arn, err := s.createEndpoint(ctx, app, d.Token)
		if err != nil {
			return d, err
		}
		enabled, err := s.enabled(ctx, arn, d.Token)
		if err != nil {
			return d, err
		}
		if enabled {
			d.Endpoint = arn
			return d, nil
		}
		if attempt > 0 {
			return d, fmt.Errorf("snspush: the endpoint created for a %s device is disabled", d.Platform)
		}
		// SNS disabled the token's endpoint (or holds it with another
		// token): replace it.
		if err := s.deleteEndpoint(ctx, arn); err != nil {
			return d, err
		}
	}
}

// existingEndpoint reads the ARN out of CreatePlatformEndpoint's answer for
// a token whose endpoint has other attributes.
var existingEndpoint = regexp.MustCompile(`Endpoint (arn:\S+) already exists with the same [Tt]oken`)

// createEndpoint returns the endpoint of token in app: a new one, the
// existing one with the same attributes, or the existing one with others
// (named by the error SNS answers for it).
func (s *Sender) createEndpoint(ctx context.Context, app, token string) (string, error) {
	out, err := s.api.CreatePlatformEndpoint(ctx, &sns.CreatePlatformEndpointInput{PlatformApplicationArn: aws.String(app), Token: aws.String(token)})
	if err == nil {
		return aws.ToString(out.EndpointArn), nil
	}
	var invalid *types.InvalidParameterException
	if errors.As(err, &invalid) {
		if m := existingEndpoint.FindStringSubmatch(invalid.ErrorMessage()); m != nil {
			return m[1], nil
		}
	}
	var disabled *types.PlatformApplicationDisabledException
	if errors.As(err, &disabled) {
		return "", fmt.Errorf("snspush: platform application disabled: %w", err)
	}
	return "", fmt.Errorf("snspush: create platform endpoint: %w", err)
}

// enabled reports whether the endpoint is enabled and holds token.
func (s *Sender) enabled(ctx context.Context, arn, token string) (bool, error) {
	out, err := s.api.GetEndpointAttributes(ctx, &sns.GetEndpointAttributesInput{EndpointArn: aws.String(arn)})
	var notFound *types.NotFoundException
	if errors.As(err, &notFound) {
		return false, nil // deleted meanwhile: make it again
	}
	if err != nil {
		return false, fmt.Errorf("snspush: get endpoint attributes: %w", err)
	}
	return strings.EqualFold(out.Attributes["Enabled"], "true") && out.Attributes["Token"] == token, nil
}

func (s *Sender) deleteEndpoint(ctx context.Context, arn string) error {
	if _, err := s.api.DeleteEndpoint(ctx, &sns.DeleteEndpointInput{EndpointArn: aws.String(arn)}); err != nil {
		return fmt.Errorf("snspush: delete endpoint: %w", err)
	}
	return nil
}

// Send publishes m to the device's endpoint in the platform's payload.
func (s *Sender) Send(ctx context.Context, d notify.Device, m notify.Message) error {
	if d.Endpoint == "" {
		return fmt.Errorf("snspush: %s device has no endpoint", d.Platform)
	}
	in, err := PublishInput(d, m)
	if err != nil {
		return err
	}
	_, err = s.api.Publish(ctx, in)
	var disabled *types.EndpointDisabledException
	var notFound *types.NotFoundException
	switch {
	case errors.As(err, &disabled), errors.As(err, &notFound):
		return fmt.Errorf("snspush: publish to %s endpoint: %w (%v)", d.Platform, notify.ErrDeviceGone, err)
	case err != nil:
		return fmt.Errorf("snspush: publish to %s endpoint: %w", d.Platform, err)
	}
	return nil
}

// Unregister deletes the device's endpoint (DeleteEndpoint is idempotent).
func (s *Sender) Unregister(ctx context.Context, d notify.Device) error {
	if d.Endpoint == "" {
		return nil
	}
	return s.deleteEndpoint(ctx, d.Endpoint)
}
