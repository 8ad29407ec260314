package routertest_test

// Mutation tests of the conformance suites: each runs a suite against a
// deliberately broken implementation in a child process and fails when
// the suite passes it.

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/mutanttest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// releaseAnyLease is an IdempotencyStore whose Release frees a key under
// any lease, contrary to the contract: a request whose reservation was
// taken over would free the new holder's.
type releaseAnyLease struct {
	router.MemoryIdempotencyStore
	mu     sync.Mutex
	leases map[string]string
}

func (s *releaseAnyLease) Reserve(ctx context.Context, key, fp string, now, expires time.Time) (router.IdempotencyEntry, error) {
	e, err := s.MemoryIdempotencyStore.Reserve(ctx, key, fp, now, expires)
	if err == nil && e.State == router.IdempotencyReserved {
		s.mu.Lock()
		if s.leases == nil {
			s.leases = map[string]string{}
		}
		s.leases[key] = e.Lease
		s.mu.Unlock()
	}
	return e, err
}

func (s *releaseAnyLease) Release(ctx context.Context, key, _ string) error {
	s.mu.Lock()
	lease := s.leases[key] // the mutation: the holder's lease, whatever was given
	s.mu.Unlock()
	return s.MemoryIdempotencyStore.Release(ctx, key, lease)
}

func TestIdempotencyStoreSuite_catchesReleaseUnderAnyLease(t *testing.T) {
	if mutanttest.Child(t) {
		routertest.TestIdempotencyStore(t, func(*testing.T) (a, b router.IdempotencyStore) {
			s := &releaseAnyLease{}
			return s, s
		})
		return
	}
	mutanttest.MustFail(t, "Release under any lease")
}

func TestRateLimiterSuite_catchesOneMoreThanBurst(t *testing.T) {
	if mutanttest.Child(t) {
		routertest.TestRateLimiter(t, func(t *testing.T, l router.TrialLimit) (a, b router.RateLimiter) {
			l.Burst++ // the mutation
			m, err := router.NewMemoryRateLimiter(l)
			if err != nil {
				t.Fatal(err)
			}
			return m, m
		})
		return
	}
	mutanttest.MustFail(t, "a bucket one token larger than Burst")
}
