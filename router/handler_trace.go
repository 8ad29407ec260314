package router

import (
	"context"
	"fmt"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/traceparent"
)

// Header names the Handler and the Client use.
const (
	// HeaderRequestID carries the server's id of a request on every
	// response of the Handler; problem bodies repeat it as request_id.
	HeaderRequestID = httpapi.HeaderRequestID
	// HeaderIdempotencyKey carries the caller's key that makes a POST
	// safe to repeat.
	HeaderIdempotencyKey = httpapi.HeaderIdempotencyKey
	// HeaderIdempotentReplayed is "true" on a response the Handler
	// replayed from an earlier request with the same Idempotency-Key.
	HeaderIdempotentReplayed = httpapi.HeaderIdempotentReplayed
	// HeaderTraceparent is the W3C Trace Context header.
	HeaderTraceparent = traceparent.Header
)

// WithTraceID returns a context carrying the W3C trace id traceID (32
// lowercase hex digits, not all zero). A [Client] call made with it sends
// a traceparent header with that trace id, and an [Engine] call records
// the call under it for [Engine.Feedback]. A call of either made with a
// context carrying a trace id of any other form, which no traceparent
// can carry and no feedback route can name, is refused with an error
// naming it.
//
// The whole project uses one trace id per context: the one WithTraceID
// sets is the one the trust service reads and propagates, and the one a
// [Handler] or the trust service's handler sets from a request's
// traceparent is the one TraceIDFrom returns.
func WithTraceID(ctx context.Context, traceID string) context.Context {
	return traceparent.With(ctx, traceID)
}

// checkTraceID returns an error naming the trace id ctx carries when it
// is not a W3C trace id (see WithTraceID).
func checkTraceID(ctx context.Context) error {
	if err := traceparent.Check(ctx); err != nil {
		return fmt.Errorf("router: %w", err)
	}
	return nil
}

// TraceIDFrom returns the W3C trace id of the call, or "" when there is
// none. The [Handler] sets it from the request's traceparent header before
// calling the Service.
func TraceIDFrom(ctx context.Context) string { return traceparent.From(ctx) }

type idempotencyKeyCtx struct{}

// WithIdempotencyKey returns a context that makes a [Client] call send key
// as its Idempotency-Key instead of a generated one. Use it to repeat a
// call whose outcome is unknown (a cancelled context says nothing about
// whether the server acted): a Handler answers a repeat within its window
// with the first result. A report ([Client.Feedback]) made with the same
// context sends a key of its own.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

func idempotencyKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(idempotencyKeyCtx{}).(string)
	return k
}
