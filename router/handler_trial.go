package router

import (
	"net/http"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TrialLimit sets the rate limit of the trial variants: a token bucket per
// caller that refills at Rate tokens a second up to Burst; each request
// takes one token. The zero value means the defaults.
//
// Its members: Rate (rate.Limit) is the refill rate in requests per
// second, zero meaning DefaultTrialRate and rate.Inf no limit; Burst (int)
// is the bucket size, zero meaning DefaultTrialBurst; MaxCallers (int)
// bounds the callers tracked at once, zero meaning DefaultTrialMaxCallers.
// Callers whose bucket is full are forgotten first (a full bucket is the
// same as a new one); beyond the bound, the least recently seen caller is
// forgotten, so that no new caller is refused for want of room.
// IPv6Prefix (int) is the prefix length that names an IPv6 caller known
// by its address, zero meaning DefaultTrialIPv6Prefix (64): a host's
// addresses in one /64 share one bucket. It may be set together with
// [WithRateLimiter].
//
// The type is an alias of the project's internal one, so that
// trust.NewHandler takes the same value.
type TrialLimit = httpapi.TrialLimit

// Defaults of [TrialLimit]: ten requests a minute with bursts of five.
const (
	DefaultTrialRate       rate.Limit = httpapi.DefaultTrialRate
	DefaultTrialBurst                 = httpapi.DefaultTrialBurst
	DefaultTrialMaxCallers            = httpapi.DefaultTrialMaxCallers
	DefaultTrialIPv6Prefix            = httpapi.DefaultTrialIPv6Prefix
)

// RateLimiter decides whether a caller of a trial route may make one more
// request:
//
//	Allow(ctx context.Context, caller string, now time.Time) (ok bool, retryAfter time.Duration, err error)
//
// It returns ok true and takes one unit of the caller's allowance, or ok
// false and how long until the caller may try again (sent as Retry-After
// with the 429, rounded up to whole seconds). A refused request must not
// consume allowance. An error means the limiter could not decide: the
// [Handler] answers an *[Error] with its own status and any other error
// with 503, and does not call the Service. Callers are named as the
// Handler names them ("key:<name>", "ip:<address>", or what
// [WithTrialCaller] returns).
//
// Time is an argument, never read from a clock, so that a limiter can be
// driven by tests and shared by processes. Implementations must be safe
// for concurrent use. The default is an in-memory token bucket per caller
// set by [TrialLimit]; [WithRateLimiter] installs another, such as one
// whose counts live in PostgreSQL and are shared by every process of a
// deployment. The type is an alias of the project's internal interface,
// shared with trust.NewHandler.
type RateLimiter = httpapi.RateLimiter

// RateLimiterFunc adapts a function to a [RateLimiter]: its Allow method
// calls the function.
type RateLimiterFunc = httpapi.RateLimiterFunc

// NewMemoryRateLimiter returns the rate limiter a [Handler] builds from l
// when [WithRateLimiter] gives it none: a token bucket per caller, in
// process memory, the least recently seen caller forgotten beyond
// l.MaxCallers. A host wraps it (to log refusals, or to exempt callers)
// and installs the wrapper with WithRateLimiter. It fails when a member
// of l is negative, or l.IPv6Prefix is above 128.
func NewMemoryRateLimiter(l TrialLimit) (RateLimiter, error) {
	return httpapi.NewMemoryRateLimiter(l)
}

// ClientIP returns the host part of r.RemoteAddr: the address of the peer
// that connected, not one named in X-Forwarded-For (a host behind a proxy
// it trusts lists it with [WithTrustedProxies]).
func ClientIP(r *http.Request) string { return httpapi.ClientIP(r) }
