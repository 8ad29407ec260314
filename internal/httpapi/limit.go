package httpapi

import (
	"container/list"
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter decides whether a caller of a [Trial] endpoint may make one
// more request at now. It returns ok true and takes one unit of the
// caller's allowance, or ok false and how long until the caller may try
// again (the Server sends it as Retry-After, rounded up to whole seconds).
// A refused request must not consume allowance. An error means the limiter
// could not decide (its store is down, say): the Server answers a
// *problem.Details error with its own status and any other error with 503,
// and does not serve the request.
//
// Time is an argument, never read from a clock, so that a limiter can be
// driven by tests and shared by processes. Implementations must be safe
// for concurrent use. The default is an in-memory token bucket per caller
// built from a [TrialLimit]; a database-backed limiter shares the limits
// between the processes of a deployment.
type RateLimiter interface {
	Allow(ctx context.Context, caller string, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// RateLimiterFunc adapts a function to a [RateLimiter].
type RateLimiterFunc func(ctx context.Context, caller string, now time.Time) (ok bool, retryAfter time.Duration, err error)

// Allow calls f(ctx, caller, now).
func (f RateLimiterFunc) Allow(ctx context.Context, caller string, now time.Time) (bool, time.Duration, error) {
	return f(ctx, caller, now)
}

// TrialLimit sets the default [RateLimiter] of trial endpoints: a token
// bucket per caller that refills at Rate tokens a second up to Burst; each
// request takes one token. The zero value means the defaults.
type TrialLimit struct {
	// Rate is the refill rate in requests per second; zero means
	// DefaultTrialRate, rate.Inf means no limit.
	Rate rate.Limit
	// Burst is the bucket size; zero means DefaultTrialBurst.
	Burst int
	// MaxCallers bounds the callers tracked at once; zero means
	// DefaultTrialMaxCallers. Callers whose bucket is full are forgotten
	// first (a full bucket is the same as a new one); beyond the bound,
	// the least recently seen caller is forgotten, so that a new caller is
	// never refused for want of room (a forgotten caller starts again with
	// a full bucket).
	MaxCallers int
	// IPv6Prefix is the length of the prefix that names an IPv6 caller
	// known by its address: the addresses of one /64 (the default, for
	// zero) share one bucket, since a host usually holds a whole /64 and
	// could otherwise rotate through it. It applies to the callers the
	// Server names by address, whatever the RateLimiter, and may be set
	// together with one. IPv4 callers are named by their full address.
	IPv6Prefix int
}

// Defaults of [TrialLimit]: ten requests a minute with bursts of five.
const (
	DefaultTrialRate       rate.Limit = 10.0 / 60
	DefaultTrialBurst                 = 5
	DefaultTrialMaxCallers            = 10000
	DefaultTrialIPv6Prefix            = 64
)

// check reports a member of l out of range.
func (l TrialLimit) check() error {
	switch {
	case l.Rate < 0 || l.Burst < 0 || l.MaxCallers < 0:
		return fmt.Errorf("trial limit %+v has a negative member", l)
	case l.IPv6Prefix < 0 || l.IPv6Prefix > 128:
		return fmt.Errorf("trial limit IPv6 prefix /%d is not between 0 and 128", l.IPv6Prefix)
	}
	return nil
}

// NewMemoryRateLimiter returns the RateLimiter a Server builds from l when
// it is given none: a token bucket per caller, in process memory. It fails
// when a member of l is negative.
func NewMemoryRateLimiter(l TrialLimit) (RateLimiter, error) {
	if err := l.check(); err != nil {
		return nil, err
	}
	return newLimiters(l.withDefaults()), nil
}

func (l TrialLimit) withDefaults() TrialLimit {
	if l.Rate == 0 {
		l.Rate = DefaultTrialRate
	}
	if l.Burst == 0 {
		l.Burst = DefaultTrialBurst
	}
	if l.MaxCallers == 0 {
		l.MaxCallers = DefaultTrialMaxCallers
	}
	if l.IPv6Prefix == 0 {
		l.IPv6Prefix = DefaultTrialIPv6Prefix
	}
	return l
}

// limiters is the default RateLimiter: per-caller token buckets, the least
// recently seen forgotten first beyond MaxCallers.
type limiters struct {
	limit TrialLimit

	mu        sync.Mutex
	byCaller  map[string]*list.Element // of *bucket
	lru       list.List                // of *bucket, most recently seen first
	lastSweep time.Time
}

type bucket struct {
	caller string
	lim    *rate.Limiter
}

// How often idle buckets are forgotten: every sweepEvery, and at most every
// sweepFullEvery while the set is full.
const (
	sweepEvery     = time.Minute
	sweepFullEvery = time.Second
)

func newLimiters(l TrialLimit) *limiters {
	return &limiters{limit: l, byCaller: make(map[string]*list.Element)}
}

// Allow implements [RateLimiter]; it never fails.
func (s *limiters) Allow(_ context.Context, caller string, now time.Time) (bool, time.Duration, error) {
	ok, wait := s.allow(caller, now)
	return ok, wait, nil
}

// allow takes a token of caller's bucket at now. When the bucket is empty it
// returns false and how long until a token is available.
func (s *limiters) allow(caller string, now time.Time) (ok bool, retryAfter time.Duration) {
	if s.limit.Rate == rate.Inf {
		return true, 0
	}
	s.mu.Lock()
	full := len(s.byCaller) >= s.limit.MaxCallers
	if since := now.Sub(s.lastSweep); since >= sweepEvery || full && since >= sweepFullEvery {
		s.sweep(now)
	}
	var lim *rate.Limiter
	if el, found := s.byCaller[caller]; found {
		s.lru.MoveToFront(el)
		lim = el.Value.(*bucket).lim
	} else {
		for len(s.byCaller) >= s.limit.MaxCallers && s.lru.Len() > 0 {
			oldest := s.lru.Back()
			s.lru.Remove(oldest)
			delete(s.byCaller, oldest.Value.(*bucket).caller)
		}
		lim = rate.NewLimiter(s.limit.Rate, s.limit.Burst)
		s.byCaller[caller] = s.lru.PushFront(&bucket{caller: caller, lim: lim})
	}
	s.mu.Unlock()

	r := lim.ReserveN(now, 1)
	if !r.OK() { // Burst is below one: nothing is ever allowed
		return false, time.Hour
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// sweep forgets the callers whose bucket is full at now: a new bucket would
// behave the same. The caller holds s.mu.
func (s *limiters) sweep(now time.Time) {
	s.lastSweep = now
	for caller, el := range s.byCaller {
		if el.Value.(*bucket).lim.TokensAt(now) >= float64(s.limit.Burst) {
			s.lru.Remove(el)
			delete(s.byCaller, caller)
		}
	}
}

// len returns the count of callers tracked.
func (s *limiters) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byCaller)
}

// retryAfterSeconds rounds d up to whole seconds, at least one, for a
// Retry-After header.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int(math.Ceil(d.Seconds())))
}

// ClientIP returns the host part of r.RemoteAddr: the address of the peer
// that connected, not one named in X-Forwarded-For (a host behind a proxy
// it trusts lists it in Config.TrustedProxies).
func ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
