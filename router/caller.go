package router

import (
	"context"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// DefaultCaller names the caller of a call whose context names none (see
// [CallerFrom]): in-process calls of a host that serves no one else.
const DefaultCaller = httpapi.LocalCaller

type callerKey struct{}

// WithCaller returns a context naming the principal that makes a call:
// the call is its own, and only it may report the call's outcome
// ([Engine.Feedback]). trust.WithCaller sets the same.
func WithCaller(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, callerKey{}, caller)
}

// CallerFrom returns the caller of a call: the one set by [WithCaller];
// else, in a request a [Handler] admitted, on a trial route "trial:" and
// its trial caller ("trial:key:<name>", "trial:ip:<address>", or
// "trial:" and what [WithTrialCaller] returns), whatever credential it
// carries, so that a trial call is never a credential's; on the other
// routes the name its Authenticator gave the request's credential, or the
// caller identity that scopes its idempotency keys ("ip:<address>",
// "payer:<address>"); else [DefaultCaller].
func CallerFrom(ctx context.Context) string {
	if c, ok := ctx.Value(callerKey{}).(string); ok && c != "" {
		return c
	}
	if c := httpapi.Owner(ctx); c != "" {
		return c
	}
	return DefaultCaller
}
