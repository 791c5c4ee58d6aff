package api

import (
	"strings"

	"chessapi/shared/service"
)

// Bearer tokens. The API issues seat tokens "st_" and player tokens "pt_",
// each followed by 43 base64url characters (256 bits); anything else in an
// Authorization header is malformed (401 invalid_token) and never reaches
// the service. A well-formed seat token that is not a seat of the game is
// the service's 403; a player token that belongs to nobody its 401.

const (
	seatTokenPrefix = "st_"
	tokenBodyLen    = 43 // base64url of 32 bytes, unpadded
)

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

// wellFormedToken reports whether t has the form of an issued token.
func wellFormedToken(t string) bool {
	body, ok := strings.CutPrefix(t, seatTokenPrefix)
	if !ok {
		body, ok = strings.CutPrefix(t, service.PlayerTokenPrefix)
	}
	if !ok || len(body) != tokenBodyLen {
		return false
	}
	for _, c := range []byte(body) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// callerOf returns the caller of a request: its bearer token, or a
// spectator without one.
func callerOf(header string) (service.Caller, error) {
	token, _, err := ParseBearer(header)
	return service.Caller{Token: token}, err
}
