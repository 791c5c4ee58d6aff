package api

import (
	"strings"

	"chessapi/shared/credential"
	"chessapi/shared/service"
)

// Bearer tokens. The API issues seat tokens and player tokens (their form
// is defined once, in shared/credential: "st_" or "pt_" and 43 base64url
// characters, 256 bits); anything else in an Authorization header is
// malformed (401 invalid_token) and never reaches the service. A
// well-formed seat token that is not a seat of the game is the service's
// 403; a player token that belongs to nobody its 401.

// ParseBearer reads an Authorization header value: ok is false when the
// header is empty; err is errInvalidToken when it is not "Bearer" and one
// token of an issued form.
func ParseBearer(header string) (token string, ok bool, err error) {
	if header == "" {
		return "", false, nil
	}
	scheme, rest, found := strings.Cut(strings.TrimSpace(header), " ")
	token = strings.TrimSpace(rest)
	if !found || !strings.EqualFold(scheme, "Bearer") || !wellFormedToken(token) {
		return "", false, errInvalidToken
	}
	return token, true, nil
}

// wellFormedToken reports whether t has the form of an issued bearer
// token: a seat token or a player token (an API key travels in x-api-key,
// never as a bearer).
func wellFormedToken(t string) bool {
	k, ok := credential.KindOf(t)
	return ok && (k == credential.SeatToken || k == credential.PlayerToken)
}

// isPlayerToken reports whether a well-formed bearer token is a player
// token.
func isPlayerToken(t string) bool { return credential.PlayerToken.WellFormed(t) }

// callerOf returns the caller of a request: its bearer token, or a
// spectator without one.
func callerOf(header string) (service.Caller, error) {
	token, _, err := ParseBearer(header)
	return service.Caller{Token: token}, err
}
