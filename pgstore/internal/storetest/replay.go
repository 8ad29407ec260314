package storetest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// TestReplayStore runs the conformance suite of x402.ReplayStore against
// the stores made by newStores, called once per subtest; it must return
// two handles on one empty store. The suite checks that:
//
//   - a key is accepted once, and refused after that on either handle;
//   - a key is refused until its time, and accepted again from then on;
//   - Release makes a key acceptable again;
//   - keys are independent of each other;
//   - of concurrent Reserves of one key, exactly one is accepted.
func TestReplayStore(t *testing.T, newStores func(t *testing.T) (a, b x402.ReplayStore)) {
	t.Run("Once", func(t *testing.T) { replayOnce(t, newStores) })
	t.Run("Expiry", func(t *testing.T) { replayExpiry(t, newStores) })
	t.Run("Release", func(t *testing.T) { replayRelease(t, newStores) })
	t.Run("Independent", func(t *testing.T) { replayIndependent(t, newStores) })
	t.Run("Concurrent", func(t *testing.T) { replayConcurrent(t, newStores) })
}

func wantReserve(t *testing.T, what string, s x402.ReplayStore, key string, now, until time.Time, want bool) {
	t.Helper()
	got, err := s.Reserve(context.Background(), key, now, until)
	if err != nil {
		t.Fatalf("%s: Reserve(%q) = %v", what, key, err)
	}
	if got != want {
		t.Errorf("%s: Reserve(%q) = %v, want %v", what, key, got, want)
	}
}

func replayOnce(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	wantReserve(t, "first", a, "auth-1", base(), until, true)
	wantReserve(t, "again on the same handle", a, "auth-1", base(), until, false)
	wantReserve(t, "again on the other handle", b, "auth-1", base().Add(time.Minute), until, false)
}

func replayExpiry(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	wantReserve(t, "first", a, "auth-1", base(), until, true)
	wantReserve(t, "just before its time", b, "auth-1", until.Add(-time.Millisecond), until.Add(time.Hour), false)
	wantReserve(t, "at its time", b, "auth-1", until, until.Add(time.Hour), true)
	wantReserve(t, "after being taken again", a, "auth-1", until.Add(time.Minute), until.Add(time.Hour), false)
}

func replayRelease(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	wantReserve(t, "first", a, "auth-1", base(), until, true)
	if err := a.Release(context.Background(), "auth-1"); err != nil {
		t.Fatalf("Release = %v", err)
	}
	wantReserve(t, "after Release", b, "auth-1", base(), until, true)
	wantReserve(t, "again", a, "auth-1", base(), until, false)
}

func replayIndependent(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	until := base().Add(time.Hour)
	wantReserve(t, "first key", a, "auth-1", base(), until, true)
	wantReserve(t, "second key", b, "auth-2", base(), until, true)
	if err := a.Release(context.Background(), "auth-2"); err != nil {
		t.Fatal(err)
	}
	wantReserve(t, "first key after the second was released", b, "auth-1", base(), until, false)
}

func replayConcurrent(t *testing.T, newStores func(*testing.T) (a, b x402.ReplayStore)) {
	a, b := newStores(t)
	const n = 16
	var accepted atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ok, err := s.Reserve(context.Background(), "auth-1", base(), base().Add(time.Hour))
			if err != nil {
				t.Error(err)
			}
			if ok {
				accepted.Add(1)
			}
		})
	}
	wg.Wait()
	if got := accepted.Load(); got != 1 {
		t.Errorf("%d of %d concurrent Reserves accepted the key, want 1", got, n)
	}
}
