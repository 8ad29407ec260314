package router_test

import (
	"testing"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

func TestMemoryIdempotencyStore_suite(t *testing.T) {
	routertest.TestIdempotencyStore(t, func(*testing.T) (a, b router.IdempotencyStore) {
		s := &router.MemoryIdempotencyStore{}
		return s, s
	})
}

func TestNewMemoryRateLimiter_suite(t *testing.T) {
	routertest.TestRateLimiter(t, func(t *testing.T, l router.TrialLimit) (a, b router.RateLimiter) {
		m, err := router.NewMemoryRateLimiter(l)
		if err != nil {
			t.Fatal(err)
		}
		return m, m
	})
}

func TestNewMemoryRateLimiter_refusesBadLimits(t *testing.T) {
	for _, l := range []router.TrialLimit{
		{Rate: -1},
		{Burst: -1},
		{MaxCallers: -1},
		{IPv6Prefix: -1},
		{IPv6Prefix: 129},
		{Rate: rate.Limit(-0.5), Burst: 3},
	} {
		if m, err := router.NewMemoryRateLimiter(l); err == nil {
			t.Errorf("NewMemoryRateLimiter(%+v) = %v, nil; want an error", l, m)
		}
	}
}
