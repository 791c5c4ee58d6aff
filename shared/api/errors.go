package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"chessapi/shared/apikey"
	"chessapi/shared/game"
	"chessapi/shared/service"
)

// How an error becomes a response: describe maps every error the edge can
// meet to its status, code and field; the message comes from texts.go in
// the request's language. This is the only place that does it, for HTTP,
// the stream and the Lambda adapters alike.

// apiError is an error the edge itself raises.
type apiError struct {
	Status int
	Code   string
	// Why, when set, is a more precise text key than the code's message
	// (a JSON syntax problem).
	Why string
}

func (e *apiError) Error() string { return "api: " + e.Code }

var (
	errBodyTooLarge     = &apiError{Status: http.StatusRequestEntityTooLarge, Code: "body_too_large"}
	errNotFoundRoute    = &apiError{Status: http.StatusNotFound, Code: "not_found"}
	errMethodNotAllowed = &apiError{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed"}
	errInternal         = &apiError{Status: http.StatusInternalServerError, Code: "internal"}
	errUnavailable      = &apiError{Status: http.StatusServiceUnavailable, Code: "unavailable"}
	errBadAPIKey        = &apiError{Status: http.StatusUnauthorized, Code: "invalid_api_key"}
	errInvalidToken     = &apiError{Status: http.StatusUnauthorized, Code: "invalid_token"}
	errBadBody          = &apiError{Status: http.StatusBadRequest, Code: "invalid_body"}
)

// described is an error as a response: status, code, the field it is
// about, its message in the request's language and extra top-level members.
type described struct {
	Status  int
	Code    string
	Field   string
	Message string
	Extra   map[string]any
	// RetryAfter, when positive, is sent as Retry-After (whole seconds).
	RetryAfter time.Duration
}

// retryLater is an error that says when to try again: a limit of the
// service (an API key's rate or quota, apikey.LimitError), answered 429
// rate_limited with Retry-After.
type retryLater interface {
	error
	RetryAfter() time.Duration
}

// describe maps err to its response in language l. Errors it does not know
// are 500 internal: their text never reaches a client.
func describe(err error, l Lang) described {
	t := catalogue(l)
	d := func(status int, code string) described {
		return described{Status: status, Code: code, Message: l.message(code)}
	}
	var (
		rematch  *service.RematchExistsError
		ae       *apiError
		syntax   *syntaxError
		input    *game.InputError
		rule     *game.RuleError
		fenErr   *service.FENError
		conflict *service.ConflictError
		noMove   *service.NoMoveError
		later    retryLater
	)
	if out, ok := describeNotifications(err, d); ok {
		return out
	}
	switch {
	case errors.As(err, &ae):
		return d(ae.Status, ae.Code)
	case errors.As(err, &syntax):
		out := d(http.StatusBadRequest, "invalid_json")
		out.Message = t.syntax[syntax.why]
		return out
	case errors.As(err, &fenErr):
		out := d(http.StatusBadRequest, "invalid_fen")
		out.Field, out.Message = fenErr.Field, t.fen(fenErr.Err)
		return out
	case errors.As(err, &input):
		code := "invalid_field"
		switch input.Problem {
		case game.ProblemRequired:
			code = "missing_field"
		case game.ProblemUnknown:
			code = "unknown_field"
		case game.ProblemDuplicate:
			code = "duplicate_field"
		}
		out := d(http.StatusBadRequest, code)
		out.Field, out.Message = input.Field, t.problems(input)
		return out
	case errors.As(err, &rematch):
		out := d(http.StatusConflict, "rematch_exists")
		out.Extra = map[string]any{"gameId": rematch.GameID}
		return out
	case errors.As(err, &rule):
		out := d(ruleStatus(rule.Code), rule.Code.String())
		out.Field = rule.Field
		return out
	case errors.As(err, &conflict):
		out := d(http.StatusConflict, "version_conflict")
		out.Extra = map[string]any{"game": localize(conflict.Current, l)}
		return out
	case errors.As(err, &noMove):
		out := d(http.StatusUnprocessableEntity, "no_legal_moves")
		out.Extra = map[string]any{"status": noMove.Status.String()}
		return out
	case errors.Is(err, apikey.ErrInvalidKey):
		return d(http.StatusUnauthorized, "invalid_api_key")
	case errors.As(err, &later):
		out := d(http.StatusTooManyRequests, "rate_limited")
		out.RetryAfter = later.RetryAfter()
		return out
	case errors.Is(err, apikey.ErrNoKeys):
		return d(http.StatusServiceUnavailable, "unavailable")
	case errors.Is(err, service.ErrNotFound):
		return d(http.StatusNotFound, "game_not_found")
	case errors.Is(err, service.ErrUnauthorized):
		return d(http.StatusUnauthorized, "unauthorized")
	case errors.Is(err, service.ErrPlayerRequired):
		return d(http.StatusUnauthorized, "player_required")
	case errors.Is(err, service.ErrLinkCodeInvalid):
		return d(http.StatusNotFound, "link_code_invalid")
	case errors.Is(err, service.ErrInvalidToken):
		return d(http.StatusUnauthorized, "invalid_token")
	case errors.Is(err, service.ErrPlayerNotFound):
		return d(http.StatusNotFound, "player_not_found")
	case errors.Is(err, service.ErrSessionNotFound):
		return d(http.StatusNotFound, "session_not_found")
	case errors.Is(err, service.ErrRecoveryCodeInvalid):
		return d(http.StatusNotFound, "recovery_code_invalid")
	case errors.Is(err, service.ErrBlocked):
		return d(http.StatusForbidden, "blocked")
	case errors.Is(err, service.ErrTooManyBlocks):
		return d(http.StatusConflict, "too_many_blocks")
	case errors.Is(err, service.ErrNoPlayers):
		return d(http.StatusServiceUnavailable, "unavailable")
	case errors.Is(err, service.ErrForbidden):
		return d(http.StatusForbidden, "forbidden")
	case errors.Is(err, service.ErrBusy):
		return d(http.StatusServiceUnavailable, "busy")
	case errors.Is(err, service.ErrTooLarge):
		return d(http.StatusUnprocessableEntity, "game_too_large")
	case errors.Is(err, service.ErrRequestIDReused):
		return d(http.StatusUnprocessableEntity, "request_id_reused")
	case errors.Is(err, service.ErrNoEngine):
		return d(http.StatusServiceUnavailable, "unavailable")
	case errors.Is(err, context.DeadlineExceeded):
		return d(http.StatusServiceUnavailable, "unavailable")
	}
	return d(http.StatusInternalServerError, "internal")
}

// ruleStatus is 409 for the refusals about seats and links and for play
// before the start (the game is in the wrong state for the request: wait,
// and it will not be), 422 for the rules of play.
func ruleStatus(c game.Code) int {
	switch c {
	case game.CodeGameFull, game.CodeAlreadySeated, game.CodeGameNotWaiting, game.CodeRematchLinked,
		game.CodeNotStarted:
		return http.StatusConflict
	case game.CodeInviteRequired, game.CodeRatingOutOfRange:
		return http.StatusForbidden
	}
	return http.StatusUnprocessableEntity
}

// errorJSON is the body of every error response.
type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// body returns the JSON body of the error response.
func (d described) body() map[string]any {
	out := map[string]any{"error": errorJSON{Code: d.Code, Message: d.Message, Field: d.Field}}
	for k, v := range d.Extra {
		out[k] = v
	}
	return out
}

// Errors an adapter in front of the handler answers itself (the Lambda
// adapter, before or around the handler).
var (
	ErrInternal    error = errInternal
	ErrUnavailable error = errUnavailable
	ErrBadBody     error = errBadBody
	ErrBadPath     error = &apiError{Status: http.StatusBadRequest, Code: "invalid_path"}
)

// ErrorJSON is the response of err as the handler would write it, for a
// request whose Accept-Language header is acceptLanguage: the status, the
// JSON body and the Content-Language.
func ErrorJSON(err error, acceptLanguage string) (status int, body []byte, lang string) {
	l := NegotiateLang(acceptLanguage)
	d := describe(err, l)
	body, jerr := json.Marshal(d.body())
	if jerr != nil {
		return http.StatusInternalServerError, []byte(`{"error":{"code":"internal","message":"internal"}}`), l.String()
	}
	return d.Status, body, l.String()
}
