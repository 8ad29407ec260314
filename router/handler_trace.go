package router

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// Header names the Handler and the Client use.
const (
	// HeaderRequestID carries the server's id of a request on every
	// response of the Handler; problem bodies repeat it as request_id.
	HeaderRequestID = "X-Request-Id"
	// HeaderIdempotencyKey carries the caller's key that makes a POST
	// safe to repeat.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderIdempotentReplayed is "true" on a response the Handler
	// replayed from an earlier request with the same Idempotency-Key.
	HeaderIdempotentReplayed = "Idempotent-Replayed"
	// HeaderTraceparent is the W3C Trace Context header.
	HeaderTraceparent = "traceparent"
)

type traceKey struct{}

// WithTraceID returns a context carrying the W3C trace id traceID (32
// lowercase hex digits). A [Client] call made with it sends a traceparent
// header with that trace id.
func WithTraceID(ctx context.Context, traceID string) context.Context {
	return context.WithValue(ctx, traceKey{}, traceID)
}

// TraceIDFrom returns the W3C trace id of the call, or "" when there is
// none. The [Handler] sets it from the request's traceparent header before
// calling the Service.
func TraceIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(traceKey{}).(string)
	return id
}

type idempotencyKeyCtx struct{}

// WithIdempotencyKey returns a context that makes a [Client] call send key
// as its Idempotency-Key instead of a generated one. Use it to repeat a
// call whose outcome is unknown (a cancelled context says nothing about
// whether the server acted): a Handler answers a repeat within its window
// with the first result.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

func idempotencyKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(idempotencyKeyCtx{}).(string)
	return k
}

// parseTraceparent returns the trace id and flags of a W3C traceparent
// header value ("00-<32 hex>-<16 hex>-<2 hex>"), or ok false when the value
// is not one. Later versions may append fields after a dash; version ff is
// invalid, as are all-zero ids.
func parseTraceparent(v string) (traceID, flags string, ok bool) {
	v = strings.TrimSpace(v)
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return "", "", false
	}
	version, trace, parent, fl := v[0:2], v[3:35], v[36:52], v[53:55]
	if !lowerHex(version) || version == "ff" || !lowerHex(trace) || !lowerHex(parent) || !lowerHex(fl) {
		return "", "", false
	}
	if version == "00" && len(v) != 55 || version != "00" && len(v) > 55 && v[55] != '-' {
		return "", "", false
	}
	if allZero(trace) || allZero(parent) {
		return "", "", false
	}
	return trace, fl, true
}

// newTraceparent returns a version 00 traceparent with traceID, a fresh
// span id and flags.
func newTraceparent(traceID, flags string) string {
	return "00-" + traceID + "-" + randomHex(8) + "-" + flags
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }

// randomHex returns n random bytes in hex. crypto/rand never fails.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// newRequestID returns a fresh request id.
func newRequestID() string { return "req_" + randomHex(12) }
