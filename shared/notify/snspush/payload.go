package snspush

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"chessapi/shared/notify"
)

// The payloads, one per platform, each collapsed per game (SPEC §16.3):
//
//	APNs (key APNS or APNS_SANDBOX), with the message attributes
//	AWS.SNS.MOBILE.APNS.COLLAPSE_ID = game id, PUSH_TYPE = alert,
//	PRIORITY = 10:
//	  {"aps":{"alert":{"title","body"},"sound":"default","thread-id":<game>},
//	   "notification":{notificationId, kind, gameId, at, title, body, data}}
//
//	FCM HTTP v1 (key GCM):
//	  {"fcmV1Message":{"message":{
//	    "notification":{"title","body"},
//	    "data":{"notificationId","kind","gameId","at","data"},   (strings only)
//	    "android":{"collapse_key":<game>,"priority":"high","notification":{"tag":<game>}},
//	    "apns":{"headers":{"apns-collapse-id":<game>}}}}}
//
// FCM's data values must be strings, so "at" is decimal text and "data" the
// JSON text of the kind's fields. android.collapse_key collapses messages
// waiting for an offline device; notification.tag replaces the one already
// shown.

// The reserved message attributes of APNs deliveries
// (https://docs.aws.amazon.com/sns/latest/dg/sns-message-attributes.html).
const (
	attrAPNsCollapseID = "AWS.SNS.MOBILE.APNS.COLLAPSE_ID"
	attrAPNsPushType   = "AWS.SNS.MOBILE.APNS.PUSH_TYPE"
	attrAPNsPriority   = "AWS.SNS.MOBILE.APNS.PRIORITY"
)

type apnsAlert struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

type apnsAps struct {
	Alert    apnsAlert `json:"alert"`
	Sound    string    `json:"sound"`
	ThreadID string    `json:"thread-id"`
}

type apnsPayload struct {
	Aps          apnsAps        `json:"aps"`
	Notification notify.Message `json:"notification"`
}

type fcmNotification struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

type fcmAndroid struct {
	CollapseKey  string `json:"collapse_key"`
	Priority     string `json:"priority"`
	Notification struct {
		Tag string `json:"tag"`
	} `json:"notification"`
}

type fcmAPNs struct {
	Headers map[string]string `json:"headers"`
}

type fcmMessage struct {
	Notification fcmNotification   `json:"notification"`
	Data         map[string]string `json:"data"`
	Android      fcmAndroid        `json:"android"`
	APNs         fcmAPNs           `json:"apns"`
}

type fcmPayload struct {
	V1 struct {
		Message fcmMessage `json:"message"`
	} `json:"fcmV1Message"`
}

// Payload is the platform's payload for m (the value under the platform's
// key of the SNS message).
func Payload(p notify.Platform, m notify.Message) ([]byte, error) {
	if m.Data == nil {
		m.Data = json.RawMessage("{}")
	}
	switch {
	case p.Apple():
		return json.Marshal(apnsPayload{
			Aps:          apnsAps{Alert: apnsAlert{Title: m.Title, Body: m.Body}, Sound: "default", ThreadID: m.CollapseKey()},
			Notification: m,
		})
	case p == notify.FCM:
		var f fcmPayload
		msg := &f.V1.Message
		msg.Notification = fcmNotification{Title: m.Title, Body: m.Body}
		msg.Data = map[string]string{
			"notificationId": m.ID,
			"kind":           m.Kind,
			"gameId":         m.GameID,
			"at":             strconv.FormatInt(m.At, 10),
			"data":           string(m.Data),
		}
		msg.Android.CollapseKey, msg.Android.Priority = m.CollapseKey(), "high"
		msg.Android.Notification.Tag = m.CollapseKey()
		msg.APNs.Headers = map[string]string{"apns-collapse-id": m.CollapseKey()}
		return json.Marshal(f)
	}
	return nil, fmt.Errorf("snspush: no payload for platform %q", p)
}

// PublishInput is the Publish request that sends m to device d.
func PublishInput(d notify.Device, m notify.Message) (*sns.PublishInput, error) {
	payload, err := Payload(d.Platform, m)
	if err != nil {
		return nil, err
	}
	msg, err := json.Marshal(map[string]string{
		"default":           m.Body,
		d.Platform.SNSKey(): string(payload),
	})
	if err != nil {
		return nil, fmt.Errorf("snspush: encode message: %w", err)
	}
	in := &sns.PublishInput{
		TargetArn:        aws.String(d.Endpoint),
		MessageStructure: aws.String("json"),
		Message:          aws.String(string(msg)),
	}
	if d.Platform.Apple() {
		str := func(v string) types.MessageAttributeValue {
			return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
		in.MessageAttributes = map[string]types.MessageAttributeValue{
			attrAPNsCollapseID: str(m.CollapseKey()),
			attrAPNsPushType:   str("alert"),
			attrAPNsPriority:   str("10"),
		}
	}
	return in, nil
}
