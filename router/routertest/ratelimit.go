package routertest

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/router"
)

// TestRateLimiter runs the conformance suite of router.RateLimiter
// against the limiters made by newLimiters for a limit, called once per
// subtest; it must return two handles on one limiter with no callers. The
// suite checks that:
//
//   - a caller gets Burst requests at once, then a refusal whose
//     retryAfter is the time until the next token;
//   - a refusal takes nothing: the next token arrives on time;
//   - callers have separate buckets;
//   - over a long irregular sequence, the decisions are those of an
//     x/time/rate token bucket with the same rate and burst;
//   - of concurrent requests at one instant on both handles, exactly
//     Burst are allowed.
func TestRateLimiter(t *testing.T, newLimiters func(t *testing.T, l router.TrialLimit) (a, b router.RateLimiter)) {
	t.Run("Burst", func(t *testing.T) { limitBurst(t, newLimiters) })
	t.Run("Callers", func(t *testing.T) { limitCallers(t, newLimiters) })
	t.Run("TokenBucket", func(t *testing.T) { limitTokenBucket(t, newLimiters) })
	t.Run("Concurrent", func(t *testing.T) { limitConcurrent(t, newLimiters) })
}

func allow(t *testing.T, l router.RateLimiter, caller string, now time.Time) (bool, time.Duration) {
	t.Helper()
	ok, wait, err := l.Allow(context.Background(), caller, now)
	if err != nil {
		t.Fatalf("Allow(%q) = %v", caller, err)
	}
	return ok, wait
}

func limitBurst(t *testing.T, newLimiters func(*testing.T, router.TrialLimit) (a, b router.RateLimiter)) {
	a, b := newLimiters(t, router.TrialLimit{Rate: 1, Burst: 3})
	handles := []router.RateLimiter{a, b}
	for i := range 3 {
		if ok, _ := allow(t, handles[i%2], "c", base()); !ok {
			t.Fatalf("request %d of a burst of 3 refused", i+1)
		}
	}
	ok, wait := allow(t, a, "c", base())
	if ok {
		t.Fatal("fourth request of a burst of 3 allowed")
	}
	if wait <= 0 || wait > time.Second {
		t.Errorf("retryAfter = %v, want in (0, 1s]: one token a second", wait)
	}
	// The refusal took nothing: one token is back a second after the burst.
	if ok, _ := allow(t, b, "c", base().Add(time.Second-time.Millisecond)); ok {
		t.Error("request 1ms before the next token allowed")
	}
	if ok, _ := allow(t, b, "c", base().Add(time.Second)); !ok {
		t.Error("request when the next token is due refused")
	}
	if ok, _ := allow(t, a, "c", base().Add(time.Second)); ok {
		t.Error("second request on one refilled token allowed")
	}
}

func limitCallers(t *testing.T, newLimiters func(*testing.T, router.TrialLimit) (a, b router.RateLimiter)) {
	a, b := newLimiters(t, router.TrialLimit{Rate: 1, Burst: 1})
	if ok, _ := allow(t, a, "ip:192.0.2.1", base()); !ok {
		t.Fatal("first caller refused")
	}
	if ok, _ := allow(t, b, "ip:192.0.2.1", base()); ok {
		t.Fatal("first caller's second request allowed")
	}
	if ok, _ := allow(t, b, "ip:192.0.2.2", base()); !ok {
		t.Error("second caller refused because of the first")
	}
}

// limitTokenBucket compares the limiter with x/time/rate, used as the
// router uses it (a refused reservation is cancelled), over a sequence of
// request times on a grid of quarter seconds, where the float arithmetic
// of x/time/rate is exact.
func limitTokenBucket(t *testing.T, newLimiters func(*testing.T, router.TrialLimit) (a, b router.RateLimiter)) {
	a, b := newLimiters(t, router.TrialLimit{Rate: 2, Burst: 4})
	ref := rate.NewLimiter(2, 4)
	rng := rand.New(rand.NewPCG(1, 2))
	now := base()
	allowed := 0
	for i := range 200 {
		now = now.Add(time.Duration(rng.IntN(4)) * 250 * time.Millisecond)
		r := ref.ReserveN(now, 1)
		want := r.DelayFrom(now) == 0
		if !want {
			r.CancelAt(now)
		}
		got, _ := allow(t, []router.RateLimiter{a, b}[i%2], "c", now)
		if got != want {
			t.Fatalf("request %d at +%v: allowed = %v, x/time/rate says %v", i, now.Sub(base()), got, want)
		}
		if got {
			allowed++
		}
	}
	if allowed == 0 || allowed == 200 {
		t.Fatalf("the sequence allowed %d of 200 requests; it should exercise both answers", allowed)
	}
}

func limitConcurrent(t *testing.T, newLimiters func(*testing.T, router.TrialLimit) (a, b router.RateLimiter)) {
	a, b := newLimiters(t, router.TrialLimit{Rate: 1, Burst: 5})
	const n = 20
	var allowed atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		l := a
		if i%2 == 1 {
			l = b
		}
		wg.Go(func() {
			ok, _, err := l.Allow(context.Background(), "c", base())
			if err != nil {
				t.Error(err)
			}
			if ok {
				allowed.Add(1)
			}
		})
	}
	wg.Wait()
	if got := allowed.Load(); got != 5 {
		t.Errorf("%d of %d concurrent requests allowed, want the burst of 5", got, n)
	}
}
