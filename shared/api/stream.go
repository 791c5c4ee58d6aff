package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"chessapi/shared/chess"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// The stream protocol (SPEC §16.1, which supersedes §11 and §15 where they
// differ), shared by the local WebSocket server (streamws.go) and the API
// Gateway WebSocket functions (streamapigw.go):
//
//	client → server  {"action":"subscribe","gameId","afterVersion"?}
//	                 {"action":"subscribe","player":"me"}
//	                 {"action":"unsubscribe","gameId"} | {"action":"unsubscribe","player":"me"}
//	                 {"action":"sync","gameId"}
//	                 {"action":"ping"}
//	server → client  {"type":"subscribed","gameId","version","game","missed":[{version,at,events}]}
//	                 ("reset":true instead of missed when afterVersion is older than the log)
//	                 {"type":"subscribed","player"}
//	                 {"type":"change","gameId","version","at","events","delta"}
//	                 {"type":"playerEvent","kind","gameId","at",...}
//	                 {"type":"pong"}
//	                 {"type":"error","code","message","gameId"?,"field"?}
//
// Messages are decoded by the one strict reader (duplicate and unknown
// fields refused); errors carry the codes and texts of the HTTP API.

// MaxStreamMessage bounds a client message.
const MaxStreamMessage = 4 << 10

// MaxSubscriptions is how many subscriptions (games, and the account-wide
// one) one connection may hold.
const MaxSubscriptions = 10

// StreamAction is what a client message asks.
type StreamAction string

const (
	ActionSubscribe   StreamAction = "subscribe"
	ActionUnsubscribe StreamAction = "unsubscribe"
	ActionSync        StreamAction = "sync"
	ActionPing        StreamAction = "ping"
)

// PlayerMe is the only value of a client message's "player": the account
// of the connection's player token.
const PlayerMe = "me"

// StreamRequest is a decoded client message: about a game (GameID) or,
// for subscribe and unsubscribe, about the caller's account (Player).
type StreamRequest struct {
	Action       StreamAction
	GameID       string
	Player       bool
	AfterVersion *int64
}

// DecodeStreamMessage reads a client message. A message that is not one of
// the five is an error with its field named (answered with an error
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
		player := o.str("player")
		req.AfterVersion = o.integer("afterVersion")
		if action == nil || o.failed() {
			return
		}
		req.Action = StreamAction(*action)
		if id != nil {
			req.GameID = *id
		}
		notFor := func(field string, present bool) {
			if present {
				o.fail(game.FieldNotAllowed(field, "notForActionType"))
			}
		}
		switch req.Action {
		case ActionSubscribe, ActionUnsubscribe:
			if player != nil {
				if *player != PlayerMe {
					o.fail(game.FieldOneOf("player", PlayerMe))
					return
				}
				req.Player = true
				notFor("gameId", id != nil)
				notFor("afterVersion", req.AfterVersion != nil)
				return
			}
			o.require("gameId", id != nil)
			if req.Action == ActionUnsubscribe {
				notFor("afterVersion", req.AfterVersion != nil)
			}
			if req.AfterVersion != nil && *req.AfterVersion < 0 {
				o.fail(game.FieldRange("afterVersion", 0, 1<<62))
			}
		case ActionSync:
			o.require("gameId", id != nil)
			notFor("player", player != nil)
			notFor("afterVersion", req.AfterVersion != nil)
		case ActionPing:
			notFor("gameId", id != nil)
			notFor("player", player != nil)
			notFor("afterVersion", req.AfterVersion != nil)
		default:
			o.fail(game.FieldOneOf("action", string(ActionSubscribe), string(ActionUnsubscribe), string(ActionSync), string(ActionPing)))
		}
	})
	return req, err
}

