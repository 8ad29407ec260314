package router

import (
	"math"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// TrialLimit sets the rate limit of the trial variants: a token bucket per
// caller that refills at Rate tokens a second up to Burst; each request
// takes one token. The zero value means the defaults.
type TrialLimit struct {
	// Rate is the refill rate in requests per second; zero means
	// DefaultTrialRate, rate.Inf means no limit.
	Rate rate.Limit
	// Burst is the bucket size; zero means DefaultTrialBurst.
	Burst int
	// MaxCallers bounds the callers tracked at once; zero means
	// DefaultTrialMaxCallers. Callers whose bucket is full are forgotten
	// first (a full bucket is the same as a new one); beyond the bound,
	// new callers share one bucket.
	MaxCallers int
}

// Defaults of [TrialLimit]: ten requests a minute with bursts of five.
const (
	DefaultTrialRate       rate.Limit = 10.0 / 60
	DefaultTrialBurst                 = 5
	DefaultTrialMaxCallers            = 10000
)

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
	return l
}

// limiters is the set of per-caller token buckets of the trial variants.
type limiters struct {
	limit TrialLimit

	mu        sync.Mutex
	byCaller  map[string]*rate.Limiter
	overflow  *rate.Limiter // shared by callers beyond MaxCallers
	lastSweep time.Time
}

// How often idle buckets are forgotten: every sweepEvery, and at most every
// sweepFullEvery while the set is full.
const (
	sweepEvery     = time.Minute
	sweepFullEvery = time.Second
)

func newLimiters(l TrialLimit) *limiters {
	return &limiters{
		limit:    l,
		byCaller: make(map[string]*rate.Limiter),
		overflow: rate.NewLimiter(l.Rate, l.Burst),
	}
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
	lim, found := s.byCaller[caller]
	if !found {
		if len(s.byCaller) < s.limit.MaxCallers {
			lim = rate.NewLimiter(s.limit.Rate, s.limit.Burst)
			s.byCaller[caller] = lim
		} else {
			lim = s.overflow
		}
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
	for caller, lim := range s.byCaller {
		if lim.TokensAt(now) >= float64(s.limit.Burst) {
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
// it trusts supplies its own trial caller function).
func ClientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
