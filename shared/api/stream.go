package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The stream protocol (SPEC §11, §15), shared by the local WebSocket server
// (streamws.go) and the API Gateway WebSocket functions:
//
//	client → server  {"action":"subscribe","gameId","afterVersion"?}
//	                 {"action":"unsubscribe","gameId"}
//	                 {"action":"ping"}
//	server → client  {"type":"subscribed","gameId","version","game"}
//	                 {"type":"change","gameId","version","events","game"}
//	                 {"type":"reset","gameId","version","game"}
//	                 {"type":"pong"}
//	                 {"type":"error","code","message","gameId"?,"field"?}
//
// Messages are decoded by the one strict reader (duplicate and unknown
// fields refused); errors carry the codes and texts of the HTTP API.

// MaxStreamMessage bounds a client message.
const MaxStreamMessage = 4 << 10

// MaxSubscriptions is how many games one connection may follow.
const MaxSubscriptions = 10

// StreamAction is what a client message asks.
type StreamAction string

const (
	ActionSubscribe   StreamAction = "subscribe"
	ActionUnsubscribe StreamAction = "unsubscribe"
	ActionPing        StreamAction = "ping"
)

// StreamRequest is a decoded client message.
type StreamRequest struct {
	Action       StreamAction
	GameID       string
	AfterVersion *int64
}

// DecodeStreamMessage reads a client message. A message that is not one of
// the three is an error with its field named (answered with an error
// message; the connection stays open).
func DecodeStreamMessage(body []byte) (StreamRequest, error) {
	var req StreamRequest
	if len(body) > MaxStreamMessage {
		return req, errStreamTooLarge
	}
	err := decodeBody(body, false, func(o *object) {
		action := o.str("action")
		o.require("action", action != nil)
		id := o.str("gameId")
		req.AfterVersion = o.integer("afterVersion")
		if action == nil || o.failed() {
			return
		}
		req.Action = StreamAction(*action)
		switch req.Action {
		case ActionSubscribe, ActionUnsubscribe:
			o.require("gameId", id != nil)
			if id != nil {
				req.GameID = *id
			}
			if req.Action == ActionUnsubscribe && req.AfterVersion != nil {
				o.fail(game.FieldNotAllowed("afterVersion", "notForActionType"))
			}
			if req.AfterVersion != nil && *req.AfterVersion < 0 {
				o.fail(game.FieldRange("afterVersion", 0, 1<<62))
			}
		case ActionPing:
			if id != nil {
				o.fail(game.FieldNotAllowed("gameId", "notForActionType"))
			}
			if req.AfterVersion != nil {
				o.fail(game.FieldNotAllowed("afterVersion", "notForActionType"))
			}
		default:
			o.fail(game.FieldOneOf("action", string(ActionSubscribe), string(ActionUnsubscribe), string(ActionPing)))
		}
	})
	return req, err
}

var errStreamTooLarge = &apiError{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large"}

// StreamMessage is a server message.
type StreamMessage struct {
	Type    string          `json:"type"`
	GameID  string          `json:"gameId,omitempty"`
	Version int64           `json:"version,omitempty"`
	Events  json.RawMessage `json:"events,omitempty"`
	Game    *game.View      `json:"game,omitempty"`
	// GameOmitted marks a message sent without its view because the view
	// was too large for the transport (API Gateway's 128 KB message
	// limit); the client reads it with GET /v1/games/{id}.
	GameOmitted bool `json:"gameOmitted,omitempty"`
	// Error messages.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Server message types.
const (
	MsgSubscribed = "subscribed"
	MsgChange     = "change"
	MsgReset      = "reset"
	MsgPong       = "pong"
	MsgError      = "error"
)

// Encode returns the message's JSON.
func (m StreamMessage) Encode() []byte {
	b, err := json.Marshal(m)
	if err != nil {
		// A view always marshals; this guards the connection anyway.
		b, _ = json.Marshal(StreamMessage{Type: MsgError, GameID: m.GameID, Code: "internal", Message: Korean.message("internal")})
	}
	return b
}

// StreamError is the error message for err about gameID ("" for none), in
// language l: the code, text and field the HTTP API would give.
func StreamError(err error, gameID string, l Lang) StreamMessage {
	d := describe(err, l)
	return StreamMessage{Type: MsgError, GameID: gameID, Code: d.Code, Message: d.Message, Field: d.Field}
}

// ChangeMessage is the message of one committed version for a subscriber
// whose view is view (localized here).
func ChangeMessage(gameID string, version int64, events json.RawMessage, view *game.View, l Lang) StreamMessage {
	if len(events) == 0 {
		events = json.RawMessage("[]")
	}
	return StreamMessage{Type: MsgChange, GameID: gameID, Version: version, Events: events, Game: localize(view, l)}
}

// SubscribedMessage confirms a subscription with the current view.
func SubscribedMessage(gameID string, view *game.View, l Lang) StreamMessage {
	return StreamMessage{Type: MsgSubscribed, GameID: gameID, Version: view.Version, Game: localize(view, l)}
}

// CatchUp is the messages that bring a subscriber from afterVersion to the
// current version: the logged changes (their events, with the current
// view), or a reset when the log no longer reaches back.
func CatchUp(gameID string, log service.ChangeLog, l Lang) []StreamMessage {
	if log.Reset {
		return []StreamMessage{{Type: MsgReset, GameID: gameID, Version: log.Version, Game: localize(log.Game, l)}}
	}
	out := make([]StreamMessage, 0, len(log.Changes))
	for _, c := range log.Changes {
		out = append(out, ChangeMessage(gameID, c.Version, c.Events, log.Game, l))
	}
	return out
}

// StreamCredentials reads a stream client's token (Authorization header,
// or ?token= for browsers, which cannot set headers) and language
// (Accept-Language, or ?lang=). A malformed token is errInvalidToken.
func StreamCredentials(authorization, queryToken, acceptLanguage, queryLang string) (service.Caller, Lang, error) {
	lang := NegotiateLang(acceptLanguage)
	if queryLang != "" {
		if l, ok := ParseLang(queryLang); ok {
			lang = l
		}
	}
	if authorization == "" && queryToken != "" {
		if !wellFormedToken(strings.TrimSpace(queryToken)) {
			return service.Caller{}, lang, errInvalidToken
		}
		return service.Caller{Token: strings.TrimSpace(queryToken)}, lang, nil
	}
	caller, err := callerOf(authorization)
	return caller, lang, err
}
