// Package httpapi is the HTTP pipeline shared by the project's servers and
// clients. With it router.Handler and trust.NewHandler authenticate, limit,
// deduplicate and fail alike, and router.Client and trust.Client retry and
// decode errors alike.
//
// The server side, [Server], serves a table of endpoints ([Endpoint]), each
// a method, a path, an [Access] kind (key, trial, paid or public) and a
// function that decodes and validates the request and returns the call to
// run. Around every endpoint it sets a request id, echoes a W3C
// traceparent and puts its trace id in the context (package traceparent),
// recovers panics, logs one line per request, answers 404, 405, 415, 413
// and 400 problems, authenticates, rate limits trial callers through a
// [RateLimiter], hands paid endpoints to the x402 middleware, and replays
// responses by Idempotency-Key through an [IdempotencyStore].
//
// The client side, [Client], sends one logical call with
// go-retryablehttp: one Idempotency-Key for all its attempts, retries on
// connection errors, 429, 502, 503 and 504 (honouring Retry-After),
// bounded response bodies, a traceparent from the context, and non-2xx
// answers decoded into *problem.Details.
//
// The types a host configures (Authenticator, TrialLimit, RateLimiter,
// IdempotencyStore, RetryPolicy, ...) are exported by package router as
// aliases, and package trust takes router's, so one value configures both
// servers.
package httpapi