var errStreamTooLarge = &apiError{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large"}

// StreamMessage is a server message.
type StreamMessage struct {
	Type    string `json:"type"`
	Kind    string `json:"kind,omitempty"` // playerEvent
	GameID  string `json:"gameId,omitempty"`
	Player  string `json:"player,omitempty"` // the account-wide subscribed
	Version int64  `json:"version,omitempty"`
	At      int64  `json:"at,omitempty"`
	// Events are a change's; Delta its change of this subscriber's view.
	Events json.RawMessage `json:"events,omitempty"`
	Delta  json.RawMessage `json:"delta,omitempty"`
	// Game is the whole view (subscribed), with Missed (the events of the
	// versions after the client's afterVersion up to Version: [] without
	// one) or Reset (afterVersion is older than the change log).
	Game   *game.View      `json:"game,omitempty"`
	Missed *[]MissedChange `json:"missed,omitempty"`
	Reset  bool            `json:"reset,omitempty"`
	// GameOmitted marks a subscribed sent without its view because the
	// view was too large for the transport (API Gateway's 128 KB message
	// limit); the client reads it with GET /v1/games/{id}.
	GameOmitted bool `json:"gameOmitted,omitempty"`
	// Player events.
	Move         *playerEventMove   `json:"move,omitempty"`
	Deadline     *int64             `json:"deadline,omitempty"`
	Result       *playerEventResult `json:"result,omitempty"`
	RatingChange *playerRating      `json:"ratingChange,omitempty"`
	RematchOf    string             `json:"rematchOf,omitempty"`
	// Error messages.
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// MissedChange is a version a subscriber missed: its events.
type MissedChange struct {
	Version int64           `json:"version"`
	At      int64           `json:"at"`
	Events  json.RawMessage `json:"events"`
}

type playerEventMove struct {
	SAN string `json:"san"`
	UCI string `json:"uci"`
}

type playerEventResult struct {
	Winner  *chess.Color `json:"winner"`
	Reason  game.Reason  `json:"reason"`
	Summary string       `json:"summary"`
}

type playerRating struct {
	Before int `json:"before"`
	After  int `json:"after"`
	Delta  int `json:"delta"`
}

// Server message types.
const (
	MsgSubscribed  = "subscribed"
	MsgChange      = "change"
	MsgPlayerEvent = "playerEvent"
	MsgPong        = "pong"
	MsgError       = "error"
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

// ChangeMessage is the message of one committed version c of a game for a
// subscriber whose delta is d (localized here).
func ChangeMessage(gameID string, c game.Change, d game.Delta, l Lang) (StreamMessage, error) {
	delta, err := localizeDelta(d, l).MarshalJSON()
	if err != nil {
		return StreamMessage{}, err
	}
	events := c.Events
	if len(events) == 0 {
		events = json.RawMessage("[]")
	}
	return StreamMessage{Type: MsgChange, GameID: gameID, Version: c.Version, At: c.At, Events: events, Delta: delta}, nil
}

// SubscribedMessage answers a subscribe or a sync: the subscriber's whole
// view at its version, with the events of every version after
// afterVersion (nil: none asked), or reset when the log no longer reaches
// back.
func SubscribedMessage(st *game.State, view *game.View, afterVersion *int64, l Lang) StreamMessage {
	m := StreamMessage{Type: MsgSubscribed, GameID: view.GameID, Version: view.Version, Game: localize(view, l)}
	missed := []MissedChange{}
	if afterVersion != nil && *afterVersion < view.Version {
		changes, complete := st.ChangesAfter(*afterVersion)
		if !complete {
			m.Reset = true
			return m
		}
		for _, c := range changes {
			missed = append(missed, MissedChange{Version: c.Version, At: c.At, Events: c.Events})
		}
	}
	m.Missed = &missed
	return m
}

// PlayerSubscribedMessage confirms the account-wide subscription.
func PlayerSubscribedMessage(playerID string) StreamMessage {
	return StreamMessage{Type: MsgSubscribed, Player: playerID}
}

// PlayerEventMessage is a player event, worded in l.
func PlayerEventMessage(e service.PlayerEvent, l Lang) StreamMessage {
	m := StreamMessage{Type: MsgPlayerEvent, Kind: string(e.Kind), GameID: e.GameID, Version: e.Version, At: e.At, Deadline: e.Deadline, RematchOf: e.RematchOf}
	if e.Move != nil {
		m.Move = &playerEventMove{SAN: e.Move.SAN, UCI: e.Move.UCI}
	}
	if r := e.Result; r != nil {
		m.Result = &playerEventResult{Winner: r.Winner, Reason: r.Reason, Summary: l.Summary(r.Winner, r.Reason, r.MoveCount)}
	}
	if rc := e.RatingChange; rc != nil {
		m.RatingChange = &playerRating{Before: rc.Before, After: rc.After, Delta: rc.Delta()}
	}
	return m
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
