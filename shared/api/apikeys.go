package api

import (
	"context"
	"errors"

	"chessapi/shared/apikey"
)

// POST /v1/ai/move's API keys (SPEC §13, docs/api-keys.md). The checker
// (*apikey.Checker) authenticates x-api-key and counts the request against
// the key's per-second rate and daily quota; describe (errors.go) answers
// its refusals:
//   - missing, malformed, unknown, wrong or revoked key: 401
//     invalid_api_key, one answer for all (a revoked key authenticates
//     nobody, which is what 401 says; 403 forbidden is this API's answer
//     to a valid token without a seat in the game, and would also tell a
//     prober which keys exist);
//   - over the rate or the quota: 429 rate_limited with Retry-After, the
//     seconds to the end of the counted window (a second, or UTC
//     midnight);
//   - keys required but no key store configured: 503 unavailable.
//
// The key is checked before the body is read: a caller without a valid
// key costs one store read at most, never a search.

// AIKeyChecker authenticates the x-api-key of POST /v1/ai/move and counts
// the request against the key's limits. It returns the key's id (not
// secret) or an error that describe answers.
type AIKeyChecker interface {
	Check(ctx context.Context, presented string) (keyID string, err error)
}

var _ AIKeyChecker = (*apikey.Checker)(nil)

// checkAIKey runs the configured checker on the request's x-api-key; nil
// checker: the endpoint is open (a local server without keys).
func (h *handler) checkAIKey(r *request) error {
	if h.deps.AIKeys == nil {
		return nil
	}
	id, err := h.deps.AIKeys.Check(r.Context(), r.Header.Get("X-Api-Key"))
	if err != nil {
		// The key's id is safe to log (listings show it); the presented
		// text never is.
		var limited *apikey.LimitError
		switch {
		case errors.As(err, &limited):
			h.log.Debug("api key over its limit", "keyId", id, "limit", limited.Limit, "retryAfterSec", int64(limited.Wait.Seconds()))
		case errors.Is(err, apikey.ErrInvalidKey):
			h.log.Debug("api key refused", "keyId", id, "reason", err.Error())
		}
		return err
	}
	h.log.Debug("api key accepted", "keyId", id)
	return nil
}
