package routertest_test

// Mutation tests of the conformance suites: each runs a suite against a
// deliberately broken implementation in a child process and fails when
// the suite passes it.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

const envMutant = "VOUCH_MUTANT_ROUTERTEST"

// suiteMustFail runs the test named name again in a child process, with
// envMutant set, and reports an error when the suite passed there. It
// returns true in the child, which then runs the suite.
func suiteMustFail(t *testing.T, name, broken string) (child bool) {
	t.Helper()
	if os.Getenv(envMutant) == name {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), envMutant+"="+name)
	// The suite must fail one of its subtests: a child that crashed or
	// could not start proves nothing.
	if out, err := cmd.CombinedOutput(); err == nil || !bytes.Contains(out, []byte("--- FAIL: "+name+"/")) {
		if len(out) > 600 {
			out = out[len(out)-600:]
		}
		t.Errorf("the conformance suite did not fail a broken implementation (%s) in a subtest (%v); it should\n%s", broken, err, out)
	}
	return false
}

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
	if !suiteMustFail(t, "TestIdempotencyStoreSuite_catchesReleaseUnderAnyLease", "Release under any lease") {
		return
	}
	routertest.TestIdempotencyStore(t, func(*testing.T) (a, b router.IdempotencyStore) {
		s := &releaseAnyLease{}
		return s, s
	})
}

func TestRateLimiterSuite_catchesOneMoreThanBurst(t *testing.T) {
	if !suiteMustFail(t, "TestRateLimiterSuite_catchesOneMoreThanBurst", "a bucket one token larger than Burst") {
		return
	}
	routertest.TestRateLimiter(t, func(t *testing.T, l router.TrialLimit) (a, b router.RateLimiter) {
		l.Burst++ // the mutation
		m, err := router.NewMemoryRateLimiter(l)
		if err != nil {
			t.Fatal(err)
		}
		return m, m
	})
}
