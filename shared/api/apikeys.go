package api

import (
	"context"
	"errors"

	"chessapi/shared/apikey"
)

// POST /v1/ai/move's API keys (SPEC §13, docs/api-keys.md). The checker
// (*apikey.Checker) authenticates x-api-key, counts the request against
// the key's per-second rate and daily quota and holds one of the key's
// in-flight requests until the answer is written; describe (errors.go)
// answers its refusals:
//   - missing, malformed, unknown, wrong or revoked key: 401
//     invalid_api_key, one answer for all (a revoked key authenticates
//     nobody, which is what 401 says; 403 forbidden is this API's answer
//     to a valid token without a seat in the game, and would also tell a
//     prober which keys exist);
//   - over the rate or the quota: 429 rate_limited with Retry-After, the
//     seconds to the end of the counted window (a second, or UTC
//     midnight); with every in-flight request of the key taken: 429
//     rate_limited, Retry-After 1;
//   - the key table throttled (its counters, leases or the key's read):
//     429 rate_limited with Retry-After, never 500 (the error says when
//     to retry: dynamostore.ThrottledError);
//   - keys required but no key store configured: 503 unavailable.
//
// The key is checked before the body is read: a caller without a valid
// key costs one store read at most, never a search.

// AIKeyChecker authenticates the x-api-key of POST /v1/ai/move and holds
// the request to the key's limits. It returns the admission (its key's
// id, not secret; Release it once answered) or an error that describe
// answers.
type AIKeyChecker interface {
	Admit(ctx context.Context, presented string) (apikey.Admission, error)
}

var _ AIKeyChecker = (*apikey.Checker)(nil)

// checkAIKey runs the configured checker on the request's x-api-key and
// returns what ends the request's hold on its key (call it when the
// answer is written); nil checker: the endpoint is open (a local server
// without keys).
func (h *handler) checkAIKey(r *request) (release func(), err error) {
	if h.deps.AIKeys == nil {
		return func() {}, nil
	}
	a, err := h.deps.AIKeys.Admit(r.Context(), r.Header.Get("X-Api-Key"))
	if err != nil {
		// The key's id is safe to log (listings show it); the presented
		// text never is.
		var limited *apikey.LimitError
		switch {
		case errors.As(err, &limited):
			h.log.Debug("api key over its limit", "keyId", a.KeyID, "limit", limited.Limit, "retryAfterSec", int64(limited.Wait.Seconds()))
		case errors.Is(err, apikey.ErrInvalidKey):
			h.log.Debug("api key refused", "keyId", a.KeyID, "reason", err.Error())
		default:
			h.log.Warn("api key could not be checked", "keyId", a.KeyID, "err", err.Error())
		}
		return nil, err
	}
	h.log.Debug("api key accepted", "keyId", a.KeyID)
	return func() {
		if err := a.Release(r.Context()); err != nil {
			// The lease ends by itself at its TTL; until then the key
			// has one request fewer in flight.
			h.log.Warn("api key's in-flight lease not released", "keyId", a.KeyID, "err", err.Error())
		}
	}, nil
}
