package pgstore_test

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

func TestRateLimiter_postgres(t *testing.T) {
	routertest.TestRateLimiter(t, func(t *testing.T, l router.TrialLimit) (a, b router.RateLimiter) {
		dbs := openDBs(t, 2)
		la, err := dbs[0].TrialLimiter(l)
		if err != nil {
			t.Fatal(err)
		}
		lb, err := dbs[1].TrialLimiter(l)
		if err != nil {
			t.Fatal(err)
		}
		return la, lb
	})
}

func TestTrialLimiter_retryAfter(t *testing.T) {
	db := openDB(t)
	l, err := db.TrialLimiter(router.TrialLimit{}) // 10 a minute, bursts of 5
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 5 {
		if ok, _, err := l.Allow(ctx, "c", t0); err != nil || !ok {
			t.Fatalf("request %d of the default burst = %v, %v", i+1, ok, err)
		}
	}
	// One token every 6 s: 2 s after the burst, the next is 4 s away.
	ok, wait, err := l.Allow(ctx, "c", t0.Add(2*time.Second))
	if err != nil || ok || wait != 4*time.Second {
		t.Errorf("request after the burst = %v, %v, %v; want refused for 4s", ok, wait, err)
	}
}

func TestTrialLimiter_config(t *testing.T) {
	db := openDB(t)
	for _, l := range []router.TrialLimit{{Rate: -1}, {Burst: -1}, {Rate: 1e-300}, {Rate: 1e9}} {
		if _, err := db.TrialLimiter(l); err == nil {
			t.Errorf("TrialLimiter(%+v) = nil error, want one", l)
		}
	}
	inf, err := db.TrialLimiter(router.TrialLimit{Rate: rate.Inf})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if ok, _, err := inf.Allow(context.Background(), "c", t0); !ok || err != nil {
			t.Fatalf("rate.Inf refused a request: %v", err)
		}
	}
}

// Buckets that have refilled are swept; a caller still waiting is kept.
func TestDB_DeleteExpired(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	l, err := db.TrialLimiter(router.TrialLimit{Rate: 1, Burst: 2})
	if err != nil {
		t.Fatal(err)
	}
	l.Allow(ctx, "idle", t0)                     // refilled at t0+1s
	l.Allow(ctx, "busy", t0.Add(10*time.Second)) // refilled at t0+11s
	l.Allow(ctx, "busy", t0.Add(10*time.Second))
	if ok, _, _ := l.Allow(ctx, "busy", t0.Add(10*time.Second)); ok {
		t.Fatal("third request of a burst of 2 allowed")
	}
	if _, err := db.Replay().Reserve(ctx, "auth", t0, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := db.DeleteExpired(ctx, t0.Add(5*time.Second))
	if err != nil || n != 2 {
		t.Errorf("DeleteExpired = %d, %v; want 2 (the idle bucket and the payment)", n, err)
	}
	if ok, _, _ := l.Allow(ctx, "busy", t0.Add(10*time.Second)); ok {
		t.Error("the busy caller's bucket was swept: it got a new burst")
	}
}
