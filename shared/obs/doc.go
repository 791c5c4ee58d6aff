// Package obs is the observability of the service: structured logs and
// CloudWatch metrics, with no dependency on Lambda or AWS (the callers pass
// in the ids Lambda gives them).
//
//   - Logs (log.go): NewLogger makes the JSON slog logger; WithRequest puts
//     a request's ids (API Gateway's and Lambda's request ids, the route,
//     the game once known: SetGameID) in its context, and every line logged
//     with that context carries them. Secret-named attributes and every
//     credential kind (shared/credential: seat and player tokens, API
//     keys, link and invite codes by name) are redacted.
//   - HTTP (http.go): Middleware writes one log line per request (method,
//     route, status, bytes, duration, ids, language) and, WithMetrics, one
//     EMF line with the request metrics. It never logs headers, the query,
//     the raw path or bodies.
//   - Metrics (metrics.go): Metrics writes CloudWatch embedded metric format
//     lines (one per call, nothing batched); a nil *Metrics is a no-op and a
//     Recorder keeps the points in memory for tests.
//   - Registry (registry.go): every metric name the code publishes, with
//     its unit; alarms refer to these names.
//
// docs/observability.md describes the output and the wiring.
package obs
